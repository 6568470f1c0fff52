/**
 * How far behind this process's one thread is. Bounded concurrency (capacity.ts) caps the requests
 * in progress, but when the thread itself is saturated — more requests arriving than it can even
 * read, or PGlite running every statement on it — new requests wait in the socket before anything
 * sees them, and the latency of accepted requests grows without bound (2,000/s offered: seconds,
 * then time-outs). A timer that fires late measures exactly that wait; while it stays late, new
 * agent-API requests are refused like at capacity (503 + Retry-After), so the thread catches up
 * and accepted requests keep their latency.
 *
 * One long pause (a module loaded on the first request, a large batch) must not refuse anything,
 * so the lag is the lesser lateness of the last two samples: it crosses the limit only when the
 * thread stays behind, and falls back with the first sample on time. (A moving average would
 * take several samples to react, and a saturated thread takes a long time to produce each one.)
 */
export const DEFAULT_MAX_EVENT_LOOP_LAG_MS = 1000;
/** How often the timer checks how late it is. */
const LAG_SAMPLE_MS = 20;

/** `VIGIL_MAX_EVENT_LOOP_LAG_MS`: a whole number of milliseconds, or 0 to never refuse for lag; unset → the default. */
export function lagLimitFromEnv(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return DEFAULT_MAX_EVENT_LOOP_LAG_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`VIGIL_MAX_EVENT_LOOP_LAG_MS must be a whole number ≥ 0 (0 = off), got "${raw}"`);
  return n;
}

/** The last two samples' lateness (ms), newest last. */
export type LagSamples = readonly [number, number];

/** The samples after one that came `lateMs` late (pure: the sampler's whole rule). */
export function nextSamples([, newest]: LagSamples, lateMs: number): LagSamples {
  return [newest, Math.max(0, lateMs)];
}

/** The lag the samples show: how late the thread has stayed over both. */
export function sustainedLag([older, newest]: LagSamples): number {
  return Math.min(older, newest);
}

// Start-up (server/runtime.ts) rejects a bad value with its name; here it never throws.
let limit = (() => {
  try {
    return lagLimitFromEnv(process.env.VIGIL_MAX_EVENT_LOOP_LAG_MS);
  } catch {
    return DEFAULT_MAX_EVENT_LOOP_LAG_MS;
  }
})();
let samples: LagSamples = [0, 0];
let sampler: ReturnType<typeof setInterval> | null = null;

function startSampler() {
  let expected = performance.now() + LAG_SAMPLE_MS;
  sampler = setInterval(() => {
    const now = performance.now();
    samples = nextSamples(samples, now - expected);
    expected = now + LAG_SAMPLE_MS;
  }, LAG_SAMPLE_MS);
  sampler.unref(); // never keeps a process (a test, a script) alive
}

/** The current lag (ms, sustainedLag); starts measuring on first use. */
export function eventLoopLagMs(): number {
  if (!sampler) startSampler();
  return sustainedLag(samples);
}

/** The thread is too far behind to take another request. */
export function lagging(): boolean {
  return limit > 0 && eventLoopLagMs() > limit;
}

/** For tests in one process: change the limit (returns the previous one). */
export function setLagLimit(next: number): number {
  const previous = limit;
  limit = next;
  return previous;
}
