/**
 * Counting (SPEC 4.2): effective failures with age and session decay, failure rate. Pure.
 */
import { dictionary } from "./dictionary";
import type { FailureRecord, ResultLog, Rule, SessionInfo, SessionTimeline, Severity } from "./types";

const HOUR_MS = 3_600_000;
export const DEFAULT_AGENT = "default";

/** max(0.1, 1 − 0.1 × floor(ageHours)); future failures (age < 0) count fully. */
export function ageDecay(ageMs: number): number {
  const hours = Math.floor(Math.max(0, ageMs) / HOUR_MS);
  return Math.max(1, 10 - hours) / 10;
}

export function emptyTimeline(): SessionTimeline {
  return { sessions: dictionary(), startsByAgent: dictionary() };
}

/** Builds a timeline from session rows. */
export function buildSessionTimeline(sessions: readonly SessionInfo[]): SessionTimeline {
  const t = emptyTimeline();
  for (const s of sessions) t.sessions[s.sessionId] = { ...s };
  for (const s of sessions) {
    if (s.startedAt === null) continue;
    (t.startsByAgent[s.agent] ??= []).push(s.startedAt);
  }
  for (const k of Object.keys(t.startsByAgent)) t.startsByAgent[k].sort((a, b) => a - b);
  return t;
}

/** A copy of a timeline that recordSession may change without touching the original. */
export function copyTimeline(t: SessionTimeline): SessionTimeline {
  const startsByAgent = dictionary<number[]>();
  for (const agent of Object.keys(t.startsByAgent)) startsByAgent[agent] = t.startsByAgent[agent].slice();
  return { sessions: dictionary(t.sessions), startsByAgent };
}

/**
 * Adds or updates one session (start and/or end recorded) in place: the same timeline
 * buildSessionTimeline would make of all sessions, without rebuilding it. A batch records its
 * sessions one at a time into its own copy of a timeline of hundreds (copying it per session
 * was ~7 % of ingest's CPU).
 */
export function recordSession(t: SessionTimeline, s: SessionInfo): void {
  const prev = t.sessions[s.sessionId];
  if (prev && prev.startedAt !== null) {
    const list = t.startsByAgent[prev.agent];
    list.splice(list.indexOf(prev.startedAt), 1);
    if (!list.length) delete t.startsByAgent[prev.agent];
  }
  if (s.startedAt !== null) {
    const list = (t.startsByAgent[s.agent] ??= []);
    let i = list.length;
    while (i > 0 && list[i - 1] > s.startedAt) i--;
    list.splice(i, 0, s.startedAt);
  }
  t.sessions[s.sessionId] = { ...s };
}

/** Returns a new timeline with one session added/updated (start and/or end recorded). */
export function withSession(t: SessionTimeline, s: SessionInfo): SessionTimeline {
  const next = copyTimeline(t);
  recordSession(next, s);
  return next;
}

/**
 * Number of sessions of the failure's agent that started after the failure's session ended
 * (and not after `now`). A session that has not ended crosses nothing. The starts are in order
 * (buildSessionTimeline, recordSession), so this is two binary searches: an agent of a fleet
 * starts thousands of sessions a window, and every failure of a key's history is counted at each
 * of its results.
 */
export function sessionsCrossed(f: Pick<FailureRecord, "sessionId" | "agent">, timeline: SessionTimeline, now: number): number {
  const info = timeline.sessions[f.sessionId];
  if (!info || info.endedAt === null || now <= info.endedAt) return 0;
  const agent = f.agent || info.agent || DEFAULT_AGENT;
  const starts = timeline.startsByAgent[agent];
  if (!starts) return 0;
  return startsUpTo(starts, now) - startsUpTo(starts, info.endedAt);
}

/** How many of the ascending `starts` are ≤ `t`. */
function startsUpTo(starts: readonly number[], t: number): number {
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface CountOptions {
  /** Only records with seq > afterSeq count (reset / recovery baseline, escalation). */
  afterSeq?: number;
}

function inWindow(ts: number, windowSeconds: number, now: number): boolean {
  return now - ts <= windowSeconds * 1000;
}

/** Σ weight × ageDecay × 0.8^sessionsCrossed over in-window, in-filter failures. */
export function effectiveFailures(
  failures: readonly FailureRecord[],
  rule: Pick<Rule, "windowSeconds" | "severityFilter">,
  timeline: SessionTimeline,
  now: number,
  opts: CountOptions = {},
): number {
  const filter = new Set<Severity>(rule.severityFilter);
  let sum = 0;
  for (const f of failures) {
    if (opts.afterSeq !== undefined && f.seq <= opts.afterSeq) continue;
    if (!filter.has(f.severity)) continue;
    if (!inWindow(f.ts, rule.windowSeconds, now)) continue;
    const w = Math.max(0, f.weight);
    sum += w * ageDecay(now - f.ts) * Math.pow(0.8, sessionsCrossed(f, timeline, now));
  }
  return sum;
}

/** Unweighted number of in-window, in-filter failures. */
export function countFailuresInWindow(
  failures: readonly FailureRecord[],
  rule: Pick<Rule, "windowSeconds" | "severityFilter">,
  now: number,
  opts: CountOptions = {},
): number {
  const filter = new Set<Severity>(rule.severityFilter);
  return failures.filter(
    (f) =>
      (opts.afterSeq === undefined || f.seq > opts.afterSeq) &&
      filter.has(f.severity) &&
      inWindow(f.ts, rule.windowSeconds, now),
  ).length;
}

/**
 * Failures ÷ results inside the window (unweighted, all severities); null when fewer than
 * `rateMinCalls` results are in the window. The results in the window are a suffix of the log
 * (times in order), found by binary search; the failed ones are the failures from its first seq
 * on. So a hot key's rate costs O(log results + failures counted), not a walk over every result.
 */
export function failureRate(
  results: Readonly<ResultLog>,
  failures: readonly FailureRecord[],
  rule: Pick<Rule, "windowSeconds" | "rateMinCalls">,
  now: number,
  opts: CountOptions = {},
): number | null {
  const { ts, firstSeq } = results;
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (inWindow(ts[mid], rule.windowSeconds, now)) hi = mid;
    else lo = mid + 1;
  }
  const start = opts.afterSeq === undefined ? lo : Math.max(lo, opts.afterSeq + 1 - firstSeq);
  const total = ts.length - start;
  if (total <= 0 || total < rule.rateMinCalls) return null;
  const fromSeq = firstSeq + start;
  let failed = 0;
  for (let i = failures.length - 1; i >= 0 && failures[i].seq >= fromSeq; i--) failed++;
  return failed / total;
}
