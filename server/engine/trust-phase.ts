/** The trust phase of a batch (see apply-batch.ts). */
import { classifyFailure, failureWeight, httpStatusOf } from "./classify";
import { fingerprintError } from "./failure-fingerprint";
import type { RuleQuery } from "./rules";
import { applyToolResult } from "./trust";
import { DOMAIN_PREFIX, TOOL_PREFIX, newKeyContext } from "./key-state";
import { copyKeyContext, keyMetrics, type KeyMetrics } from "./key-history";
import { buildSessionTimeline, copyTimeline, recordSession } from "./decay";
import type { Effect, KeyContext, ResolvedRule, Rule, SessionTimeline, Severity, TrustState } from "./types";
import { type BatchOutcome, type BatchRecords, type SessionPhaseOutcome, type SeverityUpgrade, type TrustPhaseInput, storedDomain, storedErrorMessage } from "./batch";

const SUPERSEDED = "Superseded: the key failed again and was re-escalated";

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
