/**
 * The transactional outbox: notifications are written in the same transaction as the effect that
 * caused them (no network I/O here), filtered by each channel's events and minimum severity, and
 * held back by the channel's quiet period per key/session (counted, and reported by the next one).
 */
import { randomUUID } from "node:crypto";
import { and, desc, eq, gte, inArray, ne, sql } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { globalToolPattern, notificationChannel, notificationOutbox, workspace } from "@/db/schema";
import type { Effect } from "@/server/engine/types";
import { draftForGlobalPattern, draftForTest, draftFromEffect, severityAtLeast, type NotificationDraft, type NotificationEvent, type NotificationSeverity } from "./events";
import type { StoredNotification } from "./payload";

export type NotificationChannel = typeof notificationChannel.$inferSelect;

/**
 * A workspace's enabled channels. The ingest shell reads them in a batch's first round trip, with
 * its other reads: read only once the trust states are locked, they cost every batch with an
 * effect worth notifying a round trip while it held the rows every writer of the workspace waits
 * for (~9 ms per batch, a quarter of that hold, with 4 writers) — most often to learn that there
 * are none.
 */
export function enabledChannels(tx: Tx | Db, workspaceId: string): Promise<NotificationChannel[]> {
  return tx
    .select()
    .from(notificationChannel)
    .where(and(eq(notificationChannel.workspaceId, workspaceId), eq(notificationChannel.enabled, true)));
}

/**
 * The one hook the ingest shell and services call with the effects they just persisted.
 * `channels`: the workspace's enabled channels when the caller read them already (enabledChannels).
 */
export async function enqueueNotifications(
  tx: Tx | Db,
  workspaceId: string,
  effects: readonly Effect[],
  ctx: { now?: number; channels?: readonly NotificationChannel[] } = {},
): Promise<number> {
  const drafts = effects.map(draftFromEffect).filter((d): d is NotificationDraft => d !== null);
  if (!drafts.length) return 0;
  return enqueueDrafts(tx, workspaceId, drafts, ctx.now ?? Date.now(), ctx.channels);
}

/** Notifications not raised by an engine effect (a budget spent, a policy's deny, the kill switch), in the caller's transaction. */
export async function enqueueNotificationDrafts(
  tx: Tx | Db,
  workspaceId: string,
  drafts: readonly NotificationDraft[],
  ctx: { now?: number; channels?: readonly NotificationChannel[] } = {},
): Promise<number> {
  if (!drafts.length) return 0;
  return enqueueDrafts(tx, workspaceId, [...drafts], ctx.now ?? Date.now(), ctx.channels);
}

/** A newly raised global tool pattern: notify every workspace that takes part in it. */
export async function enqueueGlobalPatternNotifications(
  tx: Tx,
  organizationId: string,
  patterns: ReadonlyArray<{ toolName: string; workspaceIds: string[]; avgFailureRate: number }>,
  now = Date.now(),
): Promise<void> {
  if (!patterns.length) return;
  const active = await tx
    .select({ toolName: globalToolPattern.toolName })
    .from(globalToolPattern)
    .where(and(eq(globalToolPattern.organizationId, organizationId), eq(globalToolPattern.status, "active"), inArray(globalToolPattern.toolName, patterns.map((p) => p.toolName))));
  const already = new Set(active.map((a) => a.toolName));
  for (const p of patterns) {
    if (already.has(p.toolName)) continue;
    const draft = draftForGlobalPattern({ toolName: p.toolName, workspaceCount: p.workspaceIds.length, avgFailureRate: p.avgFailureRate });
    for (const ws of p.workspaceIds) await enqueueDrafts(tx, ws, [draft], now);
  }
}

async function enqueueDrafts(tx: Tx | Db, workspaceId: string, drafts: NotificationDraft[], now: number, known?: readonly NotificationChannel[]): Promise<number> {
  const channels = known ?? (await enabledChannels(tx, workspaceId));
  if (!channels.length) return 0;
  const [ws] = await tx.select({ slug: workspace.slug }).from(workspace).where(eq(workspace.id, workspaceId));
  let queued = 0;
  for (const ch of channels) {
    for (const d of drafts) {
      if (!ch.events.includes(d.event) || !severityAtLeast(d.severity, ch.minSeverity as NotificationSeverity)) continue;
      if (await insertForChannel(tx, ch, ws?.slug ?? workspaceId, d, now)) queued++;
    }
  }
  return queued;
}

/** Inserts a pending (or, inside the quiet period, a suppressed) row; true when pending. */
async function insertForChannel(tx: Tx | Db, ch: NotificationChannel, slug: string, d: NotificationDraft, now: number): Promise<boolean> {
  const sameSubject = and(
    eq(notificationOutbox.workspaceId, ch.workspaceId),
    eq(notificationOutbox.channelId, ch.id),
    eq(notificationOutbox.subject, d.subject),
  );
  let suppressedCount = 0;
  if (ch.quietPeriodSeconds > 0) {
    const [last] = await tx
      .select({ createdAt: notificationOutbox.createdAt })
      .from(notificationOutbox)
      .where(and(sameSubject, ne(notificationOutbox.status, "suppressed")))
      .orderBy(desc(notificationOutbox.createdAt))
      .limit(1);
    const quiet = !!last && last.createdAt.getTime() > now - ch.quietPeriodSeconds * 1000;
    const [{ n }] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(notificationOutbox)
      .where(and(sameSubject, eq(notificationOutbox.status, "suppressed"), last ? gte(notificationOutbox.createdAt, last.createdAt) : undefined));
    if (quiet) {
      await insertRow(tx, ch, slug, d, now, "suppressed", Number(n));
      return false;
    }
    suppressedCount = Number(n);
  }
  await insertRow(tx, ch, slug, d, now, "pending", suppressedCount);
  return true;
}

async function insertRow(tx: Tx | Db, ch: NotificationChannel, slug: string, d: NotificationDraft, now: number, status: "pending" | "suppressed", suppressedCount: number) {
  const id = randomUUID();
  const payload: StoredNotification = { ...d, id, workspaceSlug: slug, createdAt: new Date(now).toISOString(), suppressedCount };
  await tx.insert(notificationOutbox).values({
    workspaceId: ch.workspaceId,
    id,
    channelId: ch.id,
    event: d.event,
    severity: d.severity,
    subject: d.subject,
    payload,
    status,
    nextAttemptAt: new Date(now),
    createdAt: new Date(now),
  });
  return id;
}

/**
 * A test notification for one channel (Settings → Send test) shaped as `event`, bypassing filters
 * and quiet period; the outbox row's event stays `test` (the delivery log tells it apart).
 */
export async function enqueueTestNotification(db: Db, ch: NotificationChannel, slug: string, now = Date.now(), event: NotificationEvent = "key_escalated"): Promise<string> {
  const draft = draftForTest(event, ch.name);
  const id = randomUUID();
  const payload: StoredNotification = { ...draft, id, workspaceSlug: slug, createdAt: new Date(now).toISOString(), suppressedCount: 0, test: true };
  await db.insert(notificationOutbox).values({
    workspaceId: ch.workspaceId, id, channelId: ch.id, event: "test", severity: "info", subject: `test:${id}`, payload,
    status: "pending", nextAttemptAt: new Date(now), createdAt: new Date(now),
  });
  return id;
}
