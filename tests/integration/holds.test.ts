/**
 * Operator controls (SPEC 4.6, 7.6): holds of a session, an agent and the workspace (the kill
 * switch), manual trust states, messages and pending nudges — through the real HTTP handler and
 * hooks, on a real database, with the roles and audit rows they come with.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { and, eq } from "drizzle-orm";
import * as schema from "@/db/schema";
import { auditLog, keyState, pendingNudge } from "@/db/schema";
import type { Database, Db } from "@/db/client";
import { handleHookRequest } from "@/server/agent-api/hooks";
import { createApiKey } from "@/server/services/api-keys";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { deliverPendingNudges, queueOtlpNudges } from "@/server/services/pending-nudges";
import { DATABASE_KINDS } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-hooks");
const capture = (name: string): Record<string, any> => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")).body;

const check = (sessionId: string, toolName = "read_file", args: Record<string, unknown> = { path: `/src/${uid("f")}.ts` }) => ({ id: uid(), sessionId, callId: uid("c"), toolName, args });
const start = (sessionId: string, agent: string) => ({ type: "session.start", id: uid(), sessionId, agent });

describe.each(DATABASE_KINDS)("operator controls on %s", (kind) => {
  const app = useTestApp(kind);
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let agentKey: string;
  let member: { cookie: string };
  let viewer: { cookie: string };

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    agentKey = (await createApiKey(app.db, { workspaceId: ws.workspaceId, organizationId: ws.organizationId, name: "agent", scope: "agent", actor: SYSTEM_ACTOR })).value;
    const m = await app.signUp(`member-${kind}-${uid()}@example.com`);
    await app.addMember(ws.organizationId, m.userId, "member");
    member = m;
    const v = await app.signUp(`viewer-${kind}-${uid()}@example.com`);
    await app.addMember(ws.organizationId, v.userId, "viewer");
    viewer = v;
  });

  const guard = async (c: ReturnType<typeof check>, key = ws.key) => {
    const res = await app.mutation("guard.check", c, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const ok = async (procedure: string, input: unknown, auth: { key?: string; cookie?: string } = { key: ws.key }) => {
    const res = await app.mutation(procedure, input, auth);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const audits = (action: string) =>
    app.db.select().from(auditLog).where(and(eq(auditLog.organizationId, ws.organizationId), eq(auditLog.action, action)));
  const ingest = (events: unknown[]) => ok("ingest.events", { events });

  it("sessions.pause: the next check answers pause with the reason; sessions.get shows the hold; resume lifts it", async () => {
    const s = uid("s");
    expect((await guard(check(s))).decision).toBe("allow");
    expect((await guard(check(s))).decision).toBe("allow"); // decided from memory from now on
    const paused = await ok("sessions.pause", { sessionId: s, reason: "Reviewing the migration" });
    expect(paused.held).toMatchObject({ scope: "session", reason: "Reviewing the migration" });
    expect(await guard(check(s))).toMatchObject({ decision: "pause", reason: "Reviewing the migration" });
    const view = (await app.query("sessions.get", { sessionId: s }, { key: ws.key })).body.result!.data;
    expect(view).toMatchObject({ paused: true, pauseReason: "Reviewing the migration", status: "paused", held: { scope: "session", reason: "Reviewing the migration" } });
    expect(view.held.by).toMatch(/^vgl_/);
    expect(await audits("session.pause")).toHaveLength(1);
    await ok("sessions.resume", { sessionId: s });
    expect((await guard(check(s))).decision).toBe("allow");
    expect((await app.query("sessions.get", { sessionId: s }, { key: ws.key })).body.result!.data).toMatchObject({ held: null, status: "active" });
  });

  it("agents.pause holds every session of the agent, present and future; agents.resume delivers guidance once", async () => {
    const agent = `coder-${uid()}`;
    const [a, b, other] = [uid("s"), uid("s"), uid("s")];
    await ingest([start(a, agent), start(other, "reviewer")]);
    expect((await guard(check(a))).decision).toBe("allow");
    expect((await guard(check(a))).decision).toBe("allow");
    const hold = await ok("agents.pause", { agent, reason: "Runaway costs" });
    expect(hold).toMatchObject({ agent, scope: "agent", reason: "Runaway costs" });
    const paused = await guard(check(a));
    expect(paused.decision).toBe("pause");
    expect(paused.reason).toContain("Runaway costs");
    await ingest([start(b, agent)]); // a session of the agent begun after the hold
    expect((await guard(check(b))).decision).toBe("pause");
    expect((await guard(check(other))).decision).toBe("allow");
    expect((await app.query("sessions.get", { sessionId: b }, { key: ws.key })).body.result!.data.held).toMatchObject({ scope: "agent", reason: "Runaway costs" });
    const holds = (await app.query("workspace.holds", undefined, { key: ws.key })).body.result!.data;
    expect(holds.workspace).toBeNull();
    expect(holds.agents).toEqual([expect.objectContaining({ agent, scope: "agent", reason: "Runaway costs", by: expect.stringMatching(/^vgl_/) })]);

    const resumed = await ok("agents.resume", { agent, guidance: "Stay under 20 calls" });
    expect(resumed.sessionsGuided).toBe(2);
    const first = await guard(check(a));
    expect(first.decision).toBe("allow");
    expect(first.effects).toEqual([expect.objectContaining({ type: "nudge", nudgeType: "guidance", message: "Stay under 20 calls", sessionId: a })]);
    expect((await guard(check(a))).effects).toEqual([]); // once
    expect((await guard(check(other))).effects).toEqual([]);
    expect(await audits("agent.pause")).toHaveLength(1);
    expect((await audits("agent.resume"))[0]).toMatchObject({ target: agent, after: { guidance: "Stay under 20 calls" } });
    expect((await app.mutation("agents.resume", { agent }, { key: ws.key })).status).toBe(400); // not held
  });

  it("workspace.pause (the kill switch) pauses every session, new ones included, until workspace.resume", async () => {
    const own = await app.seedWorkspace({ ownerUserId: ws.ownerUserId });
    const s = uid("s");
    const g = (c: ReturnType<typeof check>) => app.mutation("guard.check", c, { key: own.key }).then((r) => r.body.result!.data);
    expect((await g(check(s))).decision).toBe("allow");
    expect((await g(check(s))).decision).toBe("allow");
    await ok("workspace.pause", { reason: "Incident 42" }, { key: own.key });
    expect(await g(check(s))).toMatchObject({ decision: "pause" });
    expect((await g(check(s))).reason).toContain("Incident 42");
    expect((await g(check(uid("new")))).decision).toBe("pause");
    expect((await app.query("workspace.holds", undefined, { key: own.key })).body.result!.data.workspace).toMatchObject({ scope: "workspace", reason: "Incident 42" });
    await ok("workspace.resume", {}, { key: own.key });
    expect((await g(check(s))).decision).toBe("allow");
    expect((await app.query("workspace.holds", undefined, { key: own.key })).body.result!.data.workspace).toBeNull();
  });

  it("the kill switch pauses a real Claude Code PreToolUse: the tool does not run and the agent is told to stop", async () => {
    const own = await app.seedWorkspace({ ownerUserId: ws.ownerUserId, slug: `hooks-${uid().toLowerCase().replace(/[^a-z0-9]/g, "")}`.slice(0, 40) });
    const hook = async (body: unknown) => {
      const req = new Request("http://vigil.test/api/hooks/claude-code", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${own.key}` }, body: JSON.stringify(body) });
      const res = await handleHookRequest(req, app.runtime, "claude-code");
      const text = await res.text();
      return text ? JSON.parse(text) : null;
    };
    const sid = uid("cc");
    expect(await hook({ ...capture("PreToolUse.Bash"), session_id: sid, tool_use_id: "toolu_before" })).toBeNull();
    await ok("workspace.pause", { reason: "Stop everything" }, { key: own.key });
    const answer = await hook({ ...capture("PreToolUse.Bash"), session_id: sid, tool_use_id: "toolu_held" });
    expect(answer.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain("Vigil paused this session: Stop everything");
    const batch = await hook({ ...capture("PostToolBatch"), session_id: sid });
    expect(batch).toMatchObject({ continue: false });
    const prompt = await hook({ ...capture("UserPromptSubmit"), session_id: sid, prompt_id: "p-held" });
    expect(prompt).toMatchObject({ decision: "block" });
    await ok("workspace.resume", { guidance: "Carry on, carefully" }, { key: own.key });
    const after = await hook({ ...capture("PreToolUse.Bash"), session_id: sid, tool_use_id: "toolu_after" });
    expect(after.hookSpecificOutput.permissionDecision).toBeUndefined();
    expect(after.hookSpecificOutput.additionalContext).toContain("Carry on, carefully");
  });

  it("keys.setState: a manually escalated key asks and does not recover by itself; keys.reset returns it to trusted", async () => {
    await ok("config.put", { tool_rules: { http_request: { block_threshold: 2 } } });
    const s = uid("s");
    const url = `https://api.example.com/${uid("p")}`;
    const c = check(s, "http_request", { url });
    const failureKey = (await guard(c)).failureKey;
    const set = await ok("keys.setState", { failureKey, state: "escalated", reason: "Suspicious writes" });
    expect(set).toMatchObject({ failureKey, state: "escalated", manual: true, reason: "Suspicious writes" });
    const asked = await guard(check(s, "http_request", { url }));
    expect(asked).toMatchObject({ decision: "ask", state: "escalated", reason: "Suspicious writes" });
    // Many successes, hours later: an engine escalation would expire and recover; a manual one stays.
    const later = Date.now() + 5 * 3600_000;
    const successes = Array.from({ length: 6 }, (_, i) => ({ ...result(s, "http_request", { url }, { success: true, httpStatus: 200 }), ts: later - 60_000 * (6 - i) }));
    await ingest(successes.map((e) => ({ ...e, ts: Math.min(e.ts, Date.now() + 60_000) })));
    const [row] = await app.db.select().from(keyState).where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.failureKey, failureKey)));
    expect(row).toMatchObject({ state: "escalated", manual: true });
    expect((await guard(check(s, "http_request", { url }))).decision).toBe("ask");
    // Failures past the rule's block threshold block an escalation the engine made; not one a person set.
    const failed = () => result(s, "http_request", { url }, { success: false, httpStatus: 503, error: "Service Unavailable" });
    await ingest([failed(), failed(), failed(), failed()]);
    const [afterFailures] = await app.db.select().from(keyState).where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.failureKey, failureKey)));
    expect(afterFailures).toMatchObject({ state: "escalated", manual: true });
    expect((await audits("failure_key.set_state")).some((a) => a.target === failureKey)).toBe(true);
    await ok("keys.reset", { failureKey });
    const [reset] = await app.db.select().from(keyState).where(and(eq(keyState.workspaceId, ws.workspaceId), eq(keyState.failureKey, failureKey)));
    expect(reset).toMatchObject({ state: "trusted", manual: false });
    expect((await guard(check(s, "http_request", { url }))).decision).toBe("allow");
    await ok("config.put", {});
  });

  it("keys.setState blocks a whole tool (@tool:) never seen before: every key of the tool answers as blocked", async () => {
    const tool = `deploy_${uid().replace(/[^a-z0-9]/gi, "")}`;
    await ok("keys.setState", { failureKey: `@tool:${tool}`, state: "blocked", reason: "Freeze" });
    const answer = await guard(check(uid("s"), tool, { target: "prod" }));
    expect(answer).toMatchObject({ state: "blocked" });
    expect(["deny", "ask"]).toContain(answer.decision);
    await ok("keys.reset", { failureKey: `@tool:${tool}` });
    expect((await guard(check(uid("s"), tool, { target: "prod" }))).decision).toBe("allow");
  });

  it("sessions.message reaches the agent once, on its next guard.check; an ingest.events answer delivers too", async () => {
    const s = uid("s");
    expect((await guard(check(s))).decision).toBe("allow");
    expect((await guard(check(s))).decision).toBe("allow");
    await ok("sessions.message", { sessionId: s, text: "Use the staging database" });
    const next = await guard(check(s));
    expect(next.effects).toEqual([{ type: "nudge", nudgeType: "guidance", message: "Use the staging database", patternType: null, sessionId: s }]);
    expect((await guard(check(s))).effects).toEqual([]);
    await ok("sessions.message", { sessionId: s, text: "And write tests" });
    const answer = await ingest([result(s, "read_file", { path: "/x" }, { success: true })]);
    expect(answer.effects).toEqual([expect.objectContaining({ type: "nudge", nudgeType: "guidance", message: "And write tests" })]);
    expect((await guard(check(s))).effects).toEqual([]);
    const rows = await app.db.select().from(pendingNudge).where(and(eq(pendingNudge.workspaceId, ws.workspaceId), eq(pendingNudge.sessionId, s)));
    expect(rows.every((r) => r.deliveredAt !== null)).toBe(true);
    expect((await audits("session.message")).filter((a) => a.target === s)).toHaveLength(2);
  });

  it("a nudge from OTLP (an answer without effects) is delivered on the next check, once", async () => {
    const s = uid("s");
    expect((await guard(check(s))).decision).toBe("allow");
    await app.db.transaction((tx) =>
      queueOtlpNudges(tx, ws.workspaceId, [{ type: "nudge", nudgeType: "direct", message: "You are in a loop", patternType: "repetitive_calls", sessionId: s }]),
    );
    expect((await guard(check(s))).effects).toEqual([{ type: "nudge", nudgeType: "direct", message: "You are in a loop", patternType: "repetitive_calls", sessionId: s }]);
    expect((await guard(check(s))).effects).toEqual([]);
    expect(await app.db.transaction((tx) => deliverPendingNudges(tx, ws.workspaceId, [s]))).toEqual([]);
  });

  it("bad inputs are 400 naming the field, and write nothing", async () => {
    const cases: [string, unknown, string][] = [
      ["sessions.pause", { sessionId: "x" }, "reason"],
      ["sessions.pause", { sessionId: "x", reason: "   " }, "reason"],
      ["sessions.message", { sessionId: "x", text: "" }, "text"],
      ["sessions.message", { sessionId: "x", text: "a".repeat(4097) }, "text"],
      ["agents.pause", { agent: "", reason: "r" }, "agent"],
      ["agents.resume", { agent: "a", guidance: 5 }, "guidance"],
      ["workspace.pause", {}, "reason"],
      ["keys.setState", { failureKey: "k", state: "trusted", reason: "r" }, "state"],
      ["keys.setState", { failureKey: "@other:x", state: "blocked", reason: "r" }, "failureKey"],
      ["keys.setState", { failureKey: "@tool:", state: "blocked", reason: "r" }, "failureKey"],
    ];
    const before = (await app.db.select().from(auditLog).where(eq(auditLog.organizationId, ws.organizationId))).length;
    for (const [procedure, input, field] of cases) {
      const res = await app.mutation(procedure, input, { key: ws.key });
      expect(res.status, `${procedure} ${JSON.stringify(input)}`).toBe(400);
      expect(res.body.error!.message, procedure).toContain(field);
    }
    expect((await app.mutation("sessions.pause", { sessionId: "no-such", reason: "r" }, { key: ws.key })).status).toBe(404);
    expect((await app.mutation("sessions.message", { sessionId: "no-such", text: "hi" }, { key: ws.key })).status).toBe(404);
    expect((await app.db.select().from(auditLog).where(eq(auditLog.organizationId, ws.organizationId))).length).toBe(before);
  });

  it("roles: an agent-scope key gets 403; members act in the dashboard; viewers cannot", async () => {
    const s = uid("s");
    await guard(check(s));
    for (const [procedure, input] of [
      ["sessions.pause", { sessionId: s, reason: "r" }],
      ["sessions.message", { sessionId: s, text: "t" }],
      ["agents.pause", { agent: "a", reason: "r" }],
      ["agents.resume", { agent: "a" }],
      ["workspace.pause", { reason: "r" }],
      ["workspace.resume", {}],
      ["keys.setState", { failureKey: "k|x", state: "blocked", reason: "r" }],
    ] as const) {
      expect((await app.mutation(procedure, input, { key: agentKey })).status, procedure).toBe(403);
    }
    expect((await app.query("workspace.holds", undefined, { key: agentKey })).status).toBe(403);

    const slug = ws.slug;
    const dashboard: [string, unknown][] = [
      ["wsConfig.sessions.pause", { workspaceSlug: slug, sessionId: s, reason: "From the dashboard" }],
      ["wsConfig.sessions.message", { workspaceSlug: slug, sessionId: s, text: "Hello" }],
      ["ws.holds.pauseAgent", { workspaceSlug: slug, agent: "dash-agent", reason: "r" }],
      ["ws.holds.resumeAgent", { workspaceSlug: slug, agent: "dash-agent" }],
      ["ws.keys.setState", { workspaceSlug: slug, failureKey: "dash|x", state: "escalated", reason: "r" }],
    ];
    for (const [procedure, input] of dashboard) {
      const refused = await app.mutation(procedure, input, { cookie: viewer.cookie });
      expect(refused.status, procedure).toBe(403);
      await ok(procedure, input, { cookie: member.cookie });
    }
    expect((await app.query("ws.holds.list", { workspaceSlug: slug }, { cookie: viewer.cookie })).status).toBe(200);
    const memberAudit = await audits("session.pause");
    expect(memberAudit.some((a) => a.actorType === "user" && a.target === s)).toBe(true);
    await ok("sessions.resume", { sessionId: s });
  });

  if (kind !== "postgres") return;

  describe("two app instances on one PostgreSQL", () => {
    let other: { app: TestApp; database: Database };
    beforeAll(async () => {
      const pg = postgres(app.database.url!, { onnotice: () => {}, max: 2 });
      const database: Database = { db: drizzle(pg, { schema }) as unknown as Db, kind: "postgres", pg, url: app.database.url!, close: () => pg.end({ timeout: 5 }) };
      other = { app: await TestApp.create(database), database };
    });
    afterAll(async () => {
      await other.database.close();
    });

    it("a hold set on one instance is seen by the other's next check, though it decides from memory", async () => {
      const own = await app.seedWorkspace({ ownerUserId: ws.ownerUserId });
      const s = uid("s");
      const g = async (c: ReturnType<typeof check>) => (await other.app.mutation("guard.check", c, { key: own.key })).body.result!.data;
      for (let i = 0; i < 3; i++) expect((await g(check(s))).decision).toBe("allow");
      await ok("workspace.pause", { reason: "Kill switch" }, { key: own.key });
      expect(await g(check(s))).toMatchObject({ decision: "pause" });
      await ok("workspace.resume", {}, { key: own.key });
      expect((await g(check(s))).decision).toBe("allow");
      expect((await g(check(s))).decision).toBe("allow");
      await ok("agents.pause", { agent: "default", reason: "Agent hold" }, { key: own.key });
      expect((await g(check(s))).reason).toContain("Agent hold");
      await ok("agents.resume", { agent: "default" }, { key: own.key });
      expect((await g(check(s))).decision).toBe("allow");
      await ok("sessions.pause", { sessionId: s, reason: "Session hold" }, { key: own.key });
      expect(await g(check(s))).toMatchObject({ decision: "pause", reason: "Session hold" });
      await ok("sessions.resume", { sessionId: s }, { key: own.key });
      await ok("sessions.message", { sessionId: s, text: "From the other instance" }, { key: own.key });
      expect((await g(check(s))).effects).toEqual([expect.objectContaining({ message: "From the other instance" })]);
      expect((await g(check(s))).effects).toEqual([]);
    });
  });
});
