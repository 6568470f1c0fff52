/**
 * Notification channels of a workspace: create/edit/disable/delete (audited, secrets never in the
 * audit log), the delivery log, and Send test. Secrets (the HMAC secret, the Slack URL) are
 * returned once at creation or rotation and masked everywhere else.
 */
import { randomUUID } from "node:crypto";
import { and, desc, eq, count } from "drizzle-orm";
import type { Db } from "@/db/client";
import { notificationChannel, notificationOutbox, workspace } from "@/db/schema";
import { NOTIFICATION_EVENTS, NOTIFICATION_SEVERITIES, type NotificationEvent, type NotificationSeverity } from "@/server/notifications/events";
import { enqueueTestNotification } from "@/server/notifications/outbox";
import { newChannelSecret } from "@/server/notifications/signature";
import { checkChannelUrl } from "@/server/notifications/url-guard";
import { deliverClaimed, workerOptionsFromEnv, type WorkerOptions } from "@/server/notifications/worker";
import { writeAudit, type Actor } from "./audit";
import { badRequest, notFound } from "./errors";

export type ChannelType = "webhook" | "slack";
type ChannelRow = typeof notificationChannel.$inferSelect;

export interface ChannelInput {
  name: string;
  type: ChannelType;
  url: string;
  events: NotificationEvent[];
  minSeverity: NotificationSeverity;
  quietPeriodSeconds: number;
  enabled?: boolean;
}

interface Scope { workspaceId: string; organizationId: string; actor: Actor }

/** The URL with its path and query hidden (a Slack URL is a credential). */
function maskUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return "…";
  }
}

function publicChannel(c: ChannelRow) {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    url: c.type === "slack" ? maskUrl(c.url) : c.url,
    events: c.events as NotificationEvent[],
    minSeverity: c.minSeverity as NotificationSeverity,
    quietPeriodSeconds: c.quietPeriodSeconds,
    enabled: c.enabled,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}
export type PublicChannel = ReturnType<typeof publicChannel>;
/** What the audit log keeps: no secret, no Slack URL. */
const auditView = (c: ChannelRow | ChannelInput) => ({
  name: c.name, type: c.type, url: c.type === "slack" ? maskUrl(c.url) : c.url, events: c.events, minSeverity: c.minSeverity,
  quietPeriodSeconds: c.quietPeriodSeconds, enabled: c.enabled ?? true,
});

function validateChannelInput(input: ChannelInput): void {
  if (!input.name.trim()) throw badRequest("Give the channel a name", "name");
  if (input.type !== "webhook" && input.type !== "slack") throw badRequest("Type must be webhook or slack", "type");
  const urlProblem = checkChannelUrl(input.url);
  if (urlProblem) throw badRequest(`url: ${urlProblem}`, "url");
  if (input.type === "slack" && !/^https:\/\//.test(input.url) && !process.env.VIGIL_NOTIFY_ALLOW_PRIVATE) throw badRequest("url: Slack webhook URLs are https", "url");
  if (!input.events.length) throw badRequest("Choose at least one event", "events");
  for (const e of input.events) if (!NOTIFICATION_EVENTS.includes(e)) throw badRequest(`Unknown event '${e}'`, "events");
  if (!NOTIFICATION_SEVERITIES.includes(input.minSeverity)) throw badRequest("Unknown severity", "minSeverity");
  if (!Number.isInteger(input.quietPeriodSeconds) || input.quietPeriodSeconds < 0 || input.quietPeriodSeconds > 7 * 86400)
    throw badRequest("Quiet period is 0 to 604800 seconds", "quietPeriodSeconds");
}

export async function listChannels(db: Db, workspaceId: string) {
  const rows = await db.select().from(notificationChannel).where(eq(notificationChannel.workspaceId, workspaceId)).orderBy(notificationChannel.createdAt);
  return rows.map(publicChannel);
}

async function getChannel(db: Db, workspaceId: string, id: string): Promise<ChannelRow> {
  const [c] = await db.select().from(notificationChannel).where(and(eq(notificationChannel.workspaceId, workspaceId), eq(notificationChannel.id, id)));
  if (!c) throw notFound("Channel");
  return c;
}

/** Returns the channel and its signing secret (shown once). */
export async function createChannel(db: Db, scope: Scope, input: ChannelInput) {
  validateChannelInput(input);
  const secret = newChannelSecret();
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(notificationChannel)
      .values({
        workspaceId: scope.workspaceId, id: randomUUID(), name: input.name.trim(), type: input.type, url: input.url, secret,
        events: input.events, minSeverity: input.minSeverity, quietPeriodSeconds: input.quietPeriodSeconds, enabled: input.enabled ?? true,
      })
      .returning();
    await writeAudit(tx, { organizationId: scope.organizationId, workspaceId: scope.workspaceId, actor: scope.actor, action: "notification_channel.create", target: row.id, after: auditView(row) });
    return { channel: publicChannel(row), secret: input.type === "webhook" ? secret : null };
  });
}

/** Edits a channel; `url` may be omitted to keep the (possibly masked) current one. */
export async function updateChannel(db: Db, scope: Scope, id: string, input: Omit<ChannelInput, "url"> & { url?: string }) {
  return db.transaction(async (tx) => {
    const [before] = await tx.select().from(notificationChannel).where(and(eq(notificationChannel.workspaceId, scope.workspaceId), eq(notificationChannel.id, id))).for("update");
    if (!before) throw notFound("Channel");
    const next: ChannelInput = { ...input, type: before.type, url: input.url ?? before.url, enabled: input.enabled ?? before.enabled };
    validateChannelInput(next);
    const [row] = await tx
      .update(notificationChannel)
      .set({ name: next.name.trim(), url: next.url, events: next.events, minSeverity: next.minSeverity, quietPeriodSeconds: next.quietPeriodSeconds, enabled: next.enabled, updatedAt: new Date() })
      .where(and(eq(notificationChannel.workspaceId, scope.workspaceId), eq(notificationChannel.id, id)))
      .returning();
    await writeAudit(tx, { organizationId: scope.organizationId, workspaceId: scope.workspaceId, actor: scope.actor, action: "notification_channel.update", target: id, before: auditView(before), after: auditView(row) });
    return publicChannel(row);
  });
}

export async function setChannelEnabled(db: Db, scope: Scope, id: string, enabled: boolean) {
  const c = await getChannel(db, scope.workspaceId, id);
  return updateChannel(db, scope, id, { name: c.name, type: c.type, events: c.events as NotificationEvent[], minSeverity: c.minSeverity as NotificationSeverity, quietPeriodSeconds: c.quietPeriodSeconds, enabled });
}

export async function rotateChannelSecret(db: Db, scope: Scope, id: string) {
  const secret = newChannelSecret();
  return db.transaction(async (tx) => {
    const [row] = await tx.update(notificationChannel).set({ secret, updatedAt: new Date() }).where(and(eq(notificationChannel.workspaceId, scope.workspaceId), eq(notificationChannel.id, id))).returning();
    if (!row) throw notFound("Channel");
    await writeAudit(tx, { organizationId: scope.organizationId, workspaceId: scope.workspaceId, actor: scope.actor, action: "notification_channel.rotate_secret", target: id });
    return { secret };
  });
}

export async function deleteChannel(db: Db, scope: Scope, id: string) {
  return db.transaction(async (tx) => {
    const [row] = await tx.delete(notificationChannel).where(and(eq(notificationChannel.workspaceId, scope.workspaceId), eq(notificationChannel.id, id))).returning();
    if (!row) throw notFound("Channel");
    // Undelivered notifications of a deleted channel are dropped; the log goes with it.
    await tx.delete(notificationOutbox).where(and(eq(notificationOutbox.workspaceId, scope.workspaceId), eq(notificationOutbox.channelId, id)));
    await writeAudit(tx, { organizationId: scope.organizationId, workspaceId: scope.workspaceId, actor: scope.actor, action: "notification_channel.delete", target: id, before: auditView(row) });
    return { id };
  });
}

/** Enqueues a test notification and delivers it right away; the result is in the delivery log. */
export async function sendTestNotification(db: Db, scope: Scope, id: string, opts: WorkerOptions = workerOptionsFromEnv(), event: NotificationEvent = "key_escalated") {
  if (!NOTIFICATION_EVENTS.includes(event)) throw badRequest(`Unknown event '${String(event).slice(0, 60)}'`, "event");
  const c = await getChannel(db, scope.workspaceId, id);
  const [ws] = await db.select({ slug: workspace.slug }).from(workspace).where(eq(workspace.id, scope.workspaceId));
  const outboxId = await enqueueTestNotification(db, c, ws.slug, (opts.now ?? Date.now)(), event);
  await writeAudit(db, { organizationId: scope.organizationId, workspaceId: scope.workspaceId, actor: scope.actor, action: "notification_channel.test", target: id, after: { event } });
  const [row] = await db.update(notificationOutbox).set({ leaseUntil: new Date((opts.now ?? Date.now)() + 60_000) })
    .where(and(eq(notificationOutbox.workspaceId, scope.workspaceId), eq(notificationOutbox.id, outboxId))).returning();
  return { outboxId, ...(await deliverClaimed(db, row, opts)) };
}

export async function listDeliveries(db: Db, workspaceId: string, channelId: string, page: { limit: number; offset: number }) {
  const where = and(eq(notificationOutbox.workspaceId, workspaceId), eq(notificationOutbox.channelId, channelId));
  const [rows, [{ total }]] = await Promise.all([
    db.select().from(notificationOutbox).where(where).orderBy(desc(notificationOutbox.createdAt), desc(notificationOutbox.id)).limit(page.limit).offset(page.offset),
    db.select({ total: count() }).from(notificationOutbox).where(where),
  ]);
  return {
    total: Number(total),
    rows: rows.map((r) => ({
      id: r.id,
      createdAt: r.createdAt.toISOString(),
      event: r.event,
      severity: r.severity,
      subject: r.subject,
      status: r.status,
      statusCode: r.lastStatusCode,
      attempts: r.attempts,
      nextAttemptAt: r.status === "pending" ? r.nextAttemptAt.toISOString() : null,
      sentAt: r.sentAt ? r.sentAt.toISOString() : null,
      response: r.lastResponse,
    })),
  };
}
