/**
 * Retention (SPEC 6): raw events, failure history, pattern detections and nudges older than the
 * workspace's retention (default 30 days) are deleted, and so are received OTLP spans; states, profiles and daily roll-ups stay.
 */
import { and, eq, gte, lt, lte, sql } from "drizzle-orm";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { dailyKeyStat, dailyKeyTotal, dailyNudgeStat, dailyPatternStat, event, eventId, failure, nudge, organization, otlpSession, otlpSpan, otlpTrace, patternDetection, stateTransition, workspace } from "@/db/schema";
import { DEFAULT_RETENTION_DAYS, mergeEffectiveConfig } from "@/server/engine/config";
import { dropEventPartitionsBefore, PRUNE_CHUNK, yieldToRequests } from "./partitions";
import { pruneFailureGroupRollups } from "./failure-group-rollup";
import type { ConfigDocument } from "@/server/engine/types";

const DAY_MS = 86_400_000;

export async function pruneWorkspace(db: Db, workspaceId: string, retentionDays: number, now = Date.now(), options: { chunk?: number } = {}) {
  const cutoff = new Date(now - retentionDays * DAY_MS);
  const deleted: Record<string, number> = { eventIds: 0, events: 0 };
  // The events past retention and their ids, oldest first, a chunk per statement (each its own
  // short transaction, found by the workspace's time index): a batch claiming ids meanwhile
  // waits for one chunk at most, never for the whole prune.
  const chunk = options.chunk ?? PRUNE_CHUNK;
  for (;;) {
    const [row] = rowsOf<{ ids: number; events: number }>(
      await db.execute(sql`
        with batch as (
          select id, ts from ${event} where workspace_id = ${workspaceId} and ts < ${cutoff.toISOString()}::timestamptz order by ts limit ${chunk}
        ),
        ids as (delete from ${eventId} i using batch b where i.workspace_id = ${workspaceId} and i.id = b.id returning 1),
        -- Found by the time index, bounded by the chunk's own span: the bounds prune the partitions
        -- the join would otherwise probe, for every row of the chunk.
        events as (delete from ${event} e using batch b
          where e.workspace_id = ${workspaceId} and e.id = b.id and e.ts = b.ts
            and e.ts < ${cutoff.toISOString()}::timestamptz and e.ts >= (select min(ts) from batch) and e.ts <= (select max(ts) from batch) returning 1)
        select (select count(*) from ids)::int as ids, (select count(*) from events)::int as events`),
    );
    deleted.eventIds += Number(row?.ids ?? 0);
    deleted.events += Number(row?.events ?? 0);
    if (Number(row?.events ?? 0) < chunk) break;
    await yieldToRequests();
  }
  for (const [name, table, col] of [
    ["failures", failure, failure.ts],
    ["patterns", patternDetection, patternDetection.ts],
    ["nudges", nudge, nudge.ts],
    ["transitions", stateTransition, stateTransition.at],
    // OTLP spans as received (SPEC 7.4), and the trace and session rows that schedule them.
    ["otlpSpans", otlpSpan, otlpSpan.receivedAt],
    ["otlpTraces", otlpTrace, otlpTrace.lastSpanAt],
    ["otlpSessions", otlpSession, otlpSession.lastSpanAt],
  ] as const) {
    const rows = await db
      .delete(table)
      .where(and(eq(table.workspaceId, workspaceId), lt(col, cutoff)))
      .returning({ w: table.workspaceId });
    deleted[name] = rows.length;
  }
  // One transaction: a failed recount leaves the roll-ups as they were, and a batch adding to a
  // cutoff-day row the delete took waits for the recount, then adds to it.
  deleted.rollups = await db.transaction((tx) => pruneDailyRollups(tx, workspaceId, cutoff));
  return deleted;
}

/**
 * The daily roll-ups of the pruned rows go with them: days before the cutoff's day are deleted, and
 * the cutoff's own day (part of it pruned) is counted again from the rows it keeps (a day's rows,
 * by index), so the roll-ups keep equal to the raw rows.
 */
async function pruneDailyRollups(db: Tx, workspaceId: string, cutoff: Date): Promise<number> {
  const day = cutoff.toISOString().slice(0, 10);
  const dayStart = new Date(`${day}T00:00:00.000Z`);
  const dayEnd = new Date(dayStart.getTime() + DAY_MS);
  let n = 0;
  for (const table of [dailyKeyStat, dailyKeyTotal, dailyPatternStat, dailyNudgeStat]) {
    const rows = await db.delete(table).where(and(eq(table.workspaceId, workspaceId), lte(table.day, day))).returning({ w: table.workspaceId });
    n += rows.length;
  }
  const [start, end] = [dayStart.toISOString(), dayEnd.toISOString()];
  // Recounted inside the database: a busy day has more (key, model) rows than one statement can
  // carry as parameters (65,535 — 6,553 rows of ten columns), and the rows need not travel.
  await db.execute(sql`
    insert into ${dailyKeyStat} (workspace_id, day, failure_key, model, tool_name, results, failed, last_failed_at, failures, last_failure_at)
    select ${workspaceId}, ${day}, failure_key, model, max(tool_name), sum(results)::int, sum(failed)::int, max(last_failed_at), sum(failures)::int, max(last_failure_at)
    from (
      select failure_key, coalesce(model, '') as model, coalesce(tool_name, split_part(failure_key, '|', 1)) as tool_name, count(*) as results,
        count(*) filter (where failed) as failed, max(ts) filter (where failed) as last_failed_at, 0 as failures, null::timestamptz as last_failure_at
      from ${event} where workspace_id = ${workspaceId} and ts >= ${start}::timestamptz and ts < ${end}::timestamptz and type = 'tool.result' and failure_key is not null
      group by 1, 2, 3
      union all
      select failure_key, coalesce(model, ''), tool_name, 0, 0, null::timestamptz, count(*), max(ts)
      from ${failure} where workspace_id = ${workspaceId} and ts >= ${start}::timestamptz and ts < ${end}::timestamptz
      group by 1, 2, 3
    ) r group by failure_key, model`);
  // daily_key_total is daily_key_stat summed over models, by definition.
  await db.execute(sql`
    insert into ${dailyKeyTotal} (workspace_id, day, failure_key, tool_name, results, failed, last_failed_at, failures, last_failure_at)
    select workspace_id, day, failure_key, max(tool_name), sum(results)::int, sum(failed)::int, max(last_failed_at), sum(failures)::int, max(last_failure_at)
    from ${dailyKeyStat} where workspace_id = ${workspaceId} and day = ${day}
    group by workspace_id, day, failure_key`);
  const patternRows = await db
    .select({ patternType: patternDetection.patternType, severity: patternDetection.severity, model: sql<string>`coalesce(${patternDetection.model}, '')`, n: sql<number>`count(*)::int` })
    .from(patternDetection)
    .where(and(eq(patternDetection.workspaceId, workspaceId), gte(patternDetection.ts, dayStart), lt(patternDetection.ts, dayEnd)))
    .groupBy(patternDetection.patternType, patternDetection.severity, sql`3`);
  if (patternRows.length)
    await db.insert(dailyPatternStat).values(patternRows.map((r) => ({ workspaceId, day, patternType: r.patternType, severity: r.severity, model: r.model, detections: Number(r.n) })));
  const counted = sql`${nudge.patternType} is not null and ${nudge.nudgeType} <> 'guidance'`;
  const nudgeRows = await db
    .select({
      patternType: sql<string>`coalesce(${nudge.patternType}, '')`,
      model: sql<string>`coalesce(${nudge.model}, '')`,
      nudges: sql<number>`count(*)::int`,
      interrupts: sql<number>`(count(*) filter (where ${nudge.nudgeType} = 'interrupt'))::int`,
      sent: sql<number>`(count(*) filter (where ${counted}))::int`,
      effective: sql<number>`(count(*) filter (where ${nudge.effective} and ${counted}))::int`,
    })
    .from(nudge)
    .where(and(eq(nudge.workspaceId, workspaceId), gte(nudge.ts, dayStart), lt(nudge.ts, dayEnd)))
    .groupBy(sql`1`, sql`2`);
  if (nudgeRows.length)
    await db.insert(dailyNudgeStat).values(nudgeRows.map((r) => ({ workspaceId, day, patternType: r.patternType, model: r.model, nudges: Number(r.nudges), interrupts: Number(r.interrupts), sent: Number(r.sent), effective: Number(r.effective) })));
  n += await pruneFailureGroupRollups(db, workspaceId, { day, start, end });
  return n;
}

/**
 * Prunes every workspace with its effective retention. Daily event partitions older than the
 * longest retention of all workspaces are dropped whole; shorter retentions delete rows.
 */
export async function pruneAll(db: Db, now = Date.now(), options: { chunk?: number } = {}) {
  const rows = await db
    .select({ id: workspace.id, ws: workspace.config, org: organization.config })
    .from(workspace)
    .innerJoin(organization, eq(organization.id, workspace.organizationId));
  const retention = rows.map((r) => ({ id: r.id, days: mergeEffectiveConfig(r.ws as ConfigDocument, r.org as ConfigDocument).retentionDays }));
  const longest = retention.length ? Math.max(...retention.map((r) => r.days)) : DEFAULT_RETENTION_DAYS;
  const dropped = await dropEventPartitionsBefore(db, now - longest * DAY_MS, options);
  let total = 0;
  for (const r of retention) {
    const d = await pruneWorkspace(db, r.id, r.days, now, options);
    total += Object.values(d).reduce((a, b) => a + b, 0);
  }
  return total + dropped.length;
}
