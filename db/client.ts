/**
 * The one database client module. PGlite (embedded, in VIGIL_DATA_DIR) when DATABASE_URL is unset;
 * postgres-js with a pool when it is set. Both expose the same drizzle API and the same migrations.
 */
import { preparingClient } from "./prepared-client";
// Failed queries name their statement, never their values, wherever they are logged.
import "./redacted-query-errors";
import { withoutWritesAfterConnectionLoss } from "./lost-connection";
import path from "node:path";
import fs from "node:fs";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import * as schema from "./schema";
import { sql } from "drizzle-orm";
import { distributeTables, enableCitusIfPresent } from "./citus";
import { DEFAULT_PGLITE_SHARED_BUFFERS, PGLITE_CHECKPOINT_EVERY_MS, PGLITE_CHECKPOINT_WAL_BYTES, pgliteSharedBuffersFromEnv, pgliteStartSettings, prepareDataDir } from "./pglite-data-dir";

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A drizzle transaction handle (same query API as Db). */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/**
 * The driver client under a drizzle handle. State kept per database (caches, coalescers, waiters,
 * planner statistics) hangs off it, so every handle of one pool or one PGlite shares it.
 */
export function clientOf(db: Db | Tx): object {
  return ((db as unknown as { $client?: object }).$client ?? db) as object;
}

/** State kept per database (see clientOf), made on first use. */
export function perDatabase<T>(store: WeakMap<object, T>, db: Db | Tx, make: () => T): T {
  const key = clientOf(db);
  let value = store.get(key);
  if (value === undefined) store.set(key, (value = make()));
  return value;
}

/** The rows of `db.execute(sql)`: postgres-js returns them as the result, PGlite under `rows`. */
export function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}

/** A json column of `db.execute(sql)`: postgres-js hands over its text, PGlite the parsed value. */
export function jsonValue<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** A timestamp column of `db.execute(sql)` (text from postgres-js under drizzle, a Date or text from PGlite) as epoch ms. */
export function msOf(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  return v instanceof Date ? v.getTime() : Date.parse(String(v));
}

/** The postgres-js handle under a drizzle transaction on PostgreSQL (PGlite has no `unsafe`/`savepoint`). */
export function postgresJs(tx: Tx): import("postgres").TransactionSql | null {
  const client = (tx as unknown as { session?: { client?: { unsafe?: unknown; savepoint?: unknown } } }).session?.client;
  return client && typeof client.unsafe === "function" && typeof client.savepoint === "function" ? (client as unknown as import("postgres").TransactionSql) : null;
}

/** Whether the database is the embedded PGlite: one statement at a time, run in this thread. */
export function isEmbedded(db: Db | Tx): boolean {
  return "waitReady" in clientOf(db);
}

export interface Database {
  db: Db;
  kind: "pglite" | "postgres";
  /** postgres-js client when kind === "postgres" (for the bulk-insert fast path). */
  pg?: import("postgres").Sql;
  /** Connection URL when kind === "postgres". */
  url?: string;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** postgres:// URL; when absent, PGlite is used. */
  url?: string;
  /** PGlite data directory; `null` = in-memory (tests). */
  dataDir?: string | null;
  /** PGlite's buffer pool (`shared_buffers`), e.g. "32MB" (see db/pglite-data-dir.ts). */
  sharedBuffers?: string;
  poolSize?: number;
}

export const MIGRATIONS_FOLDER = path.join(/*turbopackIgnore: true*/ process.cwd(), "drizzle");

/**
 * The URL postgres-js is given, and the connection options the URL says in libpq's way but
 * postgres-js would not read: `?host=` (a host name, or the directory of a Unix-domain socket, as in
 * `postgres://vigil@localhost/vigil?host=/var/run/postgresql`) and `?port=` override the URL's own.
 * postgres-js would send them to the server as settings, which it refuses; they are taken out here.
 */
export function postgresConnection(url: string): { url: string; options: { host?: string; port?: number } } {
  const query = url.indexOf("?");
  if (query < 0) return { url, options: {} };
  const params = new URLSearchParams(url.slice(query + 1));
  const host = params.get("host") || undefined;
  const port = params.get("port") ? Number(params.get("port")) : undefined;
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new Error(`DATABASE_URL: port must be a number from 1 to 65535, got "${params.get("port")}"`);
  params.delete("host");
  params.delete("port");
  const rest = params.toString();
  return { url: url.slice(0, query) + (rest ? `?${rest}` : ""), options: { ...(host ? { host } : {}), ...(port ? { port } : {}) } };
}

/** The pause before a pooled connection tries again after failing to connect, s: 50 ms doubling, at most 250 ms. */
export function reconnectBackoffSeconds(failures: number): number {
  return Math.min(0.05 * 2 ** Math.max(0, failures - 1), 0.25);
}

export async function openDatabase(opts: OpenOptions = {}): Promise<Database> {
  if (opts.url) {
    const { default: postgres } = await import("postgres");
    const { drizzle } = await import("drizzle-orm/postgres-js");
    const connection = postgresConnection(opts.url);
    const pg = postgres(connection.url, {
      ...connection.options,
      max: opts.poolSize ?? 10,
      onnotice: () => {},
      // A stopped or unreachable server must fail a request fast (503 + Retry-After), never hang it.
      // (No statement_timeout: migrations and retention on large tables may legitimately run long.)
      connect_timeout: 1,
      // Between failed connection attempts postgres-js waits 3^n/100 s (up to 20 s) by default, and
      // every query queued meanwhile waits with it: an outage held requests 8–16 s and, once the
      // server was back, for up to 20 s more. A short, capped pause keeps each answer prompt.
      backoff: reconnectBackoffSeconds,
      // Keep timestamps as JS Dates and bigints as numbers through drizzle's column modes.
    });
    // VIGIL_DB_PREPARE=off: behind a pooler that cannot keep prepared statements (PgBouncer < 1.21 in transaction mode).
    const prepare = process.env.VIGIL_DB_PREPARE !== "off";
    const db = drizzle(withoutWritesAfterConnectionLoss(prepare ? preparingClient(pg) : pg), { schema }) as unknown as Db;
    return { db, kind: "postgres", pg, url: opts.url, close: () => pg.end({ timeout: 5 }) };
  }
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const options = { startParams: [...PGlite.defaultStartParams, ...pgliteStartSettings(opts.sharedBuffers ?? DEFAULT_PGLITE_SHARED_BUFFERS)] };
  let client: InstanceType<typeof PGlite>;
  if (opts.dataDir) {
    await prepareDataDir(opts.dataDir);
    fs.mkdirSync(opts.dataDir, { recursive: true });
    client = new PGlite(opts.dataDir, options);
  } else {
    client = new PGlite(options);
  }
  await client.waitReady;
  // Loaded here, as PGlite itself is: a process on a PostgreSQL server never loads PGlite.
  const { preparingPglite } = await import("./pglite-prepared");
  // Agents' statements before the dashboard's (db/pglite-priority.ts).
  const { pglitePriorityFromEnv, prioritizedPglite } = await import("./pglite-priority");
  const prepared = preparingPglite(client);
  const db = drizzle(pglitePriorityFromEnv(process.env.VIGIL_PGLITE_PRIORITY) ? prioritizedPglite(prepared) : prepared, { schema }) as unknown as Db;
  const checkpoints = setInterval(() => void checkpointIfWalAbove(db).catch(() => {}), PGLITE_CHECKPOINT_EVERY_MS);
  checkpoints.unref();
  return {
    db,
    kind: "pglite",
    close: () => {
      clearInterval(checkpoints);
      return client.close();
    },
  };
}

/**
 * PGlite's single-user PostgreSQL never checkpoints by itself (db/pglite-data-dir.ts): a checkpoint
 * once the WAL written since the last one passes `bytes`, after which its segments are recycled.
 * Answers whether it ran one.
 */
export async function checkpointIfWalAbove(db: Db, bytes = PGLITE_CHECKPOINT_WAL_BYTES): Promise<boolean> {
  const [row] = rowsOf<{ since: string }>(await db.execute(sql`select (pg_current_wal_lsn() - redo_lsn)::text as since from pg_control_checkpoint()`));
  if (!(Number(row?.since) > bytes)) return false;
  await db.execute(sql`checkpoint`);
  return true;
}

/**
 * Runs the committed drizzle migrations. Serialised across app instances by an advisory lock.
 * On a Citus coordinator the tables are then distributed (db/citus.ts), under the same lock.
 */
export async function migrateDatabase(database: Database, folder = MIGRATIONS_FOLDER): Promise<void> {
  if (database.kind === "pglite") {
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    await migrate(database.db as never, { migrationsFolder: folder });
    return;
  }
  // The lock lives on its own connection so the pool stays free for the migrator itself.
  const { default: postgres } = await import("postgres");
  const connection = postgresConnection(database.url!);
  const lock = postgres(connection.url, { ...connection.options, max: 1, onnotice: () => {} });
  try {
    await lock`select pg_advisory_lock(74230101)`;
    const { migrate } = await import("drizzle-orm/postgres-js/migrator");
    await migrate(database.db as never, { migrationsFolder: folder });
    // The pool has learned the array types (built-in ones are all it infers for parameters), and
    // postgres-js would fetch them again on every new connection — after an outage, on each
    // reconnect, where a connection lost mid-fetch is an unhandled rejection inside the client.
    if (database.pg) (database.pg.options as { fetch_types: boolean }).fetch_types = false;
    if (await enableCitusIfPresent(lock)) {
      const placed = await distributeTables(lock);
      if (placed.length) console.log(`[vigil] citus: ${placed.join(", ")}`);
    }
  } finally {
    await lock`select pg_advisory_unlock(74230101)`.catch(() => {});
    await lock.end({ timeout: 5 });
  }
}

export function databaseOptionsFromEnv(env = process.env): OpenOptions {
  if (env.DATABASE_URL) {
    return { url: env.DATABASE_URL, poolSize: env.VIGIL_DB_POOL_SIZE ? Number(env.VIGIL_DB_POOL_SIZE) : 10 };
  }
  return {
    dataDir: path.resolve(/*turbopackIgnore: true*/ env.VIGIL_DATA_DIR ?? "./.vigil/data"),
    sharedBuffers: pgliteSharedBuffersFromEnv(env.VIGIL_PGLITE_SHARED_BUFFERS),
  };
}
