/** The session phase of a batch (see apply-batch.ts). */
import { classifyFailure, httpStatusOf, isFailure } from "./classify";
import { boundForRedaction, redactedPreview, redactString } from "./redact";
import { clampClock } from "./key-state";
import { foldSessionEvent, type BehaviourEvent } from "./patterns";
import { createSessionBehaviour, ownedSessionBehaviour, upgradeSessionBehaviour, type SessionBehaviour } from "./behaviour-state";
import { hasSuggestedModelSwitch, recordModelSwitchSuggestion, recordModelToolResult, suggestModelSwitch } from "./models";
import { applySettingsPatch, resolveSettings } from "./settings";
import type { AgentEvent, Effect, EffectiveSettings } from "./types";
import { planBatch } from "./batch-plan";
import { addBehaviourDelta, addDailyStat, addModelToolDelta, behaviourDelta } from "./batch-rollups";
import { type BatchSession, type EventRecord, MAX_TEXT_STORED, MAX_USER_TEXT_STORED, type SessionPhaseInput, type SessionPhaseOutcome, type StoredCall, type TrustStep, callRef, emptyRecords, storedErrorMessage, toolCallPayload, truncateUtf8 } from "./batch";

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
        // its key from the stored tool.call), and it was half of a result's row. Only the fields
        // the result has (a null field's name is stored on every row), set one by one, not by
        // conditional spreads (a slow path in V8 on every result).
        const payload: Record<string, unknown> = {};
        if (e.pluginName) payload.pluginName = e.pluginName;
        if (e.args) payload.preview = redactedPreview(e.args);
        if (failed) payload.error = storedErrorMessage(e);
        const httpStatus = httpStatusOf(e);
        if (httpStatus !== null) payload.httpStatus = httpStatus;
        if (e.durationMs != null) payload.durationMs = e.durationMs;
        if (e.retryCount != null) payload.retryCount = e.retryCount;
        if (e.service) payload.service = e.service;
        if (info.domain !== null) payload.domain = info.domain;
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
