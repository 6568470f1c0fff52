/**
 * Behaviour, settings, models and promotion through the real HTTP handler (SPEC 5, 6, 7).
 * Issues #3 and #4: every assertion is on an HTTP response or on stored rows.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { rowsOf } from "@/db/client";
import { DATABASE_KINDS } from "../support/databases";
import { TestApp } from "../support/app";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { at, call, result, uid } from "../support/agent";
import { globalToolPattern, modelSuggestion, nudge, patternDetection } from "@/db/schema";
import { modelBehaviourTotals } from "@/server/dashboard/patterns-data";
import { putConfigDocument } from "@/server/services/workspace-config";
import { createWorkspace } from "@/server/services/tenancy";
import { createApiKey } from "@/server/services/api-keys";
import { SYSTEM_ACTOR } from "@/server/services/audit";

const text = (sessionId: string, t: string, extra: Record<string, unknown> = {}) => ({ type: "model.text", id: uid(), sessionId, text: t, ...extra });
const turn = (sessionId: string, turnIndex: number, extra: Record<string, unknown> = {}) => ({ type: "turn.start", id: uid(), sessionId, turnIndex, ...extra });
const start = (sessionId: string, extra: Record<string, unknown> = {}) => ({ type: "session.start", id: uid(), sessionId, ...extra });

/**
 * Four announcements, each followed only by a call the stretch already made (nothing new, SPEC 5.1),
 * of a tool in no class and never twice in a row (so no other pattern fires).
 */
function announceBatch(s: string) {
  const lookup = (q: string) => call(s, "search_docs", { q });
  return [
    ...["config", "todo", "sources", "x.ts"].map(lookup),
    text(s, "Let me check the config first."),
    lookup("config"),
    text(s, "Proceeding now with the fix."),
    lookup("todo"),
    text(s, "Executing the plan."),
    lookup("sources"),
    text(s, "I'll now apply the change."),
    lookup("x.ts"),
  ];
}

const byType = (effects: any[], type: string) => effects.filter((e) => e.type === type);

describe.each(DATABASE_KINDS)("behaviour, settings, models and promotion on %s", (kind) => {
  const app = useTestApp(kind);

  const ingest = (key: string, events: unknown[]) => ingestAccepted(app, key, events);
  const guard = async (key: string, input: Record<string, unknown>) => {
    const res = await app.mutation("guard.check", { id: uid(), callId: uid("c"), args: {}, ...input }, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data as { decision: string; state: string; reason: string | null; failureKey: string; effects: any[] };
  };
  const sessionView = async (key: string, sessionId: string) => {
    const res = await app.query("sessions.get", { sessionId }, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };

  describe("announce-no-action walk-through (seed Example Scenario)", () => {
    it("minor → gentle, moderate → direct, severe → interrupt + pause; guard pauses until resumed; guidance once", async () => {
      const { key, workspaceId, organizationId } = await app.seedWorkspace();
      const s = uid("s");
      const base = Date.now() - 20 * 60_000;
      await ingest(key, [start(s, { agent: "restorer", model: "model-x", ts: at(base, 0) })]);
      const texts = [
        "I'll restore the file from backup. Proceeding now.",
        "I'm going to restore and apply the fix. Proceeding immediately.",
        "You're right - I need to actually execute. Proceeding with the real steps now.",
        "Let me list the filesystem tools once more before proceeding.",
      ];
      const announceEffects: any[][] = [];
      const guardDecisions: string[] = [];
      for (let i = 0; i < 4; i++) {
        const t = base + (i + 1) * 60_000;
        const r = await ingest(key, [turn(s, i, { ts: new Date(t).toISOString() }), text(s, texts[i], { turnIndex: i, ts: new Date(t + 1000).toISOString() })]);
        // An announcement is judged by the call that follows it (SPEC 5.1): list_tools again brings nothing new.
        expect(r.effects.filter((e) => e.patternType === "announce_no_action")).toEqual([]);
        const g = await guard(key, { sessionId: s, toolName: "list_tools", args: { category: "filesystem" }, turnIndex: i, ts: new Date(t + 2000).toISOString() });
        guardDecisions.push(g.decision);
        announceEffects.push(g.effects.filter((e) => e.patternType === "announce_no_action" || e.type === "paused"));
        if (i === 1) {
          // introspection_loop rises to minor on the same call; one nudge per event, the earlier pattern's.
          expect(byType(g.effects, "nudge")).toEqual([expect.objectContaining({ nudgeType: "gentle", patternType: "introspection_loop" })]);
        }
        await ingest(key, [result(s, "list_tools", { category: "filesystem" }, { success: true, result: { tools: ["writeFile"] } }, { ts: new Date(t + 3000).toISOString() })]);
      }

      // Turn 1: one announcement, nothing yet.
      expect(announceEffects[0]).toEqual([]);
      // Turn 2: minor (its nudge is introspection_loop's, above).
      expect(announceEffects[1]).toEqual([expect.objectContaining({ type: "pattern", patternType: "announce_no_action", severity: "minor", count: 2, sessionId: s })]);
      // Turn 3: moderate + direct.
      expect(announceEffects[2]).toEqual([
        expect.objectContaining({ type: "pattern", patternType: "announce_no_action", severity: "moderate", count: 3 }),
        expect.objectContaining({ type: "nudge", nudgeType: "direct", message: expect.stringContaining("You've announced action 3 times without executing") }),
      ]);
      // Turn 4: severe + interrupt + paused.
      expect(announceEffects[3]).toEqual([
        expect.objectContaining({ type: "pattern", patternType: "announce_no_action", severity: "severe", count: 4 }),
        expect.objectContaining({ type: "nudge", nudgeType: "interrupt", patternType: "announce_no_action" }),
        expect.objectContaining({ type: "paused", sessionId: s, reason: expect.any(String) }),
      ]);
      // The pattern's toolSequence is the calls so far.
      expect(announceEffects[3][0].toolSequence).toEqual(["list_tools", "list_tools", "list_tools", "list_tools"]);
      expect(guardDecisions).toEqual(["allow", "allow", "allow", "pause"]);

      // Stored: detections and nudges rows.
      const detections = await app.db.select().from(patternDetection).where(and(eq(patternDetection.workspaceId, workspaceId), eq(patternDetection.patternType, "announce_no_action")));
      expect(detections.map((d) => d.severity).sort()).toEqual(["minor", "moderate", "severe"]);
      const nudges = await app.db.select().from(nudge).where(and(eq(nudge.workspaceId, workspaceId), eq(nudge.patternType, "announce_no_action")));
      expect(nudges.map((n) => n.nudgeType).sort()).toEqual(["direct", "interrupt"]);

      // Paused: every guard.check answers pause, whatever the tool, and keeps doing so.
      for (const toolName of ["writeFile", "readFile", "writeFile"]) {
        const g = await guard(key, { sessionId: s, toolName, args: { path: "/srv/app/x.ts" } });
        expect(g).toMatchObject({ decision: "pause", state: "trusted" });
        expect(g.reason).toBeTruthy();
        expect(byType(g.effects, "nudge")).toEqual([]);
      }
      // Other sessions are unaffected.
      expect((await guard(key, { sessionId: uid("s"), toolName: "writeFile", args: { path: "/tmp/a" } })).decision).toBe("allow");

      const view = await sessionView(key, s);
      expect(view).toMatchObject({ sessionId: s, agent: "restorer", model: "model-x", paused: true });
      expect(view.pauseReason).toEqual(expect.any(String));
      expect(view.pauseReason.length).toBeGreaterThan(0);
      expect(view.activePatterns).toEqual(expect.arrayContaining([expect.objectContaining({ patternType: "announce_no_action", severity: "severe", count: 4 })]));

      // Resuming needs an admin key.
      const agentKey = (await createApiKey(app.db, { workspaceId, organizationId, name: "agent", scope: "agent", actor: SYSTEM_ACTOR })).value;
      expect((await app.mutation("sessions.resume", { sessionId: s, guidance: "x" }, { key: agentKey })).status).toBe(403);
      expect((await guard(key, { sessionId: s, toolName: "writeFile", args: { path: "/tmp/a" } })).decision).toBe("pause");

      const resumed = await app.mutation("sessions.resume", { sessionId: s, guidance: "Restore /srv/app/x.ts with writeFile now." }, { key });
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
      expect((await sessionView(key, s)).paused).toBe(false);
      // A second resume of a running session is a 400.
      expect((await app.mutation("sessions.resume", { sessionId: s }, { key })).status).toBe(400);

      const g1 = await guard(key, { sessionId: s, toolName: "readFile", args: { path: "/srv/app/x.ts" } });
      expect(g1.decision).toBe("allow");
      expect(byType(g1.effects, "nudge")).toEqual([expect.objectContaining({ nudgeType: "guidance", message: "Restore /srv/app/x.ts with writeFile now.", sessionId: s })]);
      const g2 = await guard(key, { sessionId: s, toolName: "writeFile", args: { path: "/srv/app/x.ts" } });
      expect(g2.decision).toBe("allow");
      expect(byType(g2.effects, "nudge").filter((n) => n.nudgeType === "guidance")).toEqual([]);
      const g3 = await guard(key, { sessionId: s, toolName: "grep", args: { pattern: "x" } });
      expect(g3.decision).toBe("allow");
      expect(byType(g3.effects, "nudge")).toEqual([]);
    });
  });

  describe("nudge levels and settings", () => {
    it("session nudgeLevel off records patterns without nudges; gentle caps everything; direct turns the interrupt into a direct nudge", async () => {
      const { key, workspaceId } = await app.seedWorkspace();
      const outcomes: Record<string, any[]> = {};
      for (const level of ["off", "gentle", "direct", "interrupt"] as const) {
        const s = uid(`s-${level}`);
        const set = await app.mutation("sessions.setSettings", { sessionId: s, settings: { nudgeLevel: level } }, { key });
        expect(set.status, JSON.stringify(set.body)).toBe(200);
        expect(set.body.result!.data.nudgeLevel).toEqual({ value: level, source: "session" });
        outcomes[level] = (await ingest(key, [start(s, { model: "m-levels" }), ...announceBatch(s)])).effects;
        const view = await sessionView(key, s);
        expect(view.paused).toBe(level === "interrupt");
      }
      const summary = (effects: any[]) => effects.filter((e) => e.type !== "pattern" || e.patternType === "announce_no_action").map((e) => (e.type === "pattern" ? `pattern:${e.severity}` : e.type === "nudge" ? `nudge:${e.nudgeType}` : e.type));
      expect(summary(outcomes.off)).toEqual(["pattern:minor", "pattern:moderate", "pattern:severe"]);
      expect(summary(outcomes.gentle)).toEqual(["pattern:minor", "nudge:gentle", "pattern:moderate", "nudge:gentle", "pattern:severe", "nudge:gentle"]);
      expect(summary(outcomes.direct)).toEqual(["pattern:minor", "nudge:gentle", "pattern:moderate", "nudge:direct", "pattern:severe", "nudge:direct"]);
      expect(summary(outcomes.interrupt)).toEqual(["pattern:minor", "nudge:gentle", "pattern:moderate", "nudge:direct", "pattern:severe", "nudge:interrupt", "paused"]);
      // A direct nudge for a severe pattern must not claim the session is pausing.
      expect(byType(outcomes.direct, "nudge").at(-1).message).not.toMatch(/paus/i);
      // `off` stored the detections but no nudge rows.
      const offNudges = await app.db.select().from(nudge).where(eq(nudge.workspaceId, workspaceId));
      expect(offNudges.filter((n) => n.sessionId.startsWith("s-off"))).toEqual([]);
      const offPatterns = await app.db.select().from(patternDetection).where(eq(patternDetection.workspaceId, workspaceId));
      expect(offPatterns.filter((p) => p.sessionId.startsWith("s-off"))).toHaveLength(3);
    });

    it("workspace config.put settings apply to sessions without an override; session start settings win", async () => {
      const { key } = await app.seedWorkspace();
      const put = await app.mutation("config.put", { settings: { nudge_level: "gentle" } }, { key });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const s1 = uid("s");
      const e1 = (await ingest(key, [start(s1), ...announceBatch(s1)])).effects;
      expect(byType(e1, "nudge").map((n) => n.nudgeType)).toEqual(["gentle", "gentle", "gentle"]);
      expect(byType(e1, "paused")).toEqual([]);
      expect((await sessionView(key, s1)).effectiveSettings.nudgeLevel).toEqual({ value: "gentle", source: "workspace" });

      const s2 = uid("s");
      const e2 = (await ingest(key, [start(s2, { settings: { nudgeLevel: "interrupt" } }), ...announceBatch(s2)])).effects;
      expect(byType(e2, "nudge").map((n) => n.nudgeType)).toEqual(["gentle", "direct", "interrupt"]);
      expect(byType(e2, "paused")).toHaveLength(1);

      // nudge_enabled false: patterns, no nudges, no pause.
      await app.mutation("config.put", { settings: { nudge_enabled: false } }, { key });
      const s3 = uid("s");
      const e3 = (await ingest(key, [start(s3), ...announceBatch(s3)])).effects;
      expect(byType(e3, "pattern")).toHaveLength(3);
      expect(byType(e3, "nudge")).toEqual([]);
      // pattern_detection_enabled false: nothing at all.
      await app.mutation("config.put", { settings: { pattern_detection_enabled: false } }, { key });
      const s4 = uid("s");
      const e4 = (await ingest(key, [start(s4), ...announceBatch(s4)])).effects;
      expect(e4).toEqual([]);
    });

    it("effectiveSettings sources: session > workspace > organization > default; null clears; bad input is a 400 that changes nothing", async () => {
      const { key, organizationId } = await app.seedWorkspace();
      await putConfigDocument(app.db, {
        level: "organization",
        organizationId,
        document: { settings: { recovery_mode: "ask", nudge_level: "gentle", blocked_decision: "deny", model_switch_strategy: "disabled" } },
        actor: SYSTEM_ACTOR,
      });
      expect((await app.mutation("config.put", { settings: { nudge_level: "direct", model_switch_strategy: "auto" } }, { key })).status).toBe(200);
      const s = uid("s");
      const set = await app.mutation("sessions.setSettings", { sessionId: s, settings: { nudgeLevel: "off", preferredModels: ["b", "a"] } }, { key });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      const expected = {
        nudgeLevel: { value: "off", source: "session" },
        preferredModels: { value: ["b", "a"], source: "session" },
        modelSwitchStrategy: { value: "auto", source: "workspace" },
        recoveryMode: { value: "ask", source: "organization" },
        blockedDecision: { value: "deny", source: "organization" },
        patternDetectionEnabled: { value: true, source: "default" },
        nudgeEnabled: { value: true, source: "default" },
        enforcement: { value: "enforce", source: "default" },
        maxToolCallsPerSession: { value: null, source: "default" },
        openCallSeconds: { value: 600, source: "default" },
        sessionIdleMinutes: { value: 30, source: "default" },
      };
      expect(set.body.result!.data).toEqual(expected);
      expect((await sessionView(key, s)).effectiveSettings).toEqual(expected);

      // Bad input: unknown names, bad values, mixed with valid ones → 400 naming them; nothing changed.
      const bad: [unknown, string][] = [
        [{ nudgeLvl: "gentle" }, "nudgeLvl"],
        [{ nudgeLevel: "loud" }, "nudgeLevel"],
        [{ nudgeLevel: "gentle", bogusSetting: 1 }, "bogusSetting"],
        [{ recoveryMode: "sometimes" }, "recoveryMode"],
        [{ nudgeEnabled: "yes" }, "nudgeEnabled"],
        [{ preferredModels: "gpt" }, "preferredModels"],
        ["off", "settings"],
      ];
      for (const [settings, name] of bad) {
        const r = await app.mutation("sessions.setSettings", { sessionId: s, settings }, { key });
        expect(r.status, JSON.stringify(settings)).toBe(400);
        expect(r.body.error!.message).toContain(name);
      }
      expect((await sessionView(key, s)).effectiveSettings).toEqual(expected);
      // Bad settings in session.start: 400, nothing written.
      const s2 = uid("s");
      const r = await app.mutation("ingest.events", { events: [start(s2, { settings: { nudgeLevel: "gentle", colour: "red" } })] }, { key });
      expect(r.status).toBe(400);
      expect(r.body.error!.message).toContain("colour");
      expect((await app.query("sessions.get", { sessionId: s2 }, { key })).status).toBe(404);
      // Bad workspace settings: 400 naming the field, workspace level unchanged.
      const badPut = await app.mutation("config.put", { settings: { nudge_level: "loud" } }, { key });
      expect(badPut.status).toBe(400);
      expect(badPut.body.error!.message).toContain("nudge_level");
      const badPut2 = await app.mutation("config.put", { settings: { nudge_levle: "gentle" } }, { key });
      expect(badPut2.status).toBe(400);
      expect(badPut2.body.error!.message).toContain("nudge_levle");
      expect((await app.query("config.get", undefined, { key })).body.result!.data.settings).toEqual({ nudge_level: "direct", model_switch_strategy: "auto" });

      // null clears the session level: the workspace value shows through, then the organization's.
      const cleared = await app.mutation("sessions.setSettings", { sessionId: s, settings: { nudgeLevel: null } }, { key });
      expect(cleared.body.result!.data.nudgeLevel).toEqual({ value: "direct", source: "workspace" });
      expect(cleared.body.result!.data.preferredModels).toEqual({ value: ["b", "a"], source: "session" });
      await app.mutation("config.put", {}, { key });
      expect((await sessionView(key, s)).effectiveSettings.nudgeLevel).toEqual({ value: "gentle", source: "organization" });
      expect((await sessionView(key, s)).effectiveSettings.modelSwitchStrategy).toEqual({ value: "disabled", source: "organization" });
      await putConfigDocument(app.db, { level: "organization", organizationId, document: {}, actor: SYSTEM_ACTOR });
      expect((await sessionView(key, s)).effectiveSettings.nudgeLevel).toEqual({ value: "interrupt", source: "default" });

      // The effective level is what detection uses: organization gentle → gentle nudges only.
      await putConfigDocument(app.db, { level: "organization", organizationId, document: { settings: { nudge_level: "gentle" } }, actor: SYSTEM_ACTOR });
      const s3 = uid("s");
      const e3 = (await ingest(key, [start(s3), ...announceBatch(s3)])).effects;
      expect(byType(e3, "nudge").map((n) => n.nudgeType)).toEqual(["gentle", "gentle", "gentle"]);
    });
  });

  it("nudge effectiveness: a nudge followed by a successful action counts; one whose pattern re-fires first does not", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const base = Date.now() - 20 * 60_000;
    const ts = (m: number) => at(base, m);
    // Effective: announce twice, each followed by a read of something already read (minor → gentle nudge), then a successful writeFile.
    const a = uid("s");
    await ingest(key, [
      start(a, { model: "model-eff", ts: ts(0) }),
      turn(a, 0, { ts: ts(0) }),
      call(a, "readFile", { path: "/srv/a.txt" }, { ts: ts(1) }),
      call(a, "grep", { pattern: "x" }, { ts: ts(1) }),
      call(a, "glob", { pattern: "*.txt" }, { ts: ts(1) }),
      text(a, "Let me read the file.", { ts: ts(1) }),
      call(a, "readFile", { path: "/srv/a.txt" }, { ts: ts(1) }),
      text(a, "Proceeding now.", { ts: ts(2) }),
      call(a, "grep", { pattern: "x" }, { ts: ts(2) }),
      turn(a, 1, { ts: ts(3) }),
      call(a, "writeFile", { path: "/srv/a.txt" }, { ts: ts(3) }),
      result(a, "writeFile", { path: "/srv/a.txt" }, { success: true }, { ts: ts(4) }),
    ]);
    // Not effective: the same pattern is detected again (moderate) before any action.
    const b = uid("s");
    await ingest(key, [
      start(b, { model: "model-ineff", ts: ts(0) }),
      turn(b, 0, { ts: ts(0) }),
      call(b, "readFile", { path: "/srv/b.txt" }, { ts: ts(1) }),
      call(b, "grep", { pattern: "x" }, { ts: ts(1) }),
      call(b, "glob", { pattern: "*.txt" }, { ts: ts(1) }),
      text(b, "Let me read the file.", { ts: ts(1) }),
      call(b, "readFile", { path: "/srv/b.txt" }, { ts: ts(1) }),
      text(b, "Proceeding now.", { ts: ts(2) }),
      call(b, "grep", { pattern: "x" }, { ts: ts(2) }),
    ]);
    await ingest(key, [turn(b, 1, { ts: ts(3) }), text(b, "Executing the change.", { ts: ts(3) }), turn(b, 2, { ts: ts(4) }), call(b, "list_tools", {}, { ts: ts(4) })]);
    // A failed action result does not make the open (direct) nudge effective either.
    await ingest(key, [result(b, "writeFile", { path: "/srv/b.txt" }, { success: false, error: "disk full" }, { ts: ts(5) })]);

    const byModel = Object.fromEntries((await modelBehaviourTotals(app.db, workspaceId)).map((r) => [r.model, r]));
    expect(byModel["model-eff"]).toMatchObject({ nudgesSent: 1, nudgesEffective: 1, turns: 2, stalledTurns: 1, patternCounts: { announce_no_action: 1 } });
    expect(byModel["model-ineff"]).toMatchObject({ nudgesSent: 2, nudgesEffective: 0, turns: 3, stalledTurns: 2, patternCounts: { announce_no_action: 2 } });

    // Now b acts: only the still-open direct nudge becomes effective (the gentle one was judged already).
    await ingest(key, [call(b, "writeFile", { path: "/srv/b.txt" }, { ts: ts(6) }), result(b, "writeFile", { path: "/srv/b.txt" }, { success: true }, { ts: ts(7) })]);
    const after = (await modelBehaviourTotals(app.db, workspaceId)).find((r) => r.model === "model-ineff");
    expect(after).toMatchObject({ nudgesSent: 2, nudgesEffective: 1, turns: 3, stalledTurns: 2 });
  });

  it("many sessions of one model at once: the model's counters are exact, spread over its shard rows", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const sessionOf = (s: string, model: string) => [start(s, { model }), turn(s, 0), ...announceBatch(s), turn(s, 1), call(s, "writeFile", { path: "/srv/w.txt" })];
    // What one session of this shape adds, alone.
    await ingest(key, sessionOf(uid("s"), "model-alone"));
    const one = (await modelBehaviourTotals(app.db, workspaceId)).find((r) => r.model === "model-alone")!;
    expect(one.turns).toBeGreaterThan(0);
    expect(one.nudgesSent).toBeGreaterThan(0);

    const sessions = 24;
    await Promise.all(Array.from({ length: sessions }, () => ingest(key, sessionOf(uid("s"), "model-fleet"))));
    const fleet = (await modelBehaviourTotals(app.db, workspaceId)).find((r) => r.model === "model-fleet")!;
    expect(fleet).toEqual({
      model: "model-fleet",
      turns: one.turns * sessions,
      stalledTurns: one.stalledTurns * sessions,
      nudgesSent: one.nudgesSent * sessions,
      nudgesEffective: one.nudgesEffective * sessions,
      patternCounts: Object.fromEntries(Object.entries(one.patternCounts).map(([p, n]) => [p, n! * sessions])),
      modelErrors: 0,
    });
    const shardRows = await app.db.execute(sql`select count(*)::int as n from model_behaviour_profile where workspace_id = ${workspaceId} and model = 'model-fleet'`);
    // 24 batches over 8 rows: all on one row has probability 8^-23.
    expect(rowsOf<{ n: number }>(shardRows)[0].n).toBeGreaterThan(1);
  });

  describe("model tool profiles and switch suggestions", () => {
    const cmd = { command: "make build" };
    const fail = (s: string, extra: Record<string, unknown> = {}) => result(s, "bash", cmd, { success: false, error: "make: *** [build] Error 2" }, extra);
    const ok = (s: string, extra: Record<string, unknown> = {}) => result(s, "bash", cmd, { success: true }, extra);
    /** Model B succeeded 3 times on bash|command=make. */
    async function withGoodModelB(key: string) {
      const sb = uid("sb");
      await ingest(key, [start(sb, { model: "model-b" }), ok(sb), ok(sb), ok(sb)]);
    }

    it("suggest: model A fails the key 3 times, B succeeded 3 times → one suggestion per (session, key, model)", async () => {
      const { key, workspaceId } = await app.seedWorkspace();
      await withGoodModelB(key);
      const sa = uid("sa");
      const first = await ingest(key, [start(sa, { model: "model-a" }), fail(sa), fail(sa)]);
      expect(byType(first.effects, "model_suggestion")).toEqual([]); // just below failureThreshold
      const third = await ingest(key, [fail(sa)]);
      expect(byType(third.effects, "model_suggestion")).toEqual([
        {
          type: "model_suggestion",
          strategy: "suggest",
          currentModel: "model-a",
          suggestedModel: "model-b",
          failureKey: "bash|command=make",
          currentSuccessRate: 0,
          suggestedSuccessRate: 1,
        },
      ]);
      // Not repeated for the same session, key and model — in later batches or guard checks.
      expect(byType((await ingest(key, [fail(sa), fail(sa)])).effects, "model_suggestion")).toEqual([]);
      // Another session on model A gets its own suggestion (its model already has ≥ 3 failures).
      const sa2 = uid("sa");
      expect(byType((await ingest(key, [start(sa2, { model: "model-a" }), fail(sa2)])).effects, "model_suggestion")).toHaveLength(1);
      // event.model overrides the session's model: model-c has no failures → no suggestion.
      expect(byType((await ingest(key, [fail(sa2, { model: "model-c" })])).effects, "model_suggestion")).toEqual([]);

      const suggestions = await app.db.select().from(modelSuggestion).where(eq(modelSuggestion.workspaceId, workspaceId));
      expect(suggestions.map((r) => [r.sessionId, r.currentModel, r.suggestedModel, r.strategy]).sort()).toEqual(
        [[sa, "model-a", "model-b", "suggest"], [sa2, "model-a", "model-b", "suggest"]].sort(),
      );
      const { modelToolProfile } = await import("@/db/schema");
      const profiles = await app.db.select().from(modelToolProfile).where(eq(modelToolProfile.workspaceId, workspaceId));
      const p = Object.fromEntries(profiles.map((r) => [r.model, r]));
      expect(p["model-a"]).toMatchObject({ failureKey: "bash|command=make", attempts: 6, failures: 6 });
      expect(p["model-b"]).toMatchObject({ attempts: 3, failures: 0, lastFailureAt: null });
      expect(p["model-c"]).toMatchObject({ attempts: 1, failures: 1 });
    });

    it("auto via session settings; disabled via workspace settings; B with too few attempts → none", async () => {
      const auto = await app.seedWorkspace();
      await withGoodModelB(auto.key);
      const sa = uid("sa");
      await app.mutation("sessions.setSettings", { sessionId: sa, settings: { modelSwitchStrategy: "auto" } }, { key: auto.key });
      const r = await ingest(auto.key, [start(sa, { model: "model-a" }), fail(sa), fail(sa), fail(sa)]);
      expect(byType(r.effects, "model_suggestion")).toEqual([expect.objectContaining({ strategy: "auto", currentModel: "model-a", suggestedModel: "model-b" })]);

      const disabled = await app.seedWorkspace();
      expect((await app.mutation("config.put", { settings: { model_switch_strategy: "disabled" } }, { key: disabled.key })).status).toBe(200);
      await withGoodModelB(disabled.key);
      const sd = uid("sa");
      const d = await ingest(disabled.key, [start(sd, { model: "model-a" }), fail(sd), fail(sd), fail(sd), fail(sd)]);
      expect(byType(d.effects, "model_suggestion")).toEqual([]);
      expect(await app.db.select().from(modelSuggestion).where(eq(modelSuggestion.workspaceId, disabled.workspaceId))).toEqual([]);

      const few = await app.seedWorkspace();
      const sb = uid("sb");
      await ingest(few.key, [start(sb, { model: "model-b" }), ok(sb), ok(sb)]);
      const sf = uid("sa");
      expect(byType((await ingest(few.key, [start(sf, { model: "model-a" }), fail(sf), fail(sf), fail(sf)])).effects, "model_suggestion")).toEqual([]);
    });
  });

  describe("promotion to a global tool pattern", () => {
    async function orgWorkspaces(n: number) {
      const first = await app.seedWorkspace();
      const out = [first];
      for (let i = 1; i < n; i++) {
        const ws = await createWorkspace(app.db, { organizationId: first.organizationId, slug: `ws-${Math.random().toString(36).slice(2, 10)}`, actor: SYSTEM_ACTOR });
        const { value } = await createApiKey(app.db, { workspaceId: ws.id, organizationId: first.organizationId, name: "k", scope: "admin", actor: SYSTEM_ACTOR });
        out.push({ ...first, workspaceId: ws.id, slug: ws.slug, key: value });
      }
      return out;
    }
    const escalate = (key: string, tool: string) => {
      const s = uid("s");
      return ingest(key, [1, 2, 3].map((i) => result(s, tool, { target: `svc-${i}`, n: 1 }, { success: false, error: "upstream exploded" })));
    };

    it("the same tool escalated in 3 workspaces with failure rate > 0.5 → global pattern; guard asks in a 4th workspace", async () => {
      const ws = await orgWorkspaces(4);
      const tool = "deploy_service";
      // The same key in each workspace (same args).
      const fail3 = (key: string) => {
        const s = uid("s");
        return ingest(key, [1, 2, 3].map(() => result(s, tool, { target: "prod" }, { success: false, error: "upstream exploded" })));
      };
      expect(byType((await fail3(ws[0].key)).effects, "escalated")).toHaveLength(1);
      expect(byType((await fail3(ws[1].key)).effects, "escalated")).toHaveLength(1);
      expect(await app.db.select().from(globalToolPattern).where(eq(globalToolPattern.organizationId, ws[0].organizationId))).toEqual([]);
      // Before promotion the 4th workspace is allowed.
      expect((await guard(ws[3].key, { sessionId: uid("s"), toolName: tool, args: { target: "prod" } })).decision).toBe("allow");
      await fail3(ws[2].key);
      const patterns = await app.db.select().from(globalToolPattern).where(eq(globalToolPattern.organizationId, ws[0].organizationId));
      expect(patterns).toHaveLength(1);
      expect(patterns[0]).toMatchObject({ toolName: tool, status: "active", avgFailureRate: 1 });
      expect((patterns[0].workspaceIds as string[]).slice().sort()).toEqual([ws[0].workspaceId, ws[1].workspaceId, ws[2].workspaceId].sort());

      const g = await guard(ws[3].key, { sessionId: uid("s"), toolName: tool, args: { target: "prod" } });
      expect(g).toMatchObject({ decision: "ask", state: "trusted" });
      expect(g.reason).toMatch(/global/i);
      // Other tools of the 4th workspace are unaffected; so is the tool in another organization.
      expect((await guard(ws[3].key, { sessionId: uid("s"), toolName: "other_tool", args: {} })).decision).toBe("allow");
      const stranger = await app.seedWorkspace();
      expect((await guard(stranger.key, { sessionId: uid("s"), toolName: tool, args: { target: "prod" } })).decision).toBe("allow");
    });

    it("only 2 workspaces, or an average failure rate ≤ 0.5 → no global pattern", async () => {
      const two = await orgWorkspaces(3);
      await escalate(two[0].key, "sync_records");
      await escalate(two[1].key, "sync_records");
      expect(await app.db.select().from(globalToolPattern).where(eq(globalToolPattern.organizationId, two[0].organizationId))).toEqual([]);
      expect((await guard(two[2].key, { sessionId: uid("s"), toolName: "sync_records", args: {} })).decision).toBe("allow");

      // Three workspaces escalated, but each with 3 failures in 7 results (rate 0.43).
      const low = await orgWorkspaces(4);
      for (const w of low.slice(0, 3)) {
        const s = uid("s");
        const r = await ingest(w.key, [
          ...[1, 2, 3, 4].map(() => result(s, "index_docs", { shard: 1 }, { success: true })),
          ...[1, 2, 3].map(() => result(s, "index_docs", { shard: 1 }, { success: false, error: "upstream exploded" })),
        ]);
        expect(byType(r.effects, "escalated")).toHaveLength(1);
      }
      expect(await app.db.select().from(globalToolPattern).where(eq(globalToolPattern.organizationId, low[0].organizationId))).toEqual([]);
      expect((await guard(low[3].key, { sessionId: uid("s"), toolName: "index_docs", args: { shard: 1 } })).decision).toBe("allow");
    });
  });

  it("restart safety: a paused session stays paused with a new runtime on the same database", async () => {
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const r = await ingest(key, [start(s, { model: "m" }), ...announceBatch(s)]);
    expect(byType(r.effects, "paused")).toHaveLength(1);
    const restarted = await TestApp.create(app.database);
    const g = await restarted.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "writeFile", args: { path: "/a/b" } }, { key });
    expect(g.status).toBe(200);
    expect(g.body.result!.data.decision).toBe("pause");
    const view = await restarted.query("sessions.get", { sessionId: s }, { key });
    expect(view.body.result!.data).toMatchObject({ paused: true, pauseReason: expect.any(String) });
    // And resume through the restarted runtime works and sticks.
    expect((await restarted.mutation("sessions.resume", { sessionId: s }, { key })).status).toBe(200);
    const again = await TestApp.create(app.database);
    const g2 = await again.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "writeFile", args: { path: "/a/b" } }, { key });
    expect(g2.body.result!.data.decision).toBe("allow");
  });
});
