/**
 * The delivery worker: claims due outbox rows with FOR UPDATE SKIP LOCKED and a lease (so with
 * several app instances each notification is sent by one of them, and a crashed instance's rows
 * come back when its lease expires), posts them with a per-request timeout, retries with
 * exponential backoff and jitter, and gives up a day after the notification was created.
 * Delivery is at-least-once: receivers deduplicate on `X-Vigil-Idempotency-Key`.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { notificationChannel, notificationOutbox } from "@/db/schema";
import { slackMessage, webhookBody, type StoredNotification } from "./payload";
import { signWebhook } from "./signature";
import { allowPrivateTargets, checkResolvedTarget } from "./url-guard";

export interface WorkerOptions {
  now?: () => number;
  /** 0..1; jitter spreads retries of many failed notifications. */
  random?: () => number;
  baseUrl?: string;
  requestTimeoutMs?: number;
  leaseMs?: number;
  batchSize?: number;
  allowPrivate?: boolean;
}

export const GIVE_UP_AFTER_MS = 24 * 3600 * 1000;
const BASE_DELAY_MS = 30_000;
const MAX_DELAY_MS = 3600_000;

/** Delay before retry number `attempt` (1 = after the first failure): 30 s doubling to 1 h, ±20 % jitter. */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export function workerOptionsFromEnv(env = process.env): WorkerOptions {
  const num = (v: string | undefined) => (v && Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : undefined);
  return {
    baseUrl: env.VIGIL_BASE_URL || `http://localhost:${env.PORT || 3000}`,
    requestTimeoutMs: num(env.VIGIL_NOTIFY_TIMEOUT_MS),
    allowPrivate: allowPrivateTargets(env),
  };
}

type Row = typeof notificationOutbox.$inferSelect;

/** Claims up to `batchSize` due rows for this instance (lease), then delivers them. Returns how many were attempted. */
export async function runDeliveryPass(db: Db, opts: WorkerOptions = {}): Promise<number> {
  const now = (opts.now ?? Date.now)();
  const rows = await claimDue(db, now, opts);
  for (const row of rows) await deliverClaimed(db, row, opts);
  return rows.length;
}

export async function claimDue(db: Db, now: number, opts: WorkerOptions): Promise<Row[]> {
  const leaseUntil = new Date(now + (opts.leaseMs ?? 60_000));
  const nowD = new Date(now).toISOString();
  const claimable = and(
    eq(notificationOutbox.status, "pending"),
    sql`${notificationOutbox.nextAttemptAt} <= ${nowD}::timestamptz`,
    sql`(${notificationOutbox.leaseUntil} is null or ${notificationOutbox.leaseUntil} < ${nowD}::timestamptz)`,
  );
  return db.transaction(async (tx) => {
    // Due rows of every workspace, then each claimed by its key with SKIP LOCKED: on Citus a
    // row lock must name the shard (no FOR UPDATE on a query across workspaces), and a row another
    // instance claims meanwhile is skipped or, once committed, no longer claimable.
    const due = await tx
      .select({ workspaceId: notificationOutbox.workspaceId, id: notificationOutbox.id })
      .from(notificationOutbox)
      .where(claimable)
      .orderBy(notificationOutbox.nextAttemptAt)
      .limit(opts.batchSize ?? 20);
    const out: Row[] = [];
    for (const d of due) {
      const key = and(eq(notificationOutbox.workspaceId, d.workspaceId), eq(notificationOutbox.id, d.id));
      const [free] = await tx.select({ id: notificationOutbox.id }).from(notificationOutbox).where(and(key, claimable)).for("update", { skipLocked: true });
      if (!free) continue;
      const [r] = await tx
        .update(notificationOutbox)
        .set({ leaseUntil })
        .where(key)
        .returning();
      out.push(r);
    }
    return out;
  });
}

/** Delivers one claimed row now (also used by Send test). */
export async function deliverClaimed(db: Db, row: Row, opts: WorkerOptions = {}): Promise<{ status: Row["status"]; statusCode: number | null }> {
  const now = (opts.now ?? Date.now)();
  const [channel] = await db
    .select()
    .from(notificationChannel)
    .where(and(eq(notificationChannel.workspaceId, row.workspaceId), eq(notificationChannel.id, row.channelId)));
  const where = and(eq(notificationOutbox.workspaceId, row.workspaceId), eq(notificationOutbox.id, row.id));
  if (!channel || !channel.enabled) {
    await db.update(notificationOutbox).set({ status: "failed", leaseUntil: null, lastResponse: channel ? "channel disabled" : "channel deleted" }).where(where);
    return { status: "failed", statusCode: null };
  }
  const attempt = await send(channel, row, opts, now);
  const attempts = row.attempts + 1;
  if (attempt.ok) {
    await db.update(notificationOutbox).set({ status: "sent", attempts, sentAt: new Date((opts.now ?? Date.now)()), leaseUntil: null, lastStatusCode: attempt.statusCode, lastResponse: attempt.excerpt }).where(where);
    return { status: "sent", statusCode: attempt.statusCode };
  }
  const next = now + backoffDelayMs(attempts, opts.random);
  const giveUp = next - row.createdAt.getTime() > GIVE_UP_AFTER_MS || attempt.permanent;
  await db
    .update(notificationOutbox)
    .set({ status: giveUp ? "failed" : "pending", attempts, nextAttemptAt: new Date(giveUp ? now : next), leaseUntil: null, lastStatusCode: attempt.statusCode, lastResponse: attempt.excerpt })
    .where(where);
  return { status: giveUp ? "failed" : "pending", statusCode: attempt.statusCode };
}

interface Attempt { ok: boolean; statusCode: number | null; excerpt: string; permanent?: boolean }

async function send(channel: typeof notificationChannel.$inferSelect, row: Row, opts: WorkerOptions, now: number): Promise<Attempt> {
  const blocked = await checkResolvedTarget(channel.url, opts.allowPrivate ?? allowPrivateTargets());
  if (blocked) return { ok: false, statusCode: null, excerpt: `refused: ${blocked}` };
  const n = row.payload as StoredNotification;
  const baseUrl = opts.baseUrl ?? workerOptionsFromEnv().baseUrl!;
  const body = JSON.stringify(channel.type === "slack" ? slackMessage(n, baseUrl) : webhookBody(n, baseUrl));
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Vigil-Notifications/1",
    "x-vigil-idempotency-key": row.id,
    "x-vigil-event": row.event,
  };
  if (channel.type === "webhook") {
    headers["x-vigil-timestamp"] = String(timestamp);
    headers["x-vigil-signature"] = signWebhook(channel.secret, timestamp, body);
  }
  try {
    const res = await fetch(channel.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual", // a redirect could point at an internal address
      signal: AbortSignal.timeout(opts.requestTimeoutMs ?? 10_000),
    });
    const text = (await res.text().catch(() => "")).slice(0, 500);
    return { ok: res.status >= 200 && res.status < 300, statusCode: res.status, excerpt: text };
  } catch (err) {
    const e = err as Error;
    const timedOut = e.name === "TimeoutError" || e.name === "AbortError";
    return { ok: false, statusCode: null, excerpt: timedOut ? `timed out after ${opts.requestTimeoutMs ?? 10_000} ms` : `network error: ${(e.cause as Error | undefined)?.message ?? e.message}`.slice(0, 500) };
  }
}

/** Background loop started by the runtime: a pass every few seconds, never throwing. */
export function startDeliveryWorker(db: Db, opts: WorkerOptions & { intervalMs?: number } = {}): () => void {
  let stopped = false;
  let running = false;
  const tick = async () => {
    if (running || stopped) return;
    running = true;
    try {
      while (!stopped && (await runDeliveryPass(db, opts)) > 0);
    } catch (err) {
      console.error("[vigil] notification delivery failed:", err);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(tick, opts.intervalMs ?? 5_000);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
