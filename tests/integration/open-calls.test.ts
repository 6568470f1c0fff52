/**
 * Open calls and idle sessions (SPEC 5.1, 7.6): the sweep finds a call with no result after
 * open_call_seconds, marks it once however many sweepers run, and the session's next answer carries
 * the `hung_call` pattern effect and its nudge; sessions.get shows `openCalls` and `status`, and an
 * idle session's next event makes it active. Through the real HTTP handler, PGlite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { dailyNudgeStat, nudge, openCall, patternDetection, pendingNudge } from "@/db/schema";
import { startOpenCallSweep, sweepOpenCalls, type SweepWatermarks } from "@/server/ingest/open-call-sweep";

const MIN = 60_000;

describe.each(DATABASE_KINDS)("open calls and idle sessions on %s", (kind) => {
  const app = useTestApp(kind);

  const ok = async (procedure: string, input: unknown, key: string) => {
    const res = await app.mutation(procedure, input, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const view = async (key: string, sessionId: string) => {
    const res = await app.query("sessions.get", { sessionId }, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  /** A request holding a session's row until the returned function is called (and awaited). */
  const holdSessionRow = async (workspaceId: string, sessionId: string): Promise<() => Promise<void>> => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = app.db.transaction(async (tx) => {
      await tx.execute(sql`select 1 from agent_session where workspace_id = ${workspaceId} and session_id = ${sessionId} for update`);
      locked();
      await released;
    });
    await isLocked;
    return async () => {
      release();
      await holder;
    };
  };
  const hung = (effects: any[]) => effects.filter((e) => e.patternType === "hung_call");
  const iso = (ms: number) => new Date(ms).toISOString();
  const callEv = (sessionId: string, callId: string, toolName: string, ts: number) => ({ type: "tool.call", id: uid(), sessionId, callId, toolName, args: { n: callId }, ts: iso(ts) });
  const resultEv = (sessionId: string, callId: string, toolName: string, ts: number) => ({
    type: "tool.result",
    id: uid(),
    sessionId,
    callId,
    toolName,
    args: { n: callId },
    success: true,
    result: { ok: callId },
    ts: iso(ts),
  });

  it("a call without a result is open after open_call_seconds, raised once, and the next answer carries hung_call", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    const t0 = Date.now() - 5 * MIN;
    await ingestAccepted(app, ws.key, [
      { type: "session.start", id: uid(), sessionId: s, agent: "builder", ts: iso(t0) },
      callEv(s, "c-deploy", "deploy", t0 + 1000),
      callEv(s, "c-read", "read_file", t0 + 2000),
      resultEv(s, "c-read", "read_file", t0 + 3000),
    ]);

    // Two checks first: from here on guard.check decides from the session held in memory.
    for (const path of ["/m1", "/m2"]) {
      const r = await ok("guard.check", { id: uid(), sessionId: s, callId: uid("c"), toolName: "read_file", args: { path } }, ws.key);
      expect(hung(r.effects)).toEqual([]);
    }
    // Not a millisecond early: 600 s after the call it is open, not before.
    expect((await sweepOpenCalls(app.db, t0 + 1000 + 600_000 - 1)).raised.filter((r) => r.startsWith(s))).toEqual([]);
    expect((await view(ws.key, s)).openCalls).toEqual([]);
    const at = t0 + 1000 + 600_000;
    expect((await sweepOpenCalls(app.db, at)).raised).toContain(`${s}/c-deploy`);
    expect((await sweepOpenCalls(app.db, at + MIN)).raised.filter((r) => r.startsWith(s))).toEqual([]);

    const v = await view(ws.key, s);
    expect(v.openCalls).toEqual([{ callId: "c-deploy", toolName: "deploy", since: iso(t0 + 1000) }]);
    expect(v.status).toBe("active");

    // The next answer (a guard.check) carries the pattern and its nudge, once.
    const first = await ok("guard.check", { id: uid(), sessionId: s, callId: uid("c"), toolName: "read_file", args: { path: "/a" } }, ws.key);
    expect(hung(first.effects)).toEqual([
      { type: "pattern", patternType: "hung_call", severity: "minor", count: 1, sessionId: s, toolSequence: ["deploy"] },
      expect.objectContaining({ type: "nudge", nudgeType: "gentle", patternType: "hung_call", sessionId: s, message: expect.stringContaining("deploy") }),
    ]);
    const second = await ok("guard.check", { id: uid(), sessionId: s, callId: uid("c"), toolName: "read_file", args: { path: "/b" } }, ws.key);
    expect(hung(second.effects)).toEqual([]);
    const detections = await app.db.select().from(patternDetection).where(and(eq(patternDetection.workspaceId, ws.workspaceId), eq(patternDetection.sessionId, s)));
    expect(detections.map((d) => [d.patternType, d.severity])).toEqual([["hung_call", "minor"]]);
    const sent = await app.db.select().from(nudge).where(and(eq(nudge.workspaceId, ws.workspaceId), eq(nudge.sessionId, s)));
    expect(sent.map((n) => [n.patternType, n.nudgeType])).toEqual([["hung_call", "gentle"]]);
    // Counted in the Patterns page's nudge roll-up as a batch's nudges are.
    const rolled = await app.db.select().from(dailyNudgeStat).where(and(eq(dailyNudgeStat.workspaceId, ws.workspaceId), eq(dailyNudgeStat.patternType, "hung_call")));
    expect(rolled.map((r) => [r.day, r.nudges, r.sent, r.effective])).toEqual([[new Date(at).toISOString().slice(0, 10), 1, 1, 0]]);

    // The result arrives: no longer open, and the sweep forgets the mark.
    await ingestAccepted(app, ws.key, [resultEv(s, "c-deploy", "deploy", Date.now())]);
    expect((await view(ws.key, s)).openCalls).toEqual([]);
    // (Sweeping before the checks above are due: they have no results either.)
    await sweepOpenCalls(app.db, Date.now() + MIN);
    expect(await app.db.select().from(openCall).where(eq(openCall.workspaceId, ws.workspaceId))).toEqual([]);
  });

  it("an ingest.events answer delivers it too, and a session setting changes when a call is open", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    const t0 = Date.now() - 2 * MIN;
    await ingestAccepted(app, ws.key, [
      { type: "session.start", id: uid(), sessionId: s, agent: "builder", settings: { openCallSeconds: 60 }, ts: iso(t0) },
      callEv(s, "c-slow", "fetch_report", t0 + 1000),
    ]);
    expect((await sweepOpenCalls(app.db)).raised).toContain(`${s}/c-slow`);
    const answer = await ingestAccepted(app, ws.key, [{ type: "model.text", id: uid(), sessionId: s, text: "Still waiting for the report." }]);
    expect(hung(answer.effects).map((e) => e.type)).toEqual(["pattern", "nudge"]);
    const again = await ingestAccepted(app, ws.key, [{ type: "model.text", id: uid(), sessionId: s, text: "Waiting." }]);
    expect(hung(again.effects)).toEqual([]);
  });

  it("two sweepers at once raise each open call exactly once, and a session locked elsewhere waits for the next pass", async () => {
    const ws = await app.seedWorkspace();
    const t0 = Date.now() - 20 * MIN;
    const sessions = Array.from({ length: 6 }, () => uid("s"));
    await ingestAccepted(
      app,
      ws.key,
      sessions.flatMap((s) => [callEv(s, `${s}-a`, "deploy", t0), callEv(s, `${s}-b`, "migrate", t0 + 1000), callEv(s, `${s}-ok`, "read_file", t0 + 2000), resultEv(s, `${s}-ok`, "read_file", t0 + 3000)]),
    );
    const [x, y] = await Promise.all([sweepOpenCalls(app.db), sweepOpenCalls(app.db)]);
    const mine = [...x.raised, ...y.raised].filter((r) => sessions.some((s) => r.startsWith(`${s}/`)));
    expect(mine.sort()).toEqual(sessions.flatMap((s) => [`${s}/${s}-a`, `${s}/${s}-b`]).sort());
    const marks = await app.db.select().from(openCall).where(eq(openCall.workspaceId, ws.workspaceId));
    expect(marks).toHaveLength(12);
    const nudges = await app.db.select().from(pendingNudge).where(and(eq(pendingNudge.workspaceId, ws.workspaceId), eq(pendingNudge.patternType, "hung_call")));
    expect(nudges).toHaveLength(12);
    for (const s of sessions) {
      const answer = await ingestAccepted(app, ws.key, [{ type: "model.text", id: uid(), sessionId: s, text: "…" }]);
      expect(hung(answer.effects).filter((e) => e.type === "pattern").map((e) => e.toolSequence[0])).toEqual(["deploy", "migrate"]);
    }

    if (kind === "postgres") {
      // A request holding the session's row: the sweep skips it (SKIP LOCKED) instead of waiting.
      const s = uid("s");
      await ingestAccepted(app, ws.key, [callEv(s, "held", "deploy", t0), callEv(s, "ok", "read_file", t0), resultEv(s, "ok", "read_file", t0 + 1)]);
      const release = await holdSessionRow(ws.workspaceId, s);
      const watermarks: SweepWatermarks = new Map();
      expect((await sweepOpenCalls(app.db, Date.now(), watermarks)).raised).not.toContain(`${s}/held`);
      await release();
      expect((await sweepOpenCalls(app.db, Date.now(), watermarks)).raised).toContain(`${s}/held`);
    }
  });

  it("a session that only calls guard.check has no open calls; one that reports results does", async () => {
    const ws = await app.seedWorkspace();
    const guardOnly = uid("s");
    const reporting = uid("s");
    for (let i = 0; i < 3; i++) await ok("guard.check", { id: uid(), sessionId: guardOnly, callId: uid("c"), toolName: "read_file", args: { path: `/g${i}` } }, ws.key);
    await ok("guard.check", { id: uid(), sessionId: reporting, callId: "r1", toolName: "read_file", args: { path: "/r1" } }, ws.key);
    await ingestAccepted(app, ws.key, [resultEv(reporting, "r1", "read_file", Date.now())]);
    await ok("guard.check", { id: uid(), sessionId: reporting, callId: "r2", toolName: "run_tests", args: { all: true } }, ws.key);

    const raised = (await sweepOpenCalls(app.db, Date.now() + 11 * MIN)).raised;
    expect(raised.filter((r) => r.startsWith(guardOnly))).toEqual([]);
    expect(raised.filter((r) => r.startsWith(reporting))).toEqual([`${reporting}/r2`]);
  });

  it("a pass sweeps every open session, page after page of sessions, in every workspace", async () => {
    const many = await app.seedWorkspace();
    const other = await app.seedWorkspace();
    const t0 = Date.now() - 20 * MIN;
    // More open sessions than a page (the sweep reads 50 sessions per statement), each with one call left open.
    const sessions = Array.from({ length: 120 }, (_, i) => `page-${String(i).padStart(3, "0")}-${uid("s")}`);
    for (let i = 0; i < sessions.length; i += 40)
      await ingestAccepted(app, many.key, sessions.slice(i, i + 40).map((s) => callEv(s, "c1", "deploy", t0)));
    const lone = uid("s");
    await ingestAccepted(app, other.key, [callEv(lone, "c1", "deploy", t0)]);

    const raised = new Set((await sweepOpenCalls(app.db, Date.now() + 11 * MIN)).raised);
    expect(sessions.filter((s) => !raised.has(`${s}/c1`))).toEqual([]);
    expect(raised.has(`${lone}/c1`)).toBe(true);
    expect((await sweepOpenCalls(app.db, Date.now() + 12 * MIN)).raised.filter((r) => r.startsWith("page-") || r.startsWith(lone))).toEqual([]);
  });

  it("the background sweep reads a call once it comes of age: a younger call waits for a later pass, one that arrives late is still read", async () => {
    const ws = await app.seedWorkspace();
    const quiet = uid("s");
    const busy = uid("s");
    const watermarks: SweepWatermarks = new Map();
    const now = Date.now();
    const of = (s: string, r: { raised: string[] }) => r.raised.filter((x) => x.startsWith(`${s}/`)).sort();
    await ingestAccepted(app, ws.key, [callEv(quiet, "old", "deploy", now - 25 * MIN), callEv(busy, "young", "deploy", now - 2 * MIN)]);
    const first = await sweepOpenCalls(app.db, now, watermarks);
    expect([of(quiet, first), of(busy, first)]).toEqual([[`${quiet}/old`], []]);
    // Sent after that pass, and older than the time it read up to (open_call_seconds is 10 minutes).
    await ingestAccepted(app, ws.key, [callEv(quiet, "late", "deploy", now - 12 * MIN)]);
    const second = await sweepOpenCalls(app.db, now + 9 * MIN, watermarks);
    expect([of(quiet, second), of(busy, second)]).toEqual([[`${quiet}/late`], [`${busy}/young`]]);
    const third = await sweepOpenCalls(app.db, now + 10 * MIN, watermarks);
    expect([of(quiet, third), of(busy, third)]).toEqual([[], []]);

    if (kind === "postgres") {
      // A session held by a request when the pass came keeps its place: the next pass reads its calls, however old.
      const held = uid("s");
      await ingestAccepted(app, ws.key, [callEv(held, "h", "deploy", now - 3 * 3_600_000)]);
      const release = await holdSessionRow(ws.workspaceId, held);
      expect(of(held, await sweepOpenCalls(app.db, now + 11 * MIN, watermarks))).toEqual([]);
      await release();
      expect(of(held, await sweepOpenCalls(app.db, now + 12 * MIN, watermarks))).toEqual([`${held}/h`]);
    }
  });

  it("an ended session's calls are not open", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    const t0 = Date.now() - 20 * MIN;
    await ingestAccepted(app, ws.key, [callEv(s, "c1", "deploy", t0), { type: "session.end", id: uid(), sessionId: s, ts: iso(t0 + 1000) }]);
    expect((await sweepOpenCalls(app.db)).raised.filter((r) => r.startsWith(s))).toEqual([]);
    const v = await view(ws.key, s);
    expect(v).toMatchObject({ status: "ended", openCalls: [] });
  });

  it("a session with no event for session_idle_minutes is idle; its next event makes it active", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    await ingestAccepted(app, ws.key, [
      { type: "session.start", id: uid(), sessionId: s, agent: "builder", ts: iso(Date.now() - 40 * MIN) },
      { type: "model.text", id: uid(), sessionId: s, text: "Thinking.", ts: iso(Date.now() - 35 * MIN) },
    ]);
    expect((await view(ws.key, s)).status).toBe("idle");
    await ok("sessions.setSettings", { sessionId: s, settings: { sessionIdleMinutes: 60 } }, ws.key);
    expect((await view(ws.key, s)).status).toBe("active");
    await ok("sessions.setSettings", { sessionId: s, settings: { sessionIdleMinutes: null } }, ws.key);
    expect((await view(ws.key, s)).status).toBe("idle");
    await ingestAccepted(app, ws.key, [{ type: "model.text", id: uid(), sessionId: s, text: "Back." }]);
    expect((await view(ws.key, s)).status).toBe("active");
  });

  it("the background sweep started as the server starts it raises a call on its own, and stops", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    await ingestAccepted(app, ws.key, [callEv(s, "bg", "deploy", Date.now() - 11 * MIN)]);
    const stop = startOpenCallSweep(app.db, 50);
    try {
      await expect
        .poll(async () => (await app.db.select().from(openCall).where(and(eq(openCall.workspaceId, ws.workspaceId), eq(openCall.sessionId, s)))).length, { timeout: 10_000 })
        .toBe(1);
    } finally {
      stop();
    }
    expect((await view(ws.key, s)).openCalls.map((c: { callId: string }) => c.callId)).toEqual(["bg"]);
  });
});
