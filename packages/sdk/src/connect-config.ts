/**
 * The hook blocks each coding CLI needs to report to Vigil (SPEC 7.5). Pure and import-free: the
 * `vigil connect` command merges them into the CLI's settings file, and the dashboard's Connect page
 * (components/dashboard/connect-configs.ts) imports this file to show the same blocks. The API key
 * is never written, only `$VIGIL_API_KEY`.
 */

export const CONNECT_TARGETS = ["claude-code", "codex", "gemini"] as const;
export type ConnectTarget = (typeof CONNECT_TARGETS)[number];

export interface HookConfigOptions {
  baseUrl: string;
  /** The sessions' agent name (empty: the CLI's name). */
  agent: string;
  /** Seconds a held tool call waits for a person in Vigil's Approvals (0 = never waits). */
  waitSeconds: number;
}

/** Normal hooks answer within a second; 10 s keeps a slow network from failing open too soon. */
export const HOOK_TIMEOUT_SECONDS = 10;
/** PermissionRequest waits for a person when Vigil asks: one minute, within the hook's timeout. */
export const PERMISSION_WAIT_SECONDS = 60;

export function hookUrl(o: HookConfigOptions, cli: ConnectTarget, wait: number): string {
  const params = new URLSearchParams();
  if (o.agent.trim()) params.set("agent", o.agent.trim());
  if (wait > 0) params.set("wait", String(wait));
  const q = params.toString();
  return `${o.baseUrl}/api/hooks/${cli}${q ? `?${q}` : ""}`;
}

function curlCommand(o: HookConfigOptions, cli: ConnectTarget, maxTime: number, wait = 0): string {
  return `curl -s --max-time ${maxTime} -X POST --data-binary @- -H 'content-type: application/json' -H "authorization: Bearer $VIGIL_API_KEY" '${hookUrl(o, cli, wait)}'`;
}

/** The settings block for the CLI: `{ hooks, … }`. */
export function hookConfig(target: ConnectTarget, o: HookConfigOptions): Record<string, any> {
  if (target === "claude-code") {
    // `"type": "http"`: Claude Code posts each hook itself, nothing to install.
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
    return {
      hooks: {
        UserPromptSubmit: lifecycle,
        PreToolUse: tools(o.waitSeconds),
        PermissionRequest: tools(Math.max(o.waitSeconds, PERMISSION_WAIT_SECONDS)),
        PostToolUse: tools(),
        PostToolUseFailure: tools(),
        PostToolBatch: lifecycle,
        // The model's last text (Stop) and a failed model call (StopFailure): stall detection reads them.
        Stop: lifecycle,
        StopFailure: lifecycle,
        SubagentStop: lifecycle,
        SessionEnd: lifecycle,
      },
    };
  }
  if (target === "codex") {
    // Command hooks (Claude-Code-shaped hooks.json in CODEX_HOME) piping to curl.
    const entry = (wait = 0, matcher = false) => [
      {
        ...(matcher ? { matcher: "*" } : {}),
        hooks: [{ type: "command", command: curlCommand(o, "codex", wait > 0 ? wait + 5 : 5, wait), timeout: wait > 0 ? wait + HOOK_TIMEOUT_SECONDS : HOOK_TIMEOUT_SECONDS }],
      },
    ];
    return { hooks: { SessionStart: entry(), UserPromptSubmit: entry(), PreToolUse: entry(o.waitSeconds, true), PostToolUse: entry(0, true), Stop: entry(), SessionEnd: entry() } };
  }
  // Gemini CLI: command hooks in .gemini/settings.json, timeouts in milliseconds.
  const entry = (wait = 0, matcher = false) => [
    {
      ...(matcher ? { matcher: ".*" } : {}),
      hooks: [{ type: "command", command: curlCommand(o, "gemini", wait > 0 ? wait + 5 : 5, wait), timeout: (wait > 0 ? wait + HOOK_TIMEOUT_SECONDS : HOOK_TIMEOUT_SECONDS) * 1000 }],
    },
  ];
  return {
    hooksConfig: { enabled: true },
    hooks: { SessionStart: entry(), BeforeAgent: entry(), BeforeTool: entry(o.waitSeconds, true), AfterTool: entry(0, true), AfterAgent: entry(), SessionEnd: entry() },
  };
}
