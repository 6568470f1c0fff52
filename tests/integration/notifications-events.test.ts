import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { notificationOutbox } from "@/db/schema";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { pauseWorkspace } from "@/server/services/holds";
import { createChannel, sendTestNotification, type ChannelInput } from "@/server/services/notification-channels";
import { DEFAULT_NOTIFICATION_EVENTS, NOTIFICATION_EVENTS, type NotificationEvent } from "@/server/notifications/events";
import { enqueueNotifications } from "@/server/notifications/outbox";
import { runDeliveryPass, type WorkerOptions } from "@/server/notifications/worker";

/** A real HTTP receiver recording what Vigil posts. */
function receiver() {
  const bodies: Array<{ event: string; body: any }> = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      bodies.push({ event: req.headers["x-vigil-event"] as string, body: JSON.parse(body) });
      res.writeHead(200).end("ok");
    });
  });
  return {
    bodies,
    url: "",
    async start() {
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe.each(DATABASE_KINDS)("notification events on %s", (kind) => {
  const rx = receiver();
  const app = useTestApp(kind);
  const worker: WorkerOptions = { allowPrivate: true, baseUrl: "https://vigil.example.com", random: () => 0.5 };
  beforeAll(async () => {
    process.env.VIGIL_NOTIFY_ALLOW_PRIVATE = "1";
    await rx.start();
  });
  afterAll(() => rx.stop());

  async function setup(events: NotificationEvent[] = DEFAULT_NOTIFICATION_EVENTS, more: Partial<ChannelInput> = {}) {
    rx.bodies.length = 0;
    const ws = await app.seedWorkspace();
    const scope = { workspaceId: ws.workspaceId, organizationId: ws.organizationId, actor: SYSTEM_ACTOR };
    const { channel } = await createChannel(app.db, scope, { name: "ops", type: "webhook", url: rx.url, events, minSeverity: "info", quietPeriodSeconds: 0, ...more });
    return { ws, scope, channel };
  }
  const deliver = async () => {
    while ((await runDeliveryPass(app.db, { ...worker, now: () => Date.now() + 5_000 })) > 0);
  };
  const mine = (slug: string) => rx.bodies.filter((b) => b.body.workspace === slug);

  it("a new channel takes every event but policy_denied", () => {
    expect(DEFAULT_NOTIFICATION_EVENTS).not.toContain("policy_denied");
    expect(NOTIFICATION_EVENTS.filter((e) => !DEFAULT_NOTIFICATION_EVENTS.includes(e))).toEqual(["policy_denied"]);
  });

  it("key_recovered, pattern_detected (severe only) and model_switch_suggested reach the receiver with their details", async () => {
    const { ws, scope } = await setup();
    const s = uid("s");
    await app.db.transaction((tx) =>
      enqueueNotifications(tx, scope.workspaceId, [
        { type: "recovered", failureKey: "bash|command=ls", toolName: "bash", message: "Recovered after 3 successes" },
        { type: "pattern", patternType: "error_retry_loop", severity: "moderate", count: 4, sessionId: s, toolSequence: ["bash", "bash"] },
        { type: "pattern", patternType: "error_retry_loop", severity: "severe", count: 8, sessionId: s, toolSequence: ["bash", "bash", "bash"] },
        { type: "model_suggestion", strategy: "suggest", currentModel: "m-small", suggestedModel: "m-large", failureKey: "bash|command=ls", currentSuccessRate: 0.4, suggestedSuccessRate: 0.9 },
      ]),
    );
    await deliver();
    const got = mine(ws.slug);
    expect(got.map((b) => b.event).sort()).toEqual(["key_recovered", "model_switch_suggested", "pattern_detected"]);
    expect(got.find((b) => b.event === "key_recovered")!.body).toMatchObject({ event: "key_recovered", severity: "info", subject: { kind: "failure_key", id: "bash|command=ls" }, reason: "Recovered after 3 successes" });
    expect(got.find((b) => b.event === "pattern_detected")!.body).toMatchObject({ subject: { kind: "session", id: s }, details: { patternType: "error_retry_loop", severity: "severe", count: 8 }, url: `https://vigil.example.com/w/${ws.slug}/sessions/${s}` });
    expect(got.find((b) => b.event === "model_switch_suggested")!.body).toMatchObject({ details: { currentModel: "m-small", suggestedModel: "m-large" }, reason: expect.stringContaining("90%") });
  });

  it("workspace_paused when the kill switch is pulled, once", async () => {
    const { ws, scope } = await setup();
    await pauseWorkspace(app.db, { ...scope, reason: "incident 42" });
    await pauseWorkspace(app.db, { ...scope, reason: "incident 42, still" }); // already paused: no second notification
    await deliver();
    const got = mine(ws.slug);
    expect(got.map((b) => b.event)).toEqual(["workspace_paused"]);
    expect(got[0].body).toMatchObject({ severity: "critical", subject: { kind: "workspace", id: "workspace" }, reason: expect.stringContaining("incident 42") });
  });

  it("policy_denied from a real guard.check only on a channel that chose it, once per call", async () => {
    const off = await setup();
    const on = await setup(["policy_denied"]);
    for (const { ws } of [off, on]) {
      const c = { id: uid(), sessionId: uid("s"), callId: uid("c"), toolName: "Bash", args: { command: "cd /tmp && rm -rf ~" } };
      const res = await app.mutation("guard.check", c, { key: ws.key });
      expect(res.body.result!.data.decision).toBe("deny");
      await app.mutation("guard.check", c, { key: ws.key }); // the same call again: answered, not notified again
    }
    await deliver();
    expect(mine(off.ws.slug)).toEqual([]);
    const got = mine(on.ws.slug);
    expect(got.map((b) => b.event)).toEqual(["policy_denied"]);
    expect(got[0].body).toMatchObject({ details: { toolName: "Bash", policy: "shell.delete_root_or_home" } });
  });

  it("budget_exhausted when a guard.check spends the session's tool-call budget", async () => {
    const { ws } = await setup();
    const put = await app.mutation("config.put", { settings: { max_tool_calls_per_session: 2 } }, { key: ws.key });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const s = uid("s");
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push((await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid("c"), toolName: "read_file", args: { path: `/a/${i}` } }, { key: ws.key })).body.result!.data.decision);
    expect(answers).toEqual(["allow", "allow", "pause"]);
    await deliver();
    const got = mine(ws.slug);
    expect(got.map((b) => b.event)).toEqual(["budget_exhausted"]);
    expect(got[0].body).toMatchObject({ subject: { kind: "session", id: s }, details: { toolName: "read_file" } });
  });

  it("Send test posts the chosen event, named in its body, and refuses an unknown one", async () => {
    const { ws, scope, channel } = await setup(["key_escalated"]);
    const sent = await sendTestNotification(app.db, scope, channel.id, worker, "budget_exhausted");
    expect(sent.status).toBe("sent");
    const [body] = mine(ws.slug);
    expect(body.event).toBe("test"); // the X-Vigil-Event header: a receiver can tell a test apart
    expect(body.body).toMatchObject({ event: "budget_exhausted", test: true, details: { simulatedEvent: "budget_exhausted" } });
    expect(body.body.reason).toContain("budget_exhausted");
    const [row] = await app.db.select().from(notificationOutbox).where(eq(notificationOutbox.id, sent.outboxId));
    expect(row.event).toBe("test");
    await expect(sendTestNotification(app.db, scope, channel.id, worker, "nope" as NotificationEvent)).rejects.toMatchObject({ field: "event" });
  });
});
