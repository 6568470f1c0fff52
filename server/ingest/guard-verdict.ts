/** guard.check's decision from its inputs (pure): one implementation for the lean and the full path. */
import { resolveRule } from "@/server/engine/rules";
import { DOMAIN_PREFIX, TOOL_PREFIX, effectiveState, escalationInfo, guardOutcome, strictestState, type EscalationInfo, type GuardDecisionCause } from "@/server/engine/trust";
import { DEFAULT_AGENT } from "@/server/engine/decay";
import { evaluatePolicies, policiesOf, type PolicyHit } from "@/server/engine/policies";
import { extractFailureKey } from "@/server/engine/failure-key";
import { resolveSettings } from "@/server/engine/settings";
import type { Decision, Effect, KeyState, SessionSettingsInput, TrustState } from "@/server/engine/types";
import type { WorkspaceConfigs } from "./load";

/** The call's failure key and the trust states guard.check reads: the key's, its domain's, its tool's. */
export function guardLevelKeys(call: { toolName: string; args: Record<string, unknown> }, configs: WorkspaceConfigs) {
  const info = extractFailureKey(call.toolName, call.args, {}, configs.effective.extractors);
  const levelKeys = [info.failureKey, TOOL_PREFIX + call.toolName, ...(info.domain ? [DOMAIN_PREFIX + info.domain] : [])];
  return { info, levelKeys };
}

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

/** The reason of a pause by the tool-call budget (SPEC 4.6). */
export const budgetReason = (max: number) => `tool-call budget of ${max} calls reached`;

export function guardVerdict(input: {
  call: { toolName: string; pluginName?: string; args: Record<string, unknown>; ts: number };
  /** The call's `guardLevelKeys` under these configs: the caller computed them to read the states. */
  keys: ReturnType<typeof guardLevelKeys>;
  /** `callCount`: the session's tool calls including this one (for the budget). */
  session: { paused: boolean; pauseReason: string | null; settings: SessionSettingsInput; callCount?: number; agent?: string };
  configs: WorkspaceConfigs;
  /** The level keys' trust states (the decision needs no history: failures and results stay in the database). */
  states: Map<string, KeyState>;
  globalPattern: boolean;
}): GuardVerdict {
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
