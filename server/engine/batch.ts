/**
 * The records and types of a batch (SPEC 7.1, 7.3): what the shell loads for it (LoadedState), the
 * rows it writes (column-shaped records), what a call's event keeps (StoredCall, the tool.call
 * payload), and what a batch returns (BatchOutcome). The batch itself: apply-batch.ts.
 */
import { errorMessage } from "./classify";
import { extractFailureKey, type FailureKeyInfo } from "./failure-key";
import { boundForRedaction, redactedPreview, redactString } from "./redact";
import type { RuleQuery } from "./rules";
import { DOMAIN_PREFIX } from "./key-state";
import type { KeyMetrics } from "./key-history";
import type { SessionBehaviour } from "./behaviour-state";
import type { ModelToolProfile } from "./models";
import type { AgentEvent, ConfigDocument, Effect, EffectiveConfig, EffectiveSettings, KeyContext, PatternType, ResolvedRule, SessionInfo, SessionSettingsInput, SessionTimeline, Severity, StateLevel, TrustState } from "./types";

export const MAX_TEXT_STORED = 32 * 1024;

/** A person's message (`user.message`) is stored redacted and truncated to 4 KiB (SPEC 7.1). */
export const MAX_USER_TEXT_STORED = 4 * 1024;

/** The workspace's and organization's configuration documents and their merge. */
export interface BatchConfigs {
  workspaceDoc: ConfigDocument;
  orgDoc: ConfigDocument;
  effective: EffectiveConfig;
}

/** The configuration a batch or a guard.check runs under, as the shell loads it. */
export type WorkspaceConfigs = BatchConfigs & {
  /** Workspaces of the organization (promotion to a global tool pattern needs three; SPEC 6). */
  organizationWorkspaces?: number;
};

/** A session as the engine sees it while a batch is applied (an agent_session row). */
export interface BatchSession {
  sessionId: string;
  agent: string;
  model: string | null;
  startedAt: number | null;
  endedAt: number | null;
  firstEventAt: number | null;
  lastEventAt: number | null;
  clock: number | null;
  paused: boolean;
  pauseReason: string | null;
  pausedAt: number | null;
  settings: SessionSettingsInput;
  behaviour: SessionBehaviour | null;
  eventCount: number;
  callCount: number;
  failureCount: number;
  patternCount: number;
  /** Changed by the batch (to be written). */
  dirty: boolean;
}

/** What a stored tool.call tells a later tool.result that carries no args. */
export interface StoredCall {
  failureKey: string;
  argsHash: string;
  domain: string | null;
  kind: string;
  command: string | null;
  params: Record<string, string>;
}

export const callRef = (sessionId: string, callId: string) => `${sessionId}\u0000${callId}`;

export function callInfo(e: { toolName: string; args?: Record<string, unknown>; domain?: string; service?: string }, configs: BatchConfigs): StoredCall {
  return storedCall(extractFailureKey(e.toolName, e.args ?? {}, { domain: e.domain ?? null, service: e.service ?? null }, configs.effective.extractors));
}

/** What the event log keeps of a call's extraction (callInfo), for a caller that extracted it already. */
export function storedCall(info: FailureKeyInfo): StoredCall {
  return {
    failureKey: info.failureKey,
    argsHash: info.argsHash,
    domain: info.domain,
    kind: info.kind,
    command: info.command !== null ? redactString(boundForRedaction(info.command, 4096)).slice(0, 4096) : null,
    params: info.params,
  };
}

/** guard.check's answer as kept on the call's event (`payload.guard`). */
export interface GuardRecord {
  decision: string;
  reason: string | null;
  failureKey: string;
  /** The policy that matched (name and level), when one did (SPEC 4.5: counts per policy). */
  policy?: { name: string; level: string; decision: string };
  /** Watch mode: what enforcement would have answered. */
  wouldDecide?: string;
}

/**
 * A call's info as its event row keeps it (`payload.call`): without the failure key, which is the
 * row's own column, and without the fields that are null. The event log is most of the database,
 * and jsonb stores a null field's name on every row.
 */
export type LoggedCall = { argsHash: string; kind: string; params: Record<string, string>; domain?: string; command?: string };

function loggedCall(info: StoredCall): LoggedCall {
  const out: LoggedCall = { argsHash: info.argsHash, kind: info.kind, params: info.params };
  if (info.domain !== null) out.domain = info.domain;
  if (info.command !== null) out.command = info.command;
  return out;
}

/** A call's info read back from its event row and the row's failure key (a row may also carry the key and the nulls: read alike). */
export function storedCallFromLog(logged: LoggedCall & { failureKey?: string; domain?: string | null; command?: string | null }, failureKey: string | null): StoredCall {
  return {
    failureKey: failureKey ?? logged.failureKey ?? "",
    argsHash: logged.argsHash,
    domain: logged.domain ?? null,
    kind: logged.kind,
    command: logged.command ?? null,
    params: logged.params,
  };
}

/** A `tool.call` event's payload: its call info, plugin (when named) and redacted preview, and guard.check's answer when it came through one. */
export type ToolCallPayload = {
  call: LoggedCall;
  pluginName?: string;
  preview: string;
  guard?: GuardRecord;
};

/** The payload of a tool.call's event row, built alike by a batch and by guard.check's lean path. */
export function toolCallPayload(info: StoredCall, call: { pluginName?: string; args: Record<string, unknown> }, guard?: GuardRecord): ToolCallPayload {
  const payload: ToolCallPayload = { call: loggedCall(info), preview: redactedPreview(call.args) };
  if (call.pluginName) payload.pluginName = call.pluginName;
  if (guard) payload.guard = guard;
  return payload;
}

export type ToolResult = Extract<AgentEvent, { type: "tool.result" }>;

export interface BatchPlan {
  /** Call info of each tool.call of the batch, by callRef. */
  batchCalls: Map<string, StoredCall>;
  /** Call info (failure key, domain...) each tool.result is applied under, by event id. */
  resultInfo: Map<string, StoredCall>;
  /** Trust states the results touch: each gets a row if it has none. */
  createKeys: { failureKey: string; toolName: string; domain: string | null }[];
  /** Tool-level states the results see only if they exist. */
  toolKeys: Set<string>;
  /** Results that may be security failures: they may create their tool's `@tool:` state. */
  possiblySecurityResults: Set<string>;
  /** The rule of a call under the batch's configuration (resolveRule, each answer remembered). */
  ruleFor: (q: RuleQuery) => ResolvedRule;
}

// ---------------------------------------------------------------------------------------------
// Records to write (column-shaped; the shell writes them as they are)
// ---------------------------------------------------------------------------------------------

export interface EventRecord {
  workspaceId: string;
  id: string;
  sessionId: string;
  type: AgentEvent["type"];
  ts: Date;
  model: string | null;
  toolName: string | null;
  callId: string | null;
  failureKey: string | null;
  failed: boolean | null;
  severity: Severity | null;
  turnIndex: number | null;
  payload: Record<string, unknown>;
}

export interface FailureRecord {
  workspaceId: string;
  eventId: string;
  failureKey: string;
  toolName: string;
  domain: string | null;
  severity: Severity;
  weight: number;
  ts: Date;
  sessionId: string;
  agent: string;
  model: string | null;
  errorMessage: string | null;
  httpStatus: number | null;
  argsHash: string;
  /** Failure group of the stored message (failure-fingerprint.ts). */
  fingerprint: string;
}

export interface TransitionRecord {
  workspaceId: string;
  failureKey: string;
  fromState: TrustState;
  toState: TrustState;
  reason: string | null;
  actor: string | null;
  at: Date;
}

export interface ApprovalRecord {
  workspaceId: string;
  id: string;
  kind: "recovery";
  failureKey: string;
  toolName: string;
  status: "pending" | "denied";
  createdAt: Date;
  resolvedAt?: Date;
  resolvedBy?: string;
  comment?: string;
}

export interface PatternRecord {
  workspaceId: string;
  sessionId: string;
  model: string | null;
  patternType: PatternType;
  severity: string;
  count: number;
  toolSequence: string[];
  ts: Date;
}

export interface NudgeRecord {
  workspaceId: string;
  sessionId: string;
  model: string | null;
  patternType: string | null;
  nudgeType: string;
  message: string;
  ts: Date;
  effective?: boolean;
}

export interface SuggestionRecord {
  workspaceId: string;
  sessionId: string;
  failureKey: string;
  currentModel: string;
  suggestedModel: string;
  strategy: string;
  currentSuccessRate: number;
  suggestedSuccessRate: number;
  ts: Date;
}

export interface ModelToolDelta {
  model: string;
  failureKey: string;
  attempts: number;
  failures: number;
  lastFailureAt: number | null;
}

export interface BehaviourDelta {
  patterns: Partial<Record<PatternType, number>>;
  nudgesSent: number;
  nudgesEffective: number;
  turns: number;
  stalledTurns: number;
  /** Failed model API calls (`model.error`). */
  modelErrors?: number;
}

/** Results and failures per UTC day, tool and failure key. */
export interface DailyStat {
  day: string;
  toolName: string;
  failureKey: string;
  results: number;
  failures: number;
}

export interface BatchRecords {
  events: EventRecord[];
  failures: FailureRecord[];
  transitions: TransitionRecord[];
  approvalsCreated: ApprovalRecord[];
  /** Keys whose pending approval (written by an earlier batch) no longer applies. */
  approvalsSuperseded: string[];
  patterns: PatternRecord[];
  nudges: NudgeRecord[];
  /** Verdicts on nudges written by earlier batches (SPEC 5 effectiveness, decided once). */
  nudgeVerdicts: { sessionId: string; patternType: string; sentAt: number; effective: boolean; model: string | null }[];
  modelToolDeltas: Map<string, ModelToolDelta>;
  behaviourDeltas: Map<string, BehaviourDelta>;
  suggestions: SuggestionRecord[];
  dailyStats: Map<string, DailyStat>;
  touchedKeys: Set<string>;
  /** Domain/tool-level states whose state changed: keys under them change effective state. */
  changedLevelStates: Set<string>;
  escalatedTools: Set<string>;
}

// ---------------------------------------------------------------------------------------------
// Applying a batch
// ---------------------------------------------------------------------------------------------

export interface LoadedState {
  workspaceId: string;
  configs: BatchConfigs;
  /** Every session the batch's events name (rows created empty by the shell when new). */
  sessions: ReadonlyMap<string, BatchSession>;
  /** Stored trust states of the keys the plan touches; a key without one starts trusted. */
  contexts: ReadonlyMap<string, KeyContext>;
  /** Model profiles of the failure keys the results touch. */
  profiles: ReadonlyMap<string, readonly ModelToolProfile[]>;
  /**
   * Sessions of the failures in the loaded histories (and later starts of their agents): the rows
   * as loaded (the shell's case: the engine builds its timeline of them once) or a timeline, such
   * as an earlier outcome's (copied before the batch changes it).
   */
  timeline: SessionTimeline | readonly SessionInfo[];
  /** Stored tool.calls that results of the batch borrow their key from (see callsToLoad). */
  storedCalls: ReadonlyMap<string, StoredCall>;
  /** The shell's planBatch of these events over these stored calls, if it made one (else made here). */
  plan?: BatchPlan;
}

/** What the session phase needs: everything loaded but the trust states and their timeline. */
export type SessionPhaseInput = Omit<LoadedState, "contexts" | "timeline">;

/** What the trust phase needs besides the session phase's outcome. */
export type TrustPhaseInput = Pick<LoadedState, "workspaceId" | "configs" | "sessions" | "contexts" | "timeline">;

export interface BatchOutcome {
  records: BatchRecords;
  effects: Effect[];
  /** For each of `effects`, the index of the batch's event that produced it (effects are in event order). */
  effectEvents: number[];
  /** Next states: every session of the batch, every trust state touched or created. */
  sessions: Map<string, BatchSession>;
  contexts: Map<string, KeyContext>;
  profiles: Map<string, ModelToolProfile[]>;
  timeline: SessionTimeline;
  /** Per touched key: the domain and plugin of its last result (stored on the key row). */
  keyDomains: Map<string, string | null>;
  keyPlugins: Map<string, string | null>;
  /**
   * Per touched key: the metrics its row stores, taken at its last result over the sessions as
   * they were then, as they would be had the batch been sent event by event: a session event
   * after a key's last result does not rewrite that key's row (session decay would change).
   */
  keyMetrics: Map<string, KeyMetrics>;
  /** The call info of each tool.call of the batch, by event id. */
  keyInfoByEventId: Map<string, StoredCall>;
  /**
   * Failed results whose severity the trust phase upgraded (`permission` → `repeated_auth`: it
   * counts the key's recent failures) after the session phase's event rows were made. applyBatch
   * has applied them to `records.events`; a shell that wrote those rows earlier updates them.
   */
  severityUpgrades: SeverityUpgrade[];
}

export interface SeverityUpgrade {
  id: string;
  ts: Date;
  severity: Severity;
}

/** What the trust phase does at one event of the batch, in event order. */
export type TrustStep =
  | { kind: "session"; session: SessionInfo }
  | {
      kind: "result";
      /** Index of the event in the batch (effects are ordered by it). */
      at: number;
      event: ToolResult;
      t: number;
      agent: string;
      model: string | null;
      recoveryMode: EffectiveSettings["recoveryMode"]["value"];
      info: StoredCall;
      failed: boolean;
      /** The severity the event row was written with (before the key's recent failures were known). */
      severity: Severity | null;
    };

/** What the session phase hands the trust phase (and the shell writes before the trust-state locks). */
export interface SessionPhaseOutcome {
  plan: BatchPlan;
  records: BatchRecords;
  /** Effects with the index of the event that produced them. */
  effects: { at: number; effect: Effect }[];
  sessions: Map<string, BatchSession>;
  profiles: Map<string, ModelToolProfile[]>;
  keyInfoByEventId: Map<string, StoredCall>;
  steps: TrustStep[];
}

/** Error text as stored and shown: secrets redacted (a 401 message may quote the bearer token), at most 2000 characters. */
export const storedErrorMessage = (e: Parameters<typeof errorMessage>[0]) => redactString(boundForRedaction(errorMessage(e) ?? "", 2000)).slice(0, 2000) || null;

export const emptyRecords = (): BatchRecords => ({
  events: [],
  failures: [],
  transitions: [],
  approvalsCreated: [],
  approvalsSuperseded: [],
  patterns: [],
  nudges: [],
  nudgeVerdicts: [],
  modelToolDeltas: new Map(),
  behaviourDeltas: new Map(),
  suggestions: [],
  dailyStats: new Map(),
  touchedKeys: new Set(),
  changedLevelStates: new Set(),
  escalatedTools: new Set(),
});

/**
 * The domain a trust state's row stores: a domain-level state's own, a key's that of its last
 * result, none for a tool-level state.
 */
export function storedDomain(failureKey: string, level: StateLevel, keyDomains: ReadonlyMap<string, string | null>): string | null {
  return level === "domain" ? failureKey.slice(DOMAIN_PREFIX.length) : level === "key" ? keyDomains.get(failureKey) ?? null : null;
}

/** The longest prefix of `s` that fits in `maxBytes` of UTF-8 (never splits a character). */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s, "utf8") <= maxBytes) return s;
  const cut = Buffer.from(s, "utf8").subarray(0, maxBytes).toString("utf8");
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}
