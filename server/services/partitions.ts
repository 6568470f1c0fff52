/**
 * Daily partitions of the raw event log (SPEC 9, "retention at volume"): created ahead of time for
 * the accepted event range (30 days back, a little ahead) and dropped whole once every workspace's
 * retention has passed them. Events outside the created partitions land in `event_default`.
 */
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";

const DAY_MS = 86_400_000;
const NAME = /^event_p(\d{4})(\d{2})(\d{2})$/;

const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const partitionName = (dayMs: number) => `event_p${new Date(dayMs).toISOString().slice(0, 10).replaceAll("-", "")}`;

export async function listEventPartitions(db: Db): Promise<{ name: string; day: number }[]> {
  const rows = rowsOf<{ name: string }>(
    await db.execute(sql`
      select c.relname as name from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
      join pg_class p on p.oid = i.inhparent
      where p.relname = 'event'`),
  );
  return rows
    .map((r) => ({ name: r.name, m: NAME.exec(r.name) }))
    .filter((r) => r.m)
    .map((r) => ({ name: r.name, day: Date.UTC(Number(r.m![1]), Number(r.m![2]) - 1, Number(r.m![3])) }))
    .sort((a, b) => a.day - b.day);
}

/**
 * A new partition starts with the default statistics target on every column, not the parent's:
 * the payload's is 0 on each partition as on the parent (migration 0019: sampling it was most of an
 * analyze of the event log, and nothing reads it by value in SQL). Citus takes no such ALTER on a
 * distributed table (its partitions are): there the workers' shards keep the default.
 */
const withoutPayloadStatistics = (partition: string) => `alter table "${partition}" alter column "payload" set statistics 0`;

/**
 * The event log has no key (drizzle/0031): logical replication — Citus's online shard moves, a
 * CDC tool — takes the whole row as each partition's replica identity. Below `wal_level = logical`
 * nothing extra is written.
 */
const wholeRowReplicaIdentity = (partition: string) => `alter table "${partition}" replica identity full`;

async function citusInstalled(db: Db): Promise<boolean> {
  const [row] = rowsOf<{ installed: boolean }>(await db.execute(sql`select exists (select 1 from pg_extension where extname = 'citus') as installed`));
  return row?.installed === true;
}

/**
 * Creates the missing daily partitions from `pastDays` back to `futureDays` ahead. DDL on the
 * parent waits for running batches, so each waits at most 2 s and is retried on the next run.
 */
export async function ensureEventPartitions(db: Db, now = Date.now(), pastDays = 31, futureDays = 2): Promise<string[]> {
  const existing = new Set((await listEventPartitions(db)).map((p) => p.name));
  const missing: number[] = [];
  for (let d = dayStart(now) - pastDays * DAY_MS; d <= dayStart(now) + futureDays * DAY_MS; d += DAY_MS) if (!existing.has(partitionName(d))) missing.push(d);
  const setPayloadStatistics = missing.length > 0 && !(await citusInstalled(db));
  const created: string[] = [];
  for (const d of missing) {
    const name = partitionName(d);
    const from = new Date(d).toISOString();
    const to = new Date(d + DAY_MS).toISOString();
    try {
      await db.transaction(async (tx) => {
        await tx.execute(sql`set local lock_timeout = '2s'`);
        const inDefault = rowsOf<{ present: boolean }>(
          await tx.execute(sql.raw(`select exists (select 1 from "event_default" where ts >= '${from}' and ts < '${to}') as present`)),
        )[0]?.present;
        if (!inDefault) {
          await tx.execute(sql.raw(`create table if not exists "${name}" partition of "event" for values from ('${from}') to ('${to}')`));
          await tx.execute(sql.raw(wholeRowReplicaIdentity(name)));
          if (setPayloadStatistics) await tx.execute(sql.raw(withoutPayloadStatistics(name)));
          return;
        }
        // Rows of that day already sit in the default partition (an upgrade from the unpartitioned
        // log, or a day that came before its partition): move them into the new partition.
        await tx.execute(sql.raw(`create table "${name}" (like "event" including defaults including constraints)`));
        await tx.execute(sql.raw(wholeRowReplicaIdentity(name)));
        if (setPayloadStatistics) await tx.execute(sql.raw(withoutPayloadStatistics(name)));
        await tx.execute(sql.raw(`insert into "${name}" select * from "event_default" where ts >= '${from}' and ts < '${to}'`));
        await tx.execute(sql.raw(`delete from "event_default" where ts >= '${from}' and ts < '${to}'`));
        await tx.execute(sql.raw(`alter table "event" attach partition "${name}" for values from ('${from}') to ('${to}')`));
      });
      created.push(name);
    } catch (err) {
      // Another instance created it meanwhile, or the lock timed out: the rows stay in
      // event_default and the next run tries again.
      console.warn(`[vigil] event partition ${name} not created: ${(err as Error).message}`);
    }
  }
  return created;
}

/** Event ids deleted per statement while a partition is emptied: each its own short transaction. */
export const PRUNE_CHUNK = 5_000;
/** How long the drop waits for the event log's lock before it steps aside for ingest and retries. */
const DROP_LOCK_TIMEOUT = "100ms";
const DROP_ATTEMPTS = 50;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * Lets requests waiting on the thread in between chunks: on PGlite every statement runs on the
 * server's one thread, and a loop of statements resolving one another never gives their I/O a turn.
 */
export const yieldToRequests = () => new Promise<void>((r) => setImmediate(r));
const lockNotAvailable = (err: unknown) => {
  for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (e.code === "55P03") return true;
  return false;
};

/**
 * Deletes the ids of a partition's events from `event_id`, workspace by workspace and about `chunk`
 * at a time in time order (by the partition's (workspace_id, ts) index: the next chunk's bound is
 * read from the index alone, its rows are a range of it), each chunk an autocommitted statement:
 * ingest claiming ids meanwhile waits for a chunk at most. A chunk takes every event at its last
 * instant, so one may exceed `chunk` by events sharing a timestamp. Answers how many were deleted.
 */
async function deletePartitionIds(db: Db, partition: string, chunk: number): Promise<number> {
  const table = sql.identifier(partition);
  let total = 0;
  for (let ws = await nextWorkspaceIn(db, partition, null); ws !== null; ws = await nextWorkspaceIn(db, partition, ws)) {
    for (let after = "-infinity"; after !== "infinity"; ) {
      const [row] = rowsOf<{ n: number; upto: string }>(
        await db.execute(sql`
          with upto as (
            select coalesce((select ts from ${table} where workspace_id = ${ws} and ts > ${after}::timestamptz order by ts offset ${chunk - 1} limit 1), 'infinity') as ts
          ),
          gone as (
            delete from event_id i using ${table} e
            where i.workspace_id = ${ws} and e.workspace_id = ${ws} and i.id = e.id
              and e.ts > ${after}::timestamptz and e.ts <= (select ts from upto)
            returning 1
          )
          select (select count(*) from gone)::int as n, (select ts from upto)::text as upto`),
      );
      total += Number(row?.n ?? 0);
      after = row?.upto ?? "infinity";
      await yieldToRequests();
    }
  }
  return total;
}

/** The partition's next workspace after `after` in key order (from its time index), or null. */
async function nextWorkspaceIn(db: Db, partition: string, after: string | null): Promise<string | null> {
  const from: SQL = after === null ? sql`` : sql`where workspace_id > ${after}`;
  const [row] = rowsOf<{ ws: string }>(await db.execute(sql`select workspace_id as ws from ${sql.identifier(partition)} ${from} order by workspace_id limit 1`));
  return row?.ws ?? null;
}

/**
 * Drops the daily partitions that end before `cutoff` (the oldest day any workspace keeps). Their
 * events' ids are deleted first in chunks (above); then one short transaction locks the partition
 * against late inserts (an event that old is still accepted when a workspace keeps fewer days
 * than the 30 ingest takes), deletes the ids those added, and drops it. The drop needs the whole
 * event log's lock for a moment: it waits at most DROP_LOCK_TIMEOUT for batches in flight, and
 * otherwise steps back (to a savepoint, keeping the partition's own lock) and tries again, so ingest
 * is never held behind it longer than that.
 */
export async function dropEventPartitionsBefore(
  db: Db,
  cutoff: number,
  options: { chunk?: number; /** Runs between a day's chunked id pass and its locked drop (tests insert a late event there). */ afterIdPass?: (partition: string) => Promise<void> } = {},
): Promise<string[]> {
  const dropped: string[] = [];
  for (const p of await listEventPartitions(db)) {
    if (p.day + DAY_MS > cutoff) continue;
    const [{ started }] = rowsOf<{ started: string }>(await db.execute(sql`select now()::text as started`));
    await deletePartitionIds(db, p.name, options.chunk ?? PRUNE_CHUNK);
    await options.afterIdPass?.(p.name);
    const done = await db.transaction(async (tx) => {
      await tx.execute(sql`set local lock_timeout = '2s'`);
      // Blocks inserts into this day only; batches writing other days go on.
      await tx.execute(sql.raw(`lock table "${p.name}" in share row exclusive mode`));
      // The ids of events the chunked pass may have missed: inserted by a batch that began less
      // than an hour before it (no batch runs that long). Joining the whole day against event_id
      // instead read every claimed id of the installation (8 s at 2M events, under the lock).
      await tx.execute(sql`
        delete from event_id i using ${sql.identifier(p.name)} e
        where i.workspace_id = e.workspace_id and i.id = e.id and e.received_at > ${started}::timestamptz - interval '1 hour'`);
      await tx.execute(sql.raw(`set local lock_timeout = '${DROP_LOCK_TIMEOUT}'`));
      for (let attempt = 1; ; attempt++) {
        try {
          await tx.transaction(async (sp) => {
            await sp.execute(sql.raw(`drop table if exists "${p.name}"`));
          });
          return true;
        } catch (err) {
          if (!lockNotAvailable(err) || attempt >= DROP_ATTEMPTS) {
            if (lockNotAvailable(err)) return false;
            throw err;
          }
          await sleep(20 + Math.floor(Math.random() * 80));
        }
      }
    });
    if (done) dropped.push(p.name);
    else console.warn(`[vigil] event partition ${p.name} not dropped: the event log stayed busy; the next run tries again`);
  }
  return dropped;
}
