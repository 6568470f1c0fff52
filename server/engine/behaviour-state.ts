/**
 * Per-session behaviour state (SPEC 5). Plain JSON: the shell stores it in a jsonb
 * column and hands it back on the next request, so nothing lives in memory.
 *
 * Shared by patterns.ts (detection) and nudges.ts (pause / resume / guidance).
 */
import type { PatternSeverity, PatternType } from "./types";

/** One tool call of the stretch, as the shell enriched it. */
export interface StretchCall {
  toolName: string;
  argsHash: string;
  failureKey: string;
}

/** The run of consecutive failures of one failure key inside the stretch. */
export interface FailureRun {
  toolName: string;
  argsHash: string;
  count: number;
}

/** What was reported for a pattern in the current stretch (severity only rises). */
export interface ReportedPattern {
  severity: PatternSeverity;
  count: number;
  at: number;
}

/**
 * The stretch: everything since the session's last successful action-tool result.
 * Counters are kept incrementally so the state stays bounded however long the stretch is;
 * `calls` keeps only the most recent STRETCH_CALLS_KEPT calls.
 */
export interface Stretch {
  /** Increments every time a new stretch starts (successful action result, resume). */
  id: number;
  startedAt: number | null;
  /** The most recent calls of the stretch, oldest first (bounded). */
  calls: StretchCall[];
  /** Number of tool calls in the stretch (unbounded counter). */
  callCount: number;
  /** Length of the current run of calls with the same tool name as the last call. */
  sameToolRun: number;
  /** Length of the current run of introspection-tool calls. */
  introspectionRun: number;
  /** Length of the current run alternating between exactly two (tool, args hash) pairs. */
  alternatingRun: number;
  /** Read-only calls in the stretch. */
  readOnlyCalls: number;
  /** Action-tool calls in the stretch (a failed one keeps the stretch going). */
  actionCalls: number;
  /** `model.text` events in a row with no tool call between them. */
  textRun: number;
  /** `model.text` events of the stretch that contain an announce phrase. */
  announcements: number;
  /** Per action tool (lower-cased name): texts naming it since it was last called. */
  mentions: Record<string, { toolName: string; count: number }>;
  /** Per failure key: the current run of consecutive failures with one args hash. */
  failureRuns: Record<string, FailureRun>;
  /** Patterns reported in this stretch and at which severity. */
  reported: Partial<Record<PatternType, ReportedPattern>>;
}

/** A nudge sent for a pattern, waiting to be judged effective or not. */
export interface OpenNudge {
  patternType: PatternType;
  severity: PatternSeverity;
  sentAt: number;
}

export interface SessionBehaviour {
  version: 1;
  sessionId: string;
  stretch: Stretch;
  paused: boolean;
  pauseReason: string | null;
  pausedAt: number | null;
  /** Guidance a person gave on resume; delivered as a `guidance` nudge on the next call, once. */
  pendingGuidance: string | null;
  openNudges: OpenNudge[];
  /** Turn index of the current turn; null before any turn is known; -1 = implicit turn. */
  currentTurn: number | null;
  turnHadPattern: boolean;
  /**
   * Model-switch suggestions already made in this session, as `JSON.stringify([failureKey, model])`
   * (SPEC 6: once per (session, key, current model)). No NUL separator: jsonb rejects \u0000. See models.ts.
   */
  modelSuggestions: string[];
  lastEventAt: number | null;
}

export const STRETCH_CALLS_KEPT = 20;

export function newStretch(id: number, startedAt: number | null): Stretch {
  return {
    id,
    startedAt,
    calls: [],
    callCount: 0,
    sameToolRun: 0,
    introspectionRun: 0,
    alternatingRun: 0,
    readOnlyCalls: 0,
    actionCalls: 0,
    textRun: 0,
    announcements: 0,
    mentions: {},
    failureRuns: {},
    reported: {},
  };
}

export function createSessionBehaviour(sessionId: string): SessionBehaviour {
  return {
    version: 1,
    sessionId,
    stretch: newStretch(0, null),
    paused: false,
    pauseReason: null,
    pausedAt: null,
    pendingGuidance: null,
    openNudges: [],
    currentTurn: null,
    turnHadPattern: false,
    modelSuggestions: [],
    lastEventAt: null,
  };
}

/** The patterns reported in the current stretch, for `sessions.get` `activePatterns`. */
export function activePatterns(
  state: SessionBehaviour,
): { patternType: PatternType; severity: PatternSeverity; count: number; detectedAt: number }[] {
  const out: { patternType: PatternType; severity: PatternSeverity; count: number; detectedAt: number }[] = [];
  for (const [type, rep] of Object.entries(state.stretch.reported) as [PatternType, ReportedPattern][]) {
    out.push({ patternType: type, severity: rep.severity, count: rep.count, detectedAt: rep.at });
  }
  return out.sort((a, b) => a.detectedAt - b.detectedAt || a.patternType.localeCompare(b.patternType));
}
