/** The Connect page's snippets: valid for each CLI, carrying the agent, the wait and sensible timeouts, never a key. */
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import {
  EXAMPLE_MCP_SERVER,
  MCP_CLIENTS,
  claudeCodeMcp,
  claudeCodeSettings,
  claudeDesktopMcp,
  codexHooks,
  codexMcp,
  connectSteps,
  cursorMcp,
  geminiMcp,
  geminiSettings,
  httpExample,
  mcpClientConfigs,
  proxyCommand,
  MCP_PROXY_MAX_WAIT_SECONDS,
  otelEnv,
  splitCommand,
} from "@/components/dashboard/connect-configs";
import { hookSettings } from "@/packages/sdk/src/connect";

const base = { baseUrl: "https://vigil.example.com", agent: "", waitSeconds: 0 };

describe("Connect page configuration", () => {
  it("Claude Code: http hooks for every mapped event, a short timeout, the key only as an allowed env variable", () => {
    const s = JSON.parse(claudeCodeSettings(base));
    expect(Object.keys(s.hooks).sort()).toEqual(
      ["PermissionRequest", "PostToolBatch", "PostToolUse", "PostToolUseFailure", "PreToolUse", "SessionEnd", "Stop", "StopFailure", "SubagentStop", "UserPromptSubmit"].sort(),
    );
    const pre = s.hooks.PreToolUse[0].hooks[0];
    expect(pre).toEqual({
      type: "http",
      url: "https://vigil.example.com/api/hooks/claude-code",
      timeout: 10,
      headers: { Authorization: "Bearer $VIGIL_API_KEY" },
      allowedEnvVars: ["VIGIL_API_KEY"],
    });
    // PermissionRequest waits for a person, within its own timeout.
    const perm = s.hooks.PermissionRequest[0].hooks[0];
    expect(perm.url).toBe("https://vigil.example.com/api/hooks/claude-code?wait=60");
    expect(perm.timeout).toBeGreaterThan(60);
  });

  it("agent and wait reach every URL; a waiting hook's timeout exceeds its wait", () => {
    const o = { ...base, agent: "release bot", waitSeconds: 90 };
    const s = JSON.parse(claudeCodeSettings(o));
    const pre = s.hooks.PreToolUse[0].hooks[0];
    expect(pre.url).toBe("https://vigil.example.com/api/hooks/claude-code?agent=release+bot&wait=90");
    expect(pre.timeout).toBe(100);
    expect(s.hooks.PostToolUse[0].hooks[0].url).toBe("https://vigil.example.com/api/hooks/claude-code?agent=release+bot");
    const codex = JSON.parse(codexHooks(o));
    expect(codex.hooks.PreToolUse[0].hooks[0].command).toContain("'https://vigil.example.com/api/hooks/codex?agent=release+bot&wait=90'");
    expect(codex.hooks.PreToolUse[0].hooks[0].command).toContain("--max-time 95");
    const gemini = JSON.parse(geminiSettings(o));
    expect(gemini.hooksConfig).toEqual({ enabled: true });
    expect(gemini.hooks.BeforeTool[0].hooks[0].timeout).toBe(100_000);
    expect(gemini.hooks.AfterTool[0].hooks[0].command).toContain("/api/hooks/gemini?agent=release+bot'");
    expect(httpExample(o)).toContain('"waitForApprovalSeconds":90');
  });

  it("never writes a key value, only the VIGIL_API_KEY variable", () => {
    for (const text of [claudeCodeSettings(base), codexHooks(base), geminiSettings(base), otelEnv(base), httpExample(base)]) {
      expect(text).toContain("VIGIL_API_KEY");
      expect(text).not.toMatch(/vgl_[A-Za-z0-9_-]{16,}/);
    }
  });

  it("the one step: the URL, the key created on the page (else a placeholder) and vigil connect with the page's options", () => {
    expect(connectSteps("claude-code", base, null).split("\n")).toEqual([
      "export VIGIL_URL=https://vigil.example.com",
      "export VIGIL_API_KEY=vgl_…",
      "vigil connect claude-code",
    ]);
    const steps = connectSteps("codex", { ...base, agent: "release bot", waitSeconds: 30 }, "vgl_abc123");
    expect(steps).toContain("export VIGIL_API_KEY=vgl_abc123");
    expect(steps).toContain("vigil connect codex --agent 'release bot' --wait 30");
    expect(connectSteps("gemini", { ...base, agent: "it's" }, null)).toContain(`--agent 'it'\\''s'`);
  });

  it("the page shows exactly what vigil connect writes (one generator)", () => {
    const o = { baseUrl: "https://vigil.example.com", agent: "builder", waitSeconds: 45, scope: "user" as const, dryRun: true };
    expect(JSON.parse(claudeCodeSettings(o))).toEqual(hookSettings({ ...o, target: "claude-code" }));
    expect(JSON.parse(codexHooks(o))).toEqual(hookSettings({ ...o, target: "codex" }));
    expect(JSON.parse(geminiSettings(o))).toEqual(hookSettings({ ...o, target: "gemini" }));
  });

  const proxyArgs = (agent: string, command = EXAMPLE_MCP_SERVER.command) => ["-y", "@vigil/sdk", "mcp-proxy", "--agent", agent, "--", ...command];

  it("MCP: each client's file puts the server's own command behind npx @vigil/sdk mcp-proxy, and Vigil's /api/mcp beside it", () => {
    const server = { name: "github", command: ["docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"] };
    const claude = claudeCodeMcp(base, server);
    expect(JSON.parse(claude.proxy)).toEqual({
      mcpServers: { github: { type: "stdio", command: "npx", args: proxyArgs("claude-code", server.command), env: { VIGIL_URL: base.baseUrl, VIGIL_API_KEY: "${VIGIL_API_KEY}" } } },
    });
    expect(JSON.parse(claude.remote)).toEqual({ mcpServers: { vigil: { type: "http", url: "https://vigil.example.com/api/mcp", headers: { Authorization: "Bearer ${VIGIL_API_KEY}" } } } });

    const cursor = cursorMcp(base, server);
    expect(JSON.parse(cursor.proxy).mcpServers.github).toEqual({ command: "npx", args: proxyArgs("cursor", server.command), env: { VIGIL_URL: base.baseUrl, VIGIL_API_KEY: "${env:VIGIL_API_KEY}" } });
    expect(JSON.parse(cursor.remote).mcpServers.vigil).toEqual({ url: "https://vigil.example.com/api/mcp", headers: { Authorization: "Bearer ${env:VIGIL_API_KEY}" } });

    const codex = codexMcp(base, server);
    expect(codex.proxy.split("\n")).toEqual([
      "[mcp_servers.github]",
      'command = "npx"',
      `args = ["-y", "@vigil/sdk", "mcp-proxy", "--agent", "codex", "--", "docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"]`,
      'env = { VIGIL_URL = "https://vigil.example.com" }',
      'env_vars = ["VIGIL_API_KEY"]',
    ]);
    expect(codex.remote.split("\n")).toEqual(["[mcp_servers.vigil]", 'url = "https://vigil.example.com/api/mcp"', 'bearer_token_env_var = "VIGIL_API_KEY"']);

    const gemini = geminiMcp(base, server);
    expect(JSON.parse(gemini.proxy).mcpServers.github).toEqual({ command: "npx", args: proxyArgs("gemini", server.command), env: { VIGIL_URL: base.baseUrl, VIGIL_API_KEY: "$VIGIL_API_KEY" } });
    expect(JSON.parse(gemini.remote).mcpServers.vigil).toEqual({ httpUrl: "https://vigil.example.com/api/mcp", headers: { Authorization: "Bearer $VIGIL_API_KEY" } });

    // Claude Desktop expands nothing and runs only stdio servers: the key is written in, and /api/mcp comes through `vigil mcp`.
    const desktop = claudeDesktopMcp(base, server, "vgl_made_on_the_page");
    expect(JSON.parse(desktop.proxy).mcpServers.github).toEqual({ command: "npx", args: proxyArgs("claude-desktop", server.command), env: { VIGIL_URL: base.baseUrl, VIGIL_API_KEY: "vgl_made_on_the_page" } });
    expect(JSON.parse(desktop.remote).mcpServers.vigil).toEqual({ command: "npx", args: ["-y", "@vigil/sdk", "mcp"], env: { VIGIL_URL: base.baseUrl, VIGIL_API_KEY: "vgl_made_on_the_page" } });
    expect(JSON.parse(claudeDesktopMcp(base, server).proxy).mcpServers.github.env.VIGIL_API_KEY).toBe("vgl_…");
  });

  it("MCP: the page's agent name is the proxy's --agent; a server name TOML cannot take bare is quoted", () => {
    const o = { ...base, agent: "release bot" };
    for (const c of mcpClientConfigs(o)) expect(c.proxy).toContain('"release bot"');
    expect(codexMcp(base, { name: "my files", command: ["x"] }).proxy.split("\n")[0]).toBe('[mcp_servers."my files"]');
    expect(mcpClientConfigs(base).map((c) => c.client)).toEqual([...MCP_CLIENTS]);
  });

  it("MCP: the page's approval wait is the proxy's --wait, capped under the clients' 60 s time-out", () => {
    const argsOf = (waitSeconds: number) => proxyCommand("cursor", { ...base, waitSeconds }, EXAMPLE_MCP_SERVER).args;
    expect(argsOf(0)).toEqual(proxyArgs("cursor"));
    expect(argsOf(30)).toEqual(["-y", "@vigil/sdk", "mcp-proxy", "--agent", "cursor", "--wait", "30", "--", ...EXAMPLE_MCP_SERVER.command]);
    expect(argsOf(90)).toContain(String(MCP_PROXY_MAX_WAIT_SECONDS));
    expect(argsOf(90)).not.toContain("90");
    for (const c of mcpClientConfigs({ ...base, waitSeconds: 30 })) expect(c.proxy).toMatch(/"--wait", "30"|"--wait",\s*"30"/);
  });

  it("MCP: only Claude Desktop's file holds a key, and only the one given", () => {
    for (const c of mcpClientConfigs(base, EXAMPLE_MCP_SERVER, "vgl_secretsecretsecretsecret")) {
      const text = c.proxy + c.remote;
      if (c.client === "claude-desktop") expect(text).toContain("vgl_secretsecretsecretsecret");
      else {
        expect(text).toContain("VIGIL_API_KEY");
        expect(text).not.toMatch(/vgl_[A-Za-z0-9_-]{16,}/);
      }
    }
  });

  it("MCP: a server command typed as in a shell becomes its words", () => {
    expect(splitCommand("npx -y @modelcontextprotocol/server-filesystem /home/me/projects")).toEqual(["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/projects"]);
    expect(splitCommand(`uvx mcp-server-git --repository "/home/me/my repo"  'a b' c\\ d ""`)).toEqual(["uvx", "mcp-server-git", "--repository", "/home/me/my repo", "a b", "c d", ""]);
    expect(splitCommand("   ")).toEqual([]);
  });

  it("MCP: docs/mcp.md shows exactly what the page generates for the example server", () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/mcp.md"), "utf8");
    for (const c of mcpClientConfigs(base)) {
      expect(doc, `${c.label} proxy`).toContain(c.proxy);
      expect(doc, `${c.label} remote`).toContain(c.remote);
    }
  });
});
