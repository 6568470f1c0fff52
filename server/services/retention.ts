/**
 * Retention (SPEC 6): raw events, failure history, pattern detections and nudges older than the
 * workspace's retention (default 30 days) are deleted, and so are received OTLP spans; states, profiles and daily roll-ups stay.
 */
import { and, eq, lt, sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { event, eventId, failure, nudge, organization, otlpSession, otlpSpan, otlpTrace, patternDetection, stateTransition, workspace } from "@/db/schema";
import { DEFAULT_RETENTION_DAYS, mergeEffectiveConfig } from "@/server/engine/config";
import { dropEventPartitionsBefore } from "./partitions";
import type { ConfigDocument } from "@/server/engine/types";

const DAY_MS = 86_400_000;

export async function pruneWorkspace(db: Db, workspaceId: string, retentionDays: number, now = Date.now()) {
  const cutoff = new Date(now - retentionDays * DAY_MS);
  const deleted: Record<string, number> = {};
  // The ids of the events about to go, by key (event_id has no index on time).
  const ids = await db.execute(sql`
    delete from ${eventId} i using ${event} e
    where e.workspace_id = ${workspaceId} and e.ts < ${cutoff.toISOString()}::timestamptz and i.workspace_id = e.workspace_id and i.id = e.id
    returning 1`);
  deleted.eventIds = rowsOf(ids).length;
  for (const [name, table, col] of [
    ["events", event, event.ts],
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
  return deleted;
}

/**
 * Prunes every workspace with its effective retention. Daily event partitions older than the
 * longest retention of all workspaces are dropped whole; shorter retentions delete rows.
 */
export async function pruneAll(db: Db, now = Date.now()) {
  const rows = await db
    .select({ id: workspace.id, ws: workspace.config, org: organization.config })
    .from(workspace)
    .innerJoin(organization, eq(organization.id, workspace.organizationId));
  const retention = rows.map((r) => ({ id: r.id, days: mergeEffectiveConfig(r.ws as ConfigDocument, r.org as ConfigDocument).retentionDays }));
  const longest = retention.length ? Math.max(...retention.map((r) => r.days)) : DEFAULT_RETENTION_DAYS;
  const dropped = await dropEventPartitionsBefore(db, now - longest * DAY_MS);
  let total = 0;
  for (const r of retention) {
    const d = await pruneWorkspace(db, r.id, r.days, now);
    total += Object.values(d).reduce((a, b) => a + b, 0);
  }
  return total + dropped.length;
}
