/**
 * Tool-call approvals (SPEC 7.2): guard.check waits for a person's decision made through the API
 * or the dashboard, holding no transaction or connection while it waits.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { approval, auditLog } from "@/db/schema";
import { openDatabase, type Database } from "@/db/client";
import { localWaiterCount } from "@/server/services/approval-waiters";

const URL_V1 = "https://api.example.com/v1/users";
const KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1";

describe.each(DATABASE_KINDS)("tool-call approvals on %s", (kind) => {
  const app = useTestApp(kind);

  /** A workspace whose v1 key is escalated (guard.check answers `ask` for it). */
  async function escalatedWorkspace(target: TestApp = app) {
    const owner = await target.signUp(`owner-${uid()}@example.com`);
    const ws = await target.seedWorkspace({ ownerUserId: owner.userId });
    const s = uid("s");
    await target.mutation("ingest.events", { events: [{ type: "session.start", id: uid(), sessionId: s, agent: "crawler", model: "gpt-x" }] }, { key: ws.key });
    const failures = [1, 2, 3].map(() => result(s, "http_request", { url: URL_V1 }, { success: false, httpStatus: 503, error: "Service Unavailable" }));
    const res = await target.mutation("ingest.events", { events: failures }, { key: ws.key });
    expect(res.body.result!.data.effects.some((e: any) => e.type === "escalated")).toBe(true);
    return { ...ws, cookie: owner.cookie, sessionId: s };
  }

  const guardInput = (sessionId: string, callId: string, extra: Record<string, unknown> = {}) => ({
    id: uid(),
    sessionId,
    callId,
    toolName: "http_request",
    args: { url: URL_V1, headers: { authorization: "Bearer sk-live-abcdefghijklmnopqrstuvwxyz012345" } },
    ...extra,
  });
  const guard = (key: string, input: unknown, target: TestApp = app) => target.mutation("guard.check", input, { key });
  const resolve = (key: string, input: Record<string, unknown>, target: TestApp = app) => target.mutation("approvals.resolve", input, { key });
  const pendingFor = async (workspaceId: string, callId: string) => {
    for (let i = 0; i < 200; i++) {
      const [row] = await app.db.select().from(approval).where(and(eq(approval.workspaceId, workspaceId), eq(approval.callId, callId)));
      if (row) return row;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no approval for ${callId}`);
  };

  it("without waitForApprovalSeconds: ask, no approval; with it and a time-out: one pending approval per call id, with a redacted preview", async () => {
    const ws = await escalatedWorkspace();
    const plain = await guard(ws.key, guardInput(ws.sessionId, uid("c")));
    expect(plain.body.result!.data).toMatchObject({ decision: "ask", approvalId: null, reason: "3 failures in 3600s" });

    const callId = uid("c");
    const first = await guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 0.2 }));
    const out = first.body.result!.data;
    expect(out).toMatchObject({ decision: "ask", failureKey: KEY_V1, reason: "3 failures in 3600s" });
    expect(out.approvalId).toEqual(expect.any(String));
    expect(out.effects).toContainEqual({ type: "approval_pending", approvalId: out.approvalId, failureKey: KEY_V1, callId, sessionId: ws.sessionId, toolName: "http_request", reason: out.reason });

    const again = await guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 0.1 }));
    expect(again.body.result!.data).toMatchObject({ decision: "ask", approvalId: out.approvalId });
    expect(again.body.result!.data.effects.filter((e: any) => e.type === "approval_pending")).toHaveLength(0);

    const rows = await app.db.select().from(approval).where(and(eq(approval.workspaceId, ws.workspaceId), eq(approval.kind, "tool_call")));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "pending", sessionId: ws.sessionId, callId, agent: "crawler", model: "gpt-x", reason: "3 failures in 3600s" });
    expect(rows[0].argsPreview).toContain("api.example.com");
    expect(rows[0].argsPreview).not.toContain("sk-live-abcdefghijklmnopqrstuvwxyz012345");

    const list = await app.query("approvals.list", { status: "pending" }, { key: ws.key });
    expect(list.body.result!.data.approvals).toContainEqual(
      expect.objectContaining({ id: out.approvalId, kind: "tool_call", callId, sessionId: ws.sessionId, agent: "crawler", model: "gpt-x", toolName: "http_request" }),
    );
  });

  it("waitForApprovalSeconds is validated (0–120)", async () => {
    const ws = await escalatedWorkspace();
    const res = await guard(ws.key, guardInput(ws.sessionId, uid("c"), { waitForApprovalSeconds: 121 }));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain("waitForApprovalSeconds");
  });

  it("approve once releases the waiting call within a second; the next call asks again", async () => {
    const ws = await escalatedWorkspace();
    const callId = uid("c");
    const started = Date.now();
    const waiting = guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 30 }));
    const pending = await pendingFor(ws.workspaceId, callId);
    const decidedAt = Date.now();
    const res = await resolve(ws.key, { approvalId: pending.id, decision: "approve" });
    expect(res.status).toBe(200);
    const out = (await waiting).body.result!.data;
    expect(Date.now() - decidedAt).toBeLessThan(1000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(out).toMatchObject({ decision: "allow", approvalId: pending.id, reason: null });

    const next = await guard(ws.key, guardInput(ws.sessionId, uid("c")));
    expect(next.body.result!.data).toMatchObject({ decision: "ask", approvalId: null });
    const audit = await app.db.select().from(auditLog).where(and(eq(auditLog.workspaceId, ws.workspaceId), eq(auditLog.action, "approval.tool_call.approve")));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: "api_key", after: { status: "approved", scope: "once", comment: null } });
  });

  it("approve for the session: this key in this session is allowed; another session still asks; the grant ends with the session", async () => {
    const ws = await escalatedWorkspace();
    const callId = uid("c");
    const waiting = guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 30 }));
    const pending = await pendingFor(ws.workspaceId, callId);
    // From the dashboard, as a signed-in member.
    const res = await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId: pending.id, decision: "approve", scope: "session" }, { cookie: ws.cookie });
    expect(res.status).toBe(200);
    expect((await waiting).body.result!.data).toMatchObject({ decision: "allow" });

    const same = await guard(ws.key, guardInput(ws.sessionId, uid("c"), { waitForApprovalSeconds: 5 }));
    expect(same.body.result!.data).toMatchObject({ decision: "allow", approvalId: pending.id });

    const other = await guard(ws.key, guardInput(uid("s"), uid("c")));
    expect(other.body.result!.data).toMatchObject({ decision: "ask", approvalId: null });

    const audit = await app.db.select().from(auditLog).where(and(eq(auditLog.workspaceId, ws.workspaceId), eq(auditLog.action, "approval.tool_call.approve")));
    expect(audit[0]).toMatchObject({ actorType: "user", after: { status: "approved", scope: "session" } });

    await app.mutation("ingest.events", { events: [{ type: "session.end", id: uid(), sessionId: ws.sessionId }] }, { key: ws.key });
    const ended = await guard(ws.key, guardInput(ws.sessionId, uid("c")));
    expect(ended.body.result!.data).toMatchObject({ decision: "ask", approvalId: null });
  });

  it("deny requires a comment (400 naming `comment`); the comment is the reason the agent reads", async () => {
    const ws = await escalatedWorkspace();
    const callId = uid("c");
    const waiting = guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 30 }));
    const pending = await pendingFor(ws.workspaceId, callId);

    const bare = await resolve(ws.key, { approvalId: pending.id, decision: "deny" });
    expect(bare.status).toBe(400);
    expect(JSON.stringify(bare.body.error)).toContain("comment");
    const blank = await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId: pending.id, decision: "deny", comment: "   " }, { cookie: ws.cookie });
    expect(blank.status).toBe(400);
    expect(JSON.stringify(blank.body.error)).toContain("comment");

    const res = await resolve(ws.key, { approvalId: pending.id, decision: "deny", comment: "The v1 API is being migrated; use v2." });
    expect(res.status).toBe(200);
    expect((await waiting).body.result!.data).toMatchObject({ decision: "deny", reason: "The v1 API is being migrated; use v2.", approvalId: pending.id });
    const audit = await app.db.select().from(auditLog).where(and(eq(auditLog.workspaceId, ws.workspaceId), eq(auditLog.action, "approval.tool_call.deny")));
    expect(audit).toHaveLength(1);
  });

  it("time-out: ask with the approval id, still pending; a later decision is returned by guard.check (same call id) and approvals.get", async () => {
    const ws = await escalatedWorkspace();
    const agentKey = await app.seedWorkspace({ scope: "agent" });
    const callId = uid("c");
    const started = Date.now();
    const timedOut = (await guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 0.5 }))).body.result!.data;
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(timedOut).toMatchObject({ decision: "ask" });
    expect(timedOut.approvalId).toEqual(expect.any(String));
    expect(localWaiterCount(app.db, timedOut.approvalId)).toBe(0);

    const before = await app.query("approvals.get", { approvalId: timedOut.approvalId }, { key: ws.key });
    expect(before.body.result!.data).toMatchObject({ id: timedOut.approvalId, kind: "tool_call", status: "pending", comment: null, callId });

    await resolve(ws.key, { approvalId: timedOut.approvalId, decision: "deny", comment: "Not on a Friday." });
    const later = await guard(ws.key, guardInput(ws.sessionId, callId));
    expect(later.body.result!.data).toMatchObject({ decision: "deny", reason: "Not on a Friday.", approvalId: timedOut.approvalId });
    const after = await app.query("approvals.get", { approvalId: timedOut.approvalId }, { key: ws.key });
    expect(after.body.result!.data).toMatchObject({ status: "denied", comment: "Not on a Friday." });

    // Agent scope may read it; another workspace's key gets 404.
    const foreign = await app.query("approvals.get", { approvalId: timedOut.approvalId }, { key: agentKey.key });
    expect(foreign.status).toBe(404);
  });

  it("approvals.get works with an agent-scope key", async () => {
    const owner = await app.signUp(`owner-${uid()}@example.com`);
    const ws = await app.seedWorkspace({ ownerUserId: owner.userId, scope: "agent" });
    const s = uid("s");
    await app.mutation("ingest.events", { events: [1, 2, 3].map(() => result(s, "http_request", { url: URL_V1 }, { success: false, httpStatus: 503 })) }, { key: ws.key });
    const out = (await guard(ws.key, guardInput(s, uid("c"), { waitForApprovalSeconds: 0.1 }))).body.result!.data;
    const got = await app.query("approvals.get", { approvalId: out.approvalId }, { key: ws.key });
    expect(got.status).toBe(200);
    expect(got.body.result!.data).toMatchObject({ status: "pending", kind: "tool_call" });
  });

  it("other requests are served while a call waits (the wait holds no connection)", async () => {
    const target = kind === "postgres" ? await TestApp.create(await openDatabase({ url: app.database.url!, poolSize: 1 })) : app;
    try {
      const ws = await escalatedWorkspace(target);
      const callId = uid("c");
      const waiting = guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 30 }), target);
      const pending = await pendingFor(ws.workspaceId, callId);
      for (let i = 0; i < 3; i++) {
        const t = Date.now();
        const st = await target.query("reliability.status", { toolName: "http_request" }, { key: ws.key });
        expect(st.status).toBe(200);
        const other = await guard(ws.key, guardInput(ws.sessionId, uid("c"), { args: { url: "https://api.example.com/v2/x" } }), target);
        expect(other.body.result!.data.decision).toBe("allow");
        expect(Date.now() - t).toBeLessThan(5000);
      }
      await resolve(ws.key, { approvalId: pending.id, decision: "approve" }, target);
      expect((await waiting).body.result!.data.decision).toBe("allow");
    } finally {
      if (target !== app) await target.database.close();
    }
  });

  // PostgreSQL only: PGlite has a single client per data directory.
  if (kind === "postgres")
    it("a decision through one database client releases a waiter of another within a second (NOTIFY)", async () => {
    const second: Database = await openDatabase({ url: app.database.url!, poolSize: 2 });
    const other = await TestApp.create(second);
    try {
      const ws = await escalatedWorkspace();
      // A first wait that times out puts the second client's LISTEN in place, so the wait below
      // cannot be answered by its own first look at the approval.
      await guard(ws.key, guardInput(ws.sessionId, uid("c"), { waitForApprovalSeconds: 0.3 }), other);
      const callId = uid("c");
      const waiting = guard(ws.key, guardInput(ws.sessionId, callId, { waitForApprovalSeconds: 30 }), other);
      const pending = await pendingFor(ws.workspaceId, callId);
      // The waiter is registered on the second client only, and past its first look.
      for (let i = 0; i < 100 && localWaiterCount(second.db, pending.id) === 0; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 300));
      expect(localWaiterCount(second.db, pending.id)).toBe(1);
      expect(localWaiterCount(app.db, pending.id)).toBe(0);
      const decidedAt = Date.now();
      await resolve(ws.key, { approvalId: pending.id, decision: "approve" });
      expect((await waiting).body.result!.data.decision).toBe("allow");
      expect(Date.now() - decidedAt).toBeLessThan(1000);
      expect(localWaiterCount(second.db, pending.id)).toBe(0);
    } finally {
      await second.close();
    }
  });
});
