/**
 * Planner statistics kept fresh by Vigil itself.
 *
 * PGlite runs PostgreSQL in single-user mode, where autovacuum never runs, so its tables were never
 * analyzed. Without statistics the planner can tie a primary-key lookup with any index that starts
 * with `workspace_id`: guard.check read its session through (workspace_id, agent, started_at),
 * filtering out the workspace's other sessions (77 buffers per check instead of 9), and key states
 * through (workspace_id, last_failure_at). Measured on PGlite, one client: 8.5 → 6.6 ms per
 * guard.check with 5,000 sessions, 6.9 → 5.8 ms with 20,000. A PostgreSQL server's autovacuum
 * analyzes about a minute after the first rows and plans the same way until then, so the rule
 * runs there too (ANALYZE blocks no reads or writes on a server) — but only for the tables nothing
 * has analyzed yet. After that autovacuum keeps them fresh by the same rule, counted across every
 * instance; each instance's own count would analyze the whole database once a minute per instance
 * (2.5 s of a backend's time at the bench's size, beside autovacuum doing the same work). The one
 * table autovacuum leaves alone is a partitioned parent (`event`): its partitions it does analyze,
 * and the event log's reads are pruned to partitions and planned from their statistics; the
 * parent's own (inherited) statistics stay as this first analyze left them.
 *
 * The rule is autovacuum's: analyze once the events written since the last analyze exceed
 * 1,000 + 10 % of those written before, so it runs early in a database's life and rarer as it grows,
 * and (like autovacuum's naptime) at most once a minute: under a fleet's load the event count
 * passes the threshold every few seconds, and analyzing that often costs more than it saves.
 * One analyze at a time per database, off the request path.
 */
import { getTableName, is, sql } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import { clientOf, isEmbedded, perDatabase, rowsOf, type Db } from "@/db/client";
import { textArray } from "@/db/sql-arrays";
import * as schema from "@/db/schema";

export const ANALYZE_BASE_THRESHOLD = 1_000;
const ANALYZE_SCALE_FACTOR = 0.1;
const ANALYZE_MIN_INTERVAL_MS = 60_000;

/**
 * Whether `sinceLast` new events call for an analyze, `before` having been written before it and
 * the last analyze having started at `lastAt` (null: none yet).
 */
export function analyzeDue(sinceLast: number, before: number, lastAt: number | null, now: number): boolean {
  return sinceLast >= ANALYZE_BASE_THRESHOLD + ANALYZE_SCALE_FACTOR * before && (lastAt === null || now - lastAt >= ANALYZE_MIN_INTERVAL_MS);
}

interface Tracker {
  sinceLast: number;
  before: number;
  lastAt: number | null;
  running: Promise<void> | null;
}

const trackers = new WeakMap<object, Tracker>();

/** Vigil's own tables (a shared database's other tables are not Vigil's to analyze). */
const TABLE_NAMES = (Object.values(schema) as unknown[]).filter((t): t is PgTable => is(t, PgTable)).map((t) => getTableName(t));

/**
 * On PGlite, ANALYZE runs in the server's own thread and nothing else is served meanwhile: with the
 * default sample (30,000 rows per table) it took 1.3 s at 200k events, a pause every agent felt once
 * a minute. A sample of 3,000 rows (statistics target 10) took 0.11 s and is plenty for what the hot
 * path needs (table sizes, a workspace's share of rows). A server analyzes in another process, with
 * its own default.
 */
export const EMBEDDED_STATISTICS_TARGET = 10;

/**
 * Which tables an analyze takes: all of them where no autovacuum runs (PGlite, or a server with it
 * turned off); on a server with autovacuum, those neither it nor anyone else analyzed yet.
 */
export function tablesToAnalyze(all: readonly string[], server: { autovacuum: boolean; neverAnalyzed: readonly string[] } | null): string[] {
  if (!server || !server.autovacuum) return [...all];
  const never = new Set(server.neverAnalyzed);
  return all.filter((t) => never.has(t));
}

/** On a server: whether autovacuum runs, and which of Vigil's tables were never analyzed (since the statistics were last reset). */
async function serverStatistics(db: Db): Promise<{ autovacuum: boolean; neverAnalyzed: string[] }> {
  const [row] = rowsOf<{ autovacuum: string; never: string[] }>(
    await db.execute(sql`
      select current_setting('autovacuum') as autovacuum, array(
        select t.name from unnest(${textArray(TABLE_NAMES)}) t(name)
        where pg_stat_get_last_analyze_time(to_regclass(quote_ident(t.name))) is null
          and pg_stat_get_last_autoanalyze_time(to_regclass(quote_ident(t.name))) is null
          and to_regclass(quote_ident(t.name)) is not null
      ) as never`),
  );
  return { autovacuum: row?.autovacuum === "on", neverAnalyzed: row?.never ?? [] };
}

/**
 * Analyzes the tables due (see tablesToAnalyze); returns their names (on PGlite the event log's
 * as `only event` and its partitions by name).
 */
export async function analyzeTables(db: Db): Promise<string[]> {
  if (isEmbedded(db)) return analyzeEmbedded(db);
  const tables = tablesToAnalyze(TABLE_NAMES, await serverStatistics(db));
  if (tables.length) await db.execute(sql.raw(`analyze ${quotedList(tables)}`));
  return tables;
}

const quotedList = (tables: readonly string[]) => tables.map((t) => `"${t}"`).join(", ");

/** The partitioned table (the only one): its partitions are analyzed one by one on PGlite. */
const PARTITIONED = "event";

/** The event partitions' sizes together. */
const totalSize = (partitions: ReadonlyMap<string, number>) => [...partitions.values()].reduce((a, b) => a + b, 0);

/**
 * What one analyze on PGlite takes, given each event partition's size now (bytes of its main fork)
 * and at its last analyze by this process (`before`; a partition it never analyzed is absent):
 * every other table; the event log's own sample across its partitions (`only event`, the parent's
 * inherited statistics) when the partitions together changed by 10 % since that sample was taken
 * (`parentAt`, their total then; null: never), autovacuum's scale factor; and the partitions whose
 * size changed — a day's partition stops changing once its day has passed, and the 34 the runtime
 * keeps (past days, today, tomorrow's) took ~60 ms to analyze whether or not anything was written.
 */
export function embeddedAnalyzePlan(
  tables: readonly string[],
  partitions: ReadonlyMap<string, number>,
  before: ReadonlyMap<string, number>,
  parentAt: number | null,
): { tables: string[]; parent: boolean; partitions: string[] } {
  const total = totalSize(partitions);
  return {
    tables: tables.filter((t) => t !== PARTITIONED),
    parent: parentAt === null || Math.abs(total - parentAt) > ANALYZE_SCALE_FACTOR * parentAt,
    partitions: [...partitions].filter(([name, bytes]) => before.get(name) !== bytes).map(([name]) => name),
  };
}

interface EmbeddedAnalyzed {
  /** Each partition's size at its last analyze. */
  partitions: Map<string, number>;
  /** The partitions' total size when the parent's sample was last taken. */
  parentAt: number | null;
}

const embeddedAnalyzed = new WeakMap<object, EmbeddedAnalyzed>();

/**
 * On PGlite every statement runs on the server's own thread and nothing else is served while it
 * runs. One `analyze` of every table held it 130–200 ms at 5,000–40,000 events (the event log 100–160
 * of them): at 500 checks a second that is 65–100 arriving meanwhile, more than the 64 let in at once
 * (server/http), and in the bench 31–54 of them were refused with a 503, once a minute. So each table
 * is analyzed by a statement of its own, the requests that came in meanwhile going first between
 * them, and the event log's unchanged partitions not at all. Measured at 40,000 events (with the
 * payload's statistics off, migration 0019): the longest statement, a day's partition or the parent's
 * sample, ~30 ms; the whole 110–170 ms. The parent's own sample is PostgreSQL 18's `analyze only`
 * (PGlite's version; a server analyzes the parent whole, see serverStatistics).
 */
async function analyzeEmbedded(db: Db): Promise<string[]> {
  const done = perDatabase(embeddedAnalyzed, db, () => ({ partitions: new Map<string, number>(), parentAt: null }));
  const sizes = rowsOf<{ name: string; bytes: number }>(
    await db.execute(sql`
      select c.relname as name, pg_relation_size(c.oid)::float8 as bytes
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = to_regclass(${PARTITIONED})`),
  );
  const partitions = new Map(sizes.map((r) => [r.name, Number(r.bytes)]));
  const plan = embeddedAnalyzePlan(TABLE_NAMES, partitions, done.partitions, done.parentAt);
  const analyzed: string[] = [];
  const analyze = async (target: string, name: string) => {
    await db.transaction(async (tx) => {
      await tx.execute(sql.raw(`set local default_statistics_target = ${EMBEDDED_STATISTICS_TARGET}`));
      await tx.execute(sql.raw(`analyze ${target}`));
    });
    analyzed.push(name);
    // Requests that arrived during the statement queue their own before the next one.
    await new Promise((resolve) => setImmediate(resolve));
  };
  for (const t of plan.tables) await analyze(quotedList([t]), t);
  if (plan.parent) {
    await analyze(`only ${quotedList([PARTITIONED])}`, PARTITIONED);
    done.parentAt = totalSize(partitions);
  }
  for (const p of plan.partitions) {
    await analyze(quotedList([p]), p);
    done.partitions.set(p, partitions.get(p)!);
  }
  // Partitions dropped since (retention) are forgotten.
  for (const p of done.partitions.keys()) if (!partitions.has(p)) done.partitions.delete(p);
  return analyzed;
}

/** Turns the rule on for this database (the runtime does at start-up; tests of the rule do). */
export function keepPlannerStatistics(db: Db): void {
  if (!trackers.has(clientOf(db))) trackers.set(clientOf(db), { sinceLast: 0, before: 0, lastAt: null, running: null });
}

/** Counts events written; starts an analyze in the background when they call for one. */
export function noteEventsWritten(db: Db, count: number): void {
  const t = trackers.get(clientOf(db));
  if (!t || count <= 0) return;
  t.sinceLast += count;
  const started = Date.now();
  if (t.running || !analyzeDue(t.sinceLast, t.before, t.lastAt, started)) return;
  const counted = t.sinceLast;
  t.lastAt = started;
  t.running = analyzeTables(db)
    .then(() => {
      t.before += counted;
      t.sinceLast -= counted;
      const ms = Date.now() - started;
      if (ms > 1_000) console.log(`[vigil] planner statistics refreshed in ${ms} ms`);
    })
    .catch((err) => {
      t.sinceLast -= counted; // retried after as many writes again, not on every write
      console.error("[vigil] analyze failed:", err);
    })
    .finally(() => {
      t.running = null;
    });
}

/** For tests: the analyze in progress, if any. */
export function analyzeInProgress(db: Db): Promise<void> | null {
  return trackers.get(clientOf(db))?.running ?? null;
}
