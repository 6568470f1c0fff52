/**
 * The configuration the Connect page hands out, per agent kind (SPEC 7.5). Pure: the page and
 * docs/coding-agents.md show the same snippets. The API key is never written into a snippet, only the
 * `VIGIL_API_KEY` environment variable.
 */

export interface ConnectOptions {
  baseUrl: string;
  /** `agent` query parameter (empty = the CLI's name). */
  agent: string;
  /** Seconds a tool call waits for a person in Vigil's Approvals (0 = never waits). */
  waitSeconds: number;
}

/** Normal hooks answer within a second; 10 s keeps a slow network from failing open too soon. */
export const HOOK_TIMEOUT_SECONDS = 10;
/** PermissionRequest waits for a person when Vigil asks: one minute, within the hook's timeout. */
export const PERMISSION_WAIT_SECONDS = 60;

function hookUrl(o: ConnectOptions, cli: string, wait: number): string {
  const params = new URLSearchParams();
  if (o.agent.trim()) params.set("agent", o.agent.trim());
  if (wait > 0) params.set("wait", String(wait));
  const q = params.toString();
  return `${o.baseUrl}/api/hooks/${cli}${q ? `?${q}` : ""}`;
}

/** Claude Code: `"type": "http"` hooks, nothing to install on the agent's machine. */
export function claudeCodeSettings(o: ConnectOptions): string {
  const hook = (wait: number) => ({
    type: "http",
    url: hookUrl(o, "claude-code", wait),
    // Claude Code waits 600 s by default and then fails open: answer fast or not at all.
    timeout: wait > 0 ? wait + HOOK_TIMEOUT_SECONDS : HOOK_TIMEOUT_SECONDS,
    headers: { Authorization: "Bearer $VIGIL_API_KEY" },
    allowedEnvVars: ["VIGIL_API_KEY"],
  });
  const tools = (wait = 0) => [{ matcher: "*", hooks: [hook(wait)] }];
  const lifecycle = [{ hooks: [hook(0)] }];
  const settings = {
    hooks: {
      UserPromptSubmit: lifecycle,
      PreToolUse: tools(o.waitSeconds),
      PermissionRequest: tools(Math.max(o.waitSeconds, PERMISSION_WAIT_SECONDS)),
      PostToolUse: tools(),
      PostToolUseFailure: tools(),
      PostToolBatch: lifecycle,
      SubagentStop: lifecycle,
      SessionEnd: lifecycle,
    },
  };
  return JSON.stringify(settings, null, 2);
}

function curlCommand(o: ConnectOptions, cli: string, maxTime: number, wait = 0): string {
  return `curl -s --max-time ${maxTime} -X POST --data-binary @- -H 'content-type: application/json' -H "authorization: Bearer $VIGIL_API_KEY" '${hookUrl(o, cli, wait)}'`;
}

/** Codex CLI: command hooks (Claude-Code-shaped `hooks.json` in CODEX_HOME) piping to curl. */
export function codexHooks(o: ConnectOptions): string {
  const entry = (wait = 0, matcher = false) => [
    {
      ...(matcher ? { matcher: "*" } : {}),
      hooks: [{ type: "command", command: curlCommand(o, "codex", wait > 0 ? wait + 5 : 5, wait), timeout: wait > 0 ? wait + HOOK_TIMEOUT_SECONDS : HOOK_TIMEOUT_SECONDS }],
    },
  ];
  const hooks = {
    hooks: {
      SessionStart: entry(),
      UserPromptSubmit: entry(),
      PreToolUse: entry(o.waitSeconds, true),
      PostToolUse: entry(0, true),
      SessionEnd: entry(),
    },
  };
  return JSON.stringify(hooks, null, 2);
}

/** Gemini CLI: command hooks in `.gemini/settings.json` (timeouts in milliseconds). */
export function geminiSettings(o: ConnectOptions): string {
  const entry = (wait = 0, matcher = false) => [
    {
      ...(matcher ? { matcher: ".*" } : {}),
      hooks: [{ type: "command", command: curlCommand(o, "gemini", wait > 0 ? wait + 5 : 5, wait), timeout: (wait > 0 ? wait + HOOK_TIMEOUT_SECONDS : HOOK_TIMEOUT_SECONDS) * 1000 }],
    },
  ];
  const settings = {
    hooksConfig: { enabled: true },
    hooks: {
      SessionStart: entry(),
      BeforeAgent: entry(),
      BeforeTool: entry(o.waitSeconds, true),
      AfterTool: entry(0, true),
      SessionEnd: entry(),
    },
  };
  return JSON.stringify(settings, null, 2);
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
