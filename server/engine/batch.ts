/**
 * The engine owns a batch (issue 15): given the state the shell loaded and the batch's new events,
 * `applyBatch` applies every domain rule in event order — clock clamp, security
 * pre-classification, trust states (key, domain, tool), the approval lifecycle, failure history,
 * model deltas and suggestions, daily roll-ups, behaviour (patterns, nudges and their verdicts,
 * pauses) — and returns the records to write, the effects and the next states. Pure: no I/O, no
 * clock, no randomness (ids come from the caller). The shell loads, runs this, writes.
 *
 * It runs as two phases, which the shell runs apart: `applySessionPhase` (every rule that reads
 * sessions and no trust state) and `applyTrustPhase` (the trust states, over the rows the shell
 * locked after writing the session phase). `applyBatch` is both at once.
 *
 * `planBatch` is the part the shell needs before loading: which stored calls a result borrows its
 * key from, and which trust states the batch touches — with possibly-security results marking the
 * tool-level state they may create (the shell locks the whole tool for those).
 */
import { classifyFailure, errorMessage, failureWeight, httpStatusOf, isFailure, matchSecurityPattern } from "./classify";
import { extractFailureKey, sameCanonicalJson, type FailureKeyInfo } from "./failure-key";
import { fingerprintError } from "./failure-fingerprint";
import { boundForRedaction, redactedPreview, redactString } from "./redact";
import { ruleResolver, type RuleQuery } from "./rules";
import { applyToolResult } from "./trust";
import { clampClock, DOMAIN_PREFIX, TOOL_PREFIX, newKeyContext } from "./key-state";
import { copyKeyContext, keyMetrics, type KeyMetrics } from "./key-history";
import { buildSessionTimeline, copyTimeline, recordSession } from "./decay";
import { foldSessionEvent, type BehaviourEvent, type BehaviourStats } from "./patterns";
import { createSessionBehaviour, ownedSessionBehaviour, upgradeSessionBehaviour, type SessionBehaviour } from "./behaviour-state";
import { hasSuggestedModelSwitch, recordModelSwitchSuggestion, recordModelToolResult, suggestModelSwitch, type ModelToolProfile } from "./models";
import { applySettingsPatch, resolveSettings } from "./settings";
import type {
  AgentEvent,
  ConfigDocument,
  Effect,
  EffectiveConfig,
  EffectiveSettings,
  KeyContext,
  PatternType,
  ResolvedRule,
  Rule,
  SessionInfo,
  SessionSettingsInput,
  SessionTimeline,
  Severity,
  StateLevel,
  TrustState,
} from "./types";

export const MAX_TEXT_STORED = 32 * 1024;
/** A person's message (`user.message`) is stored redacted and truncated to 4 KiB (SPEC 7.1). */
export const MAX_USER_TEXT_STORED = 4 * 1024;

const SUPERSEDED = "Superseded: the key failed again and was re-escalated";
/** The UTC day of `t` (YYYY-MM-DD), remembering the last day asked for (a batch spans one or two). */
let lastDay = { start: 0, end: 0, day: "" };
const DAY = (t: number) => {
  if (t >= lastDay.start && t < lastDay.end) return lastDay.day;
  const start = Math.floor(t / 86_400_000) * 86_400_000;
  lastDay = { start, end: start + 86_400_000, day: new Date(t).toISOString().slice(0, 10) };
  return lastDay.day;
};

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

/** A `tool.call` event's payload: its call info, plugin and redacted preview, and guard.check's answer when it came through one. */
export type ToolCallPayload = {
  call: StoredCall;
  pluginName: string | null;
  preview: string;
  guard?: GuardRecord;
};

/** The payload of a tool.call's event row, built alike by a batch and by guard.check's lean path. */
export function toolCallPayload(info: StoredCall, call: { pluginName?: string; args: Record<string, unknown> }, guard?: GuardRecord): ToolCallPayload {
  const preview = redactedPreview(call.args);
  return guard ? { call: info, pluginName: call.pluginName ?? null, preview, guard } : { call: info, pluginName: call.pluginName ?? null, preview };
}

type ToolResult = Extract<AgentEvent, { type: "tool.result" }>;

/** Calls (session, callId) that results without args refer to and the batch does not carry. */
export function callsToLoad(events: readonly AgentEvent[]): { sessionId: string; callId: string }[] {
  const inBatch = new Set<string>();
  const out: { sessionId: string; callId: string }[] = [];
  for (const e of events) {
    if (e.type === "tool.call") inBatch.add(callRef(e.sessionId, e.callId));
    else if (e.type === "tool.result" && !e.args && !inBatch.has(callRef(e.sessionId, e.callId))) out.push({ sessionId: e.sessionId, callId: e.callId });
  }
  return out;
}

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

/** Security pre-classification and the trust states a batch touches (before anything is locked). */
export function planBatch(events: readonly AgentEvent[], configs: BatchConfigs, storedCalls: ReadonlyMap<string, StoredCall>): BatchPlan {
  const batchCalls = new Map<string, StoredCall>();
  const batchCallEvents = new Map<string, { toolName: string; args: Record<string, unknown> }>();
  for (const e of events) {
    if (e.type !== "tool.call") continue;
    const ref = callRef(e.sessionId, e.callId);
    batchCalls.set(ref, callInfo(e, configs));
    const extra = e as { domain?: unknown; service?: unknown };
    if (extra.domain === undefined && extra.service === undefined) batchCallEvents.set(ref, e);
  }
  const infoFor = (e: ToolResult): StoredCall => {
    if (e.args) {
      // A result that repeats its call's args (nearly all do) has its call's info: callInfo of the
      // same tool and args, neither carrying a domain or service, is the same (hashing and
      // redacting them again was ~5 µs a result).
      const ref = callRef(e.sessionId, e.callId);
      const call = e.domain === undefined && e.service === undefined ? batchCallEvents.get(ref) : undefined;
      if (call && call.toolName === e.toolName && sameCanonicalJson(call.args, e.args)) return batchCalls.get(ref)!;
      return callInfo(e, configs);
    }
    const call = batchCalls.get(callRef(e.sessionId, e.callId)) ?? storedCalls.get(callRef(e.sessionId, e.callId));
    if (call) return e.domain ? { ...call, domain: e.domain } : call;
    return callInfo(e, configs);
  };
  const ruleFor = ruleResolver(configs.workspaceDoc, configs.orgDoc);
  const plan: BatchPlan = { batchCalls, resultInfo: new Map(), createKeys: [], toolKeys: new Set(), possiblySecurityResults: new Set(), ruleFor };
  for (const e of events) {
    if (e.type !== "tool.result") continue;
    const info = infoFor(e);
    plan.resultInfo.set(e.id, info);
    plan.createKeys.push({ failureKey: info.failureKey, toolName: e.toolName, domain: info.domain });
    const res = ruleFor({ toolName: e.toolName, pluginName: e.pluginName, domain: info.domain });
    if (res.level === "domain" && res.name) plan.createKeys.push({ failureKey: DOMAIN_PREFIX + res.name, toolName: e.toolName, domain: res.name });
    const possiblySecurity =
      isFailure(e) &&
      (e.severity === "security" || (info.kind === "command" && !!info.command && matchSecurityPattern(info.command, configs.effective.securityPatterns) !== null));
    if (possiblySecurity) {
      plan.createKeys.push({ failureKey: TOOL_PREFIX + e.toolName, toolName: e.toolName, domain: null });
      plan.possiblySecurityResults.add(e.id);
    } else plan.toolKeys.add(TOOL_PREFIX + e.toolName);
  }
  return plan;
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
type TrustStep =
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
const storedErrorMessage = (e: Parameters<typeof errorMessage>[0]) => redactString(boundForRedaction(errorMessage(e) ?? "", 2000)).slice(0, 2000) || null;

const emptyRecords = (): BatchRecords => ({
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
 * Applies the batch's new (not duplicate) events in order. `newId` names the approvals the batch
 * opens. The loaded state is not modified. The same as the session phase followed by the trust
 * phase, which is how the shell runs it (writing between the two).
 */
export function applyBatch(loaded: LoadedState, events: readonly AgentEvent[], newId: () => string): BatchOutcome {
  const outcome = applyTrustPhase(loaded, applySessionPhase(loaded, events), newId);
  if (!outcome.severityUpgrades.length) return outcome;
  const upgraded = new Map(outcome.severityUpgrades.map((u) => [u.id, u.severity]));
  const rows = outcome.records.events.map((r) => (upgraded.has(r.id) ? { ...r, severity: upgraded.get(r.id)! } : r));
  return { ...outcome, records: { ...outcome.records, events: rows } };
}

/**
 * The session phase: every rule that reads sessions, never trust states — the clock clamp, the
 * event log, session counters and settings, behaviour (patterns, nudges and verdicts, pauses),
 * model profiles and suggestions, daily roll-ups. The shell runs and writes it before it locks
 * the trust-state rows, which every writer of a workspace shares, so they are held only for the
 * trust phase.
 */
export function applySessionPhase(loaded: SessionPhaseInput, events: readonly AgentEvent[]): SessionPhaseOutcome {
  const { workspaceId, configs } = loaded;
  const plan = loaded.plan ?? planBatch(events, configs, loaded.storedCalls);
  const sessions = new Map([...loaded.sessions].map(([k, s]) => [k, { ...s }]));
  const profiles = new Map([...loaded.profiles].map(([k, list]) => [k, [...list]]));
  const writes = emptyRecords();
  const effects: { at: number; effect: Effect }[] = [];
  const steps: TrustStep[] = [];
  const keyInfoByEventId = new Map<string, StoredCall>();
  // Behaviour states this batch made and may change in place: a loaded one is copied at its
  // session's first event (never changed: it may be a cached document), then folded into.
  const ownBehaviour = new WeakSet<SessionBehaviour>();
  const settingsCache = new Map<string, EffectiveSettings>();
  const settingsOf = (s: BatchSession) => {
    let v = settingsCache.get(s.sessionId);
    if (!v) {
      v = resolveSettings(s.settings, configs.workspaceDoc.settings, configs.orgDoc.settings);
      settingsCache.set(s.sessionId, v);
    }
    return v;
  };

  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    const s = sessions.get(e.sessionId)!;
    // Clock clamp: a session's time never goes back (an event older than the last one takes its time).
    const t = clampClock(s.clock, e.ts);
    s.clock = t;
    s.lastEventAt = t;
    s.firstEventAt ??= t;
    s.eventCount += 1;
    s.dirty = true;
    if (e.model) s.model = e.model;
    const settings = settingsOf(s);
    let behaviourEvent: BehaviourEvent = e as BehaviourEvent;
    const row: EventRecord = {
      workspaceId,
      id: e.id,
      sessionId: e.sessionId,
      type: e.type,
      ts: new Date(t),
      model: e.model ?? s.model,
      toolName: null,
      callId: null,
      failureKey: null,
      failed: null,
      severity: null,
      turnIndex: "turnIndex" in e && typeof e.turnIndex === "number" ? e.turnIndex : null,
      payload: {},
    };

    switch (e.type) {
      case "session.start": {
        s.agent = e.agent ?? s.agent ?? "default";
        s.startedAt = t;
        if (e.settings) {
          s.settings = applySettingsPatch(s.settings, e.settings);
          settingsCache.delete(s.sessionId);
        }
        steps.push({ kind: "session", session: { sessionId: s.sessionId, agent: s.agent, startedAt: t, endedAt: s.endedAt } });
        row.payload = { agent: s.agent, ...(e.settings ? { settings: e.settings } : {}) };
        break;
      }
      case "session.end": {
        s.endedAt = t;
        steps.push({ kind: "session", session: { sessionId: s.sessionId, agent: s.agent, startedAt: s.startedAt, endedAt: t } });
        break;
      }
      case "turn.start":
        break;
      case "tool.call": {
        const info = plan.batchCalls.get(callRef(e.sessionId, e.callId))!;
        keyInfoByEventId.set(e.id, info);
        s.callCount += 1;
        row.toolName = e.toolName;
        row.callId = e.callId;
        row.failureKey = info.failureKey;
        row.payload = toolCallPayload(info, e);
        // Fixed-shape literals, not `{ ...e }`: spreading events of many shapes is a slow path in V8
        // (about a tenth of the engine's time); the behaviour module reads these fields only.
        behaviourEvent = { type: e.type, id: e.id, sessionId: e.sessionId, ts: e.ts, callId: e.callId, toolName: e.toolName, args: e.args, turnIndex: e.turnIndex, failureKey: info.failureKey, argsHash: info.argsHash };
        break;
      }
      case "tool.result": {
        const info = plan.resultInfo.get(e.id)!;
        const failed = isFailure(e);
        const key = info.failureKey;
        const model = e.model ?? s.model;
        // The severity without the key's recent failures (not loaded yet): the trust phase upgrades
        // a repeated `permission` failure (SPEC 3), the only rule that reads them.
        const severity = failed ? classifyFailure({ ...e, ts: t }, { isCommandTool: info.kind === "command", command: info.command, securityPatterns: configs.effective.securityPatterns, recentFailures: [], now: t }).severity : null;
        steps.push({ kind: "result", at: i, event: e, t, agent: s.agent, model, recoveryMode: settings.recoveryMode.value, info, failed, severity });
        if (failed) s.failureCount += 1;
        if (model) {
          const list = profiles.get(key) ?? [];
          const idx = list.findIndex((p) => p.model === model);
          const updated = recordModelToolResult(idx >= 0 ? list[idx] : null, { model, failureKey: key, failed, now: t });
          if (idx >= 0) list[idx] = updated;
          else list.push(updated);
          profiles.set(key, list);
          addModelToolDelta(writes, model, key, failed, t);
          if (failed) {
            const behaviour = s.behaviour ?? createSessionBehaviour(s.sessionId);
            const suggestion = suggestModelSwitch({
              failureKey: key,
              profilesForKey: list,
              currentModel: model,
              strategy: settings.modelSwitchStrategy.value,
              preferredModels: settings.preferredModels.value,
              config: configs.effective.modelSwitch,
              alreadySuggested: hasSuggestedModelSwitch(behaviour, key, model),
            });
            if (suggestion && suggestion.type === "model_suggestion") {
              s.behaviour = recordModelSwitchSuggestion(behaviour, key, model);
              effects.push({ at: i, effect: suggestion });
              writes.suggestions.push({
                workspaceId,
                sessionId: s.sessionId,
                failureKey: key,
                currentModel: model,
                suggestedModel: suggestion.suggestedModel,
                strategy: suggestion.strategy,
                currentSuccessRate: suggestion.currentSuccessRate,
                suggestedSuccessRate: suggestion.suggestedSuccessRate,
                ts: new Date(t),
              });
            }
          }
        }
        addDailyStat(writes, t, e.toolName, key, failed);

        row.toolName = e.toolName;
        row.callId = e.callId;
        row.failureKey = key;
        row.failed = failed;
        row.severity = severity;
        // Not the call's info: nothing reads it back from a result (a result without args borrows
        // its key from the stored tool.call), and it was half of a result's row. Fields set one by
        // one in this order, not conditional spreads (a slow path in V8 on every result).
        const payload: Record<string, unknown> = { pluginName: e.pluginName ?? null };
        if (e.args) payload.preview = redactedPreview(e.args);
        if (failed) payload.error = storedErrorMessage(e);
        payload.httpStatus = httpStatusOf(e);
        payload.durationMs = e.durationMs ?? null;
        payload.retryCount = e.retryCount ?? null;
        payload.service = e.service ?? null;
        payload.domain = info.domain;
        row.payload = payload;
        behaviourEvent = {
          type: e.type, id: e.id, sessionId: e.sessionId, ts: e.ts, callId: e.callId, toolName: e.toolName, args: e.args,
          error: e.error, result: e.result, turnIndex: e.turnIndex, failureKey: key, argsHash: info.argsHash, failed,
        };
        break;
      }
      case "model.text": {
        // Model text quotes what the agent saw (a curl line with its bearer token): stored redacted, as errors and args are.
        // Truncate, then redact: redaction reads what is stored and a margin, not the whole text.
        const text = redactString(boundForRedaction(e.text, MAX_TEXT_STORED));
        row.payload = {
          text: text.length > MAX_TEXT_STORED ? text.slice(0, MAX_TEXT_STORED) : text,
          truncated: text.length > MAX_TEXT_STORED || boundForRedaction(e.text, MAX_TEXT_STORED) !== e.text,
          ...(e.reasoningOnly !== undefined ? { reasoningOnly: e.reasoningOnly } : {}),
        };
        break;
      }
      case "user.message": {
        const text = e.text === undefined ? null : redactString(boundForRedaction(e.text, MAX_USER_TEXT_STORED));
        row.payload =
          text === null
            ? {}
            : { text: truncateUtf8(text, MAX_USER_TEXT_STORED), truncated: Buffer.byteLength(text, "utf8") > MAX_USER_TEXT_STORED || boundForRedaction(e.text!, MAX_USER_TEXT_STORED) !== e.text };
        if (e.automated === true) row.payload.automated = true;
        break;
      }
      case "model.error": {
        // The model's API failed: a row of the session under its model, never a tool failure (SPEC 7.6).
        const error = redactString(boundForRedaction(e.error, MAX_TEXT_STORED));
        row.payload = { error: error.length > MAX_TEXT_STORED ? error.slice(0, MAX_TEXT_STORED) : error };
        const d = behaviourDelta(writes, row.model ?? "unknown");
        d.modelErrors = (d.modelErrors ?? 0) + 1;
        break;
      }
      case "permission.resolved": {
        row.toolName = e.toolName;
        row.callId = e.callId;
        row.payload = { granted: e.granted, method: e.method };
        break;
      }
    }

    // Behaviour: patterns, nudges (and their verdicts, decided once), pause.
    const working = s.behaviour && ownBehaviour.has(s.behaviour) ? s.behaviour : ownedSessionBehaviour(upgradeSessionBehaviour(s.behaviour, s.sessionId));
    const observed = foldSessionEvent(working, behaviourEvent, { patterns: configs.effective.patterns, settings }, t);
    s.behaviour = observed.state;
    ownBehaviour.add(observed.state);
    // Verdicts are on nudges sent before this event — never on one this event sends (the same
    // pattern can nudge twice within one clamped millisecond). One of this batch gets its verdict
    // before it is written; older ones are updated by the shell.
    for (const v of observed.verdicts) {
      const nudgeRow = writes.nudges.find((n) => n.sessionId === s.sessionId && n.patternType === v.patternType && n.ts.getTime() === v.sentAt && n.effective == null);
      if (nudgeRow) nudgeRow.effective = v.effective;
      else writes.nudgeVerdicts.push({ sessionId: s.sessionId, patternType: v.patternType, sentAt: v.sentAt, effective: v.effective, model: s.model });
    }
    for (const eff of observed.effects) {
      if (eff.type === "pattern") {
        s.patternCount += 1;
        writes.patterns.push({ workspaceId, sessionId: s.sessionId, model: s.model, patternType: eff.patternType, severity: eff.severity, count: eff.count, toolSequence: eff.toolSequence, ts: new Date(t) });
      } else if (eff.type === "nudge") {
        writes.nudges.push({ workspaceId, sessionId: s.sessionId, model: s.model, patternType: eff.patternType, nudgeType: eff.nudgeType, message: eff.message, ts: new Date(t) });
      } else if (eff.type === "paused") {
        s.paused = true;
        s.pauseReason = eff.reason;
        s.pausedAt = t;
      }
      effects.push({ at: i, effect: eff });
    }
    addBehaviourDelta(writes, s.model ?? "unknown", observed.stats);
    writes.events.push(row);
  }

  return { plan, records: writes, effects, sessions, profiles, keyInfoByEventId, steps };
}

/**
 * The trust phase: the results' trust states (key, domain, tool) with session decay, transitions,
 * the approval lifecycle and failure history, over the trust states the shell locked after the
 * session phase. Effects come out in event order (a result's trust effects before the session
 * phase's effects of the same event).
 */
export function applyTrustPhase(loaded: TrustPhaseInput, sessionPhase: SessionPhaseOutcome, newId: () => string): BatchOutcome {
  const { workspaceId, configs } = loaded;
  const { plan } = sessionPhase;
  const contexts = new Map(loaded.contexts);
  // Every touched state exists from here on (the shell inserted rows for them). A tool-level state
  // this batch creates (for a possibly-security failure) counts results only from that failure on:
  // results earlier in the batch must not land on it, or one batch would differ from the same
  // events sent one by one (the state would not exist yet for them).
  const liveToolStates = new Set([...contexts.keys()].filter((k) => k.startsWith(TOOL_PREFIX)));
  for (const c of plan.createKeys) if (!contexts.has(c.failureKey)) contexts.set(c.failureKey, newKeyContext(c.failureKey, c.toolName));
  // The batch applies its results to its own copy of each state it touches, in place (copied
  // once, at its first result, instead of at every result: see ApplyOptions.inPlace).
  const owned = new Set<string>();
  const ownedContext = (k: string): KeyContext | null => {
    const ctx = contexts.get(k);
    if (!ctx || owned.has(k)) return ctx ?? null;
    const mine = copyKeyContext(ctx);
    contexts.set(k, mine);
    owned.add(k);
    return mine;
  };
  const approvalPendingBefore = new Map<string, boolean>([...contexts].map(([k, c]) => [k, c.state.approvalPending]));

  // Decay reads the sessions as they were before the batch, then as its events change them (this
  // batch's own copy, changed in place).
  const timeline = "sessions" in loaded.timeline ? copyTimeline(loaded.timeline) : buildSessionTimeline(loaded.timeline);
  for (const s of loaded.sessions.values()) recordSession(timeline, { sessionId: s.sessionId, agent: s.agent, startedAt: s.startedAt, endedAt: s.endedAt });

  const writes: BatchRecords = { ...sessionPhase.records, failures: [], transitions: [], approvalsCreated: [], approvalsSuperseded: [], touchedKeys: new Set(), changedLevelStates: new Set(), escalatedTools: new Set() };
  const trustEffects: { at: number; effect: Effect }[] = [];
  const severityUpgrades: SeverityUpgrade[] = [];
  const keyDomains = new Map<string, string | null>();
  const keyPlugins = new Map<string, string | null>();
  // The rule each touched key was applied under (plugin rules need the event's pluginName).
  const keyRules = new Map<string, Rule>();
  // A touched key's stored metrics are taken over the timeline of its last result: the keys
  // touched since the timeline last changed get theirs before it changes again, and at the end.
  const storedMetrics = new Map<string, KeyMetrics>();
  const metricsDue = new Set<string>();
  const takeDueMetrics = () => {
    for (const k of metricsDue) storedMetrics.set(k, storedKeyMetrics(k, contexts.get(k)!, keyRules.get(k), keyDomains, plan.ruleFor, timeline));
    metricsDue.clear();
  };

  for (const step of sessionPhase.steps) {
    if (step.kind === "session") {
      takeDueMetrics();
      recordSession(timeline, step.session);
      continue;
    }
    const { event: e, t, info } = step;
    const key = info.failureKey;
    const keyCtx = ownedContext(key) ?? newKeyContext(key, e.toolName);
    const resolution = plan.ruleFor({ toolName: e.toolName, pluginName: e.pluginName, domain: info.domain });
    const domainKey = resolution.level === "domain" && resolution.name ? DOMAIN_PREFIX + resolution.name : null;
    const toolKey = TOOL_PREFIX + e.toolName;
    if (plan.possiblySecurityResults.has(e.id)) liveToolStates.add(toolKey);
    const toolCtx = liveToolStates.has(toolKey) ? contexts.get(toolKey) ?? null : null;
    let severity: Severity | null = null;
    if (step.failed) {
      severity = classifyFailure(
        { ...e, ts: t },
        { isCommandTool: info.kind === "command", command: info.command, securityPatterns: configs.effective.securityPatterns, recentFailures: keyCtx.failures, now: t },
      ).severity;
      if (severity !== step.severity) severityUpgrades.push({ id: e.id, ts: new Date(t), severity });
    }
    const before = {
      key: keyCtx.state.state,
      domain: domainKey ? contexts.get(domainKey)?.state.state : undefined,
      tool: toolCtx?.state.state,
    };
    const applied = applyToolResult(
      { key: keyCtx, domain: domainKey ? ownedContext(domainKey) : null, tool: toolCtx },
      { failed: step.failed, severity, weight: severity ? failureWeight(severity) : undefined, sessionId: e.sessionId, agent: step.agent, toolName: e.toolName },
      resolution,
      step.recoveryMode,
      timeline,
      t,
      { inPlace: true },
    );
    contexts.set(key, applied.key);
    writes.touchedKeys.add(key);
    metricsDue.add(key);
    keyDomains.set(key, info.domain);
    keyPlugins.set(key, e.pluginName ?? null);
    keyRules.set(key, resolution.rule);
    if (domainKey) keyRules.set(domainKey, resolution.rule);
    if (applied.domain) {
      contexts.set(applied.domain.state.failureKey, applied.domain);
      writes.touchedKeys.add(applied.domain.state.failureKey);
      metricsDue.add(applied.domain.state.failureKey);
    }
    if (applied.tool) {
      contexts.set(toolKey, applied.tool);
      writes.touchedKeys.add(toolKey);
      metricsDue.add(toolKey);
    }
    const transitions: [string, TrustState | undefined, TrustState | undefined][] = [
      [key, before.key, applied.key.state.state],
      [domainKey ?? "", before.domain, applied.domain?.state.state],
      [toolKey, before.tool, applied.tool?.state.state],
    ];
    for (const [k, from, to] of transitions) {
      if (!k || !to || from === to) continue;
      const st = contexts.get(k)!.state;
      const reason =
        to === "trusted" ? "recovered" : to === "recovering" ? `escalation expired and cooled down; ${st.recoverySuccesses}/${st.recoveryNeeded} successful calls` : st.escalationReason;
      writes.transitions.push({ workspaceId, failureKey: k, fromState: from ?? "trusted", toState: to, reason, actor: null, at: new Date(t) });
      if (k !== key) writes.changedLevelStates.add(k);
      if (to === "escalated" || to === "blocked") writes.escalatedTools.add(e.toolName);
    }
    applyApprovalLifecycle(writes, applied.effects, [key, domainKey], contexts, approvalPendingBefore, { workspaceId, toolName: e.toolName, t, newId });
    for (const effect of applied.effects) trustEffects.push({ at: step.at, effect });

    if (step.failed && severity) {
      const errorMessage = storedErrorMessage(e);
      writes.failures.push({
        workspaceId,
        eventId: e.id,
        failureKey: key,
        toolName: e.toolName,
        domain: info.domain,
        severity,
        weight: failureWeight(severity),
        ts: new Date(t),
        sessionId: e.sessionId,
        agent: step.agent,
        model: step.model,
        errorMessage,
        httpStatus: httpStatusOf(e),
        argsHash: info.argsHash,
        fingerprint: fingerprintError(errorMessage).fingerprint,
      });
    }
  }

  takeDueMetrics();

  return {
    records: writes,
    ...mergeByEvent(trustEffects, sessionPhase.effects),
    sessions: sessionPhase.sessions,
    contexts,
    profiles: sessionPhase.profiles,
    timeline,
    keyDomains,
    keyPlugins,
    keyMetrics: storedMetrics,
    keyInfoByEventId: sessionPhase.keyInfoByEventId,
    severityUpgrades,
  };
}

/**
 * The domain a trust state's row stores: a domain-level state's own, a key's that of its last
 * result, none for a tool-level state.
 */
export function storedDomain(failureKey: string, level: StateLevel, keyDomains: ReadonlyMap<string, string | null>): string | null {
  return level === "domain" ? failureKey.slice(DOMAIN_PREFIX.length) : level === "key" ? keyDomains.get(failureKey) ?? null : null;
}

/** A touched key's stored metrics, under the rule of its last result (a tool-level state: the tool's rule). */
function storedKeyMetrics(
  failureKey: string,
  ctx: KeyContext,
  rule: Rule | undefined,
  keyDomains: ReadonlyMap<string, string | null>,
  ruleFor: (q: RuleQuery) => ResolvedRule,
  timeline: SessionTimeline,
): KeyMetrics {
  const st = ctx.state;
  return keyMetrics(ctx, rule ?? ruleFor({ toolName: st.toolName, domain: storedDomain(failureKey, st.level, keyDomains) }).rule, timeline);
}

/** Two event-ordered effect lists as one; at the same event, `first`'s effects come first. */
function mergeByEvent(first: { at: number; effect: Effect }[], second: { at: number; effect: Effect }[]): Pick<BatchOutcome, "effects" | "effectEvents"> {
  const effects: Effect[] = [];
  const effectEvents: number[] = [];
  let i = 0;
  let j = 0;
  while (i < first.length || j < second.length) {
    const next = j >= second.length || (i < first.length && first[i].at <= second[j].at) ? first[i++] : second[j++];
    effects.push(next.effect);
    effectEvents.push(next.at);
  }
  return { effects, effectEvents };
}

/**
 * The approval lifecycle of one result: a `recovery_pending` effect opens an approval (named
 * here, so the effect carries its id); a key or domain that waited for one and no longer does
 * (it failed again and re-escalated) has its pending approval closed as superseded — in this
 * batch's records if the batch opened it, else by the shell on the stored row.
 */
function applyApprovalLifecycle(
  writes: BatchRecords,
  resultEffects: Effect[],
  keys: (string | null)[],
  contexts: Map<string, KeyContext>,
  pendingBefore: Map<string, boolean>,
  at: { workspaceId: string; toolName: string; t: number; newId: () => string },
) {
  for (const eff of resultEffects) {
    if (eff.type !== "recovery_pending") continue;
    const id = at.newId();
    eff.approvalId = id;
    writes.approvalsCreated.push({ workspaceId: at.workspaceId, id, kind: "recovery", failureKey: eff.failureKey, toolName: at.toolName, status: "pending", createdAt: new Date(at.t) });
  }
  for (const k of keys) {
    if (!k) continue;
    const c = contexts.get(k)!;
    if (pendingBefore.get(k) && !c.state.approvalPending && c.state.state !== "trusted") {
      const inBatch = writes.approvalsCreated.find((a) => a.failureKey === k && a.status === "pending");
      if (inBatch) Object.assign(inBatch, { status: "denied", resolvedAt: new Date(at.t), resolvedBy: "system", comment: SUPERSEDED });
      else writes.approvalsSuperseded.push(k);
    }
    pendingBefore.set(k, c.state.approvalPending);
  }
}

function addModelToolDelta(writes: BatchRecords, model: string, failureKey: string, failed: boolean, t: number) {
  const dk = `${model}\u0000${failureKey}`;
  const d = writes.modelToolDeltas.get(dk) ?? { model, failureKey, attempts: 0, failures: 0, lastFailureAt: null };
  d.attempts += 1;
  if (failed) {
    d.failures += 1;
    d.lastFailureAt = t;
  }
  writes.modelToolDeltas.set(dk, d);
}

function addDailyStat(writes: BatchRecords, t: number, toolName: string, failureKey: string, failed: boolean) {
  const dayKey = `${DAY(t)}\u0000${toolName}\u0000${failureKey}`;
  const ds = writes.dailyStats.get(dayKey) ?? { day: DAY(t), toolName, failureKey, results: 0, failures: 0 };
  ds.results += 1;
  if (failed) ds.failures += 1;
  writes.dailyStats.set(dayKey, ds);
}

function addBehaviourDelta(writes: BatchRecords, model: string, stats: BehaviourStats) {
  const any = stats.nudgesSent || stats.nudgesEffective || stats.turns || stats.stalledTurns || Object.keys(stats.patterns).length;
  if (!any) return;
  const d = behaviourDelta(writes, model);
  for (const [k, v] of Object.entries(stats.patterns)) d.patterns[k as PatternType] = (d.patterns[k as PatternType] ?? 0) + (v ?? 0);
  d.nudgesSent += stats.nudgesSent;
  d.nudgesEffective += stats.nudgesEffective;
  d.turns += stats.turns;
  d.stalledTurns += stats.stalledTurns;
}

/** The batch's behaviour counters of a model, created empty. */
function behaviourDelta(writes: BatchRecords, model: string): BehaviourDelta {
  let d = writes.behaviourDeltas.get(model);
  if (!d) writes.behaviourDeltas.set(model, (d = { patterns: {}, nudgesSent: 0, nudgesEffective: 0, turns: 0, stalledTurns: 0 }));
  return d;
}

/** The longest prefix of `s` that fits in `maxBytes` of UTF-8 (never splits a character). */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s, "utf8") <= maxBytes) return s;
  const cut = Buffer.from(s, "utf8").subarray(0, maxBytes).toString("utf8");
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}
