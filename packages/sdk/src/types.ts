/** The agent API's shapes (SPEC 7.1–7.3, 7.6): what Vigil accepts and answers. */

export type Decision = "allow" | "ask" | "deny" | "pause";
export type TrustState = "trusted" | "escalated" | "recovering" | "blocked";
export type NudgeType = "gentle" | "direct" | "interrupt" | "guidance";
export type PatternSeverity = "minor" | "moderate" | "severe";
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

interface EventBase {
  /** Client-chosen, unique per workspace; the SDK makes one when left out (a repeated id is a duplicate, not applied again). */
  id?: string;
  /** Defaults to the client's session. */
  sessionId?: string;
  /** ISO 8601 or epoch ms; the SDK stamps the time it was reported. */
  ts?: string | number;
  model?: string;
}

export type SessionStartEvent = EventBase & { type: "session.start"; agent?: string; settings?: Record<string, unknown> };
export type SessionEndEvent = EventBase & { type: "session.end" };
export type TurnStartEvent = EventBase & { type: "turn.start"; turnIndex: number };
export type ToolCallEvent = EventBase & { type: "tool.call"; callId: string; toolName: string; pluginName?: string; args: Record<string, unknown>; turnIndex?: number };
export type ToolResultEvent = EventBase & {
  type: "tool.result";
  callId: string;
  toolName: string;
  pluginName?: string;
  args?: Record<string, unknown>;
  success?: boolean;
  error?: string | Record<string, unknown>;
  result?: unknown;
  httpStatus?: number;
  severity?: string;
  domain?: string;
  service?: string;
  retryCount?: number;
  transient?: boolean;
  durationMs?: number;
  turnIndex?: number;
};
export type ModelTextEvent = EventBase & { type: "model.text"; text: string; reasoningOnly?: boolean; turnIndex?: number };
/** The model's API call failed (rate limit, bad request, overload): counted per model, never against a tool (SPEC 7.6). */
export type ModelErrorEvent = EventBase & { type: "model.error"; error: string; model?: string };
/** `automated: true` — the framework sent it by itself ("Please continue"): it does not end runs or the stretch (SPEC 5.1). */
export type UserMessageEvent = EventBase & { type: "user.message"; text?: string; automated?: boolean };
export type PermissionResolvedEvent = EventBase & { type: "permission.resolved"; callId: string; toolName: string; granted: boolean; method: string };

export type VigilEvent =
  | SessionStartEvent
  | SessionEndEvent
  | TurnStartEvent
  | ToolCallEvent
  | ToolResultEvent
  | ModelTextEvent
  | ModelErrorEvent
  | UserMessageEvent
  | PermissionResolvedEvent;

/** Effects, in the order they happened (SPEC 7.3). */
export type Effect =
  | { type: "escalated"; failureKey: string; toolName: string; reason: string; expiresAt: string; message: string }
  | { type: "blocked"; failureKey: string; toolName: string; reason: string; message: string }
  | { type: "recovering"; failureKey: string; successes: number; needed: number }
  | { type: "recovered"; failureKey: string; toolName: string; message: string }
  | { type: "recovery_pending"; failureKey: string; approvalId: string }
  | { type: "approval_pending"; approvalId: string; failureKey: string; callId: string; sessionId: string; toolName?: string; reason?: string | null }
  | { type: "pattern"; patternType: string; severity: PatternSeverity; count: number; sessionId: string; toolSequence: string[] }
  | { type: "nudge"; nudgeType: NudgeType; message: string; patternType: string | null; sessionId: string }
  | { type: "paused"; sessionId: string; reason: string }
  | {
      type: "model_suggestion";
      strategy: "suggest" | "auto";
      currentModel: string;
      suggestedModel: string;
      failureKey: string;
      currentSuccessRate: number;
      suggestedSuccessRate: number;
    };

export interface Escalation {
  reason: string;
  failureCount: number;
  window: string | number;
  recoveryHint: string;
  expiresAt: string | null;
}

/** The policy that decided a call (SPEC 4.5). */
export interface PolicyMatch {
  name: string;
  level: "organization" | "workspace" | "builtin";
  decision: "allow" | "ask" | "deny";
  reason: string | null;
}

/** What you pass to `check`: a tool call about to run. */
export interface CheckInput {
  toolName: string;
  args: Record<string, unknown>;
  /** Defaults to a new id; use the framework's tool-call id when it has one. */
  callId?: string;
  sessionId?: string;
  pluginName?: string;
  model?: string;
  turnIndex?: number;
  /** 0–120 s: hold an `ask` for a person's decision in Vigil's Approvals. Defaults to the client's setting. */
  waitForApprovalSeconds?: number;
  /** Event id; by default derived from the session and call id, so checking one call twice records it once. */
  id?: string;
}

/** guard.check's answer (SPEC 7.2, 7.6). */
export interface CheckAnswer {
  decision: Decision;
  failureKey: string;
  state: TrustState;
  reason: string | null;
  escalation: Escalation | null;
  approvalId: string | null;
  /** Revision 3: the policy that decided, or null (absent on servers before it). */
  policy?: PolicyMatch | null;
  /** Revision 3, watch mode: what Vigil would have decided, the decision being `allow`. */
  wouldDecide?: Decision | null;
  effects: Effect[];
  /** Set only by the SDK: Vigil could not be reached and the client failed open (the message says why). */
  failedOpen?: string;
  /** The call id the answer is for. */
  callId: string;
  sessionId: string;
}

export interface IngestAnswer {
  accepted: number;
  duplicates: number;
  effects: Effect[];
}
