/**
 * Overload is refused, not queued (issue 15): each instance serves at most
 * VIGIL_MAX_CONCURRENT_REQUESTS agent-API requests at once (tRPC, OTLP, hooks). Beyond that it
 * answers 503 with `Retry-After` at once, so accepted requests keep their latency and memory stays
 * flat instead of a queue growing inside the database pool; likewise while the process's thread is
 * too far behind to read new requests in time (event-loop-lag.ts). A request waiting for a person
 * (waitForApprovalSeconds) holds no database connection, so it gives its slot back while it waits.
 *
 * The slot is handed to the handler and passed down explicitly (tRPC context, hook context, guard
 * options), not found through AsyncLocalStorage: on Node 20 one AsyncLocalStorage in use switches on
 * async hooks for every promise of the process, ~10 % of the server's CPU per guard.check.
 */
import { lagging } from "./event-loop-lag";
import { noteRejected } from "@/server/metrics";

export const DEFAULT_MAX_CONCURRENT_REQUESTS = 64;
export const OVERLOAD_RETRY_AFTER_SECONDS = 1;

/** A request's place among the instance's concurrent requests. */
export interface CapacitySlot {
  held: boolean;
}

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
 * The handler gets its slot, to give it back early (releaseSlot) when it is about to wait.
 */
export async function withCapacity<T>(handler: (slot: CapacitySlot) => Promise<T>, refuse: (retryAfterSeconds: number) => T): Promise<T> {
  if (atCapacity()) {
    noteRejected(limit > 0 && inFlight >= limit ? "capacity" : "lag");
    return refuse(OVERLOAD_RETRY_AFTER_SECONDS);
  }
  inFlight++;
  const slot: CapacitySlot = { held: true };
  try {
    return await handler(slot);
  } finally {
    releaseSlot(slot);
  }
}

/** Gives a request's slot back (early, when it is about to wait without using the database); once. */
export function releaseSlot(slot: CapacitySlot): void {
  if (!slot.held) return;
  slot.held = false;
  inFlight--;
}

export const OVERLOAD_MESSAGE = "Vigil is at capacity on this instance; retry shortly";
