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

/** OpenTelemetry exporters (SPEC 7.4). */
export function otelEnv(o: ConnectOptions): string {
  return [`export VIGIL_API_KEY=vgl_…   # Settings → API keys`, `export OTEL_EXPORTER_OTLP_ENDPOINT=${o.baseUrl}/api/otlp`, `export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20$VIGIL_API_KEY"`].join("\n");
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
