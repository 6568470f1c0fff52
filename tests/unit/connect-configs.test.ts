/** The Connect page's snippets: valid for each CLI, carrying the agent, the wait and sensible timeouts, never a key. */
import { describe, expect, it } from "vitest";
import { claudeCodeSettings, codexHooks, connectSteps, geminiSettings, httpExample, mcpConfigs, otelEnv } from "@/components/dashboard/connect-configs";
import { hookSettings } from "@/packages/sdk/src/connect";

const base = { baseUrl: "https://vigil.example.com", agent: "", waitSeconds: 0 };

describe("Connect page configuration", () => {
  it("Claude Code: http hooks for every mapped event, a short timeout, the key only as an allowed env variable", () => {
    const s = JSON.parse(claudeCodeSettings(base));
    expect(Object.keys(s.hooks).sort()).toEqual(
      ["PermissionRequest", "PostToolBatch", "PostToolUse", "PostToolUseFailure", "PreToolUse", "SessionEnd", "SubagentStop", "UserPromptSubmit"].sort(),
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

  it("Vigil's MCP server for each client, the key only as VIGIL_API_KEY", () => {
    const configs = mcpConfigs(base);
    expect(configs.map((c) => c.file)).toHaveLength(4);
    for (const c of configs) {
      expect(c.text).toContain("https://vigil.example.com/api/mcp");
      expect(c.text).toContain("VIGIL_API_KEY");
    }
  });
});
