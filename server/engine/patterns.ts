/**
 * Behavioural pattern detection (SPEC 5, revision 2), pure.
 *
 * Each pattern (its detector, ladder, description and nudge texts) is its own file in
 * stall-patterns/, listed in stall-patterns/index.ts. This file is the fold: it keeps the tracks
 * the detectors read (runs, the stretch), asks every detector after every event, and turns
 * detections into effects.
 *
 * `observeSessionEvent(state, event, config, now)` folds one (shell-enriched) event of an agent
 * session into its `SessionBehaviour` and returns the new state, the effects (pattern, nudge,
 * paused), the counters the shell adds to the model's behavioural profile, and the verdicts on
 * earlier nudges (effective or not) for the shell to store with them.
 *
 * Revision 2 judges identical calls and identical outcomes, not tool names:
 * - call identity = (toolName, hash of args without the volatile fields);
 * - outcome identity = failed/succeeded + hash of error or result;
 * - a run of identical calls survives a successful but unchanged result, and ends on a different
 *   call, a different outcome, a `user.message` or a resume;
 * - the stretch (read_only_loop, announce_no_action, tool_avoidance) runs from the last
 *   productive action (a successful action-tool result never seen before in the stretch),
 *   `user.message` or resume. `turn.start` resets nothing.
 * Every pattern is evaluated after every event; a pattern is reported again in its run or
 * stretch only when its severity rises; at most one nudge is sent per event.
 */
import { hash as oneShotHash } from "node:crypto";
import {
  RECENT_CALLS_KEPT,
  STRETCH_IDENTITIES_KEPT,
  currentScope,
  createSessionBehaviour,
  newStretch,
  ownedSessionBehaviour,
  restartDetection,
  upgradeSessionBehaviour,
  type SessionBehaviour,
  type StretchCall,
} from "./behaviour-state";
import { STALL_PATTERNS, STALL_PATTERN_BY_NAME } from "./stall-patterns";
import type { Found, StallPattern } from "./stall-patterns/pattern";
import { identityOf, inToolClass } from "./stall-patterns/tracks";
import { nudgeMessage, nudgeTypeFor, pauseSession, takePendingGuidance } from "./nudges";
import { dictionaryWith } from "./dictionary";
import { DEFAULT_PATTERN_CONFIG } from "./config";
import { argsHash, canonicalJson } from "./failure-key";
import { redactedPreview } from "./redact";
import {
  PATTERN_SEVERITIES,
  PATTERN_TYPES,
  type AgentEvent,
  type Effect,
  type EffectiveSettings,
  type JsonObject,
  type NudgeLevel,
  type PatternConfig,
  type PatternSeverity,
  type PatternThresholds,
  type PatternType,
  type ToolCallEvent,
  type ToolResultEvent,
} from "./types";

export { createSessionBehaviour, activePatterns, upgradeSessionBehaviour } from "./behaviour-state";
export type { SessionBehaviour, Stretch, StretchCall } from "./behaviour-state";
export { inToolClass } from "./stall-patterns/tracks";

/** Built-in pattern configuration (SPEC 5 table): one definition, in config.ts. */
export const BUILTIN_PATTERN_CONFIG: PatternConfig = DEFAULT_PATTERN_CONFIG;

/** Structural minimum count of each pattern, whatever the configured ladder says (each pattern's `minCount`). */
export const PATTERN_MIN_COUNT = Object.fromEntries(STALL_PATTERNS.map((p) => [p.name, p.minCount])) as Record<PatternType, number>;

/** Call identities a result_loop run remembers: a loop pauses long before this many. */
const RESULT_RUN_IDENTITIES_KEPT = 32;

/** Characters of the repeated arguments shown in a nudge. */
export const ARGS_PREVIEW_CHARS = 80;

// ---------------------------------------------------------------------------
// Events as the shell hands them to the engine
// ---------------------------------------------------------------------------

export type EnrichedToolCall = ToolCallEvent & { failureKey: string; argsHash: string };
export type EnrichedToolResult = ToolResultEvent & { failureKey: string; argsHash: string; failed: boolean };
export type BehaviourEvent =
  | Exclude<AgentEvent, { type: "tool.call" } | { type: "tool.result" }>
  | EnrichedToolCall
  | EnrichedToolResult;

export interface BehaviourSettings {
  nudgeLevel: NudgeLevel;
  nudgeEnabled: boolean;
  patternDetectionEnabled: boolean;
}

export interface ObserveConfig {
  patterns: PatternConfig;
  /** Full EffectiveSettings or just the three values used here. */
  settings: EffectiveSettings | BehaviourSettings;
}

/** Counters the shell adds to the model's behavioural profile (SPEC 6). */
export interface BehaviourStats {
  /** Pattern reports per type (each pattern effect counts once). */
  patterns: Partial<Record<PatternType, number>>;
  /** Pattern nudges sent (gentle/direct/interrupt; guidance nudges are not counted). */
  nudgesSent: number;
  /** Open nudges that became effective on this event. */
  nudgesEffective: number;
  /** Turns that started on this event (0 or 1). */
  turns: number;
  /** Turns that became stalled (first pattern of the turn) on this event (0 or 1). */
  stalledTurns: number;
}

/** The engine's once-only verdict on a nudge sent earlier (identified by session, pattern, time). */
export interface NudgeVerdict {
  patternType: PatternType;
  sentAt: number;
  effective: boolean;
}

export interface ObserveResult {
  state: SessionBehaviour;
  effects: Effect[];
  stats: BehaviourStats;
  verdicts: NudgeVerdict[];
}

/** A detection: the pattern's condition holds with this count at this severity. */
export interface Detection {
  patternType: PatternType;
  severity: PatternSeverity;
  count: number;
  /** The tool the nudge names (`{tool_name}`). */
  toolName: string;
  /** Short redacted preview of the repeated arguments (`{args}`); "" when not about one call. */
  args: string;
  /** Call identity the detection is about (repetitive_calls, error_retry_loop), for one nudge per loop step. */
  identity: string | null;
  toolSequence: string[];
}

export function emptyStats(): BehaviourStats {
  return { patterns: {}, nudgesSent: 0, nudgesEffective: 0, turns: 0, stalledTurns: 0 };
}

function settingValue<K extends keyof BehaviourSettings>(
  settings: EffectiveSettings | BehaviourSettings,
  name: K,
): BehaviourSettings[K] {
  const v = (settings as Record<string, unknown>)[name];
  if (v !== null && typeof v === "object" && "value" in v) return (v as { value: BehaviourSettings[K] }).value;
  return v as BehaviourSettings[K];
}

/** The severity of a count on a ladder; null below minor. */
export function severityFor(count: number, t: PatternThresholds): PatternSeverity | null {
  if (count >= t.severe) return "severe";
  if (count >= t.moderate) return "moderate";
  if (count >= t.minor) return "minor";
  return null;
}

const SEVERITY_RANK: Record<PatternSeverity, number> = { minor: 1, moderate: 2, severe: 3 };

export function severityRank(s: PatternSeverity): number {
  return SEVERITY_RANK[s];
}

// ---------------------------------------------------------------------------
// Identities
// ---------------------------------------------------------------------------

/** MD5 (one-shot: several times cheaper than a Hash object per call), first 12 hex characters. */
function md5(s: string): string {
  return oneShotHash("md5", s, "hex").slice(0, 12);
}

/** Call identity hash: MD5 of the canonical JSON of `args` without the volatile top-level fields. */
export function callIdentityHash(args: JsonObject | undefined, volatileFields: readonly string[]): string {
  return argsHash(stableArgs(args, volatileFields));
}

/**
 * The identity hash of an enriched event: the shell already hashed all of `args` (`argsHash`, the
 * same function), so it is reused unless a volatile field has to be left out.
 */
function eventIdentityHash(ev: { args?: JsonObject; argsHash: string }, volatileFields: readonly string[]): string {
  const a = ev.args ?? {};
  return volatileFields.some((f) => Object.prototype.hasOwnProperty.call(a, f)) ? argsHash(stableArgs(a, volatileFields)) : ev.argsHash;
}

/** `args` without the volatile top-level fields (the same object when it has none). */
function stableArgs(args: JsonObject | undefined, volatileFields: readonly string[]): JsonObject {
  const a = args ?? {};
  if (!volatileFields.some((f) => Object.prototype.hasOwnProperty.call(a, f))) return a;
  const kept: JsonObject = {};
  for (const [k, v] of Object.entries(a)) if (!volatileFields.includes(k)) kept[k] = v;
  return kept;
}

/** Outcome identity of a result: failed or succeeded + hash of the error (failures) or result (successes). */
export function outcomeIdentity(ev: { failed: boolean; error?: unknown; result?: unknown }): string {
  const body = ev.failed ? ev.error : ev.result;
  return `${ev.failed ? "F" : "S"}:${md5(body === undefined ? "" : canonicalJson(body))}`;
}


function preview(args: JsonObject | undefined): string {
  const json = redactedPreview(args ?? {}, ARGS_PREVIEW_CHARS * 4);
  return json.length > ARGS_PREVIEW_CHARS ? `${json.slice(0, ARGS_PREVIEW_CHARS - 1)}…` : json;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Compiled mention patterns per tool name (a memo: same input, same output; bounded). */
const MENTION_RE = new Map<string, RegExp>();

/** Whether `text` names `tool` as a word (case-insensitive). */
export function mentionsTool(text: string, tool: string): boolean {
  if (tool.length === 0) return false;
  let re = MENTION_RE.get(tool);
  if (!re) {
    if (MENTION_RE.size > 1000) MENTION_RE.clear();
    re = new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(tool)}($|[^A-Za-z0-9_])`, "i");
    MENTION_RE.set(tool, re);
  }
  return re.test(text);
}

/** Whether `text` contains an announce phrase (case-insensitive substring). */
export function isAnnouncement(text: string, phrases: string[]): boolean {
  const lower = text.toLowerCase();
  return phrases.some((p) => p.length > 0 && lower.includes(p.toLowerCase()));
}

/** Whether a model response is empty: whitespace only, or reasoning only (SPEC 5 `empty_response`). */
export function isEmptyResponse(ev: { text: string; reasoningOnly?: boolean }): boolean {
  return ev.reasoningOnly === true || ev.text.trim().length === 0;
}

/** Appends `item` to `list` (the fold's own), keeping its last `max`. */
function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}

// ---------------------------------------------------------------------------
// State updates per event type
// ---------------------------------------------------------------------------

/**
 * The state updates below change `s`, its stretch and its lists in place: `s` is the fold's own
 * (ownedSessionBehaviour). The small run objects are replaced, never changed: they may be shared
 * with the state the fold started from.
 */
function onCall(s: SessionBehaviour, ev: EnrichedToolCall, cfg: PatternConfig): void {
  const hash = eventIdentityHash(ev, cfg.volatileArgFields);
  const id = identityOf(ev.toolName, hash);
  const last = s.calls[s.calls.length - 1];
  const beforeLast = s.calls[s.calls.length - 2];
  const lastId = last ? identityOf(last.toolName, last.argsHash) : null;

  // The preview is only needed once the call repeats (redaction is the costly part of a call).
  s.run =
    s.run && s.run.toolName === ev.toolName && s.run.argsHash === hash
      ? { ...s.run, length: s.run.length + 1, preview: s.run.preview || preview(stableArgs(ev.args, cfg.volatileArgFields)) }
      : { toolName: ev.toolName, argsHash: hash, preview: "", length: 1, outcome: null, start: s.seq, nudged: null };

  const alternating = s.alternating;
  if (!last || lastId === id) s.alternating = null;
  else if (
    alternating &&
    alternating.pair.includes(id) &&
    alternating.pair.includes(lastId!) &&
    beforeLast &&
    identityOf(beforeLast.toolName, beforeLast.argsHash) === id
  ) {
    s.alternating = { ...alternating, length: alternating.length + 1 };
  } else {
    const outcomes = last.outcome ? dictionaryWith(null, lastId!, last.outcome) : {};
    s.alternating = { pair: [lastId!, id], names: [last.toolName, ev.toolName], outcomes, length: 2, start: s.seq };
  }

  const introspection = inToolClass(cfg.introspectionTools, ev.toolName);
  s.introspectionRun = introspection ? (s.introspectionRun ? { ...s.introspectionRun, count: s.introspectionRun.count + 1 } : { count: 1, start: s.seq }) : null;

  const stretch = s.stretch;
  stretch.callCount += 1;
  const readOnly = inToolClass(cfg.readOnlyTools, ev.toolName);
  const seenInStretch = readOnly ? stretch.readIdentities.includes(id) : stretch.callIdentities.includes(id);
  if (stretch.announcement !== null) {
    // SPEC 5.1: an announcement followed by an action or by a call of something new is progress.
    const bringsNew = inToolClass(cfg.actionTools, ev.toolName) || (!introspection && !seenInStretch);
    if (bringsNew) {
      if (stretch.announcement === "counted") stretch.announcements -= 1;
      stretch.announcement = null;
    } else if (stretch.announcement === "open") {
      stretch.announcements += 1;
      stretch.announcement = "counted";
    }
  }
  if (readOnly) {
    if (seenInStretch) {
      stretch.rereads += 1;
      stretch.lastReread = ev.toolName;
    } else pushBounded(stretch.readIdentities, id, STRETCH_IDENTITIES_KEPT);
  } else if (!seenInStretch) pushBounded(stretch.callIdentities, id, STRETCH_IDENTITIES_KEPT);
  const key = ev.toolName.toLowerCase();
  if (stretch.mentions[key]) delete stretch.mentions[key];
  // An action ends a run of same-result calls (result_loop).
  if (inToolClass(cfg.actionTools, ev.toolName)) s.resultRun = null;

  // Not the failure key: nothing reads it back, and it was ~40 % of the session's stored state
  // (read and written on every guard.check). States stored with it keep working.
  const call: StretchCall = { callId: ev.callId, toolName: ev.toolName, argsHash: hash };
  pushBounded(s.calls, call, RECENT_CALLS_KEPT);
  s.textRun = null;
  s.emptyRun = null;
}

/** Whether the result was productive (see onCall on `s`). */
function onResult(s: SessionBehaviour, ev: EnrichedToolResult, cfg: PatternConfig, now: number): boolean {
  // The call's identity: from the result's own args, else from its call (by callId), else the shell's hash.
  let callIndex = -1;
  for (let i = s.calls.length - 1; i >= 0; i--) {
    if (s.calls[i].callId === ev.callId && s.calls[i].toolName === ev.toolName) {
      callIndex = i;
      break;
    }
  }
  const hash = ev.args ? eventIdentityHash(ev, cfg.volatileArgFields) : callIndex >= 0 ? s.calls[callIndex].argsHash : ev.argsHash;
  const id = identityOf(ev.toolName, hash);
  const outcome = outcomeIdentity(ev);
  s.textRun = null;
  s.emptyRun = null;

  if (callIndex >= 0) {
    const c = s.calls[callIndex];
    s.calls[callIndex] = { callId: c.callId, toolName: c.toolName, argsHash: c.argsHash, outcome };
  }

  // The run of identical calls: a different outcome ends it (the call that produced it starts the next one).
  if (s.run && s.run.toolName === ev.toolName && s.run.argsHash === hash) {
    if (s.run.outcome === null) s.run = { ...s.run, outcome };
    else if (s.run.outcome !== outcome) s.run = { ...s.run, length: 1, outcome, start: s.seq, nudged: null };
  }

  // Consecutive failures of one identity with one outcome.
  if (ev.failed) {
    const f = s.failureRun;
    s.failureRun =
      f && f.toolName === ev.toolName && f.argsHash === hash && f.outcome === outcome
        ? {
            ...f,
            count: f.count + 1,
            preview:
              f.preview ||
              (s.run && s.run.argsHash === hash && s.run.toolName === ev.toolName && s.run.preview) ||
              (ev.args ? preview(stableArgs(ev.args, cfg.volatileArgFields)) : ""),
          }
        : {
            toolName: ev.toolName,
            argsHash: hash,
            preview: "",
            outcome,
            count: 1,
            start: s.seq,
          };
  } else {
    s.failureRun = null;
  }

  // Results of one tool, differently called, returning the same thing (result_loop): failures, actions and
  // results that carry nothing (an absent result is no evidence of sameness) end the run.
  const r = s.resultRun;
  if (ev.failed || ev.result === undefined || inToolClass(cfg.actionTools, ev.toolName)) s.resultRun = null;
  else if (r && r.toolName === ev.toolName && r.outcome === outcome) {
    if (!r.identities.includes(hash)) s.resultRun = { ...r, count: r.count + 1, identities: [...r.identities.slice(-(RESULT_RUN_IDENTITIES_KEPT - 1)), hash] };
  } else s.resultRun = { toolName: ev.toolName, outcome, identities: [hash], count: 1, start: s.seq };

  // Alternation needs unchanged outcomes on both sides.
  if (s.alternating && s.alternating.pair.includes(id)) {
    const known = s.alternating.outcomes[id];
    if (known !== undefined && known !== outcome) s.alternating = null;
    else if (known === undefined) s.alternating = { ...s.alternating, outcomes: dictionaryWith(s.alternating.outcomes, id, outcome) };
  }

  // Productive: a successful action result never seen before in the stretch.
  const seenKey = `${id}|${outcome}`;
  const productive = !ev.failed && inToolClass(cfg.actionTools, ev.toolName) && !s.stretch.seenResults.includes(seenKey);
  if (productive) {
    // The productive result opens the new stretch and is its first "earlier result".
    s.stretch = { ...newStretch(s.stretch.id + 1, now), seenResults: [seenKey] };
  } else if (!s.stretch.seenResults.includes(seenKey)) {
    pushBounded(s.stretch.seenResults, seenKey, STRETCH_IDENTITIES_KEPT);
  }
  return productive;
}

function onText(s: SessionBehaviour, ev: { text: string; reasoningOnly?: boolean }, cfg: PatternConfig): void {
  if (isEmptyResponse(ev)) {
    s.emptyRun = s.emptyRun ? { ...s.emptyRun, count: s.emptyRun.count + 1 } : { count: 1, start: s.seq };
    return;
  }
  const h = md5(ev.text.trim());
  const run = s.textRun ?? { count: 0, start: s.seq, hashes: [] };
  const repeated = run.hashes.includes(h);
  if (!repeated) pushBounded(run.hashes, h, 16);
  s.textRun = { ...run, count: run.count + (repeated ? 2 : 1) };

  const mentions = s.stretch.mentions;
  const seen = new Set<string>();
  for (const tool of cfg.actionTools) {
    const key = tool.toLowerCase();
    if (seen.has(key)) continue; // "bash" and "Bash" are one tool for mentions
    if (mentionsTool(ev.text, tool)) {
      seen.add(key);
      const cur = mentions[key];
      mentions[key] = { toolName: cur?.toolName ?? tool, count: (cur?.count ?? 0) + 1 };
    }
  }
  s.emptyRun = null;
  // The previous announcement was followed by no call before this text: it brought nothing new.
  if (s.stretch.announcement === "open") s.stretch.announcements += 1;
  s.stretch.announcement = isAnnouncement(ev.text, cfg.announcePhrases) ? "open" : null;
}

// ---------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------

const TOOL_SEQUENCE_LENGTH = 10;

function toolSequence(s: SessionBehaviour): string[] {
  return s.calls.slice(-TOOL_SEQUENCE_LENGTH).map((c) => c.toolName);
}

/**
 * Every pattern whose condition holds on this state, with its count and severity, in SPEC 5
 * table order. Pure function of the state and the config.
 */
export function detectPatterns(stored: SessionBehaviour, cfg: PatternConfig): Detection[] {
  const s = upgradeSessionBehaviour(stored, stored.sessionId);
  const out: Detection[] = [];
  let seq: string[] | null = null;
  let pattern: StallPattern<PatternType> = STALL_PATTERNS[0];
  const found: Found = (count, toolName, args = "", identity = null) => {
    if (count < pattern.minCount) return;
    const type = pattern.name;
    const severity = severityFor(count, cfg.thresholds[type]);
    if (severity) out.push({ patternType: type, severity, count, toolName, args, identity, toolSequence: (seq ??= toolSequence(s)) });
  };
  for (const p of STALL_PATTERNS) {
    pattern = p;
    p.detect(s, cfg, found);
  }
  return out;
}

// ---------------------------------------------------------------------------
// The fold
// ---------------------------------------------------------------------------

function eventTurn(event: BehaviourEvent): number | undefined {
  if (event.type === "turn.start") return event.turnIndex;
  if ("turnIndex" in event && typeof event.turnIndex === "number") return event.turnIndex;
  return undefined;
}

const TABLE_ORDER: Record<PatternType, number> = Object.fromEntries(PATTERN_TYPES.map((t, i) => [t, i])) as Record<PatternType, number>;

/**
 * Folds one event of the session into its behaviour state.
 *
 * - `turn.start` (or any event carrying a new `turnIndex`) starts a turn (stats.turns).
 * - `tool.call`: delivers pending guidance (a `guidance` nudge, once), extends the runs.
 * - `tool.result`: compares outcomes; a productive action makes every open nudge effective and
 *   starts a new stretch.
 * - `model.text`: counts planning texts, empty responses, announcements and action-tool mentions.
 * - `user.message`: ends every run and the stretch, unless `automated` (a framework's own message).
 * - then every pattern is evaluated; a pattern is reported when it is new in its run or stretch
 *   or its severity rose. Every report → `pattern` effect (and closes the open nudges of that
 *   pattern as ineffective). At most ONE nudge per event: the highest severity, ties by table
 *   order; none while paused, none for a loop step (same call identity, same or lower severity)
 *   already nudged by the other identical-call pattern. An interrupt pauses the session.
 * - `patternDetectionEnabled: false` → state is still tracked but nothing is detected.
 */
export function observeSessionEvent(
  stored: SessionBehaviour,
  event: BehaviourEvent,
  config: ObserveConfig,
  now: number,
): ObserveResult {
  return foldSessionEvent(ownedSessionBehaviour(upgradeSessionBehaviour(stored, event.sessionId)), event, config, now);
}

/**
 * observeSessionEvent on a state the caller owns (ownedSessionBehaviour), which it changes in
 * place: a batch folds a session's events into one copy. `working` is not to be used afterwards
 * except as the result's state (which may be it or a copy sharing its lists).
 */
export function foldSessionEvent(
  working: SessionBehaviour,
  event: BehaviourEvent,
  config: ObserveConfig,
  now: number,
): ObserveResult {
  const cfg = config.patterns;
  const level = settingValue(config.settings, "nudgeLevel");
  const enabled = settingValue(config.settings, "nudgeEnabled");
  const detectionEnabled = settingValue(config.settings, "patternDetectionEnabled");

  const effects: Effect[] = [];
  const stats = emptyStats();
  const verdicts: NudgeVerdict[] = [];
  let s = working;
  s.lastEventAt = now;
  s.seq += 1;

  const turn = eventTurn(event);
  if (turn !== undefined && turn !== s.currentTurn) {
    s.currentTurn = turn;
    s.turnHadPattern = false;
    stats.turns += 1;
  }
  if (s.stretch.startedAt === null) s.stretch.startedAt = now;

  switch (event.type) {
    case "tool.call": {
      const g = takePendingGuidance(s);
      s = g.state;
      if (g.effect) effects.push(g.effect);
      onCall(s, event, cfg);
      break;
    }
    case "tool.result": {
      const productive = onResult(s, event, cfg, now);
      if (productive && s.openNudges.length) {
        stats.nudgesEffective += s.openNudges.length;
        for (const n of s.openNudges) verdicts.push({ patternType: n.patternType, sentAt: n.sentAt, effective: true });
        s.openNudges = [];
      }
      break;
    }
    case "model.text":
      onText(s, event, cfg);
      break;
    case "user.message":
      // Only a person's message resets: a framework's own "Please continue" leaves a loop a loop (SPEC 5.1).
      if (event.automated !== true) s = restartDetection(s, now);
      break;
    default:
      break;
  }

  if (!detectionEnabled) return { state: s, effects, stats, verdicts };

  const reports: Detection[] = [];
  for (const d of detectPatterns(s, cfg)) {
    const scope = currentScope(s, d.patternType)!;
    const prev = s.reported[d.patternType];
    if (prev && prev.scope === scope && severityRank(d.severity) <= severityRank(prev.severity)) continue;
    reports.push(d);
    s.reported = { ...s.reported, [d.patternType]: { severity: d.severity, count: d.count, at: now, scope } };
    stats.patterns[d.patternType] = (stats.patterns[d.patternType] ?? 0) + 1;
    effects.push({
      type: "pattern",
      patternType: d.patternType,
      severity: d.severity,
      count: d.count,
      sessionId: s.sessionId,
      toolSequence: d.toolSequence,
    });

    // The first pattern of a turn stalls it (an implicit turn if none is known).
    if (s.currentTurn === null) {
      s.currentTurn = -1;
      s.turnHadPattern = false;
      stats.turns += 1;
    }
    if (!s.turnHadPattern) {
      s.turnHadPattern = true;
      stats.stalledTurns += 1;
    }

    // The same pattern was detected again before a productive action: its open nudges did not work.
    if (s.openNudges.some((n) => n.patternType === d.patternType)) {
      for (const n of s.openNudges) if (n.patternType === d.patternType) verdicts.push({ patternType: n.patternType, sentAt: n.sentAt, effective: false });
      s.openNudges = s.openNudges.filter((n) => n.patternType !== d.patternType);
    }
  }

  // One nudge per event: the highest severity, ties by table order; a loop step nudged once.
  const candidates = reports.filter((d) => !(d.identity && s.run && s.run.nudged && identityOf(s.run.toolName, s.run.argsHash) === d.identity && severityRank(d.severity) <= severityRank(s.run.nudged)));
  candidates.sort((a, b) => severityRank(b.severity) - severityRank(a.severity) || TABLE_ORDER[a.patternType] - TABLE_ORDER[b.patternType]);
  const d = candidates[0];
  const nudgeType = d ? nudgeTypeFor(d.severity, level, enabled) : null;
  if (d && nudgeType && !s.paused) {
    const instead = STALL_PATTERN_BY_NAME[d.patternType].nudgeInstead?.(s) ?? null;
    const vars = { toolName: d.toolName, count: instead ? instead.count : d.count, args: d.args };
    const message = nudgeMessage(d.patternType, d.severity, nudgeType, vars, instead?.nudges);
    effects.push({ type: "nudge", nudgeType, message, patternType: d.patternType, sessionId: s.sessionId });
    stats.nudgesSent += 1;
    s.openNudges = [...s.openNudges, { patternType: d.patternType, severity: d.severity, sentAt: now }];
    if (d.identity && s.run && identityOf(s.run.toolName, s.run.argsHash) === d.identity) s.run = { ...s.run, nudged: d.severity };
    if (nudgeType === "interrupt") {
      s = pauseSession(s, message, now);
      effects.push({ type: "paused", sessionId: s.sessionId, reason: message });
    }
  }

  return { state: s, effects, stats, verdicts };
}

/** Folds several events (convenience for tests and batch replays). Stats are summed. */
export function observeSessionEvents(
  state: SessionBehaviour,
  events: { event: BehaviourEvent; now: number }[],
  config: ObserveConfig,
): ObserveResult {
  let s = state;
  const effects: Effect[] = [];
  const stats = emptyStats();
  const verdicts: NudgeVerdict[] = [];
  for (const { event, now } of events) {
    const r = observeSessionEvent(s, event, config, now);
    s = r.state;
    effects.push(...r.effects);
    verdicts.push(...r.verdicts);
    addStats(stats, r.stats);
  }
  return { state: s, effects, stats, verdicts };
}

/** Adds `b` into `a` (mutates `a`). */
export function addStats(a: BehaviourStats, b: BehaviourStats): BehaviourStats {
  for (const t of PATTERN_TYPES) {
    const n = b.patterns[t];
    if (n) a.patterns[t] = (a.patterns[t] ?? 0) + n;
  }
  a.nudgesSent += b.nudgesSent;
  a.nudgesEffective += b.nudgesEffective;
  a.turns += b.turns;
  a.stalledTurns += b.stalledTurns;
  return a;
}

/** All severities, lowest first (re-export for convenience). */
export const SEVERITY_ORDER: readonly PatternSeverity[] = PATTERN_SEVERITIES;

/** Re-exported so callers can build a fresh state without importing behaviour-state.ts. */
export const newSessionBehaviour = createSessionBehaviour;
