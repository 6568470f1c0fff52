/**
 * The configuration the Connect page hands out, per agent kind (SPEC 7.5). Pure: the page and
 * docs/coding-agents.md show the same snippets. The coding CLIs' hook blocks come from the SDK's
 * generator (packages/sdk/src/connect-config.ts), so `vigil connect` writes exactly what the page
 * shows. The API key is never written into a configuration, only the `VIGIL_API_KEY` variable.
 */
import { CONNECT_TARGETS, HOOK_TIMEOUT_SECONDS, PERMISSION_WAIT_SECONDS, hookConfig, type ConnectTarget, type HookConfigOptions } from "@/packages/sdk/src/connect-config";

export type ConnectOptions = HookConfigOptions;
export { CONNECT_TARGETS, HOOK_TIMEOUT_SECONDS, PERMISSION_WAIT_SECONDS, type ConnectTarget };

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
export const KEY_PLACEHOLDER = "vgl_…";

/** Each CLI's name as people know it, and a prompt that makes it call a tool (so every hook fires). */
export const CLI_INFO: Record<ConnectTarget, { label: string; trigger: string; settingsFile: string }> = {
  "claude-code": { label: "Claude Code", trigger: `claude -p "List the files in this folder"`, settingsFile: "~/.claude/settings.json" },
  codex: { label: "Codex CLI", trigger: `codex exec "List the files in this folder"`, settingsFile: "~/.codex/hooks.json (+ [features] hooks = true in config.toml)" },
  gemini: { label: "Gemini CLI", trigger: `gemini -p "List the files in this folder"`, settingsFile: "~/.gemini/settings.json" },
};

/** `vigil connect <cli>` with the flags the page's options set. */
export function connectCommand(target: ConnectTarget, o: ConnectOptions): string {
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

/** Vigil's own MCP tools (docs/mcp.md) in each client's configuration. */
export function mcpConfigs(o: ConnectOptions): { file: string; text: string }[] {
  const url = `${o.baseUrl}/api/mcp`;
  return [
    { file: "Claude Code (command line)", text: `claude mcp add --transport http vigil ${url} --header "Authorization: Bearer $VIGIL_API_KEY"` },
    { file: "Codex CLI: ~/.codex/config.toml", text: [`[mcp_servers.vigil]`, `url = "${url}"`, `bearer_token_env_var = "VIGIL_API_KEY"`].join("\n") },
    { file: "Gemini CLI: ~/.gemini/settings.json", text: JSON.stringify({ mcpServers: { vigil: { httpUrl: url, headers: { Authorization: "Bearer $VIGIL_API_KEY" } } } }, null, 2) },
    { file: "Cursor: ~/.cursor/mcp.json", text: JSON.stringify({ mcpServers: { vigil: { url, headers: { Authorization: "Bearer ${env:VIGIL_API_KEY}" } } } }, null, 2) },
  ];
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
