/**
 * Per-session behaviour state (SPEC 5, revision 2). Plain JSON: the shell stores it in a jsonb
 * column and hands it back on the next request, so nothing lives in memory.
 *
 * Shared by patterns.ts (detection) and nudges.ts (pause / resume / guidance).
 * `upgradeSessionBehaviour` turns a state stored by an older version into the current shape, so
 * sessions in flight keep working across a deploy.
 */
import { STALL_PATTERN_BY_NAME, type PatternType } from "./stall-patterns";
import type { PatternSeverity } from "./stall-patterns/pattern";
import type { AlternatingRun, CallRun, CountRun, FailureRun, Stretch, StretchCall, Tracks } from "./stall-patterns/tracks";

export type { AlternatingRun, CallRun, CountRun, FailureRun, Stretch, StretchCall } from "./stall-patterns/tracks";

const BEHAVIOUR_STATE_VERSION = 2;

/** What was reported for a pattern, in which run or stretch (`scope`), and at which severity. */
export interface ReportedPattern {
  severity: PatternSeverity;
  count: number;
  at: number;
  scope: string;
}

/** A nudge sent for a pattern, waiting to be judged effective or not. */
export interface OpenNudge {
  patternType: PatternType;
  severity: PatternSeverity;
  sentAt: number;
}

export interface SessionBehaviour extends Tracks {
  version: 2;
  sessionId: string;
  /** Events observed (sequence numbers for run scopes). */
  seq: number;
  stretch: Stretch;
  /** The most recent calls, oldest first (bounded): results find their call's identity here. */
  calls: StretchCall[];
  run: CallRun | null;
  failureRun: FailureRun | null;
  alternating: AlternatingRun | null;
  introspectionRun: CountRun | null;
  /** Model texts in a row (no tool call or result between); identical texts count double. */
  textRun: (CountRun & { hashes: string[] }) | null;
  emptyRun: CountRun | null;
  reported: Partial<Record<PatternType, ReportedPattern>>;
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

/**
 * Recent calls kept: the last three (alternation, announcements without action), the ten of a
 * pattern's tool sequence, and room for results that arrive some calls after their call (parallel
 * tool calls). Runs, alternations and loops are tracked in their own fields, not here. The state
 * is read and written on every guard.check: 32 calls were two thirds of it.
 */
export const RECENT_CALLS_KEPT = 16;
/** Bound of the per-stretch identity lists (reads, results): enough for any realistic stretch. */
export const STRETCH_IDENTITIES_KEPT = 256;

export function newStretch(id: number, startedAt: number | null): Stretch {
  return {
    id,
    startedAt,
    callCount: 0,
    seenResults: [],
    readIdentities: [],
    callIdentities: [],
    rereads: 0,
    lastReread: null,
    announcements: 0,
    announcement: null,
    mentions: {},
  };
}

export function createSessionBehaviour(sessionId: string): SessionBehaviour {
  return {
    version: 2,
    sessionId,
    seq: 0,
    stretch: newStretch(0, null),
    calls: [],
    run: null,
    failureRun: null,
    alternating: null,
    introspectionRun: null,
    textRun: null,
    emptyRun: null,
    resultRun: null,
    reported: {},
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

/**
 * A shallow copy of `s` (its nested objects shared), with every field named: an object spread of
 * states of many origins (stored JSON, earlier copies) was the costliest line of the behaviour
 * fold. patterns.test.ts checks that no field is left out.
 */
export function copySessionBehaviour(s: SessionBehaviour): SessionBehaviour {
  return {
    version: s.version,
    sessionId: s.sessionId,
    seq: s.seq,
    stretch: s.stretch,
    calls: s.calls,
    run: s.run,
    failureRun: s.failureRun,
    alternating: s.alternating,
    introspectionRun: s.introspectionRun,
    textRun: s.textRun,
    emptyRun: s.emptyRun,
    resultRun: s.resultRun ?? null,
    reported: s.reported,
    paused: s.paused,
    pauseReason: s.pauseReason,
    pausedAt: s.pausedAt,
    pendingGuidance: s.pendingGuidance,
    openNudges: s.openNudges,
    currentTurn: s.currentTurn,
    turnHadPattern: s.turnHadPattern,
    modelSuggestions: s.modelSuggestions,
    lastEventAt: s.lastEventAt,
  };
}

/** A shallow copy of a stretch, every field named (see copySessionBehaviour). */
function copyStretch(st: Stretch): Stretch {
  return {
    id: st.id,
    startedAt: st.startedAt,
    callCount: st.callCount,
    seenResults: st.seenResults,
    readIdentities: st.readIdentities,
    callIdentities: st.callIdentities,
    rereads: st.rereads,
    lastReread: st.lastReread,
    announcements: st.announcements,
    announcement: st.announcement,
    mentions: st.mentions,
  };
}

/**
 * A copy of `s` that a fold may change in place (foldSessionEvent): the state, its stretch and
 * every list a fold extends — the recent calls, the stretch's identities and mentions, the text
 * run's hashes. The small run objects stay shared: a fold replaces them, never changes them.
 * Copied once per session and batch instead of once per event: the identity lists (up to
 * STRETCH_IDENTITIES_KEPT each) were the largest allocation of an ingested event.
 */
export function ownedSessionBehaviour(s: SessionBehaviour): SessionBehaviour {
  const own = copySessionBehaviour(s);
  own.stretch = copyStretch(s.stretch);
  own.stretch.seenResults = [...s.stretch.seenResults];
  own.stretch.readIdentities = [...s.stretch.readIdentities];
  // States stored before revision 3 have neither.
  own.stretch.callIdentities = s.stretch.callIdentities ? [...s.stretch.callIdentities] : [];
  own.stretch.announcement ??= null;
  own.stretch.mentions = { ...s.stretch.mentions };
  own.calls = [...s.calls];
  if (s.textRun) own.textRun = { ...s.textRun, hashes: [...s.textRun.hashes] };
  return own;
}

/** Ends every run and starts a fresh stretch (a `user.message` or a resume). */
export function restartDetection(state: SessionBehaviour, now: number): SessionBehaviour {
  return {
    ...state,
    stretch: newStretch(state.stretch.id + 1, now),
    // Calls before the reset must not count towards a new alternation (results of those calls then
    // fall back to the shell's hash of their args).
    calls: [],
    run: null,
    failureRun: null,
    alternating: null,
    introspectionRun: null,
    textRun: null,
    emptyRun: null,
    resultRun: null,
  };
}

/**
 * A stored state of any version → the current shape (idempotent). Version 3 is the stored form of
 * version 2 (storedSessionBehaviour). Version 1 (revision 1 of
 * SPEC 5) counted by tool name; its counters mean something else now, so its runs start over,
 * while everything a person or the agent relies on is kept: pause, guidance, open nudges,
 * turns, model suggestions, the stretch's announcements and mentions. `null` → a fresh state.
 */
export function upgradeSessionBehaviour(stored: unknown, sessionId: string): SessionBehaviour {
  if (!stored || typeof stored !== "object") return createSessionBehaviour(sessionId);
  const s = stored as Record<string, unknown>;
  if (s.v === 3) return fromStored(s, sessionId);
  if (s.version === BEHAVIOUR_STATE_VERSION) return stored as SessionBehaviour;
  const fresh = createSessionBehaviour(typeof s.sessionId === "string" ? s.sessionId : sessionId);
  const old = (s.stretch ?? {}) as Record<string, unknown>;
  const num = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) ? v : d);
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  const stretchId = num(old.id, 0);
  const mentions = old.mentions && typeof old.mentions === "object" ? (old.mentions as Stretch["mentions"]) : {};
  // Reports of v1 that keep their meaning (same stretch, same definition) stay, so they are not sent twice.
  const oldReported = (old.reported ?? {}) as Partial<Record<string, { severity: PatternSeverity; count: number; at: number }>>;
  const reported: SessionBehaviour["reported"] = {};
  for (const p of ["announce_no_action", "tool_avoidance"] as const) {
    const r = oldReported[p];
    if (r && typeof r.severity === "string") reported[p] = { severity: r.severity, count: num(r.count, 0), at: num(r.at, 0), scope: `s${stretchId}` };
  }
  return {
    ...fresh,
    stretch: {
      ...newStretch(stretchId, old.startedAt === null ? null : num(old.startedAt, 0)),
      callCount: num(old.callCount, 0),
      announcements: num(old.announcements, 0),
      mentions: { ...mentions },
    },
    reported,
    paused: s.paused === true,
    pauseReason: str(s.pauseReason),
    pausedAt: typeof s.pausedAt === "number" ? s.pausedAt : null,
    pendingGuidance: str(s.pendingGuidance),
    openNudges: Array.isArray(s.openNudges) ? (s.openNudges as OpenNudge[]) : [],
    currentTurn: typeof s.currentTurn === "number" ? s.currentTurn : null,
    turnHadPattern: s.turnHadPattern === true,
    modelSuggestions: Array.isArray(s.modelSuggestions) ? (s.modelSuggestions as string[]) : [],
    lastEventAt: typeof s.lastEventAt === "number" ? s.lastEventAt : null,
  };
}

/**
 * The stored form of a state (`agent_session.behaviour`, version 3): every field that still has its
 * fresh value left out, the calls as `[callId, toolName, argsHash, outcome?]`, and no session id
 * (the row's). guard.check writes its session's state on every call, and PostgreSQL's cost of the
 * write grows with the document (sending, parsing into jsonb, compressing, WAL): this is ~40 %
 * smaller than the state as it is. `upgradeSessionBehaviour` reads it back.
 */
export interface StoredSessionBehaviour {
  v: 3;
  [field: string]: unknown;
}

type StoredCall = [callId: string, toolName: string, argsHash: string, outcome?: string];

/** Whether a field's value is the fresh one (as createSessionBehaviour / newStretch make it). */
function isFresh(value: unknown, fresh: unknown): boolean {
  if (value === fresh) return true;
  if (Array.isArray(fresh)) return Array.isArray(value) && value.length === 0 && fresh.length === 0;
  if (fresh && typeof fresh === "object") return !!value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0 && Object.keys(fresh).length === 0;
  return false;
}

const FRESH = createSessionBehaviour("");
const FRESH_STRETCH = newStretch(0, null);

function withoutFresh(source: object, fresh: object, skip: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) if (!skip.includes(k) && v !== undefined && !isFresh(v, (fresh as Record<string, unknown>)[k])) out[k] = v;
  return out;
}

export function storedSessionBehaviour(state: SessionBehaviour): StoredSessionBehaviour {
  const out: StoredSessionBehaviour = { v: 3, ...withoutFresh(state, FRESH, ["version", "sessionId", "stretch", "calls"]) };
  const stretch = withoutFresh(state.stretch, FRESH_STRETCH, []);
  if (Object.keys(stretch).length) out.stretch = stretch;
  if (state.calls.length)
    out.calls = state.calls.map((c): StoredCall => (c.outcome === undefined ? [c.callId, c.toolName, c.argsHash] : [c.callId, c.toolName, c.argsHash, c.outcome]));
  return out;
}

function fromStored(s: Record<string, unknown>, sessionId: string): SessionBehaviour {
  const { v: _v, stretch, calls, ...fields } = s;
  return {
    ...createSessionBehaviour(sessionId),
    ...(fields as Partial<SessionBehaviour>),
    stretch: { ...newStretch(0, null), ...(stretch as Partial<Stretch> | undefined) },
    calls: ((calls ?? []) as StoredCall[]).map(([callId, toolName, argsHash, outcome]) =>
      outcome === undefined ? { callId, toolName, argsHash } : { callId, toolName, argsHash, outcome },
    ),
  };
}

/** The scope a pattern's report belongs to now: its current run, or the stretch. */
export function currentScope(state: SessionBehaviour, type: PatternType): string | null {
  return STALL_PATTERN_BY_NAME[type].scope(state);
}

/** The patterns reported in their current run or stretch, for `sessions.get` `activePatterns`. */
export function activePatterns(
  stored: SessionBehaviour,
): { patternType: PatternType; severity: PatternSeverity; count: number; detectedAt: number }[] {
  const state = upgradeSessionBehaviour(stored, stored?.sessionId ?? "");
  const out: { patternType: PatternType; severity: PatternSeverity; count: number; detectedAt: number }[] = [];
  for (const [type, rep] of Object.entries(state.reported) as [PatternType, ReportedPattern][]) {
    if (rep.scope !== currentScope(state, type)) continue;
    out.push({ patternType: type, severity: rep.severity, count: rep.count, detectedAt: rep.at });
  }
  return out.sort((a, b) => a.detectedAt - b.detectedAt || a.patternType.localeCompare(b.patternType));
}
