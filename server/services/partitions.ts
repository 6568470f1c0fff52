/**
 * Daily partitions of the raw event log (SPEC 9, "retention at volume"): created ahead of time for
 * the accepted event range (30 days back, a little ahead) and dropped whole once every workspace's
 * retention has passed them. Events outside the created partitions land in `event_default`.
 */
import { sql } from "drizzle-orm";
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
          if (setPayloadStatistics) await tx.execute(sql.raw(withoutPayloadStatistics(name)));
          return;
        }
        // Rows of that day already sit in the default partition (an upgrade from the unpartitioned
        // log, or a day that came before its partition): move them into the new partition.
        await tx.execute(sql.raw(`create table "${name}" (like "event" including defaults including constraints)`));
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

/** Drops the daily partitions that end before `cutoff` (the oldest day any workspace keeps). */
export async function dropEventPartitionsBefore(db: Db, cutoff: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const p of await listEventPartitions(db)) {
    if (p.day + DAY_MS > cutoff) continue;
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local lock_timeout = '2s'`);
      // Its events' ids go with it (by key: event_id has no index on time).
      await tx.execute(sql.raw(`delete from event_id i using "${p.name}" e where i.workspace_id = e.workspace_id and i.id = e.id`));
      await tx.execute(sql.raw(`drop table if exists "${p.name}"`));
    });
    dropped.push(p.name);
  }
  return dropped;
}
