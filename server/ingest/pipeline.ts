/**
 * Several statements of a transaction in one round trip. On PostgreSQL, postgres-js pipelines the
 * statements sent on the transaction's connection and the server runs them in the order sent; the
 * first failure fails the rest (and the transaction). On PGlite (in process, nothing to save) they
 * run one after another.
 */
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { postgresJs, type Db, type Tx } from "@/db/client";

export { postgresJs } from "@/db/client";

export const dialect = new PgDialect();

/**
 * One write statement. Given the postgres-js transaction it sends the statement at once and
 * returns its promise; given null (PGlite) it runs it through drizzle.
 */
export type Write = (pg: import("postgres").TransactionSql | null) => PromiseLike<unknown>;

/**
 * Runs a phase's writes in the order given, on PostgreSQL all sent at once: the phase costs one
 * round trip instead of one per statement — and the key rows the batch holds are held that much
 * shorter (with 4 writers on shared keys, ingest is bounded by how long each batch holds them).
 */
export async function runWrites(tx: Tx, writes: Write[]): Promise<void> {
  if (!writes.length) return;
  const pg = postgresJs(tx);
  if (pg) await Promise.all(writes.map((w) => w(pg)));
  else for (const w of writes) await w(null);
}

/** A statement built with drizzle (a query builder or `sql`), as a Write. */
export function drizzleWrite(tx: Tx, query: SQL | { toSQL(): { sql: string; params: unknown[] } } & PromiseLike<unknown>): Write {
  return (pg) => {
    if (!pg) return "toSQL" in query ? query : tx.execute(query as SQL);
    const q = "toSQL" in query ? query.toSQL() : dialect.sqlToQuery(query as SQL);
    return pg.unsafe(q.sql, q.params as never).execute();
  };
}

/** The writes of a transaction that its COMMIT goes out behind, by transaction (transactionCommittedBehind). */
const committedBehind = new WeakMap<Tx, Promise<unknown>[]>();

/**
 * `db.transaction(fn)`, except that on PostgreSQL the COMMIT is sent right behind the writes `fn`
 * leaves in flight (leaveInFlight) instead of after their answers came back and this process got
 * round to sending it. The row locks the transaction holds — the trust states every writer of a
 * workspace shares — are then released as soon as PostgreSQL has run the writes, however busy the
 * event loop is with other requests (with 4 writers that wait was most of each batch's lock hold).
 * Had one of those writes failed, PostgreSQL answers that COMMIT with ROLLBACK (nothing is written),
 * and this throws the write's error.
 */
export async function transactionCommittedBehind<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const inFlight: Promise<unknown>[] = [];
  const ended: (() => void)[] = [];
  try {
    const result = await db.transaction((tx) => {
      endHooks.set(tx, ended);
      if (postgresJs(tx)) committedBehind.set(tx, inFlight);
      return fn(tx);
    });
    await Promise.all(inFlight);
    return result;
  } finally {
    for (const hook of ended) hook();
  }
}

/** What runs once a transaction of transactionCommittedBehind has committed or rolled back, by transaction. */
const endHooks = new WeakMap<Tx, (() => void)[]>();

/**
 * Runs `hook` once `tx` has committed or rolled back (its answer received). False, and `hook` is
 * never run, when `tx` is not a transaction of transactionCommittedBehind.
 */
export function onTransactionEnd(tx: Tx, hook: () => void): boolean {
  const hooks = endHooks.get(tx);
  if (!hooks) return false;
  hooks.push(hook);
  return true;
}

/**
 * Writes that may end a transaction: in one committed behind its writes (PostgreSQL), left in
 * flight for the COMMIT to follow them; anywhere else, awaited. (Statements sent after them still
 * run after them, as on any connection.)
 */
export async function leaveInFlight(tx: Tx, written: Promise<unknown>): Promise<void> {
  const inFlight = committedBehind.get(tx);
  if (!inFlight) return void (await written);
  written.catch(() => {}); // awaited after the COMMIT (transactionCommittedBehind)
  inFlight.push(written);
}
