/**
 * Trust state machine (SPEC 4.3, 4.4). Pure: plain functions from (state, outcome, rule, now) to
 * (new state, effects). Inputs are never mutated.
 */
import { TRUST_STATE_RANK } from "./vocabulary";
import { countFailuresInWindow, effectiveFailures, failureRate } from "./decay";
import { REPEATED_AUTH_WINDOW_MS, failureWeight } from "./classify";
import type {
  BlockedDecision,
  Decision,
  Effect,
  FailureRecord,
  KeyContext,
  KeyHistory,
  KeyState,
  RecoveryMode,
  ResolvedRule,
  ResultChunk,
  ManualState,
  ResultLog,
  StoredResultLog,
  Rule,
  SessionTimeline,
  Severity,
  StateLevel,
  TrustState,
} from "./types";

export const DOMAIN_PREFIX = "@domain:";
export const TOOL_PREFIX = "@tool:";
/** History kept in a context: the rule window, and at least 10 minutes (repeated_auth). */
export const MIN_HISTORY_MS = 10 * 60 * 1000;
/**
 * The firstSeq of an empty result log. It is never read there (the next result sets it), so every
 * empty log has this one: a history then reads and stores the same whichever batches reached it.
 */
export const EMPTY_LOG_SEQ = 0;

export const SECURITY_BLOCK_REASON = "security concern detected";

/** A classified tool result, as applied to one state. */
export interface Outcome {
  failed: boolean;
  /** Required for failures (defaults to server_error when missing). */
  severity?: Severity | null;
  /** Defaults to failureWeight(severity). */
  weight?: number;
  sessionId: string;
  /** Agent name of the session; default "default". */
  agent?: string;
  /** The tool of the call (for effect messages; defaults to the state's toolName). */
  toolName?: string;
}

export interface ApplyOptions {
  /** `security` failures block this state (true for key states; false for domain states). */
  securityBlocks?: boolean;
  /**
   * The caller owns `ctx`'s history (a `copyKeyContext`), so it is changed in place and returned
   * instead of copied: a hot key under a rate rule keeps tens of thousands of results, and copying
   * them at every result made a batch quadratic in them (~2 ms per result at 36,000).
   */
  inPlace?: boolean;
}

export interface ApplyResult {
  ctx: KeyContext;
  effects: Effect[];
  /** The failure record appended by this outcome, if any (for the shell to persist). */
  failure: FailureRecord | null;
}

// ---------------------------------------------------------------------------
// Construction & helpers
// ---------------------------------------------------------------------------

export function levelOfKey(failureKey: string): StateLevel {
  if (failureKey.startsWith(DOMAIN_PREFIX)) return "domain";
  if (failureKey.startsWith(TOOL_PREFIX)) return "tool";
  return "key";
}

export function newKeyState(failureKey: string, toolName: string, level: StateLevel = levelOfKey(failureKey)): KeyState {
  return {
    failureKey,
    toolName,
    level,
    state: "trusted",
    consecutiveFailures: 0,
    totalCalls: 0,
    totalFailures: 0,
    lastFailureAt: null,
    lastSuccessAt: null,
    clock: null,
    seq: 0,
    countFromSeq: 0,
    escalatedAt: null,
    escalationReason: null,
    escalationExpires: null,
    escalationFailureCount: null,
    escalationWindowSeconds: null,
    escalationSeq: null,
    recoverySuccesses: 0,
    recoveryNeeded: 0,
    approvalPending: false,
  };
}

export function newKeyContext(failureKey: string, toolName: string, level?: StateLevel): KeyContext {
  return { state: newKeyState(failureKey, toolName, level), failures: [], results: { firstSeq: EMPTY_LOG_SEQ, ts: [] } };
}

/**
 * A stored state, its history and its failures (`key_state.trust`, `.data`, the `key_failure` rows
 * oldest first and the `key_result_chunk` logs in chunk order) as this engine keeps them. `.data`
 * says where the result log begins and the chunks hold it (resultChunks); every earlier form, with
 * the whole log in `.data.results`, still reads:
 * - results stored as gaps (StoredResultLog, an intermediate form);
 * - a ResultLog with absolute times (an earlier form);
 * - one `{ts, failed, seq}` record per result (before results became a ResultLog): their times
 *   are kept from the first one's seq (their seqs ran on, and trimming only ever cut the front),
 *   and which failed is in the failures.
 */
export function upgradeKeyContext(state: KeyState, history: unknown, failures: FailureRecord[], chunks: readonly (StoredResultLog | ResultLog)[] = []): KeyContext {
  const stored = history as Partial<{ resultsFrom: number; results: unknown }>;
  if (stored.results === undefined) return { state, failures, results: assembleResults(stored.resultsFrom ?? EMPTY_LOG_SEQ, chunks, state.seq) };
  const { results } = stored;
  if (Array.isArray(results)) {
    const records = results as { ts: number; seq: number }[];
    return { state, failures, results: resultLog(records[0]?.seq ?? 0, records.map((r) => r.ts)) };
  }
  return { state, failures, results: readResultLog(results as StoredResultLog | ResultLog) };
}

const resultLog = (firstSeq: number, ts: number[]): ResultLog => ({ firstSeq: ts.length ? firstSeq : EMPTY_LOG_SEQ, ts });

/** A log as stored (gaps, or absolute times) as the engine keeps it. */
function readResultLog(stored: StoredResultLog | ResultLog): ResultLog {
  if (!("gaps" in stored)) return resultLog(stored.firstSeq, stored.ts);
  const ts = new Array<number>(stored.gaps.length);
  let t = 0;
  for (let i = 0; i < ts.length; i++) ts[i] = t += stored.gaps[i];
  return resultLog(stored.firstSeq, ts);
}

/**
 * Times as stored: each as its gap from the one before, the first from 0 (JSON writes a busy key's
 * gap in 2–4 digits instead of 13). Times that are not whole milliseconds stay absolute (gaps
 * between them would not add up exactly).
 */
export function storedResultLog(firstSeq: number, ts: readonly number[]): StoredResultLog | ResultLog {
  const gaps = new Array<number>(ts.length);
  let previous = 0;
  for (let i = 0; i < ts.length; i++) {
    if (!Number.isInteger(ts[i])) return { firstSeq, ts: ts.slice() };
    gaps[i] = ts[i] - previous;
    previous = ts[i];
  }
  return { firstSeq, gaps };
}

/** What a context keeps in `key_state.data` (KeyHistory): where its result log begins. */
export function historyOf(ctx: KeyContext): KeyHistory {
  return { resultsFrom: ctx.results.ts.length ? ctx.results.firstSeq : EMPTY_LOG_SEQ };
}

/**
 * Results per `key_result_chunk` row. A hot key under a rate rule keeps tens of thousands of
 * results per window; stored whole in `key_state.data` (the older stored form) every batch touching the
 * key rewrote them all (~260 KB of JSON at 36,000). A batch now rewrites the chunks its results
 * fall in — the last, and a new one every 1,024 results — and deletes the ones the window passed.
 */
export const RESULT_CHUNK_SIZE = 1024;

const chunkOf = (seq: number) => Math.floor(seq / RESULT_CHUNK_SIZE);

/**
 * The chunks of a result log from the one holding `fromSeq` on, each with every result of the log
 * whose seq falls in it (a result log's seqs are consecutive: every outcome is a result).
 */
export function resultChunks(log: ResultLog, fromSeq: number): ResultChunk[] {
  const out: ResultChunk[] = [];
  if (!log.ts.length) return out;
  const last = log.firstSeq + log.ts.length - 1;
  const start = Math.max(fromSeq, log.firstSeq);
  for (let c = chunkOf(start); start <= last && c <= chunkOf(last); c++) {
    const lo = Math.max(c * RESULT_CHUNK_SIZE, log.firstSeq);
    const hi = Math.min((c + 1) * RESULT_CHUNK_SIZE - 1, last);
    out.push({ chunk: c, log: storedResultLog(lo, log.ts.slice(lo - log.firstSeq, hi - log.firstSeq + 1)) });
  }
  return out;
}

/**
 * The result log of stored chunks (in chunk order), from `firstSeq` on: a chunk keeps results the
 * window has passed until every one of its results has (resultChanges). `lastSeq` is the state's
 * seq, the last result's: after a gap only the run that follows it is read, and chunks that do not
 * reach the last result give an empty log (a rate then counts from the results to come).
 */
export function assembleResults(firstSeq: number, chunks: readonly (StoredResultLog | ResultLog)[], lastSeq: number): ResultLog {
  if (firstSeq === EMPTY_LOG_SEQ || !chunks.length) return resultLog(EMPTY_LOG_SEQ, []);
  const ts: number[] = [];
  let next = firstSeq;
  for (const stored of chunks) {
    const part = readResultLog(stored);
    if (!part.ts.length) continue;
    const skip = next - part.firstSeq;
    if (skip < 0) {
      // A gap: only what follows it can be the log's unbroken end.
      ts.length = 0;
      next = part.firstSeq;
    }
    for (let i = Math.max(0, skip); i < part.ts.length; i++) ts.push(part.ts[i]);
    next = Math.max(next, part.firstSeq + part.ts.length);
  }
  if (next !== lastSeq + 1) return resultLog(EMPTY_LOG_SEQ, []);
  return resultLog(next - ts.length, ts);
}

/**
 * What a batch changed in a context's result log, for the `key_result_chunk` rows: the chunks to
 * write (those its results fall in; every chunk of the log when `storedWhole`, a log read from
 * `key_state.data` in the older whole-log form) and the chunk below which every row goes (the window
 * passed them, or the log emptied: no rate rule). `before` is the context as loaded, undefined for
 * a state the batch created.
 */
export function resultChanges(before: KeyContext | undefined, after: KeyContext, storedWhole = false): { write: ResultChunk[]; deleteBelow: number | null } {
  const log = after.results;
  const had = before?.results.ts.length ? before.results : null;
  if (!log.ts.length) return { write: [], deleteBelow: had && !storedWhole ? chunkOf(after.state.seq) + 1 : null };
  const fromSeq = storedWhole || !before ? log.firstSeq : before.state.seq + 1;
  const moved = had !== null && !storedWhole && chunkOf(log.firstSeq) > chunkOf(had.firstSeq);
  return { write: resultChunks(log, fromSeq), deleteBelow: moved ? chunkOf(log.firstSeq) : null };
}

/**
 * What a batch changed in a context's failures, for the `key_failure` rows, which hold exactly the
 * failures the state keeps: the ones it added (after the loaded state's seq, and kept), and the
 * ones it dropped — as `droppedBelow` when the front of the list moved (the window passed it, or a
 * recovery or reset made it unread: every row below the first kept seq goes), plus `dropped`, the
 * seqs dropped from further in (unreadFailure, rarely). `before` is the context as loaded (its
 * failures are the rows), undefined for a state the batch created.
 */
export function failureChanges(
  before: KeyContext | undefined,
  after: KeyContext,
): { added: FailureRecord[]; droppedBelow: number | null; dropped: number[] } {
  const loadedSeq = before?.state.seq ?? 0;
  const kept = after.failures;
  let firstAdded = kept.length;
  while (firstAdded > 0 && kept[firstAdded - 1].seq > loadedSeq) firstAdded--;
  const had = before?.failures ?? [];
  const front = kept[0]?.seq ?? after.state.seq + 1;
  const droppedBelow = had.length && had[0].seq < front ? front : null;
  // Both lists are in seq order: one walk finds what `had` holds from the front on and `kept` does not.
  const dropped: number[] = [];
  let k = 0;
  for (const f of had) {
    if (f.seq < front) continue;
    while (k < kept.length && kept[k].seq < f.seq) k++;
    if (k === kept.length || kept[k].seq !== f.seq) dropped.push(f.seq);
  }
  return { added: kept.slice(firstAdded), droppedBelow, dropped };
}

/** A copy of a context whose history its owner may change in place (`ApplyOptions.inPlace`). */
export function copyKeyContext(ctx: KeyContext): KeyContext {
  return { state: ctx.state, failures: ctx.failures.slice(), results: { firstSeq: ctx.results.firstSeq, ts: ctx.results.ts.slice() } };
}

/** SPEC 4.4: per-key/per-session clocks never go backwards. */
export function clampClock(clock: number | null | undefined, ts: number): number {
  return clock === null || clock === undefined ? ts : Math.max(clock, ts);
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** "3", "2.5", "1.73" */
export function fmtCount(n: number): string {
  return String(Number(n.toFixed(2)));
}

const STATE_RANK = TRUST_STATE_RANK;

/** The strictest of several states (blocked > escalated > recovering > trusted); trusted for none. */
export function effectiveState(states: ReadonlyArray<TrustState | KeyState | null | undefined>): TrustState {
  let best: TrustState = "trusted";
  for (const s of states) {
    if (!s) continue;
    const st = typeof s === "string" ? s : s.state;
    if (STATE_RANK[st] > STATE_RANK[best]) best = st;
  }
  return best;
}

/** The strictest state object among the key, its domain-level and its tool-level state (first wins ties). */
export function strictestState(states: ReadonlyArray<KeyState | null | undefined>): KeyState | null {
  let best: KeyState | null = null;
  for (const s of states) {
    if (!s) continue;
    if (!best || STATE_RANK[s.state] > STATE_RANK[best.state]) best = s;
  }
  return best;
}

/** Human description of what a state covers, e.g. "domain=api.example.com, path_prefix=v1". */
export function describeSubject(state: Pick<KeyState, "failureKey" | "toolName" | "level">): string {
  if (state.level === "domain") return `domain: ${state.failureKey.slice(DOMAIN_PREFIX.length)}`;
  if (state.level === "tool") return "every call of the tool";
  const idx = state.failureKey.indexOf("|");
  if (idx < 0) return state.failureKey;
  return state.failureKey
    .slice(idx + 1)
    .split("|")
    .join(", ");
}

function subjectName(state: KeyState, toolName: string): string {
  if (state.level === "domain") return `Domain '${state.failureKey.slice(DOMAIN_PREFIX.length)}'`;
  return `Tool '${toolName}'`;
}

function subjectSuffix(state: KeyState, toolName: string): string {
  if (state.level === "domain") return ` (last failure: tool '${toolName}')`;
  if (state.level === "tool") return "";
  return ` (${describeSubject(state)})`;
}

function escalatedEffect(s: KeyState, toolName: string, rule: Rule): Effect {
  const expires = s.escalationExpires ?? s.escalatedAt ?? 0;
  return {
    type: "escalated",
    failureKey: s.failureKey,
    toolName,
    reason: s.escalationReason ?? "",
    expiresAt: isoTime(expires),
    message:
      `⚠️ ${subjectName(s, toolName)} escalated to require approval${subjectSuffix(s, toolName)}. ` +
      `Reason: ${s.escalationReason}. Until ${isoTime(expires)}. ` +
      `Recovery: ${rule.successCountToRecover} successful calls after cooldown.`,
  };
}

function blockedEffect(s: KeyState, toolName: string, reason: string): Effect {
  const what = reason === SECURITY_BLOCK_REASON ? "security concern" : reason;
  return {
    type: "blocked",
    failureKey: s.failureKey,
    toolName,
    reason,
    message:
      s.level === "tool"
        ? `🛑 Tool '${toolName}' blocked - ${what}. Every '${toolName}' call needs approval until a person resets it.`
        : `🛑 ${subjectName(s, toolName)} blocked - ${what}${subjectSuffix(s, toolName)}. Blocked until a person resets it.`,
  };
}

function recoveredEffect(s: KeyState, toolName: string, how: string): Effect {
  return {
    type: "recovered",
    failureKey: s.failureKey,
    toolName,
    message: `✓ ${subjectName(s, toolName)} recovered${subjectSuffix(s, toolName)}: ${how}.`,
  };
}

/**
 * A recovering key's progress, `{successes, needed}`, else null — what `reliability.status`, Tools,
 * key detail and Approvals show. Successes go past `needed` while an ask-mode recovery waits for
 * approval (SPEC 4.3); displays clamp, this keeps the engine's count.
 */
export function recoveryOf(s: KeyState): { successes: number; needed: number } | null {
  if (s.state !== "recovering" || s.recoveryNeeded <= 0) return null;
  return { successes: s.recoverySuccesses, needed: s.recoveryNeeded };
}

function recoveringEffect(s: KeyState): Effect {
  return { type: "recovering", failureKey: s.failureKey, successes: s.recoverySuccesses, needed: s.recoveryNeeded };
}

function clearEscalation(s: KeyState): void {
  s.escalatedAt = null;
  s.escalationReason = null;
  s.escalationExpires = null;
  s.escalationFailureCount = null;
  s.escalationWindowSeconds = null;
  s.escalationSeq = null;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
}

function escalate(s: KeyState, reason: string, rule: Rule, failures: readonly FailureRecord[], t: number): void {
  s.state = "escalated";
  s.escalatedAt = t;
  s.escalationReason = reason;
  s.escalationExpires = t + rule.escalationDurationSeconds * 1000;
  s.escalationWindowSeconds = rule.windowSeconds;
  s.escalationFailureCount = countFailuresInWindow(failures, rule, t, { afterSeq: s.countFromSeq });
  s.escalationSeq = s.seq;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
}

function block(s: KeyState, reason: string, t: number): void {
  s.state = "blocked";
  s.escalatedAt = s.escalatedAt ?? t;
  s.escalationReason = reason;
  s.escalationExpires = null;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
}

function trustAgain(s: KeyState): void {
  s.state = "trusted";
  s.manual = null;
  clearEscalation(s);
  s.consecutiveFailures = 0;
  s.countFromSeq = s.seq;
}

/**
 * Drops, in place, the history older than the rule's window (and 10 minutes). `failed`: the outcome
 * just applied was a failure (the failures the rule never reads are then dropped, see unreadFailure).
 */
function trimHistory(ctx: KeyContext, rule: Rule, t: number, failed: boolean): void {
  const from = t - Math.max(rule.windowSeconds * 1000, MIN_HISTORY_MS);
  const { failures, results } = ctx;
  let n = 0;
  while (n < failures.length && failures[n].ts < from) n++;
  if (n) failures.splice(0, n);
  // One pass whenever a failure came in keeps the list free of them: O(failures kept) per failure,
  // as the escalation check before it already is.
  if (failed && rule.rateThreshold === undefined) {
    let kept = 0;
    for (const f of failures) if (!unreadFailure(f, rule, t, ctx.state.countFromSeq)) failures[kept++] = f;
    failures.length = kept;
  }
  // Results only feed the failure rate: without a rate threshold they are not kept, so a hot key's
  // stored state stays small (a busy key sees thousands of results per window).
  n = rule.rateThreshold === undefined ? results.ts.length : 0;
  while (n < results.ts.length && results.ts[n] < from) n++;
  if (n) {
    results.ts.splice(0, n);
    results.firstSeq = results.ts.length ? results.firstSeq + n : EMPTY_LOG_SEQ;
  }
}

/**
 * A failure the rule in force reads no more: its severity is outside the rule's filter (SPEC 4.2
 * counts only those in it; without a rate rule nothing counts the others) or it came before the
 * state's count baseline (`countFromSeq`, after which every count starts), and it is not a
 * permission failure a later one may still be upgraded by (SPEC 3.6: three within 10 minutes;
 * kept twice as long, for results whose time is behind the key's clock). A key that keeps failing
 * outside the filter — an API answering 404 all day, an agent sent to files that do not exist —
 * stored and rewrote every such failure of the window at each batch: with 30 % of the bench's
 * results answering 404, its 45 keys' histories grew to ~40 KB each within 96,000 events and ingest
 * fell from ~4,900 to ~3,200 events/s (now flat at 6,300–8,100/s). Every failure is still
 * recorded in the failure log; only the state's own history leaves these out. Like a result log
 * without a rate rule (trimHistory), a filter widened later counts from then on.
 */
function unreadFailure(f: FailureRecord, rule: Rule, t: number, countFromSeq: number): boolean {
  const upgradesLaterOnes = f.severity === "permission" || f.severity === "repeated_auth";
  if (upgradesLaterOnes && t - f.ts <= 2 * REPEATED_AUTH_WINDOW_MS) return false;
  // Counted only after the state's count baseline (a reset, a recovery): one before it never is again.
  return f.seq <= countFromSeq || !rule.severityFilter.includes(f.severity);
}

// ---------------------------------------------------------------------------
// The state machine
// ---------------------------------------------------------------------------

/** Escalation check of SPEC 4.3 for a trusted state: the first threshold reached (count, consecutive, rate). */
export function escalationReason(
  ctx: KeyContext,
  rule: Rule,
  timeline: SessionTimeline,
  now: number,
): string | null {
  const s = ctx.state;
  if (rule.countThreshold !== undefined) {
    const eff = effectiveFailures(ctx.failures, rule, timeline, now, { afterSeq: s.countFromSeq });
    if (eff >= rule.countThreshold - 1e-9) return `${fmtCount(eff)} failures in ${rule.windowSeconds}s`;
  }
  if (rule.consecutiveThreshold !== undefined && s.consecutiveFailures >= rule.consecutiveThreshold) {
    return `${s.consecutiveFailures} consecutive failures`;
  }
  if (rule.rateThreshold !== undefined) {
    const rate = failureRate(ctx.results, ctx.failures, rule, now, { afterSeq: s.countFromSeq });
    if (rate !== null && rate >= rule.rateThreshold) return `${Math.round(rate * 100)}% failure rate`;
  }
  return null;
}

/** SPEC 4.3: apply one tool result to one state. */
export function applyOutcome(
  ctx: KeyContext,
  outcome: Outcome,
  rule: Rule,
  recoveryMode: RecoveryMode,
  timeline: SessionTimeline,
  now: number,
  opts: ApplyOptions = {},
): ApplyResult {
  const securityBlocks = opts.securityBlocks ?? true;
  const s: KeyState = { ...ctx.state };
  const next = opts.inPlace ? ctx : copyKeyContext(ctx);
  next.state = s;
  const effects: Effect[] = [];
  const toolName = outcome.toolName ?? s.toolName;

  const t = clampClock(s.clock, now);
  s.clock = t;
  s.seq += 1;
  s.totalCalls += 1;
  if (!next.results.ts.length) next.results.firstSeq = s.seq;
  next.results.ts.push(t);
  let failure: FailureRecord | null = null;

  if (outcome.failed) {
    const severity: Severity = outcome.severity ?? "server_error";
    failure = {
      ts: t,
      severity,
      weight: outcome.weight ?? failureWeight(severity),
      sessionId: outcome.sessionId,
      agent: outcome.agent ?? "default",
      seq: s.seq,
    };
    next.failures.push(failure);
    s.totalFailures += 1;
    s.consecutiveFailures += 1;
    s.lastFailureAt = t;
    const inFilter = rule.severityFilter.includes(severity);

    if (s.state === "blocked" || s.manual) {
      // Blocked, or a state a person set: nothing changes until a person resets it.
    } else if (severity === "security" && securityBlocks) {
      block(s, SECURITY_BLOCK_REASON, t);
      effects.push(blockedEffect(s, toolName, SECURITY_BLOCK_REASON));
    } else if (s.state === "trusted") {
      const reason = escalationReason(next, rule, timeline, t);
      if (reason) {
        escalate(s, reason, rule, next.failures, t);
        if (rule.notify) effects.push(escalatedEffect(s, toolName, rule));
      }
    } else if (s.state === "escalated") {
      // Expiry is not extended.
      if (inFilter) s.escalationFailureCount = countFailuresInWindow(next.failures, rule, t, { afterSeq: s.countFromSeq });
      if (rule.blockThreshold !== undefined && s.escalationSeq !== null) {
        const since = effectiveFailures(next.failures, rule, timeline, t, {
          afterSeq: Math.max(s.escalationSeq, s.countFromSeq),
        });
        if (since >= rule.blockThreshold - 1e-9) {
          const reason = `${fmtCount(since)} failures since escalation (block threshold ${rule.blockThreshold})`;
          block(s, reason, t);
          effects.push(blockedEffect(s, toolName, reason));
        }
      }
    } else if (s.state === "recovering") {
      if (inFilter) {
        escalate(s, `${severity} failure during recovery`, rule, next.failures, t);
        if (rule.notify) effects.push(escalatedEffect(s, toolName, rule));
      } else if (s.recoverySuccesses !== 0) {
        s.recoverySuccesses = 0;
        effects.push(recoveringEffect(s));
      }
    }
  } else {
    s.consecutiveFailures = 0;
    s.lastSuccessAt = t;
    if (s.manual) {
      // A state a person set does not recover by itself.
    } else if (s.state === "escalated") {
      const expired = s.escalationExpires !== null && t >= s.escalationExpires;
      const cooled = s.lastFailureAt === null || t - s.lastFailureAt >= rule.cooldownSeconds * 1000;
      if (expired && cooled) {
        s.state = "recovering";
        s.recoverySuccesses = 1;
        s.recoveryNeeded = rule.successCountToRecover;
        s.approvalPending = false;
        completeRecovery(s, toolName, recoveryMode, effects);
      }
    } else if (s.state === "recovering") {
      s.recoverySuccesses += 1;
      completeRecovery(s, toolName, recoveryMode, effects);
    }
  }

  trimHistory(next, rule, t, failure !== null);
  return { ctx: next, effects, failure };
}

function completeRecovery(s: KeyState, toolName: string, mode: RecoveryMode, effects: Effect[]): void {
  if (s.recoverySuccesses < s.recoveryNeeded) {
    effects.push(recoveringEffect(s));
    return;
  }
  if (mode === "auto") {
    const n = s.recoverySuccesses;
    trustAgain(s);
    effects.push(recoveredEffect(s, toolName, `trusted again after ${n} successful calls`));
    return;
  }
  effects.push(recoveringEffect(s));
  if (!s.approvalPending) {
    s.approvalPending = true;
    // The shell creates the approval row and fills in its id.
    effects.push({ type: "recovery_pending", failureKey: s.failureKey, approvalId: "" });
  }
}

// ---------------------------------------------------------------------------
// Key + domain + tool levels
// ---------------------------------------------------------------------------

export interface LevelContexts {
  key: KeyContext;
  /** The `@domain:<d>` state, if one exists (created when the applicable rule is a domain rule). */
  domain?: KeyContext | null;
  /** The `@tool:<name>` state, if one exists (created on a security failure). */
  tool?: KeyContext | null;
}

export interface ToolResultApplied {
  key: KeyContext;
  domain: KeyContext | null;
  tool: KeyContext | null;
  effects: Effect[];
  /** The failure record appended to the key's history, if the result failed. */
  failure: FailureRecord | null;
}

/**
 * Apply a classified tool result to the key, to its domain-level state when the applicable rule
 * is a domain rule, and to the tool-level state (blocked on `security`). `inPlace`: the caller
 * owns the key's and the domain's contexts (see ApplyOptions).
 */
export function applyToolResult(
  states: LevelContexts,
  outcome: Outcome,
  resolution: ResolvedRule,
  recoveryMode: RecoveryMode,
  timeline: SessionTimeline,
  now: number,
  opts: Pick<ApplyOptions, "inPlace"> = {},
): ToolResultApplied {
  const toolName = outcome.toolName ?? states.key.state.toolName;
  const o: Outcome = { ...outcome, toolName };
  const keyRes = applyOutcome(states.key, o, resolution.rule, recoveryMode, timeline, now, { inPlace: opts.inPlace });
  const effects = [...keyRes.effects];

  let domain = states.domain ?? null;
  if (resolution.level === "domain" && resolution.name) {
    const dctx = domain ?? newKeyContext(DOMAIN_PREFIX + resolution.name, toolName, "domain");
    const dres = applyOutcome(dctx, o, resolution.rule, recoveryMode, timeline, now, { securityBlocks: false, inPlace: opts.inPlace });
    domain = dres.ctx;
    effects.push(...dres.effects);
  }

  let tool = states.tool ?? null;
  const isSecurity = o.failed && (o.severity ?? "server_error") === "security";
  if (tool || isSecurity) {
    const tres = applyToolLevel(tool ?? newKeyContext(TOOL_PREFIX + toolName, toolName, "tool"), o, now);
    tool = tres.ctx;
    effects.push(...tres.effects);
  }
  return { key: keyRes.ctx, domain, tool, effects, failure: keyRes.failure };
}

/** Tool-level state: counters only; a `security` failure blocks it. */
export function applyToolLevel(ctx: KeyContext, outcome: Outcome, now: number): { ctx: KeyContext; effects: Effect[] } {
  const s: KeyState = { ...ctx.state };
  const effects: Effect[] = [];
  const t = clampClock(s.clock, now);
  s.clock = t;
  s.seq += 1;
  s.totalCalls += 1;
  if (outcome.failed) {
    s.totalFailures += 1;
    s.consecutiveFailures += 1;
    s.lastFailureAt = t;
    if ((outcome.severity ?? "server_error") === "security" && s.state !== "blocked" && !s.manual) {
      block(s, SECURITY_BLOCK_REASON, t);
      effects.push(blockedEffect(s, outcome.toolName ?? s.toolName, SECURITY_BLOCK_REASON));
    }
  } else {
    s.consecutiveFailures = 0;
    s.lastSuccessAt = t;
  }
  return { ctx: { state: s, failures: ctx.failures, results: ctx.results }, effects };
}

// ---------------------------------------------------------------------------
// Human actions
// ---------------------------------------------------------------------------

/** Reset (any state → trusted, counters cleared: consecutive, escalation, recovery; history no longer counts). */
export function resetKey(state: KeyState): KeyState {
  const s: KeyState = { ...state };
  trustAgain(s);
  return s;
}

/**
 * A person escalates or blocks a key, a tool or a domain by hand (SPEC 4.6): marked manual, so the
 * engine's transitions keep it (no recovery, no expiry) until a reset.
 */
export function setManualState(state: KeyState, target: "escalated" | "blocked", manual: ManualState): KeyState {
  const s: KeyState = { ...state };
  clearEscalation(s);
  s.state = target;
  s.escalatedAt = manual.at;
  s.escalationReason = manual.reason;
  s.escalationSeq = s.seq;
  s.manual = { ...manual };
  return s;
}

export interface HumanActionResult {
  state: KeyState;
  effects: Effect[];
  /** False when the state was not recovering (stale approval): nothing changed. */
  applied: boolean;
}

/** Approve a pending recovery: recovering → trusted (with a `recovered` effect). */
export function approveRecovery(state: KeyState, now: number): HumanActionResult {
  if (state.state !== "recovering") return { state, effects: [], applied: false };
  const s: KeyState = { ...state };
  s.clock = clampClock(s.clock, now);
  trustAgain(s);
  return { state: s, effects: [recoveredEffect(s, s.toolName, "recovery approved")], applied: true };
}

/** Deny a pending recovery: recovering → escalated with a fresh escalation window. */
export function denyRecovery(state: KeyState, rule: Rule, now: number): HumanActionResult {
  if (state.state !== "recovering") return { state, effects: [], applied: false };
  const s: KeyState = { ...state };
  const t = clampClock(s.clock, now);
  s.clock = t;
  s.state = "escalated";
  s.escalatedAt = t;
  s.escalationReason = "recovery denied";
  s.escalationExpires = t + rule.escalationDurationSeconds * 1000;
  s.escalationWindowSeconds = rule.windowSeconds;
  s.escalationSeq = s.seq;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
  return { state: s, effects: [escalatedEffect(s, s.toolName, rule)], applied: true };
}

// ---------------------------------------------------------------------------
// guard.check helpers
// ---------------------------------------------------------------------------

export interface EscalationInfo {
  reason: string;
  failureCount: number;
  window: string;
  recoveryHint: string;
  expiresAt: string | null;
}

/** The `escalation` field of guard.check for the state that decides (null when trusted). */
export function escalationInfo(
  state: KeyState | null | undefined,
  rule?: Rule,
  recoveryMode: RecoveryMode = "auto",
  now?: number,
): EscalationInfo | null {
  if (!state || state.state === "trusted") return null;
  const windowSeconds = state.escalationWindowSeconds ?? rule?.windowSeconds ?? 3600;
  let hint: string;
  if (state.manual) {
    hint = `${state.state === "blocked" ? "Blocked" : "Escalated"} by ${state.manual.by}: only a person's reset restores trust.`;
  } else if (state.state === "blocked") {
    hint = "Blocked: only a person can reset it in the dashboard.";
  } else if (state.state === "recovering") {
    hint = state.approvalPending
      ? `Recovery complete (${state.recoverySuccesses}/${state.recoveryNeeded} successful calls); waiting for a person to approve.`
      : `Recovering: ${state.recoverySuccesses}/${state.recoveryNeeded} successful calls` +
        (recoveryMode === "ask" ? ", then a person approves." : ".");
  } else {
    const needed = rule?.successCountToRecover ?? 3;
    const cooldown = rule?.cooldownSeconds ?? 900;
    const expires = state.escalationExpires;
    let wait = "";
    if (expires !== null && now !== undefined) {
      const cooldownEnd = (state.lastFailureAt ?? 0) + cooldown * 1000;
      const readyAt = Math.max(expires, cooldownEnd);
      if (readyAt > now) wait = ` (in ${Math.ceil((readyAt - now) / 60000)} min)`;
    }
    hint =
      `Escalation lasts until ${expires !== null ? isoTime(expires) : "reset"}; after that and ${cooldown}s without failures${wait}, ` +
      `${needed} successful calls restore trust` +
      (recoveryMode === "ask" ? " once a person approves." : ".");
  }
  return {
    reason: state.escalationReason ?? "",
    failureCount: state.escalationFailureCount ?? state.consecutiveFailures,
    window: `${windowSeconds}s`,
    recoveryHint: hint,
    expiresAt: state.escalationExpires !== null ? isoTime(state.escalationExpires) : null,
  };
}

export interface GuardDecisionInput {
  /** The session paused, or held (session, agent or workspace). */
  paused: boolean;
  effectiveState: TrustState;
  globalPattern: boolean;
  blockedDecision: BlockedDecision;
  /** What the policies and built-in risk rules say (SPEC 4.5); absent or null: nothing matched. */
  policyDecision?: "allow" | "ask" | "deny" | null;
  /** The session's tool-call budget is spent by this call (SPEC 4.6). */
  budgetSpent?: boolean;
}

/** Which step of the decision order gave the answer (the answer's reason comes from it). */
export type GuardDecisionCause = "paused" | "policy" | "budget" | "state" | "global" | "none";

/**
 * SPEC 4.5 guard.check decision, first that applies: paused or held → pause; a deny policy →
 * deny; the tool-call budget spent → pause; blocked → blockedDecision; an ask policy, an
 * escalated or recovering state, or a global pattern → ask; else allow. An `allow` policy changes
 * none of these (it only exempts from the built-in risk rules, in the policy evaluation).
 */
export function guardOutcome(input: GuardDecisionInput): { decision: Decision; cause: GuardDecisionCause } {
  if (input.paused) return { decision: "pause", cause: "paused" };
  if (input.policyDecision === "deny") return { decision: "deny", cause: "policy" };
  if (input.budgetSpent) return { decision: "pause", cause: "budget" };
  if (input.effectiveState === "blocked") return { decision: input.blockedDecision, cause: "state" };
  if (input.policyDecision === "ask") return { decision: "ask", cause: "policy" };
  if (input.effectiveState !== "trusted") return { decision: "ask", cause: "state" };
  if (input.globalPattern) return { decision: "ask", cause: "global" };
  return { decision: "allow", cause: "none" };
}

/** guard.check's decision (guardOutcome without its cause). */
export function guardDecision(input: GuardDecisionInput): Decision {
  return guardOutcome(input).decision;
}

/** The numbers a trust state's row stores beside it (shown by status, Tools, Overview, key detail). */
export interface KeyMetrics {
  effectiveFailures: number;
  threshold: number | null;
}

/** A state's stored numbers, computed at its last applied event (or `now` if none). */
export function keyMetrics(ctx: KeyContext, rule: Rule, timeline: SessionTimeline, now?: number): KeyMetrics {
  const at = ctx.state.clock ?? now ?? 0;
  return {
    effectiveFailures: effectiveFailures(ctx.failures, rule, timeline, at, { afterSeq: ctx.state.countFromSeq }),
    threshold: rule.countThreshold ?? null,
  };
}
