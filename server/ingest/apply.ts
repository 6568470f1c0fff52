/**
 * The shell around the engine: loads state for a batch, runs the pure engine event by event in
 * order, and writes everything back — all inside the caller's transaction.
 */
import { randomUUID } from "node:crypto";
import type { Tx } from "@/db/client";
import { classifyFailure, failureWeight, isFailure, matchSecurityPattern, errorMessage, httpStatusOf } from "@/server/engine/classify";
import { extractFailureKey } from "@/server/engine/failure-key";
import { redactedPreview, redactString } from "@/server/engine/redact";

/** Error text as stored and shown: secrets redacted (a 401 message may quote the bearer token), at most 2000 characters. */
const storedErrorMessage = (e: Parameters<typeof errorMessage>[0]) => redactString(errorMessage(e) ?? "").slice(0, 2000) || null;
import { resolveRule } from "@/server/engine/rules";
import { applyToolResult, DOMAIN_PREFIX, TOOL_PREFIX, newKeyContext } from "@/server/engine/trust";
import { buildSessionTimeline, withSession } from "@/server/engine/decay";
import { observeSessionEvent, type BehaviourEvent, type BehaviourStats } from "@/server/engine/patterns";
import { createSessionBehaviour } from "@/server/engine/behaviour-state";
import {
  hasSuggestedModelSwitch,
  recordModelSwitchSuggestion,
  recordModelToolResult,
  suggestModelSwitch,
  type ModelToolProfile,
} from "@/server/engine/models";
import { applySettingsPatch, resolveSettings } from "@/server/engine/settings";
import type { AgentEvent, Effect, EffectiveSettings, KeyContext, Rule, SessionTimeline, TrustState } from "@/server/engine/types";
import {
  callRef,
  claimEventIds,
  loadConfigs,
  loadModelProfiles,
  loadStoredCalls,
  loadTimelineSessions,
  lockKeyStates,
  lockSessions,
  lockToolLevels,
  type SessionRow,
  type StoredCall,
  type WorkspaceConfigs,
} from "./load";
import { MAX_TEXT_STORED, MAX_USER_TEXT_STORED } from "./schema";
import { writeBatch, type BatchWrites } from "./persist";
import { enqueueNotifications } from "@/server/notifications/outbox";

export interface BatchScope {
  workspaceId: string;
  organizationId: string;
}

export interface BatchResult {
  accepted: number;
  duplicates: number;
  effects: Effect[];
  /** State after the batch, for guard.check's decision. */
  sessions: Map<string, SessionRow>;
  configs: WorkspaceConfigs;
  keyInfoByEventId: Map<string, StoredCall>;
}

const SUPERSEDED = "Superseded: the key failed again and was re-escalated";
const DAY = (t: number) => new Date(t).toISOString().slice(0, 10);

export function callInfo(e: { toolName: string; args?: Record<string, unknown>; domain?: string; service?: string }, configs: WorkspaceConfigs): StoredCall {
  const info = extractFailureKey(e.toolName, e.args ?? {}, { domain: e.domain ?? null, service: e.service ?? null }, configs.effective.extractors);
  return {
    failureKey: info.failureKey,
    argsHash: info.argsHash,
    domain: info.domain,
    kind: info.kind,
    command: info.command !== null ? redactString(info.command).slice(0, 4096) : null,
    params: info.params,
  };
}

export async function applyBatch(tx: Tx, scope: BatchScope, events: AgentEvent[]): Promise<BatchResult> {
  const { workspaceId } = scope;
  const configs = await loadConfigs(tx, workspaceId);
  const sessions = await lockSessions(tx, workspaceId, events.map((e) => e.sessionId));

  // Duplicates: ids claimed by earlier batches (a concurrent claim of the same id waits for the
  // other transaction) and repeats within this one. Claiming is the idempotency record itself.
  const claimed = await claimEventIds(tx, workspaceId, events);
  const fresh: AgentEvent[] = [];
  for (const e of events) {
    if (!claimed.delete(e.id)) continue;
    fresh.push(e);
  }
  const duplicates = events.length - fresh.length;
  const keyInfoByEventId = new Map<string, StoredCall>();
  if (!fresh.length) return { accepted: 0, duplicates, effects: [], sessions, configs, keyInfoByEventId };

  // Resolve the call info of every tool event up front (results without args borrow their call's).
  const batchCalls = new Map<string, StoredCall>();
  const missingCalls: { sessionId: string; callId: string }[] = [];
  for (const e of fresh) {
    if (e.type === "tool.call") batchCalls.set(callRef(e.sessionId, e.callId), callInfo(e, configs));
    else if (e.type === "tool.result" && !e.args && !batchCalls.has(callRef(e.sessionId, e.callId)))
      missingCalls.push({ sessionId: e.sessionId, callId: e.callId });
  }
  const storedCalls = await loadStoredCalls(tx, workspaceId, missingCalls);
  const infoFor = (e: Extract<AgentEvent, { type: "tool.result" }>): StoredCall => {
    if (e.args) return callInfo(e, configs);
    const call = batchCalls.get(callRef(e.sessionId, e.callId)) ?? storedCalls.get(callRef(e.sessionId, e.callId));
    if (call) return e.domain ? { ...call, domain: e.domain } : call;
    return callInfo(e, configs);
  };

  // Which trust states the results touch.
  const createKeys: { failureKey: string; toolName: string; domain: string | null }[] = [];
  const toolKeys = new Set<string>();
  const resultInfo = new Map<string, StoredCall>();
  const possiblySecurityResults = new Set<string>();
  for (const e of fresh) {
    if (e.type !== "tool.result") continue;
    const info = infoFor(e);
    resultInfo.set(e.id, info);
    createKeys.push({ failureKey: info.failureKey, toolName: e.toolName, domain: info.domain });
    const res = resolveRule(configs.workspaceDoc, configs.orgDoc, { toolName: e.toolName, pluginName: e.pluginName, domain: info.domain });
    if (res.level === "domain" && res.name) createKeys.push({ failureKey: DOMAIN_PREFIX + res.name, toolName: e.toolName, domain: res.name });
    const possiblySecurity =
      isFailure(e) &&
      (e.severity === "security" || (info.kind === "command" && !!info.command && matchSecurityPattern(info.command, configs.effective.securityPatterns) !== null));
    if (possiblySecurity) {
      createKeys.push({ failureKey: TOOL_PREFIX + e.toolName, toolName: e.toolName, domain: null });
      possiblySecurityResults.add(e.id);
    }
    else toolKeys.add(TOOL_PREFIX + e.toolName);
  }
  await lockToolLevels(tx, workspaceId, createKeys, toolKeys);
  const { contexts, created } = await lockKeyStates(tx, workspaceId, createKeys, [...toolKeys]);
  // A tool-level state whose row this batch creates (for a possibly-security failure) counts results
  // only from that failure on: results earlier in the batch must not land on it, or one batch would
  // differ from the same events sent one by one (the row would not exist yet for them).
  const liveToolStates = new Set([...contexts.keys()].filter((k) => k.startsWith(TOOL_PREFIX) && !created.has(k)));

  const initialStates = new Map<string, TrustState>([...contexts].map(([k, c]) => [k, c.state.state]));
  const approvalPendingBefore = new Map<string, boolean>([...contexts].map(([k, c]) => [k, c.state.approvalPending]));

  // Session decay needs the sessions of the failures in history and later starts of their agents.
  let timeline: SessionTimeline = buildSessionTimeline([]);
  {
    const failureSessions: string[] = [];
    const agents = new Set<string>();
    let since = Number.POSITIVE_INFINITY;
    for (const c of contexts.values()) {
      for (const f of c.failures) {
        failureSessions.push(f.sessionId);
        agents.add(f.agent);
        since = Math.min(since, f.ts);
      }
    }
    if (failureSessions.length) {
      timeline = buildSessionTimeline(
        await loadTimelineSessions(tx, workspaceId, failureSessions, [...agents], Number.isFinite(since) ? since : 0),
      );
    }
    for (const s of sessions.values()) {
      timeline = withSession(timeline, { sessionId: s.sessionId, agent: s.agent, startedAt: s.startedAt, endedAt: s.endedAt });
    }
  }

  const profiles = await loadModelProfiles(tx, workspaceId, [...new Set([...resultInfo.values()].map((i) => i.failureKey))]);

  const writes: BatchWrites = {
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
  };
  const effects: Effect[] = [];
  // Domains of keys as seen in this batch (stored on the key row).
  const keyDomains = new Map<string, string | null>();
  const keyPlugins = new Map<string, string | null>();
  // The rule each touched key was applied under (plugin rules need the event's pluginName).
  const keyRules = new Map<string, Rule>();
  const settingsCache = new Map<string, EffectiveSettings>();
  const settingsOf = (s: SessionRow) => {
    let v = settingsCache.get(s.sessionId);
    if (!v) {
      v = resolveSettings(s.settings, configs.workspaceDoc.settings, configs.orgDoc.settings);
      settingsCache.set(s.sessionId, v);
    }
    return v;
  };

  for (const e of fresh) {
    const s = sessions.get(e.sessionId)!;
    const t = s.clock === null ? e.ts : Math.max(s.clock, e.ts);
    s.clock = t;
    s.lastEventAt = t;
    s.firstEventAt ??= t;
    s.eventCount += 1;
    s.dirty = true;
    if (e.model) s.model = e.model;
    const settings = settingsOf(s);
    let behaviourEvent: BehaviourEvent = e as BehaviourEvent;
    const row: BatchWrites["events"][number] = {
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
        timeline = withSession(timeline, { sessionId: s.sessionId, agent: s.agent, startedAt: t, endedAt: s.endedAt });
        row.payload = { agent: s.agent, ...(e.settings ? { settings: e.settings } : {}) };
        break;
      }
      case "session.end": {
        s.endedAt = t;
        timeline = withSession(timeline, { sessionId: s.sessionId, agent: s.agent, startedAt: s.startedAt, endedAt: t });
        break;
      }
      case "turn.start":
        break;
      case "tool.call": {
        const info = batchCalls.get(callRef(e.sessionId, e.callId))!;
        keyInfoByEventId.set(e.id, info);
        s.callCount += 1;
        Object.assign(row, { toolName: e.toolName, callId: e.callId, failureKey: info.failureKey });
        row.payload = { call: info, pluginName: e.pluginName ?? null, preview: redactedPreview(e.args) };
        behaviourEvent = { ...e, failureKey: info.failureKey, argsHash: info.argsHash };
        break;
      }
      case "tool.result": {
        const info = resultInfo.get(e.id)!;
        const failed = isFailure(e);
        const key = info.failureKey;
        const keyCtx: KeyContext = contexts.get(key) ?? newKeyContext(key, e.toolName);
        const resolution = resolveRule(configs.workspaceDoc, configs.orgDoc, { toolName: e.toolName, pluginName: e.pluginName, domain: info.domain });
        const domainKey = resolution.level === "domain" && resolution.name ? DOMAIN_PREFIX + resolution.name : null;
        const toolKey = TOOL_PREFIX + e.toolName;
        if (possiblySecurityResults.has(e.id)) liveToolStates.add(toolKey);
        const toolCtx = liveToolStates.has(toolKey) ? contexts.get(toolKey) ?? null : null;
        const model = e.model ?? s.model;
        let severity = null as ReturnType<typeof classifyFailure>["severity"] | null;
        if (failed) {
          severity = classifyFailure(
            { ...e, ts: t },
            { isCommandTool: info.kind === "command", command: info.command, securityPatterns: configs.effective.securityPatterns, recentFailures: keyCtx.failures, now: t },
          ).severity;
        }
        const before = {
          key: keyCtx.state.state,
          domain: domainKey ? contexts.get(domainKey)?.state.state : undefined,
          tool: toolCtx?.state.state,
        };
        const applied = applyToolResult(
          { key: keyCtx, domain: domainKey ? contexts.get(domainKey) ?? null : null, tool: toolCtx },
          { failed, severity, weight: severity ? failureWeight(severity) : undefined, sessionId: s.sessionId, agent: s.agent, toolName: e.toolName },
          resolution,
          settings.recoveryMode.value,
          timeline,
          t,
        );
        contexts.set(key, applied.key);
        writes.touchedKeys.add(key);
        keyDomains.set(key, info.domain);
        keyPlugins.set(key, e.pluginName ?? null);
        keyRules.set(key, resolution.rule);
        if (domainKey) keyRules.set(domainKey, resolution.rule);
        if (applied.domain) {
          contexts.set(applied.domain.state.failureKey, applied.domain);
          writes.touchedKeys.add(applied.domain.state.failureKey);
        }
        if (applied.tool) {
          contexts.set(toolKey, applied.tool);
          writes.touchedKeys.add(toolKey);
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
        // Approvals: create for recovery_pending; close a pending one the key no longer waits for.
        for (const eff of applied.effects) {
          if (eff.type === "recovery_pending") {
            const id = randomUUID();
            eff.approvalId = id;
            writes.approvalsCreated.push({ workspaceId, id, kind: "recovery", failureKey: eff.failureKey, toolName: e.toolName, status: "pending", createdAt: new Date(t) });
          }
        }
        for (const k of [key, domainKey]) {
          if (!k) continue;
          const c = contexts.get(k)!;
          if (approvalPendingBefore.get(k) && !c.state.approvalPending && c.state.state !== "trusted") {
            // Created earlier in this same batch: close the row before it is ever written as pending.
            const inBatch = writes.approvalsCreated.find((a) => a.failureKey === k && a.status === "pending");
            if (inBatch) Object.assign(inBatch, { status: "denied", resolvedAt: new Date(t), resolvedBy: "system", comment: SUPERSEDED });
            else writes.approvalsSuperseded.push(k);
          }
          approvalPendingBefore.set(k, c.state.approvalPending);
        }
        effects.push(...applied.effects);

        // Failure history, model profiles, suggestions, daily roll-up.
        if (failed && severity) {
          s.failureCount += 1;
          writes.failures.push({
            workspaceId,
            eventId: e.id,
            failureKey: key,
            toolName: e.toolName,
            domain: info.domain,
            severity,
            weight: failureWeight(severity),
            ts: new Date(t),
            sessionId: s.sessionId,
            agent: s.agent,
            model,
            errorMessage: storedErrorMessage(e),
            httpStatus: httpStatusOf(e),
            argsHash: info.argsHash,
          });
        }
        if (model) {
          const list = profiles.get(key) ?? [];
          const idx = list.findIndex((p) => p.model === model);
          const updated = recordModelToolResult(idx >= 0 ? list[idx] : null, { model, failureKey: key, failed, now: t });
          if (idx >= 0) list[idx] = updated;
          else list.push(updated);
          profiles.set(key, list);
          const dk = `${model}\u0000${key}`;
          const d = writes.modelToolDeltas.get(dk) ?? { model, failureKey: key, attempts: 0, failures: 0, lastFailureAt: null as number | null };
          d.attempts += 1;
          if (failed) {
            d.failures += 1;
            d.lastFailureAt = t;
          }
          writes.modelToolDeltas.set(dk, d);
          if (failed) {
            const behaviour = s.behaviour ?? createSessionBehaviour(s.sessionId);
            const suggestion = suggestModelSwitch({
              failureKey: key,
              profilesForKey: list as ModelToolProfile[],
              currentModel: model,
              strategy: settings.modelSwitchStrategy.value,
              preferredModels: settings.preferredModels.value,
              config: configs.effective.modelSwitch,
              alreadySuggested: hasSuggestedModelSwitch(behaviour, key, model),
            });
            if (suggestion && suggestion.type === "model_suggestion") {
              s.behaviour = recordModelSwitchSuggestion(behaviour, key, model);
              effects.push(suggestion);
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
        const dayKey = `${DAY(t)}\u0000${e.toolName}\u0000${key}`;
        const ds = writes.dailyStats.get(dayKey) ?? { day: DAY(t), toolName: e.toolName, failureKey: key, results: 0, failures: 0 };
        ds.results += 1;
        if (failed) ds.failures += 1;
        writes.dailyStats.set(dayKey, ds);

        Object.assign(row, { toolName: e.toolName, callId: e.callId, failureKey: key, failed, severity });
        row.payload = {
          call: info,
          pluginName: e.pluginName ?? null,
          ...(e.args ? { preview: redactedPreview(e.args) } : {}),
          ...(failed ? { error: storedErrorMessage(e) } : {}),
          httpStatus: httpStatusOf(e),
          durationMs: e.durationMs ?? null,
          retryCount: e.retryCount ?? null,
          service: e.service ?? null,
          domain: info.domain,
        };
        behaviourEvent = { ...e, failureKey: key, argsHash: info.argsHash, failed };
        break;
      }
      case "model.text": {
        row.payload = {
          text: e.text.length > MAX_TEXT_STORED ? e.text.slice(0, MAX_TEXT_STORED) : e.text,
          truncated: e.text.length > MAX_TEXT_STORED,
          ...(e.reasoningOnly !== undefined ? { reasoningOnly: e.reasoningOnly } : {}),
        };
        break;
      }
      case "user.message": {
        const text = e.text === undefined ? null : redactString(e.text);
        row.payload = text === null ? {} : { text: truncateUtf8(text, MAX_USER_TEXT_STORED), truncated: Buffer.byteLength(text, "utf8") > MAX_USER_TEXT_STORED };
        break;
      }
      case "permission.resolved": {
        Object.assign(row, { toolName: e.toolName, callId: e.callId });
        row.payload = { granted: e.granted, method: e.method };
        break;
      }
    }

    // Behaviour: patterns, nudges, pause.
    const observed = observeSessionEvent(
      s.behaviour ?? createSessionBehaviour(s.sessionId),
      behaviourEvent,
      { patterns: configs.effective.patterns, settings },
      t,
    );
    s.behaviour = observed.state;
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
    }
    for (const v of observed.verdicts) {
      // A nudge of this same batch gets its verdict before it is written; older ones are updated.
      const row = writes.nudges.find((n) => n.sessionId === s.sessionId && n.patternType === v.patternType && n.ts.getTime() === v.sentAt && n.effective == null);
      if (row) row.effective = v.effective;
      else writes.nudgeVerdicts.push({ sessionId: s.sessionId, patternType: v.patternType, sentAt: v.sentAt, effective: v.effective });
    }
    effects.push(...observed.effects);
    addBehaviourDelta(writes, s.model ?? "unknown", observed.stats);
    writes.events.push(row);
  }

  await writeBatch(tx, scope, { writes, contexts, sessions, keyDomains, keyPlugins, keyRules, timeline });
  await enqueueNotifications(tx, workspaceId, effects);
  return { accepted: fresh.length, duplicates, effects, sessions, configs, keyInfoByEventId };
}

/** The longest prefix of `s` that fits in `maxBytes` of UTF-8 (never splits a character). */
function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s, "utf8") <= maxBytes) return s;
  const cut = Buffer.from(s, "utf8").subarray(0, maxBytes).toString("utf8");
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}

function addBehaviourDelta(writes: BatchWrites, model: string, stats: BehaviourStats) {
  const any = stats.nudgesSent || stats.nudgesEffective || stats.turns || stats.stalledTurns || Object.keys(stats.patterns).length;
  if (!any) return;
  const d = writes.behaviourDeltas.get(model) ?? { patterns: {}, nudgesSent: 0, nudgesEffective: 0, turns: 0, stalledTurns: 0 };
  for (const [k, v] of Object.entries(stats.patterns)) d.patterns[k as keyof typeof d.patterns] = (d.patterns[k as keyof typeof d.patterns] ?? 0) + (v ?? 0);
  d.nudgesSent += stats.nudgesSent;
  d.nudgesEffective += stats.nudgesEffective;
  d.turns += stats.turns;
  d.stalledTurns += stats.stalledTurns;
  writes.behaviourDeltas.set(model, d);
}
