/**
 * Behavioural pattern detection (SPEC 5), pure.
 *
 * `observeSessionEvent(state, event, config, now)` folds one (shell-enriched) event of an agent
 * session into its `SessionBehaviour` and returns the new state, the effects (pattern, nudge,
 * paused) and the counters the shell adds to the model's behavioural profile.
 *
 * Detection works on the **stretch**: the session's tool calls and model text since its last
 * successful action-tool result. `turn.start` does not reset it; neither does a failed result.
 * Every pattern is evaluated after every event; within a stretch a pattern is reported again
 * only when its severity rises.
 */
import {
  createSessionBehaviour,
  newStretch,
  STRETCH_CALLS_KEPT,
  type SessionBehaviour,
  type Stretch,
  type StretchCall,
} from "./behaviour-state";
import { nudgeMessage, nudgeTypeFor, pauseSession, takePendingGuidance } from "./nudges";
import { DEFAULT_PATTERN_CONFIG } from "./config";
import {
  PATTERN_SEVERITIES,
  PATTERN_TYPES,
  type AgentEvent,
  type Effect,
  type EffectiveSettings,
  type NudgeLevel,
  type PatternConfig,
  type PatternSeverity,
  type PatternThresholds,
  type PatternType,
  type ToolCallEvent,
  type ToolResultEvent,
} from "./types";

export { createSessionBehaviour, activePatterns } from "./behaviour-state";
export type { SessionBehaviour, Stretch, StretchCall } from "./behaviour-state";

/** Built-in pattern configuration (SPEC 5 table): one definition, in config.ts. */
export const BUILTIN_PATTERN_CONFIG: PatternConfig = DEFAULT_PATTERN_CONFIG;

/**
 * Structural minimum count of each pattern, whatever the configured ladder says: a "run" of
 * the same tool needs 2 calls, alternation between two pairs needs A B A B, and so on.
 * With the default ladders the minor threshold is always at least this, so detection is
 * exactly SPEC 5's "detected when" column; a workspace that lowers a minor threshold gets
 * detection at its threshold, never below this floor.
 */
export const PATTERN_MIN_COUNT: Record<PatternType, number> = {
  repetitive_calls: 2,
  introspection_loop: 2,
  read_only_loop: 1,
  announce_no_action: 1,
  error_retry_loop: 2,
  planning_loop: 2,
  alternating_calls: 4,
  tool_avoidance: 1,
};

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

export interface ObserveResult {
  state: SessionBehaviour;
  effects: Effect[];
  stats: BehaviourStats;
}

/** A detection: the pattern's condition holds with this count at this severity. */
export interface Detection {
  patternType: PatternType;
  severity: PatternSeverity;
  count: number;
  /** The tool the nudge names (`{tool_name}`). */
  toolName: string;
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
// Stretch updates
// ---------------------------------------------------------------------------

const TOOL_SEQUENCE_LENGTH = 10;

function samePair(a: StretchCall | undefined, b: StretchCall | undefined): boolean {
  return !!a && !!b && a.toolName === b.toolName && a.argsHash === b.argsHash;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whether `text` names `tool` as a word (case-insensitive). */
export function mentionsTool(text: string, tool: string): boolean {
  if (tool.length === 0) return false;
  const re = new RegExp(`(^|[^A-Za-z0-9_])${escapeRegExp(tool)}($|[^A-Za-z0-9_])`, "i");
  return re.test(text);
}

/** Whether `text` contains an announce phrase (case-insensitive substring). */
export function isAnnouncement(text: string, phrases: string[]): boolean {
  const lower = text.toLowerCase();
  return phrases.some((p) => p.length > 0 && lower.includes(p.toLowerCase()));
}

function addCall(stretch: Stretch, call: StretchCall, cfg: PatternConfig): Stretch {
  // Work on the full recent list (before trimming) to compute runs.
  const prev = stretch.calls;
  const last = prev[prev.length - 1];
  const beforeLast = prev[prev.length - 2];

  const sameToolRun = last && last.toolName === call.toolName ? stretch.sameToolRun + 1 : 1;
  const isIntrospection = cfg.introspectionTools.includes(call.toolName);
  const introspectionRun = isIntrospection ? stretch.introspectionRun + 1 : 0;

  let alternatingRun: number;
  if (!last || samePair(last, call)) alternatingRun = 1;
  else if (samePair(beforeLast, call) && stretch.alternatingRun >= 2) alternatingRun = stretch.alternatingRun + 1;
  else alternatingRun = 2;

  const mentions = { ...stretch.mentions };
  delete mentions[call.toolName.toLowerCase()];

  const calls = [...prev, call];
  if (calls.length > STRETCH_CALLS_KEPT) calls.splice(0, calls.length - STRETCH_CALLS_KEPT);

  return {
    ...stretch,
    calls,
    callCount: stretch.callCount + 1,
    sameToolRun,
    introspectionRun,
    alternatingRun,
    readOnlyCalls: stretch.readOnlyCalls + (cfg.readOnlyTools.includes(call.toolName) ? 1 : 0),
    actionCalls: stretch.actionCalls + (cfg.actionTools.includes(call.toolName) ? 1 : 0),
    textRun: 0,
    mentions,
  };
}

function addText(stretch: Stretch, text: string, cfg: PatternConfig): Stretch {
  const mentions = { ...stretch.mentions };
  const seen = new Set<string>();
  for (const tool of cfg.actionTools) {
    const key = tool.toLowerCase();
    if (seen.has(key)) continue; // "bash" and "Bash" are one tool for mentions
    if (mentionsTool(text, tool)) {
      seen.add(key);
      const cur = mentions[key];
      mentions[key] = { toolName: cur?.toolName ?? tool, count: (cur?.count ?? 0) + 1 };
    }
  }
  return {
    ...stretch,
    textRun: stretch.textRun + 1,
    announcements: stretch.announcements + (isAnnouncement(text, cfg.announcePhrases) ? 1 : 0),
    mentions,
  };
}

function addResult(stretch: Stretch, ev: EnrichedToolResult): Stretch {
  const runs = { ...stretch.failureRuns };
  const cur = runs[ev.failureKey];
  if (!ev.failed) {
    delete runs[ev.failureKey];
  } else if (cur && cur.argsHash === ev.argsHash) {
    runs[ev.failureKey] = { ...cur, count: cur.count + 1 };
  } else {
    runs[ev.failureKey] = { toolName: ev.toolName, argsHash: ev.argsHash, count: 1 };
  }
  return { ...stretch, failureRuns: runs };
}

// ---------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------

function toolSequence(stretch: Stretch): string[] {
  return stretch.calls.slice(-TOOL_SEQUENCE_LENGTH).map((c) => c.toolName);
}

function detection(
  type: PatternType,
  count: number,
  cfg: PatternConfig,
  toolName: string,
  stretch: Stretch,
): Detection | null {
  if (count < PATTERN_MIN_COUNT[type]) return null;
  const severity = severityFor(count, cfg.thresholds[type]);
  if (!severity) return null;
  return { patternType: type, severity, count, toolName, toolSequence: toolSequence(stretch) };
}

/**
 * Every pattern whose condition holds on this stretch, with its count and severity, in
 * PATTERN_TYPES order. Pure function of the stretch and the config.
 */
export function detectPatterns(stretch: Stretch, cfg: PatternConfig): Detection[] {
  const out: Detection[] = [];
  const calls = stretch.calls;
  const last = calls[calls.length - 1];
  const push = (d: Detection | null) => {
    if (d) out.push(d);
  };

  // repetitive_calls: the last 3 (>= floor) calls share the tool name; count = run length.
  if (last) push(detection("repetitive_calls", stretch.sameToolRun, cfg, last.toolName, stretch));

  // introspection_loop: the call is introspection and the previous one was too.
  if (last) push(detection("introspection_loop", stretch.introspectionRun, cfg, last.toolName, stretch));

  // read_only_loop: read-only calls in the stretch and no action call.
  if (stretch.actionCalls === 0 && stretch.readOnlyCalls > 0) {
    const lastRead = [...calls].reverse().find((c) => cfg.readOnlyTools.includes(c.toolName));
    push(detection("read_only_loop", stretch.readOnlyCalls, cfg, lastRead?.toolName ?? last?.toolName ?? "", stretch));
  }

  // announce_no_action: announcements in the stretch and none of the last 3 calls is an action.
  if (stretch.announcements > 0 && !calls.slice(-3).some((c) => cfg.actionTools.includes(c.toolName))) {
    push(detection("announce_no_action", stretch.announcements, cfg, last?.toolName ?? "an action tool", stretch));
  }

  // error_retry_loop: same failure key failed N times in a row with the same args hash.
  let worstRun: { key: string; toolName: string; count: number } | null = null;
  for (const [key, run] of Object.entries(stretch.failureRuns)) {
    if (!worstRun || run.count > worstRun.count || (run.count === worstRun.count && key < worstRun.key)) {
      worstRun = { key, toolName: run.toolName, count: run.count };
    }
  }
  if (worstRun) push(detection("error_retry_loop", worstRun.count, cfg, worstRun.toolName, stretch));

  // planning_loop: model.text events in a row with no tool call between them.
  push(detection("planning_loop", stretch.textRun, cfg, last?.toolName ?? "a tool", stretch));

  // alternating_calls: the last calls alternate between exactly two (tool, args hash) pairs.
  if (last && stretch.alternatingRun >= 2) {
    const other = calls[calls.length - 2];
    const names = other ? `${other.toolName} and ${last.toolName}` : last.toolName;
    push(detection("alternating_calls", stretch.alternatingRun, cfg, names, stretch));
  }

  // tool_avoidance: an action tool named in model text N times since it was last called.
  let worstMention: { key: string; toolName: string; count: number } | null = null;
  for (const [key, m] of Object.entries(stretch.mentions)) {
    if (!worstMention || m.count > worstMention.count || (m.count === worstMention.count && key < worstMention.key)) {
      worstMention = { key, toolName: m.toolName, count: m.count };
    }
  }
  if (worstMention) push(detection("tool_avoidance", worstMention.count, cfg, worstMention.toolName, stretch));

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

/**
 * Folds one event of the session into its behaviour state.
 *
 * - `turn.start` (or any event carrying a new `turnIndex`) starts a turn (stats.turns).
 * - `tool.call`: delivers pending guidance (a `guidance` nudge, once), extends the stretch.
 * - `model.text`: counts announcements, action-tool mentions and the run of texts.
 * - `tool.result`: tracks failure runs; a successful action-tool result makes every open
 *   nudge effective and starts a new, clean stretch.
 * - then every pattern is evaluated; a pattern is reported when it is new in the stretch or
 *   its severity rose. Each report → `pattern` effect, and unless the nudge level/enable says
 *   otherwise or the session is already paused, a `nudge` effect; an interrupt also pauses the
 *   session (`paused` effect). A report closes the open nudges of that pattern as ineffective.
 * - `patternDetectionEnabled: false` → the stretch is still tracked but nothing is detected.
 */
export function observeSessionEvent(
  state: SessionBehaviour,
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
  let s: SessionBehaviour = { ...state, lastEventAt: now };

  // Turns.
  const turn = eventTurn(event);
  if (turn !== undefined && turn !== s.currentTurn) {
    s = { ...s, currentTurn: turn, turnHadPattern: false };
    stats.turns += 1;
  }

  let stretch = s.stretch;
  if (stretch.startedAt === null) stretch = { ...stretch, startedAt: now };

  switch (event.type) {
    case "tool.call": {
      const g = takePendingGuidance(s);
      s = g.state;
      if (g.effect) effects.push(g.effect);
      stretch = addCall(
        stretch,
        { toolName: event.toolName, argsHash: event.argsHash, failureKey: event.failureKey },
        cfg,
      );
      break;
    }
    case "model.text":
      stretch = addText(stretch, event.text, cfg);
      break;
    case "tool.result": {
      if (!event.failed && cfg.actionTools.includes(event.toolName)) {
        // The stretch ends: every open nudge worked.
        stats.nudgesEffective += s.openNudges.length;
        s = { ...s, openNudges: [] };
        stretch = newStretch(stretch.id + 1, now);
      } else {
        stretch = addResult(stretch, event);
      }
      break;
    }
    default:
      break;
  }
  s = { ...s, stretch };

  if (!detectionEnabled) return { state: s, effects, stats };

  for (const d of detectPatterns(s.stretch, cfg)) {
    const prev = s.stretch.reported[d.patternType];
    if (prev && severityRank(d.severity) <= severityRank(prev.severity)) continue;

    // Report.
    s = {
      ...s,
      stretch: {
        ...s.stretch,
        reported: { ...s.stretch.reported, [d.patternType]: { severity: d.severity, count: d.count, at: now } },
      },
    };
    stats.patterns[d.patternType] = (stats.patterns[d.patternType] ?? 0) + 1;
    effects.push({
      type: "pattern",
      patternType: d.patternType,
      severity: d.severity,
      count: d.count,
      sessionId: s.sessionId,
      toolSequence: d.toolSequence,
    });

    // Turn bookkeeping: the first pattern of a turn stalls it (an implicit turn if none is known).
    if (s.currentTurn === null) {
      s = { ...s, currentTurn: -1, turnHadPattern: false };
      stats.turns += 1;
    }
    if (!s.turnHadPattern) {
      s = { ...s, turnHadPattern: true };
      stats.stalledTurns += 1;
    }

    // The same pattern was detected again: its open nudges were not effective.
    if (s.openNudges.some((n) => n.patternType === d.patternType)) {
      s = { ...s, openNudges: s.openNudges.filter((n) => n.patternType !== d.patternType) };
    }

    // Nudge (none while paused: the agent is already stopped and a person will resume it).
    const nudgeType = nudgeTypeFor(d.severity, level, enabled);
    if (!nudgeType || s.paused) continue;
    const message = nudgeMessage(d.patternType, d.severity, nudgeType, { toolName: d.toolName, count: d.count });
    effects.push({ type: "nudge", nudgeType, message, patternType: d.patternType, sessionId: s.sessionId });
    stats.nudgesSent += 1;
    s = { ...s, openNudges: [...s.openNudges, { patternType: d.patternType, severity: d.severity, sentAt: now }] };
    if (nudgeType === "interrupt") {
      s = pauseSession(s, message, now);
      effects.push({ type: "paused", sessionId: s.sessionId, reason: message });
    }
  }

  return { state: s, effects, stats };
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
  for (const { event, now } of events) {
    const r = observeSessionEvent(s, event, config, now);
    s = r.state;
    effects.push(...r.effects);
    addStats(stats, r.stats);
  }
  return { state: s, effects, stats };
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
