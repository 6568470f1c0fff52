/**
 * Stall detection through the real agent API (SPEC 5, 5.1, 7.1, 7.6): user.message resets runs
 * (an automated one does not), one nudge per event, nudge verdicts stored with the nudge, ladders
 * with equal levels, an investigation left alone, and a session whose behaviour state was stored
 * by the previous engine version keeps working. PGlite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { and, asc, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { at, uid } from "../support/agent";
import { agentSession, event, failure, nudge } from "@/db/schema";
import { patternStats } from "@/server/dashboard/patterns-data";
import { upgradeSessionBehaviour } from "@/server/engine/behaviour-state";

/** A call and its result (the result borrows the call's args by callId, as agents send them). */
function act(sessionId: string, toolName: string, args: Record<string, unknown>, outcome: Record<string, unknown>, ts: string) {
  const callId = uid("c");
  return [
    { type: "tool.call", id: uid(), sessionId, callId, toolName, args, ts },
    { type: "tool.result", id: uid(), sessionId, callId, toolName, ...outcome, ts },
  ];
}
const userMessage = (sessionId: string, text: string, ts: string) => ({ type: "user.message", id: uid(), sessionId, text, ts });

describe.each(DATABASE_KINDS)("stall detection on %s", (kind) => {
  const app = useTestApp(kind);

  const ingest = (key: string, events: unknown[]) => ingestAccepted(app, key, events);
  const base = Date.now() - 30 * 60_000;

  it("user.message is stored redacted and truncated, and ends the run; one nudge per event", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const ls = (m: number) => act(s, "bash", { command: "ls dist", description: `try ${m}` }, { success: true, result: "index.js" }, at(base, m));
    const first = await ingest(key, [...ls(0), ...ls(1), ...ls(2), ...ls(3)]);
    expect(first.effects.filter((e) => e.type === "pattern").map((e) => [e.patternType, e.severity])).toEqual([
      ["repetitive_calls", "minor"],
      ["repetitive_calls", "moderate"],
    ]);
    const nudges = first.effects.filter((e) => e.type === "nudge");
    expect(nudges.map((n) => n.nudgeType)).toEqual(["gentle", "direct"]);
    expect(nudges[0].message).toContain('bash {"command":"ls dist"}');

    const secret = "sk-ant-api03-" + "x".repeat(40);
    const long = `Stop listing, build it. token ${secret} ` + "é".repeat(5000);
    const reset = await ingest(key, [userMessage(s, long, at(base, 4)), ...ls(5), ...ls(6)]);
    expect(reset.effects).toEqual([]);
    const again = await ingest(key, ls(7));
    expect(again.effects.filter((e) => e.type === "pattern").map((e) => e.severity)).toEqual(["minor"]); // a new run starts clean

    const [row] = await app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, s), eq(event.type, "user.message")));
    const payload = row!.payload as { text: string; truncated: boolean };
    expect(payload.truncated).toBe(true);
    expect(Buffer.byteLength(payload.text, "utf8")).toBeLessThanOrEqual(4096);
    expect(payload.text).not.toContain(secret);
    expect(payload.text.startsWith("Stop listing, build it.")).toBe(true);

    // The same failing call: repetitive_calls and error_retry_loop both recorded, never two nudges on one event.
    const f = uid("s");
    const fail = (m: number) => act(f, "bash", { command: "npm run build" }, { success: false, error: "TS2304: Cannot find name 'x'" }, at(base, m));
    const r = await ingest(key, [...fail(0), ...fail(1), ...fail(2), ...fail(3)]);
    expect(new Set(r.effects.filter((e) => e.type === "pattern").map((e) => e.patternType))).toEqual(new Set(["repetitive_calls", "error_retry_loop"]));
    expect(r.effects.filter((e) => e.type === "nudge")).toHaveLength(2);
    // Identical failing calls are told to read the error, not to use what the call returned (SPEC 5.1).
    for (const n of r.effects.filter((e) => e.type === "nudge")) expect(n.message).toMatch(/read the error|fix what the error says/i);
  });

  it("accepts model.text reasoningOnly and stops three empty responses", async () => {
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const r = await ingest(key, [
      { type: "model.text", id: uid(), sessionId: s, text: "thinking…", reasoningOnly: true, ts: at(base, 0) },
      { type: "model.text", id: uid(), sessionId: s, text: "  ", ts: at(base, 1) },
      { type: "model.text", id: uid(), sessionId: s, text: "", ts: at(base, 2) },
    ]);
    expect(r.effects.filter((e) => e.type === "pattern").map((e) => [e.patternType, e.severity])).toEqual([
      ["empty_response", "minor"],
      ["empty_response", "moderate"],
      ["empty_response", "severe"],
    ]);
    expect(r.effects.some((e) => e.type === "paused")).toBe(true);
    const bad = await app.mutation("ingest.events", { events: [{ type: "user.message", id: uid(), sessionId: s, text: 42 }] }, { key });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("events");
  });

  it("stores the engine's verdict with each nudge: effective after a productive action, not when the pattern comes back", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const ls = (m: number) => act(s, "bash", { command: "ls" }, { success: true, result: "a" }, at(base, m));
    await ingest(key, [...ls(0), ...ls(1), ...ls(2)]); // gentle nudge (open)
    await ingest(key, ls(3)); // moderate: the gentle one was not effective; direct nudge (open)
    await ingest(key, act(s, "Edit", { file_path: "a.ts", old_string: "a", new_string: "b" }, { success: true, result: "ok" }, at(base, 4)));
    const rows = await app.db.select().from(nudge).where(and(eq(nudge.workspaceId, workspaceId), eq(nudge.sessionId, s))).orderBy(asc(nudge.ts));
    expect(rows.map((n) => [n.nudgeType, n.effective])).toEqual([
      ["gentle", false],
      ["direct", true],
    ]);

    // A nudge judged within the batch that sent it is written with its verdict.
    const o = uid("s");
    const lo = (m: number) => act(o, "bash", { command: "ls" }, { success: true, result: "a" }, at(base, m));
    await ingest(key, [...lo(0), ...lo(1), ...lo(2), ...act(o, "Edit", { file_path: "b.ts" }, { success: true, result: "ok" }, at(base, 3))]);
    const same = await app.db.select().from(nudge).where(and(eq(nudge.workspaceId, workspaceId), eq(nudge.sessionId, o)));
    expect(same.map((n) => [n.nudgeType, n.effective])).toEqual([["gentle", true]]);
    // The Patterns page reads the stored verdicts.
    const stats = await patternStats(app.db, { workspaceId, days: 7 });
    expect(stats.effectivenessByPattern).toEqual([{ patternType: "repetitive_calls", sent: 3, effective: 2, rate: 2 / 3 }]);
  });

  it("revision 3: an investigation — announcements each followed by a new read, then an edit — gets no nudge and no pause", async () => {
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const say = (text: string, m: number) => ({ type: "model.text", id: uid(), sessionId: s, text, ts: at(base, m) });
    const r = await ingest(key, [
      say("Let me look at the failing test.", 0),
      ...act(s, "Read", { file_path: "src/parser.test.ts" }, { success: true, result: "test" }, at(base, 0)),
      say("Let me check where parse is defined.", 1),
      ...act(s, "Grep", { pattern: "function parse" }, { success: true, result: ["src/parser.ts:12"] }, at(base, 1)),
      say("Let me look at the parser.", 2),
      ...act(s, "Read", { file_path: "src/parser.ts" }, { success: true, result: "parser" }, at(base, 2)),
      say("Let me check the tokenizer.", 3),
      ...act(s, "Read", { file_path: "src/tokenizer.ts" }, { success: true, result: "tokenizer" }, at(base, 3)),
      say("Let me look at the fixtures.", 4),
      ...act(s, "Glob", { pattern: "fixtures/*.json" }, { success: true, result: ["fixtures/a.json"] }, at(base, 4)),
      say("I'll now fix the off-by-one.", 5),
      ...act(s, "Edit", { file_path: "src/parser.ts", old_string: "<=", new_string: "<" }, { success: true, result: "ok" }, at(base, 5)),
    ]);
    expect(r.effects).toEqual([]);
    const view = await app.query("sessions.get", { sessionId: s }, { key });
    expect((view.body.result!.data as any).paused).toBe(false);
  });

  it("revision 3: config.put takes a ladder with equal levels, and the 4th identical call pauses with no nudge before it", async () => {
    const { key } = await app.seedWorkspace();
    const put = await app.mutation("config.put", { patterns: { repetitive_calls: { minor: 4, moderate: 4, severe: 4 } } }, { key });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const decreasing = await app.mutation("config.put", { patterns: { repetitive_calls: { minor: 4, moderate: 3 } } }, { key });
    expect(decreasing.status).toBe(400);
    expect(decreasing.body.error?.data.issues?.[0].path).toEqual(["patterns", "repetitive_calls", "moderate"]);
    const s = uid("s");
    const ls = (m: number) => act(s, "bash", { command: "ls dist" }, { success: true, result: "index.js" }, at(base, m));
    const first = await ingest(key, [...ls(0), ...ls(1), ...ls(2)]);
    expect(first.effects).toEqual([]);
    const fourth = await ingest(key, ls(3));
    expect(fourth.effects.map((e) => [e.type, e.patternType ?? null, e.severity ?? e.nudgeType ?? null])).toEqual([
      ["pattern", "repetitive_calls", "severe"],
      ["nudge", "repetitive_calls", "interrupt"],
      ["paused", null, null],
    ]);
  });

  it("revision 3: an automated user.message is stored as such and does not end the run; a person's does", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const ls = (m: number) => act(s, "bash", { command: "ls dist" }, { success: true, result: "index.js" }, at(base, m));
    const automated = { type: "user.message", id: uid(), sessionId: s, text: "Please continue the task.", automated: true, ts: at(base, 2) };
    const r = await ingest(key, [...ls(0), ...ls(1), automated, ...ls(3)]);
    expect(r.effects.filter((e) => e.type === "pattern").map((e) => [e.patternType, e.severity, e.count])).toEqual([["repetitive_calls", "minor", 3]]);
    const [row] = await app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, s), eq(event.type, "user.message")));
    expect(row!.payload).toMatchObject({ text: "Please continue the task.", automated: true });
    // A person's message (automated false or absent) still ends the run.
    const p = uid("s");
    const lsP = (m: number) => act(p, "bash", { command: "ls dist" }, { success: true, result: "index.js" }, at(base, m));
    const person = await ingest(key, [...lsP(0), ...lsP(1), { type: "user.message", id: uid(), sessionId: p, text: "go on", automated: false, ts: at(base, 2) }, ...lsP(3)]);
    expect(person.effects).toEqual([]);
    const bad = await app.mutation("ingest.events", { events: [{ type: "user.message", id: uid(), sessionId: p, automated: "yes" }] }, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.message).toContain("automated");
  });

  it("result_loop (SPEC 5.1): reworded searches returning the same document, one request each, are a loop; an action ends it", async () => {
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const doc = { success: true, result: { title: "Sampling", path: "/platform/python/sampling/" } };
    const search = (query: string, m: number) => act(s, "searchDocumentation", { query }, doc, at(base, m));
    // Each call in its own request: the run lives in the session's stored state between them.
    for (const [m, query] of ["python trace sample rate", "reduce tracing sample rate"].entries()) expect((await ingest(key, search(query, m))).effects).toEqual([]);
    const third = await ingest(key, search("configure traces_sample_rate", 2));
    expect(third.effects.filter((e) => e.type === "pattern").map((e) => [e.patternType, e.severity, e.count])).toEqual([["result_loop", "minor", 3]]);
    expect(third.effects.find((e) => e.type === "nudge")).toMatchObject({ nudgeType: "gentle", patternType: "result_loop" });
    // An edit ends the run: the next same-result search starts a new one.
    await ingest(key, act(s, "Edit", { file_path: "sentry.py" }, { success: true, result: "updated" }, at(base, 3)));
    expect((await ingest(key, search("sample rate docs", 4))).effects).toEqual([]);
  });

  it("model.error (SPEC 7.6): accepted, stored redacted under its model, counted per model, never a tool failure; an empty error is a 400", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const secret = "sk-ant-api03-" + "y".repeat(40);
    const r = await ingest(key, [
      { type: "session.start", id: uid(), sessionId: s, model: "model-a", ts: at(base, 0) },
      { type: "model.error", id: uid(), sessionId: s, error: `429 rate limited (key ${secret})`, ts: at(base, 1) },
      { type: "model.error", id: uid(), sessionId: s, error: "529 overloaded", model: "model-b", ts: at(base, 2) },
    ]);
    expect(r.effects).toEqual([]);
    const rows = await app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, s), eq(event.type, "model.error"))).orderBy(asc(event.ts));
    expect(rows.map((row) => [row.model, row.toolName, row.failed])).toEqual([
      ["model-a", null, null],
      ["model-b", null, null],
    ]);
    expect((rows[0]!.payload as { error: string }).error).toContain("429 rate limited");
    expect((rows[0]!.payload as { error: string }).error).not.toContain(secret);
    expect(await app.db.select().from(failure).where(eq(failure.workspaceId, workspaceId))).toEqual([]);
    // Counted per model (the Models page and models.list), never as a tool attempt of the model.
    await ingest(key, [{ type: "model.error", id: uid(), sessionId: s, error: "400 bad request", ts: at(base, 3) }]);
    const listed = await app.query("models.list", undefined, { key });
    expect(listed.status).toBe(200);
    const models = (listed.body.result!.data as { models: { model: string; behaviour: { modelErrors: number } | null; tools: { attempts: number } }[] }).models;
    expect(models.map((m) => [m.model, m.behaviour?.modelErrors, m.tools.attempts]).sort()).toEqual([
      ["model-a", 1, 0],
      ["model-b", 2, 0],
    ]);
    const badModel = await app.mutation("ingest.events", { events: [{ type: "model.error", id: uid(), sessionId: s, error: "x", model: "" }] }, { key });
    expect(badModel.status).toBe(400);
    expect(badModel.body.error!.message).toContain("model");
    const bad = await app.mutation("ingest.events", { events: [{ type: "model.error", id: uid(), sessionId: s, error: "" }] }, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.message).toContain("error");
  });

  it("a session whose behaviour was stored by engine version 1 continues where it was", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    await ingest(key, [{ type: "session.start", id: uid(), sessionId: s, ts: at(base, 0) }]);
    const v1 = {
      version: 1,
      sessionId: s,
      stretch: {
        id: 3, startedAt: base, calls: [{ toolName: "grep", argsHash: "aaaa", failureKey: "grep|x" }], callCount: 4,
        sameToolRun: 4, introspectionRun: 0, alternatingRun: 1, readOnlyCalls: 4, actionCalls: 0, textRun: 0,
        announcements: 2, mentions: {}, failureRuns: {},
        reported: { announce_no_action: { severity: "minor", count: 2, at: base }, repetitive_calls: { severity: "moderate", count: 4, at: base } },
      },
      paused: false, pauseReason: null, pausedAt: null, pendingGuidance: null,
      openNudges: [{ patternType: "announce_no_action", severity: "minor", sentAt: base }],
      currentTurn: 1, turnHadPattern: true, modelSuggestions: [], lastEventAt: base,
    };
    await app.db.update(agentSession).set({ behaviour: v1 }).where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, s)));

    // The stretch carries on: the 3rd announcement, followed by no call before the next text, is
    // moderate (minor was already sent by v1).
    const r = await ingest(key, [
      { type: "model.text", id: uid(), sessionId: s, text: "Proceeding now.", ts: at(base, 1) },
      { type: "model.text", id: uid(), sessionId: s, text: "Still on it.", ts: at(base, 1) },
    ]);
    expect(r.effects.filter((e) => e.type === "pattern").map((e) => [e.patternType, e.severity, e.count])).toEqual([["announce_no_action", "moderate", 3]]);
    // Old name-based counts are gone: a different grep is not repetitive.
    const g = await ingest(key, act(s, "grep", { pattern: "new" }, { success: true, result: [] }, at(base, 2)));
    expect(g.effects.filter((e) => e.patternType === "repetitive_calls")).toEqual([]);
    const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, s)));
    // Written back in the current stored form, which reads as the current version.
    expect(row!.behaviour).toMatchObject({ v: 3 });
    expect(upgradeSessionBehaviour(row!.behaviour, s).version).toBe(2);
    const view = await app.query("sessions.get", { sessionId: s }, { key });
    expect(view.status).toBe(200);
    expect((view.body.result!.data as any).activePatterns.map((p: any) => p.patternType)).toEqual(["announce_no_action"]);
  });
});
