/** What the shell needs before loading a batch: the stored calls its results borrow a key from, the trust states it touches. */
import { isFailure, matchSecurityPattern } from "./classify";
import { sameCanonicalJson } from "./failure-key";
import { ruleResolver } from "./rules";
import { DOMAIN_PREFIX, TOOL_PREFIX } from "./key-state";
import type { AgentEvent } from "./types";
import { type BatchConfigs, type BatchPlan, type StoredCall, type ToolResult, callInfo, callRef } from "./batch";

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
