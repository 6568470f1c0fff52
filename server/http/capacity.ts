/**
 * Overload is refused, not queued (issue 15): each instance serves at most
 * VIGIL_MAX_CONCURRENT_REQUESTS agent-API requests at once (tRPC, OTLP, hooks). Beyond that it
 * answers 503 with `Retry-After` at once, so accepted requests keep their latency and memory stays
 * flat instead of a queue growing inside the database pool; likewise while the process's thread is
 * too far behind to read new requests in time (event-loop-lag.ts). A request waiting for a person
 * (waitForApprovalSeconds) holds no database connection, so it gives its slot back while it waits.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { lagging } from "./event-loop-lag";

export const DEFAULT_MAX_CONCURRENT_REQUESTS = 64;
export const OVERLOAD_RETRY_AFTER_SECONDS = 1;

interface Slot {
  held: boolean;
}

const current = new AsyncLocalStorage<Slot>();
let inFlight = 0;
// Start-up (server/runtime.ts) rejects a bad value with its name; here it never throws.
let limit = (() => {
  try {
    return limitFromEnv(process.env.VIGIL_MAX_CONCURRENT_REQUESTS);
  } catch {
    return DEFAULT_MAX_CONCURRENT_REQUESTS;
  }
})();

/** `VIGIL_MAX_CONCURRENT_REQUESTS`: a positive integer, or 0 for no limit; unset → the default. */
export function limitFromEnv(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return DEFAULT_MAX_CONCURRENT_REQUESTS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`VIGIL_MAX_CONCURRENT_REQUESTS must be a whole number ≥ 0 (0 = no limit), got "${raw}"`);
  return n;
}

/** For tests and benchmarks in one process: change the limit (returns the previous one). */
export function setConcurrencyLimit(next: number): number {
  const previous = limit;
  limit = next;
  return previous;
}

export function requestsInFlight(): number {
  return inFlight;
}

/** Every slot is taken, or the thread is too far behind (event-loop-lag.ts): a request arriving now would be refused. */
export function atCapacity(): boolean {
  return (limit > 0 && inFlight >= limit) || lagging();
}

/**
 * Runs `handler` in a slot, or answers `refuse(retryAfterSeconds)` at once when every slot is taken.
 */
export async function withCapacity<T>(handler: () => Promise<T>, refuse: (retryAfterSeconds: number) => T): Promise<T> {
  if (atCapacity()) return refuse(OVERLOAD_RETRY_AFTER_SECONDS);
  inFlight++;
  const slot: Slot = { held: true };
  try {
    return await current.run(slot, handler);
  } finally {
    release(slot);
  }
}

/** Gives the current request's slot back early: it is about to wait without using the database. */
export function releaseSlotWhileWaiting(): void {
  const slot = current.getStore();
  if (slot) release(slot);
}

function release(slot: Slot) {
  if (!slot.held) return;
  slot.held = false;
  inFlight--;
}

export const OVERLOAD_MESSAGE = "Vigil is at capacity on this instance; retry shortly";
