/**
 * The dashboard's time window and searches (issue 11, items 2 and 3) against real databases: every
 * history query takes from/to and counts only what falls inside; sessions are found by id and
 * failures by error text; the session timeline shows guard decisions and tool-call approvals.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { at, result, uid } from "../support/agent";
import { listWorkspaceAudit } from "@/server/dashboard/audit";
import { listFailures } from "@/server/dashboard/failures";
import { getFailureRateSeries, getTopFailingKeys } from "@/server/dashboard/overview";
import { modelMatrix, patternStats, recentSuggestions } from "@/server/dashboard/patterns-data";
import { listSessions, sessionStatusCounts, sessionTimeline } from "@/server/dashboard/sessions-data";
import { readTimeWindow, windowDays } from "@/server/dashboard/time-range";
import { countKeysByState, listKeys } from "@/server/dashboard/tools";
import { getKeyDetail } from "@/server/dashboard/key-detail";
import { patternDetection } from "@/db/schema";

const DAY = 86_400_000;
const OLD_KEY = "fetch|domain=old.example.com|path_prefix=a";
const NEW_KEY = "fetch|domain=new.example.com|path_prefix=b";

describe.each(DATABASE_KINDS)("dashboard time range and search on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const now = new Date();
  const oldBase = now.getTime() - 10 * DAY;
  const newBase = now.getTime() - 2 * 3600_000;
  const oldSession = uid("old-session");
  const newSession = uid("fresh-session");

  const app = useTestApp(kind);
  beforeAll(async () => {
    ws = await app.seedWorkspace();
    const fail = (s: string, host: string, path: string, base: number, min: number, error: string, model: string) =>
      result(s, "fetch", { url: `https://${host}/${path}` }, { success: false, error, httpStatus: 500 }, { ts: at(base, min), model });
    // Ten days ago: three failures of the old key (by gpt-old); two hours ago: two of the new key (by gpt-new) and a success.
    const res = await app.mutation(
      "ingest.events",
      {
        events: [
          { type: "session.start", id: uid(), sessionId: oldSession, agent: "crawler", model: "gpt-old", ts: at(oldBase, 0) },
          fail(oldSession, "old.example.com", "a", oldBase, 1, "connection reset by peer", "gpt-old"),
          fail(oldSession, "old.example.com", "a", oldBase, 2, "connection reset by peer", "gpt-old"),
          fail(oldSession, "old.example.com", "a", oldBase, 3, "upstream said: quota exceeded", "gpt-old"),
          { type: "session.start", id: uid(), sessionId: newSession, agent: "crawler", model: "gpt-new", ts: at(newBase, 0) },
          fail(newSession, "new.example.com", "b", newBase, 1, "Gateway Timeout", "gpt-new"),
          fail(newSession, "new.example.com", "b", newBase, 2, "Gateway Timeout", "gpt-new"),
          result(newSession, "fetch", { url: "https://new.example.com/b" }, { success: true }, { ts: at(newBase, 3), model: "gpt-new" }),
        ],
      },
      { key: ws.key },
    );
    expect(res.status).toBe(200);
  });

  it("reads the window from search params: presets, the page default, a custom UTC day range", () => {
    const t = new Date("2026-11-20T12:00:00Z");
    expect(readTimeWindow({}, "14d", t)).toMatchObject({ range: "14d", from: new Date(t.getTime() - 14 * DAY), label: "last 14 days" });
    expect(readTimeWindow({ range: "all" }, "14d", t)).toMatchObject({ range: "all", from: undefined, label: "all time" });
    expect(readTimeWindow({ range: "bogus" }, "7d", t).range).toBe("7d");
    const custom = readTimeWindow({ from: "2026-11-01", to: "2026-11-03", range: "7d" }, "7d", t);
    expect(custom).toMatchObject({ range: "custom", from: new Date("2026-11-01T00:00:00Z"), to: new Date("2026-11-04T00:00:00Z") });
    // Swapped ends are put in order; an impossible date is ignored.
    expect(readTimeWindow({ from: "2026-11-03", to: "2026-11-01" }, "7d", t)).toMatchObject({ from: new Date("2026-11-01T00:00:00Z"), to: new Date("2026-11-04T00:00:00Z") });
    expect(readTimeWindow({ from: "2026-02-31" }, "7d", t).range).toBe("7d");
    expect(windowDays(custom, t)).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
    expect(windowDays(readTimeWindow({ range: "24h" }, "7d", t), t)).toEqual(["2026-11-19", "2026-11-20"]);
    expect(windowDays(readTimeWindow({ range: "all" }, "7d", t), t, { earliest: "2026-11-18" })).toEqual(["2026-11-18", "2026-11-19", "2026-11-20"]);
  });

  it("failures, top keys and the daily series count only what falls in the window", async () => {
    const week = readTimeWindow({ range: "7d" }, "all", now);
    expect((await listFailures(app.db, ws.workspaceId, {})).total).toBe(5);
    const recent = await listFailures(app.db, ws.workspaceId, { from: week.from, to: week.to });
    expect(recent.total).toBe(2);
    expect(recent.rows.every((r) => r.failureKey === NEW_KEY)).toBe(true);

    const oldDay = new Date(oldBase).toISOString().slice(0, 10);
    const thatDay = readTimeWindow({ from: oldDay, to: oldDay }, "all", now);
    expect((await listFailures(app.db, ws.workspaceId, { from: thatDay.from, to: thatDay.to })).total).toBe(3);

    const topWeek = await getTopFailingKeys(app.db, ws.workspaceId, 8, week);
    expect(topWeek.map((k) => [k.failureKey, k.totalFailures])).toEqual([[NEW_KEY, 2]]);
    const topAll = await getTopFailingKeys(app.db, ws.workspaceId, 8);
    expect(topAll.map((k) => [k.failureKey, k.totalFailures])).toEqual([
      [OLD_KEY, 3],
      [NEW_KEY, 2],
    ]);

    const days = windowDays(week, now);
    const series = await getFailureRateSeries(app.db, ws.workspaceId, days, now);
    expect(series.map((p) => p.day)).toEqual(days);
    expect(series.reduce((a, p) => a + p.failures, 0)).toBe(2);
    expect(series.reduce((a, p) => a + p.results, 0)).toBe(3);
  });

  it("failures are searchable by error text (case-insensitive, literal, paginated, inside the window)", async () => {
    const reset = await listFailures(app.db, ws.workspaceId, { text: "CONNECTION RESET", pageSize: 1 });
    expect(reset.total).toBe(2);
    expect(reset.rows).toHaveLength(1);
    expect(reset.rows[0].errorMessage).toBe("connection reset by peer");
    expect((await listFailures(app.db, ws.workspaceId, { text: "reset", pageSize: 1, page: 2 })).rows).toHaveLength(1);
    // LIKE wildcards match literally.
    expect((await listFailures(app.db, ws.workspaceId, { text: "%" })).total).toBe(0);
    const week = readTimeWindow({ range: "7d" }, "all", now);
    expect((await listFailures(app.db, ws.workspaceId, { text: "reset", from: week.from })).total).toBe(0);
    expect((await listFailures(app.db, ws.workspaceId, { text: "gateway", from: week.from })).total).toBe(2);
  });

  it("sessions by last event: exact order within a minute and across one, and a window starting inside a minute", async () => {
    const own = await app.seedWorkspace();
    const minute = Math.floor((now.getTime() - 3600_000) / 60_000) * 60_000;
    const lastAt = { a: minute + 59_900, b: minute + 60_100, c: minute + 30_000, d: minute + 59_950 };
    const ids = Object.fromEntries(Object.keys(lastAt).map((k) => [k, uid(`order-${k}`)]));
    const res = await app.mutation(
      "ingest.events",
      { events: Object.entries(lastAt).map(([k, ts]) => result(ids[k], "fetch", { url: "https://x.example.com/a" }, { success: true }, { ts: new Date(ts).toISOString() })) },
      { key: own.key },
    );
    expect(res.status).toBe(200);
    const list = async (dir: "asc" | "desc", from?: Date) =>
      (await listSessions(app.db, { workspaceId: own.workspaceId, page: 1, pageSize: 50, sort: { key: "last", dir }, from })).rows.map((r) => r.sessionId);
    expect(await list("desc")).toEqual([ids.b, ids.d, ids.a, ids.c]);
    expect(await list("asc")).toEqual([ids.c, ids.a, ids.d, ids.b]);
    expect(await list("desc", new Date(minute + 59_920))).toEqual([ids.b, ids.d]);
  });

  it("sessions: the window selects sessions active in it; search by part of the id", async () => {
    const week = readTimeWindow({ range: "7d" }, "all", now);
    const inWeek = await listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 50, from: week.from, to: week.to });
    expect(inWeek.rows.map((r) => r.sessionId)).toEqual([newSession]);
    expect((await sessionStatusCounts(app.db, ws.workspaceId, { from: week.from })).all).toBe(1);
    expect((await sessionStatusCounts(app.db, ws.workspaceId)).all).toBe(2);

    const oldDay = new Date(oldBase).toISOString().slice(0, 10);
    const then = readTimeWindow({ from: oldDay, to: oldDay }, "all", now);
    expect((await listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 50, from: then.from, to: then.to })).rows.map((r) => r.sessionId)).toEqual([oldSession]);

    const byId = await listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 50, q: newSession.slice(-10).toUpperCase() });
    expect(byId.rows.map((r) => r.sessionId)).toEqual([newSession]);
    expect(byId.total).toBe(1);
    expect((await listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 50, q: "session" })).total).toBe(2);
    expect((await listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 50, q: "_" })).total).toBe(0);
    expect((await sessionStatusCounts(app.db, ws.workspaceId, { q: "old-session" })).all).toBe(1);

    // Sessions with a detection of a pattern inside the window (where the Patterns charts link).
    await app.db.insert(patternDetection).values({
      workspaceId: ws.workspaceId,
      sessionId: oldSession,
      model: "gpt-old",
      patternType: "error_retry_loop",
      severity: "moderate",
      count: 3,
      toolSequence: ["fetch", "fetch", "fetch"],
      ts: new Date(oldBase + 5 * 60_000),
    });
    const withPattern = (pattern: string, w: { from?: Date; to?: Date } = {}) =>
      listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 50, pattern, ...w }).then((r) => r.rows.map((x) => x.sessionId));
    expect(await withPattern("error_retry_loop")).toEqual([oldSession]);
    expect(await withPattern("any")).toEqual([oldSession]);
    expect(await withPattern("planning_loop")).toEqual([]);
    expect(await withPattern("error_retry_loop", { from: week.from })).toEqual([]);
    expect(await withPattern("error_retry_loop", { from: then.from, to: then.to })).toEqual([oldSession]);
  });

  it("tools, models, key detail and audit follow the window", async () => {
    const week = readTimeWindow({ range: "7d" }, "all", now);
    const keys = await listKeys(app.db, ws.workspaceId, { level: "key", window: week });
    expect(keys.rows.map((r) => [r.failureKey, r.windowFailures])).toEqual([[NEW_KEY, 2]]);
    // A window holding both keys' failures: each row counts its own (3 and 2), not the workspace's 5.
    const oldDay = new Date(oldBase).toISOString().slice(0, 10);
    const both = readTimeWindow({ from: oldDay }, "all", now);
    const bothKeys = await listKeys(app.db, ws.workspaceId, { level: "key", window: both, sort: "key", dir: "asc" });
    expect(bothKeys.rows.map((r) => [r.failureKey, r.windowFailures]).sort()).toEqual([
      [NEW_KEY, 2],
      [OLD_KEY, 3],
    ]);
    // A past window with an end: keys that failed inside it count even though they were active later.
    const thatDay = readTimeWindow({ from: oldDay, to: oldDay }, "all", now);
    expect((await listKeys(app.db, ws.workspaceId, { level: "key", window: thatDay })).rows.map((r) => [r.failureKey, r.windowFailures])).toEqual([[OLD_KEY, 3]]);
    const allKeys = await listKeys(app.db, ws.workspaceId, { level: "key" });
    expect(allKeys.rows.map((r) => r.failureKey).sort()).toEqual([NEW_KEY, OLD_KEY].sort());
    expect(allKeys.rows.every((r) => r.windowFailures === undefined)).toBe(true);
    const countsWeek = await countKeysByState(app.db, ws.workspaceId, week);
    const countsAll = await countKeysByState(app.db, ws.workspaceId);
    const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
    expect(sum(countsWeek)).toBe((await listKeys(app.db, ws.workspaceId, { window: week })).total);
    expect(sum(countsWeek)).toBeLessThan(sum(countsAll));

    const matrixWeek = await modelMatrix(app.db, ws.workspaceId, 12, week);
    expect(matrixWeek.models).toEqual(["gpt-new"]);
    expect(matrixWeek.cells["gpt-new"][NEW_KEY]).toMatchObject({ attempts: 3, failures: 2 });
    const matrixAll = await modelMatrix(app.db, ws.workspaceId, 12);
    expect(matrixAll.models.sort()).toEqual(["gpt-new", "gpt-old"]);
    expect(await recentSuggestions(app.db, ws.workspaceId, 50, week)).toEqual([]);

    const oldDetail = await getKeyDetail(app.db, ws.workspaceId, OLD_KEY, week);
    expect(oldDetail!.transitions).toEqual([]);
    expect((await getKeyDetail(app.db, ws.workspaceId, OLD_KEY))!.transitions.length).toBeGreaterThan(0);

    const stats = await patternStats(app.db, { workspaceId: ws.workspaceId, days: windowDays(week, now), from: week.from });
    expect(stats.days).toHaveLength(8);
    expect(stats.totals.detections).toBe(0);

    const reset = await app.mutation("keys.reset", { failureKey: OLD_KEY }, { key: ws.key });
    expect(reset.status).toBe(200);
    const lastHour = readTimeWindow({ range: "1h" }, "all", new Date());
    expect((await listWorkspaceAudit(app.db, ws.workspaceId, { from: lastHour.from })).rows.map((r) => r.action)).toContain("failure_key.reset");
    const before = readTimeWindow({ from: "2020-01-01", to: "2020-01-02" }, "all", now);
    expect((await listWorkspaceAudit(app.db, ws.workspaceId, { from: before.from, to: before.to })).total).toBe(0);
  });

  it("the session timeline shows guard decisions (deny, ask, allow) and the tool-call approval with its answer", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("guarded");
    // sudo rm -rf / blocks the whole bash tool (a security failure).
    const blocked = await app.mutation("ingest.events", { events: [result(s, "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" })] }, { key });
    expect(blocked.status).toBe(200);
    // Blocked answers "ask" by default: with a wait, a person is asked (a tool-call approval), then denies.
    const askCall = uid("c");
    const asked = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: askCall, toolName: "bash", args: { command: "ls" }, waitForApprovalSeconds: 1 }, { key });
    expect(asked.body.result!.data.decision).toBe("ask");
    const approvalId = asked.body.result!.data.approvalId as string;
    expect(approvalId).toBeTruthy();
    expect((await app.mutation("approvals.resolve", { approvalId, decision: "deny", comment: "not on prod" }, { key })).status).toBe(200);
    // blocked_decision=deny: the lean path answers deny itself.
    expect((await app.mutation("config.put", { settings: { blocked_decision: "deny" } }, { key })).status).toBe(200);
    const denied = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "bash", args: { command: "ls" } }, { key });
    expect(denied.body.result!.data.decision).toBe("deny");
    const allowed = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "Read", args: { file_path: "/tmp/x" } }, { key });
    expect(allowed.body.result!.data.decision).toBe("allow");

    const page = await sessionTimeline(app.db, { workspaceId, sessionId: s });
    const calls = page.items.filter((i) => i.kind === "event" && i.type === "tool.call");
    const decisions = calls.map((c) => (c.kind === "event" ? (c.payload.guard as { decision?: string } | undefined)?.decision : null));
    expect(decisions).toEqual(["ask", "deny", "allow"]);
    const deny = calls[1];
    expect(deny.kind === "event" && (deny.payload.guard as { reason?: string }).reason).toBeTruthy();

    const approvals = page.items.filter((i) => i.kind === "approval");
    expect(approvals.map((a) => (a.kind === "approval" ? [a.phase, a.status, a.callId] : null))).toEqual([
      ["requested", "denied", askCall],
      ["resolved", "denied", askCall],
    ]);
    const answer = approvals[1];
    expect(answer.kind === "approval" && answer.comment).toBe("not on prod");
    // Oldest first: the request comes after its call, the answer after the request.
    const idx = (k: string) => page.items.findIndex((i) => i.key === k);
    expect(idx(approvals[0].key)).toBeGreaterThan(idx(calls[0].key));
    expect(idx(approvals[1].key)).toBeGreaterThan(idx(approvals[0].key));
  });

  it("the last owner cannot be removed (the server refuses; the dashboard disables the button)", async () => {
    const owner = await app.signUp(`last-owner-${uid()}@example.com`);
    const org = await app.seedWorkspace({ ownerUserId: owner.userId });
    const refused = await app.mutation("organization.removeMember", { organizationId: org.organizationId, userId: owner.userId }, { cookie: owner.cookie });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("The last owner cannot be removed");
    // With a second owner, the first one can leave.
    const second = await app.signUp(`second-owner-${uid()}@example.com`);
    await app.addMember(org.organizationId, second.userId, "owner");
    const removed = await app.mutation("organization.removeMember", { organizationId: org.organizationId, userId: owner.userId }, { cookie: second.cookie });
    expect(removed.status).toBe(200);
  });
});
