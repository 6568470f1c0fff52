/**
 * Requests waiting for a person's decision on a tool-call approval (SPEC 7.2).
 *
 * A waiter is an in-memory promise: it holds no transaction and no pooled connection. A decision
 * wakes every waiter of that approval on every app instance:
 *  - PostgreSQL: the deciding transaction runs `pg_notify(channel, approvalId)` (delivered on
 *    commit); each database client LISTENs on the one channel over postgres-js's dedicated listen
 *    connection, started lazily by the first waiter;
 *  - PGlite (one process owns the data directory): an in-process EventEmitter.
 * The waker only says "look again": the caller re-reads the approval after waking up.
 */
import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import { perDatabase, type Db, type Tx } from "@/db/client";

const APPROVAL_DECIDED_CHANNEL = "vigil_approval_decided";

interface Registry {
  emitter: EventEmitter;
  /** Resolves once LISTEN is in place (PostgreSQL only); null until the first waiter. */
  listening: Promise<void> | null;
}

const registries = new WeakMap<object, Registry>();

/** postgres-js's client has `listen` and `begin`; PGlite's has no `begin`. */
function postgresClient(db: Db): import("postgres").Sql | null {
  const client = (db as unknown as { $client?: Record<string, unknown> }).$client;
  return client && typeof client.listen === "function" && typeof client.begin === "function" ? (client as unknown as import("postgres").Sql) : null;
}

function registryOf(db: Db): Registry {
  return perDatabase(registries, db, () => {
    const emitter = new EventEmitter();
    emitter.setMaxListeners(0);
    return { emitter, listening: null };
  });
}

function ensureListening(db: Db, r: Registry): Promise<void> {
  const pg = postgresClient(db);
  if (!pg) return Promise.resolve();
  if (!r.listening) {
    r.listening = pg
      .listen(APPROVAL_DECIDED_CHANNEL, (approvalId) => r.emitter.emit(approvalId))
      .then(() => undefined)
      .catch((err) => {
        r.listening = null; // retried by the next waiter
        console.error("[vigil] approval LISTEN failed:", err);
      });
  }
  return r.listening;
}

/**
 * Waits until `approvalId` is decided (anywhere) or `timeoutMs` passes. Returns true when woken by
 * a decision. Register BEFORE re-checking the approval's status to close the race with a decision
 * made in between; `waitForApprovalDecision` does this.
 */
function waitForDecisionSignal(db: Db, approvalId: string, timeoutMs: number, signal?: AbortSignal): { ready: Promise<void>; decided: Promise<boolean> } {
  const r = registryOf(db);
  const ready = ensureListening(db, r);
  let wake!: (decided: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (wake = resolve));
  const onDecision = () => finish(true);
  const onAbort = () => finish(false);
  const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
  function finish(value: boolean) {
    clearTimeout(timer);
    r.emitter.off(approvalId, onDecision);
    signal?.removeEventListener("abort", onAbort);
    wake(value);
  }
  r.emitter.on(approvalId, onDecision);
  if (signal) {
    if (signal.aborted) finish(false);
    else signal.addEventListener("abort", onAbort, { once: true });
  }
  return { ready, decided };
}

/** A waiter also looks again this often, in case a notification was lost (a dropped LISTEN connection). */
const RECHECK_MS = 5_000;

/**
 * Waits for a decision on `approvalId` for at most `timeoutMs`: registers the waiter, then asks
 * `isDecided` (a decision may have landed before the waiter existed), then sleeps until woken,
 * re-checking every few seconds as a safety net.
 */
export async function waitForApprovalDecision(
  db: Db,
  approvalId: string,
  timeoutMs: number,
  isDecided: () => Promise<boolean>,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0 || signal?.aborted) return;
    const waiter = waitForDecisionSignal(db, approvalId, Math.min(remaining, RECHECK_MS), signal);
    await waiter.ready;
    if (await isDecided()) {
      releaseLocalWaiters(db, approvalId);
      return;
    }
    if (await waiter.decided) return;
  }
}

/** Inside the deciding transaction: tells the other instances (delivered on commit; PostgreSQL). */
export async function notifyDecisionInTx(tx: Tx, db: Db, approvalId: string): Promise<void> {
  if (postgresClient(db)) await tx.execute(sql`select pg_notify(${APPROVAL_DECIDED_CHANNEL}, ${approvalId})`);
}

/** After the deciding transaction committed: wakes this client's own waiters at once. */
export function releaseLocalWaiters(db: Db, approvalId: string): void {
  registryOf(db).emitter.emit(approvalId);
}

/** How many waiters this client holds for an approval (tests and diagnostics). */
export function localWaiterCount(db: Db, approvalId: string): number {
  return registryOf(db).emitter.listenerCount(approvalId);
}
