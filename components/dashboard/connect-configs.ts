/**
 * The configuration the Connect page hands out, per agent kind (SPEC 7.5). Pure: the page and
 * docs/coding-agents.md show the same snippets. The coding CLIs' hook blocks come from the SDK's
 * generator (packages/sdk/src/connect-config.ts), so `vigil connect` writes exactly what the page
 * shows. The API key is never written into a configuration, only the `VIGIL_API_KEY` variable.
 */
import { CONNECT_TARGETS, HOOK_TIMEOUT_SECONDS, PERMISSION_WAIT_SECONDS, hookConfig, type ConnectTarget, type HookConfigOptions } from "@/packages/sdk/src/connect-config";

export type ConnectOptions = HookConfigOptions;
export { type ConnectTarget };

/** Claude Code: `"type": "http"` hooks, nothing to install on the agent's machine. */
export function claudeCodeSettings(o: ConnectOptions): string {
  return JSON.stringify(hookConfig("claude-code", o), null, 2);
}

/** Codex CLI: command hooks (Claude-Code-shaped `hooks.json` in CODEX_HOME) piping to curl. */
export function codexHooks(o: ConnectOptions): string {
  return JSON.stringify(hookConfig("codex", o), null, 2);
}

/** Gemini CLI: command hooks in `.gemini/settings.json` (timeouts in milliseconds). */
export function geminiSettings(o: ConnectOptions): string {
  return JSON.stringify(hookConfig("gemini", o), null, 2);
}

/** Where the key goes in a snippet: the key just created on the page, else a placeholder. */
const KEY_PLACEHOLDER = "vgl_…";

/** Each CLI's name as people know it, and a prompt that makes it call a tool (so every hook fires). */
export const CLI_INFO: Record<ConnectTarget, { label: string; trigger: string; settingsFile: string }> = {
  "claude-code": { label: "Claude Code", trigger: `claude -p "List the files in this folder"`, settingsFile: "~/.claude/settings.json" },
  codex: { label: "Codex CLI", trigger: `codex exec "List the files in this folder"`, settingsFile: "~/.codex/hooks.json (+ [features] hooks = true in config.toml)" },
  gemini: { label: "Gemini CLI", trigger: `gemini -p "List the files in this folder"`, settingsFile: "~/.gemini/settings.json" },
};

/** `vigil connect <cli>` with the flags the page's options set. */
function connectCommand(target: ConnectTarget, o: ConnectOptions): string {
  const flags = [o.agent.trim() ? ` --agent ${shellQuote(o.agent.trim())}` : "", o.waitSeconds > 0 ? ` --wait ${o.waitSeconds}` : ""].join("");
  return `vigil connect ${target}${flags}`;
}

/**
 * The one step: the environment the hooks read (`VIGIL_API_KEY` on every call, so it belongs in the
 * shell profile) and the command that merges the hooks into the CLI's settings.
 */
export function connectSteps(target: ConnectTarget, o: ConnectOptions, apiKey: string | null): string {
  return [`export VIGIL_URL=${o.baseUrl}`, `export VIGIL_API_KEY=${apiKey ?? KEY_PLACEHOLDER}`, connectCommand(target, o)].join("\n");
}

function shellQuote(value: string): string {
  return /^[A-Za-z0-9._\/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The MCP clients whose configuration the Connect page and docs/mcp.md show (SPEC 7.7). */
export const MCP_CLIENTS = ["claude-code", "cursor", "codex", "gemini", "claude-desktop"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** An MCP server as a client starts it: its name in the client's configuration and its own command. */
export interface McpServerSpec {
  name: string;
  command: string[];
}

/** What the page and the docs put behind the proxy until the user types their own server. */
export const EXAMPLE_MCP_SERVER: McpServerSpec = { name: "files", command: ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/path/to/project"] };

/** One client's two entries: an MCP server behind `vigil mcp-proxy`, and Vigil's own tools at /api/mcp. */
export interface McpClientConfig {
  client: McpClient;
  label: string;
  /** Where the text goes. */
  file: string;
  proxy: string;
  remote: string;
  /** How the client gets the key, for the page's note. */
  keyNote: string;
}

/**
 * How long the proxy holds a call for an approval: MCP clients give up on a tool call after 60 s,
 * so the page's wait is capped below that (the proxy's own default is this cap).
 */
export const MCP_PROXY_MAX_WAIT_SECONDS = 50;

/** `npx -y @vigil/sdk mcp-proxy --agent NAME [--wait S] -- <the server's command>` as a client's command and args. */
export function proxyCommand(client: McpClient, o: ConnectOptions, server: McpServerSpec): { command: string; args: string[] } {
  const wait = o.waitSeconds > 0 ? ["--wait", String(Math.min(o.waitSeconds, MCP_PROXY_MAX_WAIT_SECONDS))] : [];
  return { command: "npx", args: ["-y", "@vigil/sdk", "mcp-proxy", "--agent", o.agent.trim() || client, ...wait, "--", ...server.command] };
}

/** `vigil mcp`: Vigil's tools over stdio, for a client that starts only stdio servers. */
const VIGIL_MCP_STDIO = { command: "npx", args: ["-y", "@vigil/sdk", "mcp"] };

const mcpUrl = (o: ConnectOptions) => `${o.baseUrl}/api/mcp`;
/** Indented JSON with lists of plain values on one line (a command's args stay readable). */
function json(value: unknown, indent = ""): string {
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== "object")) return `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
  if (!value || typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}  `;
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  const items = Array.isArray(value) ? value.map((v) => `${inner}${json(v, inner)}`) : Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${json(v, inner)}`);
  return items.length ? `${open}\n${items.join(",\n")}\n${indent}${close}` : `${open}${close}`;
}
const tomlArray = (items: string[]) => `[${items.map((i) => JSON.stringify(i)).join(", ")}]`;
const tomlKey = (name: string) => (/^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name));

/** Claude Code: the project's `.mcp.json` (`claude mcp add-json` takes the same entry); `${VAR}` is expanded. */
export function claudeCodeMcp(o: ConnectOptions, server: McpServerSpec = EXAMPLE_MCP_SERVER): McpClientConfig {
  return {
    client: "claude-code",
    label: "Claude Code",
    file: ".mcp.json (project) or ~/.claude.json (user)",
    proxy: json({ mcpServers: { [server.name]: { type: "stdio", ...proxyCommand("claude-code", o, server), env: { VIGIL_URL: o.baseUrl, VIGIL_API_KEY: "${VIGIL_API_KEY}" } } } }),
    remote: json({ mcpServers: { vigil: { type: "http", url: mcpUrl(o), headers: { Authorization: "Bearer ${VIGIL_API_KEY}" } } } }),
    keyNote: "Claude Code expands ${VIGIL_API_KEY} from its environment.",
  };
}

/** Cursor: `~/.cursor/mcp.json` (or `.cursor/mcp.json` in the project); `${env:VAR}` is expanded. */
export function cursorMcp(o: ConnectOptions, server: McpServerSpec = EXAMPLE_MCP_SERVER): McpClientConfig {
  return {
    client: "cursor",
    label: "Cursor",
    file: "~/.cursor/mcp.json (or .cursor/mcp.json in the project)",
    proxy: json({ mcpServers: { [server.name]: { ...proxyCommand("cursor", o, server), env: { VIGIL_URL: o.baseUrl, VIGIL_API_KEY: "${env:VIGIL_API_KEY}" } } } }),
    remote: json({ mcpServers: { vigil: { url: mcpUrl(o), headers: { Authorization: "Bearer ${env:VIGIL_API_KEY}" } } } }),
    keyNote: "Cursor expands ${env:VIGIL_API_KEY} from the environment it was started in.",
  };
}

/** Codex CLI: `~/.codex/config.toml`; `env_vars` passes the key through (Codex gives servers only a few variables by default). */
export function codexMcp(o: ConnectOptions, server: McpServerSpec = EXAMPLE_MCP_SERVER): McpClientConfig {
  const { command, args } = proxyCommand("codex", o, server);
  return {
    client: "codex",
    label: "Codex CLI",
    file: "~/.codex/config.toml (or .codex/config.toml in a trusted project)",
    proxy: [
      `[mcp_servers.${tomlKey(server.name)}]`,
      `command = ${JSON.stringify(command)}`,
      `args = ${tomlArray(args)}`,
      `env = { VIGIL_URL = ${JSON.stringify(o.baseUrl)} }`,
      `env_vars = ["VIGIL_API_KEY"]`,
    ].join("\n"),
    remote: [`[mcp_servers.vigil]`, `url = ${JSON.stringify(mcpUrl(o))}`, `bearer_token_env_var = "VIGIL_API_KEY"`].join("\n"),
    keyNote: "Codex reads VIGIL_API_KEY from its environment (env_vars, bearer_token_env_var).",
  };
}

/** Gemini CLI: `~/.gemini/settings.json`; `$VAR` is expanded, and a variable named like a key reaches a server only through `env`. */
export function geminiMcp(o: ConnectOptions, server: McpServerSpec = EXAMPLE_MCP_SERVER): McpClientConfig {
  return {
    client: "gemini",
    label: "Gemini CLI",
    file: "~/.gemini/settings.json (or .gemini/settings.json in the project)",
    proxy: json({ mcpServers: { [server.name]: { ...proxyCommand("gemini", o, server), env: { VIGIL_URL: o.baseUrl, VIGIL_API_KEY: "$VIGIL_API_KEY" } } } }),
    remote: json({ mcpServers: { vigil: { httpUrl: mcpUrl(o), headers: { Authorization: "Bearer $VIGIL_API_KEY" } } } }),
    keyNote: "Gemini CLI expands $VIGIL_API_KEY from its environment.",
  };
}

/**
 * Claude Desktop: `claude_desktop_config.json`. It expands no variables and its file takes only
 * stdio servers, so the key is written in (the one made on the page, else a placeholder) and
 * Vigil's tools come through `vigil mcp`.
 */
export function claudeDesktopMcp(o: ConnectOptions, server: McpServerSpec = EXAMPLE_MCP_SERVER, apiKey: string | null = null): McpClientConfig {
  const env = { VIGIL_URL: o.baseUrl, VIGIL_API_KEY: apiKey ?? KEY_PLACEHOLDER };
  return {
    client: "claude-desktop",
    label: "Claude Desktop",
    file: "claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\)",
    proxy: json({ mcpServers: { [server.name]: { ...proxyCommand("claude-desktop", o, server), env } } }),
    remote: json({ mcpServers: { vigil: { ...VIGIL_MCP_STDIO, env } } }),
    keyNote: "Claude Desktop expands no variables: the key is written into the file, so keep the file private.",
  };
}

/** Every client's entries, in the page's order. */
export function mcpClientConfigs(o: ConnectOptions, server: McpServerSpec = EXAMPLE_MCP_SERVER, apiKey: string | null = null): McpClientConfig[] {
  return [claudeCodeMcp(o, server), cursorMcp(o, server), codexMcp(o, server), geminiMcp(o, server), claudeDesktopMcp(o, server, apiKey)];
}

/** A server's command as typed in a shell, split into words (quotes and backslashes as the shell reads them; no expansion). */
export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word ??= "";
    } else if (ch === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text[++i];
    } else if (/\s/.test(ch)) {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? "") + ch;
  }
  if (word !== null) words.push(word);
  return words;
}

/** OpenTelemetry exporters (SPEC 7.4). */
export function otelEnv(o: ConnectOptions, apiKey: string | null = null): string {
  return [apiKey ? `export VIGIL_API_KEY=${apiKey}` : `export VIGIL_API_KEY=${KEY_PLACEHOLDER}   # Settings → API keys`, `export OTEL_EXPORTER_OTLP_ENDPOINT=${o.baseUrl}/api/otlp`, `export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20$VIGIL_API_KEY"`].join("\n");
}

/** Plain HTTP: guard.check before a tool call, ingest.events after it. */
export function httpExample(o: ConnectOptions): string {
  const agent = o.agent.trim() || "my-agent";
  const wait = o.waitSeconds > 0 ? `,"waitForApprovalSeconds":${o.waitSeconds}` : "";
  return [
    `# Before a tool call: allow / ask / deny / pause`,
    `curl -s ${o.baseUrl}/api/trpc/guard.check -H "authorization: Bearer $VIGIL_API_KEY" -H 'content-type: application/json' \\`,
    `  -d '{"id":"evt-2","sessionId":"run-1","callId":"call-1","toolName":"bash","args":{"command":"ls -la"}${wait}}'`,
    ``,
    `# After it (and session.start / session.end around the run)`,
    `curl -s ${o.baseUrl}/api/trpc/ingest.events -H "authorization: Bearer $VIGIL_API_KEY" -H 'content-type: application/json' -d '{"events":[`,
    `  {"type":"session.start","id":"evt-1","sessionId":"run-1","agent":"${agent}","model":"gpt-4o"},`,
    `  {"type":"tool.result","id":"evt-3","sessionId":"run-1","callId":"call-1","toolName":"bash","success":true}]}'`,
  ].join("\n");
}
