/** guard.check's decision from its inputs (pure): one implementation for the lean and the full path. */
import { resolveRule } from "@/server/engine/rules";
import { DOMAIN_PREFIX, TOOL_PREFIX, effectiveState, escalationInfo, guardDecision, strictestState, type EscalationInfo } from "@/server/engine/trust";
import { extractFailureKey } from "@/server/engine/failure-key";
import { resolveSettings } from "@/server/engine/settings";
import type { Decision, KeyState, SessionSettingsInput, TrustState } from "@/server/engine/types";
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
}

export function guardVerdict(input: {
  call: { toolName: string; pluginName?: string; args: Record<string, unknown>; ts: number };
  /** The call's `guardLevelKeys` under these configs: the caller computed them to read the states. */
  keys: ReturnType<typeof guardLevelKeys>;
  session: { paused: boolean; pauseReason: string | null; settings: SessionSettingsInput };
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
  const decision = guardDecision({ paused: session.paused, effectiveState: state, globalPattern, blockedDecision: settings.blockedDecision.value });
  let reason: string | null = null;
  if (decision === "pause") reason = session.pauseReason ?? "Session paused";
  else if (state !== "trusted") reason = strictest?.escalationReason ?? null;
  else if (globalPattern) reason = `Tool '${call.toolName}' is failing across several workspaces of the organization (global tool pattern)`;
  return {
    decision,
    failureKey: info.failureKey,
    state,
    reason,
    escalation: escalationInfo(strictest, resolution.rule, settings.recoveryMode.value, call.ts),
  };
}
