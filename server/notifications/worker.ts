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
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { allowPrivateTargets, checkChannelUrl, guardedLookup, RefusedTargetError, type Resolver } from "./url-guard";

export interface WorkerOptions {
  now?: () => number;
  /** 0..1; jitter spreads retries of many failed notifications. */
  random?: () => number;
  baseUrl?: string;
  requestTimeoutMs?: number;
  leaseMs?: number;
  batchSize?: number;
  allowPrivate?: boolean;
  /** Host name resolution for delivery (the system's by default). */
  resolve?: Resolver;
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

/**
 * How long a pass holds its rows: long enough for every claimed row to be sent one after another,
 * each up to its request timeout. A lease shorter than the pass lets another instance claim the
 * pass's last rows again while they still wait their turn, and deliver them twice.
 */
function leaseMsFor(opts: WorkerOptions): number {
  return opts.leaseMs ?? (opts.batchSize ?? DEFAULT_BATCH_SIZE) * (opts.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS) + 30_000;
}

const DEFAULT_BATCH_SIZE = 20;
const DEFAULT_TIMEOUT_MS = 10_000;

export async function claimDue(db: Db, now: number, opts: WorkerOptions): Promise<Row[]> {
  const leaseUntil = new Date(now + leaseMsFor(opts));
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
      .limit(opts.batchSize ?? DEFAULT_BATCH_SIZE);
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
  const allowPrivate = opts.allowPrivate ?? allowPrivateTargets();
  const blocked = checkChannelUrl(channel.url, allowPrivate);
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
  const timeoutMs = opts.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    const res = await postOnce(channel.url, headers, body, { timeoutMs, lookup: guardedLookup(allowPrivate, opts.resolve) });
    return { ok: res.status >= 200 && res.status < 300, statusCode: res.status, excerpt: res.excerpt };
  } catch (err) {
    const e = err as Error;
    if (e instanceof RefusedTargetError) return { ok: false, statusCode: null, excerpt: `refused: ${e.message}`.slice(0, 500) };
    const timedOut = e.name === "TimeoutError" || e.name === "AbortError";
    return { ok: false, statusCode: null, excerpt: timedOut ? `timed out after ${timeoutMs} ms` : `network error: ${e.message}`.slice(0, 500) };
  }
}

const EXCERPT_CHARS = 500;

/**
 * One POST over a fresh connection whose host name is resolved only by `lookup` (which checks the
 * addresses), so the socket reaches exactly the checked address; Host and TLS SNI stay the URL's
 * name. Redirects are not followed (one could point at an internal address). The answer is read up
 * to a short excerpt; the whole exchange is bounded by `timeoutMs`.
 */
function postOnce(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; lookup: ReturnType<typeof guardedLookup> },
): Promise<{ status: number; excerpt: string }> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const signal = AbortSignal.timeout(opts.timeoutMs);
    const req = send(
      target,
      { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, agent: false, lookup: opts.lookup as never, signal },
      (res: IncomingMessage) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          if (text.length >= EXCERPT_CHARS) res.destroy();
        });
        const done = () => resolve({ status: res.statusCode ?? 0, excerpt: text.slice(0, EXCERPT_CHARS) });
        res.on("end", done);
        res.on("close", done);
        res.on("error", done);
      },
    );
    req.on("error", (err) => reject(signal.aborted ? Object.assign(new Error("timed out"), { name: "TimeoutError" }) : err));
    req.end(body);
  });
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
