/**
 * What a trust state keeps of its past (SPEC 4.2, 4.3): the failures and the result log its rule
 * reads, their stored forms (`key_state.data`, `key_failure` rows, `key_result_chunk` rows) and what
 * a batch changed in them, and the numbers stored beside a state.
 */
import { effectiveFailures } from "./decay";
import type { FailureRecord, KeyContext, KeyHistory, KeyState, ResultChunk, ResultLog, Rule, SessionTimeline, StoredResultLog } from "./types";

/**
 * The firstSeq of an empty result log. It is never read there (the next result sets it), so every
 * empty log has this one: a history then reads and stores the same whichever batches reached it.
 */
export const EMPTY_LOG_SEQ = 0;

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
