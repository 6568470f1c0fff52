import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq, ne } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { globalToolPattern, notificationOutbox } from "@/db/schema";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { applyBatch } from "@/server/ingest/apply";
import { normalizeEvents } from "@/server/ingest/schema";
import { createChannel, setChannelEnabled, type ChannelInput } from "@/server/services/notification-channels";
import { enqueueGlobalPatternNotifications, enqueueNotifications } from "@/server/notifications/outbox";
import { verifyWebhook } from "@/server/notifications/signature";
import { backoffDelayMs, claimDue, GIVE_UP_AFTER_MS, runDeliveryPass, type WorkerOptions } from "@/server/notifications/worker";

/** A real HTTP receiver: records requests; `plan` decides each answer (status or "hang"). */
class Receiver {
  requests: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  plan: Array<number | "hang"> = [];
  private server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      this.requests.push({ headers: req.headers, body });
      const next = this.plan.shift() ?? 200;
      if (next === "hang") return; // never answers: the worker's timeout must fire
      res.writeHead(next, { "content-type": "text/plain" }).end(next >= 400 ? `error ${next}` : "ok");
    });
  });
  url = "";
  async start() {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
  reset() {
    this.requests = [];
    this.plan = [];
  }
}

const escalate = (s: string, host: string) =>
  [1, 2, 3].map(() => result(s, "http_request", { url: `https://${host}/v1/x` }, { success: false, httpStatus: 503 }));
const KEY = (host: string) => `http_request|domain=${host}|path_prefix=v1`;

describe.each(DATABASE_KINDS)("notifications on %s", (kind) => {
  const receiver = new Receiver();
  let clock = Date.now();
  const worker: WorkerOptions = { now: () => clock, random: () => 0.5, allowPrivate: true, requestTimeoutMs: 300, baseUrl: "https://vigil.example.com" };

  beforeAll(async () => {
    process.env.VIGIL_NOTIFY_ALLOW_PRIVATE = "1";
  });
  const app = useTestApp(kind);
  beforeAll(async () => {
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
  });

  async function setup(input: Partial<ChannelInput> = {}) {
    receiver.reset();
    clock = Date.now() + 5_000; // ahead of rows the ingest stamps with the wall clock
    const ws = await app.seedWorkspace();
    const scope = { workspaceId: ws.workspaceId, organizationId: ws.organizationId, actor: SYSTEM_ACTOR };
    const { channel, secret } = await createChannel(app.db, scope, {
      name: "ops", type: "webhook", url: receiver.url, events: ["key_escalated", "key_blocked", "session_paused"], minSeverity: "info", quietPeriodSeconds: 0, ...input,
    });
    return { ws, scope, channel, secret };
  }
  const outbox = (workspaceId: string) => app.db.select().from(notificationOutbox).where(eq(notificationOutbox.workspaceId, workspaceId));

  it("an escalation is written to the outbox with the ingest and delivered signed, with an idempotency key", async () => {
    const { ws, secret } = await setup();
    const res = await app.mutation("ingest.events", { events: escalate(uid("s"), "a.example") }, { key: ws.key });
    expect(res.status).toBe(200);
    expect(receiver.requests).toHaveLength(0); // nothing sent inside the ingest
    const [row] = await outbox(ws.workspaceId);
    expect(row).toMatchObject({ status: "pending", event: "key_escalated", subject: KEY("a.example") });
    expect(await runDeliveryPass(app.db, worker)).toBe(1);
    expect(receiver.requests).toHaveLength(1);
    const { headers, body } = receiver.requests[0];
    expect(verifyWebhook(secret!, { signature: headers["x-vigil-signature"] as string, timestamp: headers["x-vigil-timestamp"] as string }, body, { nowSeconds: Math.floor(clock / 1000) })).toBe(true);
    expect(verifyWebhook("wrong", { signature: headers["x-vigil-signature"] as string, timestamp: headers["x-vigil-timestamp"] as string }, body, { nowSeconds: Math.floor(clock / 1000) })).toBe(false);
    expect(headers["x-vigil-idempotency-key"]).toBe(row.id);
    expect(JSON.parse(body)).toMatchObject({ id: row.id, event: "key_escalated", severity: "warning", workspace: ws.slug, subject: { kind: "failure_key", id: KEY("a.example") }, reason: "3 failures in 3600s", url: `https://vigil.example.com/w/${ws.slug}/tools/${encodeURIComponent(KEY("a.example"))}` });
    const [after] = await outbox(ws.workspaceId);
    expect(after).toMatchObject({ status: "sent", attempts: 1, lastStatusCode: 200 });
  });

  it("a tool call waiting for a person is queued with the approval it opened (tool_call_approval_waiting)", async () => {
    const { ws } = await setup({ events: ["tool_call_approval_waiting"] });
    const s = uid("s");
    await app.mutation("ingest.events", { events: escalate(s, "w.example") }, { key: ws.key });
    const callId = uid("c");
    const res = await app.mutation("guard.check", { id: uid(), sessionId: s, callId, toolName: "http_request", args: { url: "https://w.example/v1/x" }, waitForApprovalSeconds: 0.1 }, { key: ws.key });
    expect(res.body.result!.data.decision).toBe("ask");
    const approvalId = res.body.result!.data.approvalId;
    expect(approvalId).toBeTruthy();
    const rows = await outbox(ws.workspaceId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event: "tool_call_approval_waiting", subject: KEY("w.example") });
    // Asking again for the same call opens nothing new and queues nothing new.
    await app.mutation("guard.check", { id: uid(), sessionId: s, callId, toolName: "http_request", args: { url: "https://w.example/v1/x" }, waitForApprovalSeconds: 0.1 }, { key: ws.key });
    expect(await outbox(ws.workspaceId)).toHaveLength(1);
    clock = Date.now() + 5_000;
    expect(await runDeliveryPass(app.db, worker)).toBe(1);
    expect(JSON.parse(receiver.requests[0].body)).toMatchObject({ event: "tool_call_approval_waiting", details: { approvalId, sessionId: s, callId } });
  });

  it("retries after a 500 and a time-out on the backoff schedule, then delivers", async () => {
    const { ws, scope } = await setup();
    receiver.plan = [500, "hang", 200];
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, [{ type: "paused", sessionId: "s1", reason: "loop" }], { now: clock }));
    const start = clock;
    await runDeliveryPass(app.db, worker);
    let [row] = await outbox(ws.workspaceId);
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: 500, lastResponse: "error 500" });
    expect(row.nextAttemptAt.getTime()).toBe(start + 30_000);
    expect(await runDeliveryPass(app.db, worker)).toBe(0); // not due yet
    clock = start + 30_000;
    await runDeliveryPass(app.db, worker);
    [row] = await outbox(ws.workspaceId);
    expect(row).toMatchObject({ status: "pending", attempts: 2, lastStatusCode: null });
    expect(row.lastResponse).toMatch(/timed out/);
    expect(row.nextAttemptAt.getTime()).toBe(clock + 60_000);
    clock += 60_000;
    await runDeliveryPass(app.db, worker);
    [row] = await outbox(ws.workspaceId);
    expect(row).toMatchObject({ status: "sent", attempts: 3, lastStatusCode: 200 });
    expect(receiver.requests.map((r) => r.headers["x-vigil-idempotency-key"])).toEqual([row.id, row.id, row.id]);
  });

  it("gives up a day after the notification was created", async () => {
    const { ws, scope } = await setup();
    const created = clock;
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, [{ type: "paused", sessionId: "s2", reason: "loop" }], { now: clock }));
    receiver.plan = Array(100).fill(500);
    let row = (await outbox(ws.workspaceId))[0];
    let passes = 0;
    while (row.status === "pending" && passes < 100) {
      clock = row.nextAttemptAt.getTime();
      await runDeliveryPass(app.db, worker);
      row = (await outbox(ws.workspaceId))[0];
      passes++;
    }
    expect(row.status).toBe("failed");
    expect(clock - created).toBeLessThanOrEqual(GIVE_UP_AFTER_MS);
    expect(clock + backoffDelayMs(row.attempts, () => 0.5) - created).toBeGreaterThan(GIVE_UP_AFTER_MS);
    expect(row.attempts).toBe(receiver.requests.length);
    expect(row.attempts).toBeGreaterThan(20);
  });

  it("a crash between delivery and marking it sent redelivers with the same idempotency key; an expired lease is reclaimed", async () => {
    const { ws, scope } = await setup();
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, [{ type: "paused", sessionId: "s3", reason: "loop" }], { now: clock }));
    // Instance A claims the row and "crashes" before delivering: nobody else takes it during the lease.
    const claimed = await claimDue(app.db, clock, { leaseMs: 60_000 });
    expect(claimed).toHaveLength(1);
    expect(await runDeliveryPass(app.db, worker)).toBe(0);
    // The lease expires: instance B delivers.
    clock += 60_001;
    expect(await runDeliveryPass(app.db, worker)).toBe(1);
    // Simulate B crashing after the receiver got it but before the row was marked sent.
    await app.db.update(notificationOutbox).set({ status: "pending", sentAt: null, leaseUntil: null }).where(eq(notificationOutbox.id, claimed[0].id));
    await runDeliveryPass(app.db, worker);
    expect(receiver.requests).toHaveLength(2);
    expect(new Set(receiver.requests.map((r) => r.headers["x-vigil-idempotency-key"]))).toEqual(new Set([claimed[0].id]));
    expect(await runDeliveryPass(app.db, worker)).toBe(0);
  });

  it("a disabled channel gets nothing: not queued while disabled, and queued rows are not delivered", async () => {
    const { ws, scope, channel } = await setup();
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, [{ type: "paused", sessionId: "s4", reason: "loop" }], { now: clock }));
    await setChannelEnabled(app.db, scope, channel.id, false);
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, [{ type: "paused", sessionId: "s5", reason: "loop" }], { now: clock }));
    await runDeliveryPass(app.db, worker);
    expect(receiver.requests).toHaveLength(0);
    const rows = await outbox(ws.workspaceId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "failed", lastResponse: "channel disabled" });
  });

  it("Slack channels get Block Kit with the key, the reason and a button to the page", async () => {
    const { ws } = await setup({ type: "slack", events: ["key_blocked", "key_escalated"] });
    await app.mutation("ingest.events", { events: escalate(uid("s"), "b.example") }, { key: ws.key });
    await runDeliveryPass(app.db, worker);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0].headers["x-vigil-signature"]).toBeUndefined();
    const msg = JSON.parse(receiver.requests[0].body);
    expect(msg.text).toContain("3 failures in 3600s");
    expect(msg.blocks[0]).toMatchObject({ type: "header", text: { type: "plain_text" } });
    expect(msg.blocks[1].fields[0].text).toContain(KEY("b.example"));
    expect(msg.blocks.at(-1)).toMatchObject({ type: "actions", elements: [{ type: "button", url: `https://vigil.example.com/w/${ws.slug}/tools/${encodeURIComponent(KEY("b.example"))}` }] });
  });

  it("minimum severity filters events; the quiet period counts suppressed notifications and reports them in the next", async () => {
    const { ws, scope } = await setup({ minSeverity: "critical", quietPeriodSeconds: 600 });
    const fx = (n: number) => Array.from({ length: n }, () => ({ type: "blocked" as const, failureKey: "k1", toolName: "k1", reason: "security", message: "m" }));
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, [{ type: "paused", sessionId: "s6", reason: "loop" }], { now: clock }));
    expect(await outbox(ws.workspaceId)).toHaveLength(0); // warning < critical
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, fx(3), { now: clock }));
    let rows = await outbox(ws.workspaceId);
    expect(rows.map((r) => r.status).sort()).toEqual(["pending", "suppressed", "suppressed"]);
    await runDeliveryPass(app.db, worker);
    expect(receiver.requests).toHaveLength(1);
    clock += 601_000;
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, fx(1), { now: clock }));
    await runDeliveryPass(app.db, worker);
    expect(receiver.requests).toHaveLength(2);
    expect(JSON.parse(receiver.requests[1].body).suppressedCount).toBe(2);
    rows = await outbox(ws.workspaceId);
    expect(rows.filter((r) => r.status === "sent")).toHaveLength(2);
  });

  it("the outbox row is rolled back with a failed ingest transaction", async () => {
    const { ws, scope } = await setup();
    const events = normalizeEvents(escalate(uid("s"), "c.example") as never, Date.now());
    await expect(
      app.db.transaction(async (tx) => {
        const r = await applyBatch(tx, scope, events);
        expect(r.effects.some((e) => e.type === "escalated")).toBe(true);
        expect((await tx.select().from(notificationOutbox).where(eq(notificationOutbox.workspaceId, ws.workspaceId))).length).toBe(1);
        throw new Error("boom after the writes");
      }),
    ).rejects.toThrow("boom");
    expect(await outbox(ws.workspaceId)).toHaveLength(0);
  });

  it("a newly raised global tool pattern notifies the workspaces in it, once", async () => {
    const { ws, scope } = await setup({ events: ["global_pattern_raised"] });
    const pattern = { toolName: "jira", workspaceIds: [ws.workspaceId], avgFailureRate: 0.8 };
    await app.db.transaction((tx) => enqueueGlobalPatternNotifications(tx, scope.organizationId, [pattern], clock));
    let rows = await outbox(ws.workspaceId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event: "global_pattern_raised", severity: "critical", subject: "jira" });
    // Already active: re-evaluation does not notify again.
    await app.db.insert(globalToolPattern).values({ organizationId: scope.organizationId, toolName: "jira", status: "active", workspaceIds: [ws.workspaceId], avgFailureRate: 0.8, detectedAt: new Date() });
    await app.db.transaction((tx) => enqueueGlobalPatternNotifications(tx, scope.organizationId, [pattern], clock));
    rows = await outbox(ws.workspaceId);
    expect(rows).toHaveLength(1);
    await runDeliveryPass(app.db, worker);
    expect(JSON.parse(receiver.requests[0].body)).toMatchObject({ event: "global_pattern_raised", url: "https://vigil.example.com/org/patterns" });
  });

  it("a pass holds its rows for as long as sending all of them one after another can take", async () => {
    const { scope } = await setup();
    const effects = Array.from({ length: 5 }, (_, i) => ({ type: "paused" as const, sessionId: `lease-${i}`, reason: "loop" }));
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, effects, { now: clock }));
    const mine = (rows: Awaited<ReturnType<typeof claimDue>>) => rows.filter((r) => r.workspaceId === scope.workspaceId);
    const claimed = mine(await claimDue(app.db, clock, { batchSize: 50, requestTimeoutMs: 2_000 }));
    expect(claimed).toHaveLength(5);
    // Up to 50 rows of up to 2 s each: a 60 s lease would let another instance take the last ones mid-pass.
    for (const r of claimed) expect(r.leaseUntil!.getTime()).toBeGreaterThanOrEqual(clock + 50 * 2_000);
    expect(mine(await claimDue(app.db, clock + 50 * 2_000 - 1, { batchSize: 50 }))).toHaveLength(0);
  });

  it("two workers deliver each notification exactly once", async () => {
    const { ws, scope } = await setup();
    const effects = Array.from({ length: 40 }, (_, i) => ({ type: "paused" as const, sessionId: `s-${i}`, reason: "loop" }));
    await app.db.transaction((tx) => enqueueNotifications(tx, scope.workspaceId, effects, { now: clock }));
    // The production request timeout: with the suite's 300 ms, a receiver answering late on a busy
    // machine made an attempt time out, and the row waited for its retry 30 s later (still pending,
    // not lost) while the drains, finding nothing due, had already stopped.
    const drain = async () => {
      while ((await runDeliveryPass(app.db, { ...worker, requestTimeoutMs: 10_000, batchSize: 3 })) > 0);
    };
    await Promise.all([drain(), drain()]);
    const unsent = await app.db.select().from(notificationOutbox).where(and(eq(notificationOutbox.workspaceId, ws.workspaceId), ne(notificationOutbox.status, "sent")));
    expect(unsent.map((r) => `${r.status}: ${r.lastResponse}`)).toEqual([]);
    const keys = receiver.requests.map((r) => r.headers["x-vigil-idempotency-key"]);
    expect(keys).toHaveLength(40);
    expect(new Set(keys).size).toBe(40);
    const rows = await app.db.select().from(notificationOutbox).where(and(eq(notificationOutbox.workspaceId, ws.workspaceId), eq(notificationOutbox.status, "sent")));
    expect(rows).toHaveLength(40);
  });
});
