/**
 * guard.check (SPEC 7.2) in the engine: the level keys a call reads, the decision from them, the
 * answer's shape, the answer as recorded on the call's event, and the tool-call step of the lean
 * path. Pure: time comes from the call (its `ts`), state from the caller. The lean path and the full
 * path (applyBatch, then `guardVerdict`) decide with the same functions and record the call with the
 * same clock clamp and payload builder.
 */
import { resolveRule } from "./rules";
import { DOMAIN_PREFIX, TOOL_PREFIX, clampClock, effectiveState, strictestState } from "./key-state";
import { escalationInfo, type EscalationInfo } from "./escalation";
import { DEFAULT_AGENT } from "./decay";
import { evaluatePolicies, policiesOf, type PolicyHit } from "./policies";
import { extractFailureKey } from "./failure-key";
import { resolveSettings } from "./settings";
import { observeSessionEvent } from "./patterns";
import { createSessionBehaviour, upgradeSessionBehaviour, type SessionBehaviour } from "./behaviour-state";
import { storedCall, toolCallPayload, type GuardRecord, type StoredCall, type ToolCallPayload, type WorkspaceConfigs } from "./batch";
import type { AgentEvent, BlockedDecision, Decision, Effect, KeyState, SessionSettingsInput, TrustState } from "./types";

type ToolCall = Extract<AgentEvent, { type: "tool.call" }>;

export interface GuardDecisionInput {
  /** The session paused, or held (session, agent or workspace). */
  paused: boolean;
  effectiveState: TrustState;
  globalPattern: boolean;
  blockedDecision: BlockedDecision;
  /** What the policies and built-in risk rules say (SPEC 4.5); absent or null: nothing matched. */
  policyDecision?: "allow" | "ask" | "deny" | null;
  /** The session's tool-call budget is spent by this call (SPEC 4.6). */
  budgetSpent?: boolean;
}

/** Which step of the decision order gave the answer (the answer's reason comes from it). */
export type GuardDecisionCause = "paused" | "policy" | "budget" | "state" | "global" | "none";

/**
 * SPEC 4.5 guard.check decision, first that applies: paused or held → pause; a deny policy →
 * deny; the tool-call budget spent → pause; blocked → blockedDecision; an ask policy, an
 * escalated or recovering state, or a global pattern → ask; else allow. An `allow` policy changes
 * none of these (it only exempts from the built-in risk rules, in the policy evaluation).
 */
export function guardOutcome(input: GuardDecisionInput): { decision: Decision; cause: GuardDecisionCause } {
  if (input.paused) return { decision: "pause", cause: "paused" };
  if (input.policyDecision === "deny") return { decision: "deny", cause: "policy" };
  if (input.budgetSpent) return { decision: "pause", cause: "budget" };
  if (input.effectiveState === "blocked") return { decision: input.blockedDecision, cause: "state" };
  if (input.policyDecision === "ask") return { decision: "ask", cause: "policy" };
  if (input.effectiveState !== "trusted") return { decision: "ask", cause: "state" };
  if (input.globalPattern) return { decision: "ask", cause: "global" };
  return { decision: "allow", cause: "none" };
}

/** guard.check's decision (guardOutcome without its cause). */
export function guardDecision(input: GuardDecisionInput): Decision {
  return guardOutcome(input).decision;
}

/** The call's failure key and the trust states guard.check reads: the key's, its domain's, its tool's. */
export function guardLevelKeys(call: { toolName: string; args: Record<string, unknown> }, configs: WorkspaceConfigs) {
  const info = extractFailureKey(call.toolName, call.args, {}, configs.effective.extractors);
  const levelKeys = [info.failureKey, TOOL_PREFIX + call.toolName, ...(info.domain ? [DOMAIN_PREFIX + info.domain] : [])];
  return { info, levelKeys };
}

export type GuardLevelKeys = ReturnType<typeof guardLevelKeys>;

export interface GuardVerdict {
  decision: Decision;
  failureKey: string;
  state: TrustState;
  reason: string | null;
  escalation: EscalationInfo | null;
  /** The policy or built-in risk rule that matched the call (SPEC 4.5), else null. */
  policy: PolicyHit | null;
  /** Watch mode (SPEC 4.6): the decision enforcement would have given; null when enforcing. */
  wouldDecide: Decision | null;
  /** Set when this call spends the session's tool-call budget and enforcement pauses the session: the pause's reason. */
  pausesSession: string | null;
  /** What decided (for the metrics); `none` in watch mode, where nothing did. */
  cause: GuardDecisionCause;
  /** The session's agent (for the metrics). */
  agent: string;
}

/** The session as the decision reads it. `callCount`: the session's tool calls including this one (for the budget). */
export interface GuardSession {
  paused: boolean;
  pauseReason: string | null;
  settings: SessionSettingsInput;
  callCount?: number;
  agent?: string;
}

export interface GuardVerdictInput {
  call: { toolName: string; pluginName?: string; args: Record<string, unknown>; ts: number };
  /** The call's `guardLevelKeys` under these configs: the caller computed them to read the states. */
  keys: GuardLevelKeys;
  session: GuardSession;
  configs: WorkspaceConfigs;
  /** The level keys' trust states (the decision needs no history: failures and results stay in the database). */
  states: Map<string, KeyState>;
  globalPattern: boolean;
}

/** The reason of a pause by the tool-call budget (SPEC 4.6). */
const budgetReason = (max: number) => `tool-call budget of ${max} calls reached`;

/** guard.check's decision (SPEC 4.5, 4.6) from the call, the session, the rules and the level keys' states. */
export function guardVerdict(input: GuardVerdictInput): GuardVerdict {
  const { call, keys, session, configs, states, globalPattern } = input;
  const { info, levelKeys } = keys;
  const resolution = resolveRule(configs.workspaceDoc, configs.orgDoc, { toolName: call.toolName, pluginName: call.pluginName, domain: info.domain });
  const strictest = strictestState(levelKeys.map((k) => states.get(k)));
  const state = effectiveState(levelKeys.map((k) => states.get(k)));
  const settings = resolveSettings(session.settings, configs.workspaceDoc.settings, configs.orgDoc.settings);
  const policies = evaluatePolicies(policiesOf(configs.effective), call.toolName, call.args);
  const budget = settings.maxToolCallsPerSession.value;
  const budgetSpent = budget !== null && (session.callCount ?? 0) > budget;
  const { decision, cause } = guardOutcome({
    paused: session.paused,
    effectiveState: state,
    globalPattern,
    blockedDecision: settings.blockedDecision.value,
    policyDecision: policies.decision,
    budgetSpent,
  });
  let reason: string | null = null;
  if (cause === "paused") reason = session.pauseReason ?? "Session paused";
  else if (cause === "policy") reason = policies.policy?.reason ?? null;
  else if (cause === "budget") reason = budgetReason(budget!);
  else if (state !== "trusted") reason = strictest?.escalationReason ?? null;
  else if (globalPattern) reason = `Tool '${call.toolName}' is failing across several workspaces of the organization (global tool pattern)`;
  const watching = settings.enforcement.value === "watch";
  return {
    decision: watching ? "allow" : decision,
    failureKey: info.failureKey,
    state,
    reason,
    escalation: escalationInfo(strictest, resolution.rule, settings.recoveryMode.value, call.ts),
    policy: policies.policy,
    wouldDecide: watching ? decision : null,
    pausesSession: cause === "budget" && !watching ? reason : null,
    cause: watching ? "none" : cause,
    agent: session.agent ?? DEFAULT_AGENT,
  };
}

/** guard.check's answer fields of a verdict, in the answer's order (`policy` and `wouldDecide` after the fields of SPEC 7.2). */
export function guardAnswer(v: GuardVerdict, rest: { approvalId: string | null; effects: Effect[] }) {
  return {
    decision: v.decision,
    failureKey: v.failureKey,
    state: v.state,
    reason: v.reason,
    escalation: v.escalation,
    approvalId: rest.approvalId,
    effects: rest.effects,
    policy: v.policy,
    wouldDecide: v.wouldDecide,
  };
}

/** The answer as kept on the call's event (`payload.guard`): the session timeline shows it beside the call. */
export function guardRecord(v: {
  decision: string;
  reason: string | null;
  failureKey: string;
  policy?: { name: string; level: string; decision: string } | null;
  wouldDecide?: string | null;
}): GuardRecord {
  const r: GuardRecord = { decision: v.decision, reason: v.reason, failureKey: v.failureKey };
  if (v.policy) r.policy = { name: v.policy.name, level: v.policy.level, decision: v.policy.decision };
  if (v.wouldDecide) r.wouldDecide = v.wouldDecide;
  return r;
}

/** A stored session row's fields as guard.check reads and writes them (an agent_session row, column names). */
export interface GuardSessionFields {
  model: string | null;
  paused: boolean;
  pause_reason: string | null;
  settings: SessionSettingsInput;
  /** Epoch ms (a bigint column may arrive as text). */
  clock: number | string | null;
  first_event_at: string | null;
  event_count: number;
  call_count: number;
  agent?: string;
}

/** The session the decision reads, from its stored row (null: a new session), with this call counted. Fold holds into it before deciding. */
export function guardSession(stored: GuardSessionFields | null): GuardSession & { agent: string } {
  return {
    paused: stored?.paused ?? false,
    pauseReason: stored?.pause_reason ?? null,
    settings: (stored?.settings ?? {}) as SessionSettingsInput,
    callCount: (stored?.call_count ?? 0) + 1,
    agent: stored?.agent ?? DEFAULT_AGENT,
  };
}

export interface GuardToolCallInput extends GuardVerdictInput {
  call: ToolCall;
  /** `guardSession(stored)` with the holds over it folded in. */
  session: GuardSession;
  /** The stored row, null for a new session; `behaviour` null when the caller holds it as `cachedBehaviour`. */
  stored: (GuardSessionFields & { behaviour?: unknown }) | null;
  /** The session's behaviour when the caller holds the row's current version. */
  cachedBehaviour: SessionBehaviour | null;
  /** The call's event id was recorded before (a client's retry). */
  duplicate: boolean;
}

/** A recorded call answers from the current state and writes nothing. */
export interface GuardRepeatedCall {
  duplicate: true;
  verdict: GuardVerdict;
}

/** A new call: the answer and what to write — the session's next fields and behaviour, the call's event payload. */
export interface GuardCallWrite {
  duplicate: false;
  verdict: GuardVerdict;
  /** The session's fields after the call; `clock` is the call's clamped time. */
  fields: GuardSessionFields & { clock: number; first_event_at: string };
  /** `fields.clock` as an ISO time: the event's time and the session's last event. */
  at: string;
  behaviour: SessionBehaviour;
  /** What the event log keeps of the call's extraction. */
  info: StoredCall;
  payload: ToolCallPayload;
}

/**
 * The engine's step for one `tool.call` of guard.check's lean path: the decision, then the same
 * session step applyBatch takes for a tool.call (clock clamp, counters, behaviour, the event's
 * payload). Null when the answer needs the full path: an `ask` (tool-call approvals), a pause by the
 * tool-call budget, a policy's deny (its notification), or any behaviour effect of the call
 * (pattern, nudge, pause, verdict, turn or pattern counters).
 */
export function guardToolCallStep(input: GuardToolCallInput): GuardRepeatedCall | GuardCallWrite | null {
  const verdict = guardVerdict(input);
  if (verdict.decision === "ask" || verdict.pausesSession !== null || (verdict.cause === "policy" && verdict.decision === "deny")) return null;
  if (input.duplicate) return { duplicate: true, verdict };

  const { call: ev, stored, configs } = input;
  // callInfo's extraction, done once: a guard.check carries no domain or service hints, so the
  // level keys' extraction under these configs is the one the event log keeps.
  const info = storedCall(input.keys.info);
  const t = clampClock(stored?.clock == null ? null : Number(stored.clock), ev.ts);
  const model = ev.model ?? stored?.model ?? null;
  const sessionSettings = input.session.settings;
  const settings = resolveSettings(sessionSettings, configs.workspaceDoc.settings, configs.orgDoc.settings);
  const behaviour = input.cachedBehaviour ?? (stored?.behaviour ? upgradeSessionBehaviour(stored.behaviour, ev.sessionId) : createSessionBehaviour(ev.sessionId));
  const observed = observeSessionEvent(behaviour, { ...ev, failureKey: info.failureKey, argsHash: info.argsHash }, { patterns: configs.effective.patterns, settings }, t);
  const st = observed.stats;
  if (observed.effects.length || observed.verdicts.length || st.turns || st.stalledTurns || st.nudgesSent || st.nudgesEffective || Object.keys(st.patterns).length) return null;

  const at = new Date(t).toISOString();
  return {
    duplicate: false,
    verdict,
    fields: {
      model,
      // The row keeps its own pause: a hold pauses the decision only.
      paused: stored?.paused ?? false,
      pause_reason: stored?.pause_reason ?? null,
      settings: sessionSettings,
      clock: t,
      first_event_at: stored?.first_event_at ? new Date(stored.first_event_at).toISOString() : at,
      event_count: (stored?.event_count ?? 0) + 1,
      call_count: (stored?.call_count ?? 0) + 1,
      agent: stored?.agent,
    },
    at,
    behaviour: observed.state,
    info,
    payload: toolCallPayload(info, ev, guardRecord(verdict)),
  };
}
