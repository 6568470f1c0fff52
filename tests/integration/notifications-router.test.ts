import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { auditLog } from "@/db/schema";

describe.each(DATABASE_KINDS)("notifications router on %s", (kind) => {
  let server: http.Server;
  let hookUrl = "";
  const received: string[] = [];

  const app = useTestApp(kind);
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let b = "";
      req.on("data", (c) => (b += c));
      req.on("end", () => {
        received.push(b);
        res.writeHead(202).end("accepted");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    delete process.env.VIGIL_NOTIFY_ALLOW_PRIVATE;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const base = { name: "ops", type: "webhook", events: ["key_escalated"], minSeverity: "warning", quietPeriodSeconds: 60 };

  it("rejects non-http(s) and private URLs with a 400 naming the url field", async () => {
    delete process.env.VIGIL_NOTIFY_ALLOW_PRIVATE;
    const owner = await app.signUp(`n-${uid()}@example.com`);
    const ws = await app.seedWorkspace({ ownerUserId: owner.userId });
    for (const url of ["ftp://example.com/x", "http://127.0.0.1:9/x", "http://169.254.169.254/", "http://10.0.0.5/hook", "http://localhost:3000/"]) {
      const res = await app.mutation("notifications.create", { workspaceSlug: ws.slug, ...base, url }, { cookie: owner.cookie });
      expect(res.status, url).toBe(400);
      expect(res.body.error!.data.issues).toEqual([expect.objectContaining({ path: ["url"] })]);
    }
    const noEvents = await app.mutation("notifications.create", { workspaceSlug: ws.slug, ...base, events: [], url: "https://example.com/h" }, { cookie: owner.cookie });
    expect(noEvents.status).toBe(400);
    expect(noEvents.body.error!.data.issues![0].path).toEqual(["events"]);
  });

  it("admin creates (secret shown once), everyone reads without secrets, viewers cannot edit; Send test arrives and shows in the delivery log; audited", async () => {
    process.env.VIGIL_NOTIFY_ALLOW_PRIVATE = "1";
    const owner = await app.signUp(`n-${uid()}@example.com`);
    const viewer = await app.signUp(`v-${uid()}@example.com`);
    const ws = await app.seedWorkspace({ ownerUserId: owner.userId });
    await app.addMember(ws.organizationId, viewer.userId, "viewer");

    const created = await app.mutation("notifications.create", { workspaceSlug: ws.slug, ...base, url: hookUrl }, { cookie: owner.cookie });
    expect(created.status).toBe(200);
    const { channel, secret } = created.body.result!.data;
    expect(secret).toMatch(/^vgls_/);
    const slack = await app.mutation("notifications.create", { workspaceSlug: ws.slug, ...base, name: "slack", type: "slack", url: "https://hooks.slack.com/services/T0/B0/SECRETPART" }, { cookie: owner.cookie });
    expect(slack.body.result!.data.secret).toBeNull();

    const list = await app.query("notifications.list", { workspaceSlug: ws.slug }, { cookie: viewer.cookie });
    expect(list.status).toBe(200);
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain("SECRETPART");
    expect(list.body.result!.data.map((c: any) => c.url)).toEqual([hookUrl, "https://hooks.slack.com/…"]);

    expect((await app.mutation("notifications.create", { workspaceSlug: ws.slug, ...base, url: hookUrl }, { cookie: viewer.cookie })).status).toBe(403);
    expect((await app.mutation("notifications.setEnabled", { workspaceSlug: ws.slug, channelId: channel.id, enabled: false }, { cookie: viewer.cookie })).status).toBe(403);

    for (let i = 0; i < 3; i++) {
      const t = await app.mutation("notifications.sendTest", { workspaceSlug: ws.slug, channelId: channel.id }, { cookie: owner.cookie });
      expect(t.body.result!.data).toMatchObject({ status: "sent", statusCode: 202 });
    }
    expect(JSON.parse(received.at(-1)!)).toMatchObject({ test: true, workspace: ws.slug });
    const log = await app.query("notifications.deliveries", { workspaceSlug: ws.slug, channelId: channel.id, limit: 2, offset: 0 }, { cookie: viewer.cookie });
    expect(log.body.result!.data.total).toBe(3);
    expect(log.body.result!.data.rows).toHaveLength(2);
    expect(log.body.result!.data.rows[0]).toMatchObject({ event: "test", status: "sent", statusCode: 202, attempts: 1, response: "accepted", nextAttemptAt: null });

    const upd = await app.mutation("notifications.update", { workspaceSlug: ws.slug, channelId: channel.id, ...base, name: "ops-2", minSeverity: "critical" }, { cookie: owner.cookie });
    expect(upd.body.result!.data).toMatchObject({ name: "ops-2", minSeverity: "critical", url: hookUrl });
    const rotated = await app.mutation("notifications.rotateSecret", { workspaceSlug: ws.slug, channelId: channel.id }, { cookie: owner.cookie });
    expect(rotated.body.result!.data.secret).not.toBe(secret);
    expect((await app.mutation("notifications.delete", { workspaceSlug: ws.slug, channelId: slack.body.result!.data.channel.id }, { cookie: owner.cookie })).status).toBe(200);

    const audit = await app.db.select().from(auditLog).where(and(eq(auditLog.workspaceId, ws.workspaceId)));
    const actions = audit.map((a) => a.action).filter((a) => a.startsWith("notification_channel."));
    expect(actions.sort()).toEqual(["notification_channel.create", "notification_channel.create", "notification_channel.delete", "notification_channel.rotate_secret", "notification_channel.test", "notification_channel.test", "notification_channel.test", "notification_channel.update"]);
    const auditText = JSON.stringify(audit);
    expect(auditText).not.toContain(secret);
    expect(auditText).not.toContain(rotated.body.result!.data.secret);
    expect(auditText).not.toContain("SECRETPART");
  });
});
