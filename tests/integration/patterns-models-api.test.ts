/**
 * `patterns.summary` and `models.list` (SPEC 7.6) through the real HTTP handler with an agent-scope
 * key, after real ingest that triggers stall patterns and records model results: the numbers are the
 * Patterns and Models pages' (their read models called side by side), the range and model filters
 * narrow them, another workspace's traffic never shows, and bad input is a 400 naming the field.
 * PGlite and PostgreSQL.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { at, uid } from "../support/agent";
import { behaviourProfiles, modelMatrix, patternStats } from "@/server/dashboard/patterns-data";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const start = (sessionId: string, model: string, agent: string, ts: string) => ({ type: "session.start", id: uid(), sessionId, model, agent, ts });
const turn = (sessionId: string, turnIndex: number, ts: string) => ({ type: "turn.start", id: uid(), sessionId, turnIndex, ts });
/** A call and its result, as agents send them. */
function act(sessionId: string, toolName: string, args: Record<string, unknown>, outcome: Record<string, unknown>, ts: string) {
  const callId = uid("c");
  return [
    { type: "tool.call", id: uid(), sessionId, callId, toolName, args, ts },
    { type: "tool.result", id: uid(), sessionId, callId, toolName, ...outcome, ts },
  ];
}

interface Summary {
  range: string;
  model: string | null;
  from: string;
  to: string;
  totals: { detections: number; sessions: number; nudges: number; interrupts: number };
  patterns: Array<{ patternType: string; minor: number; moderate: number; severe: number; total: number }>;
  nudges: {
    sent: number;
    effective: number;
    rate: number;
    byPattern: Array<{ patternType: string; sent: number; effective: number; rate: number }>;
    byModel: Array<{ model: string; sent: number; effective: number; rate: number }>;
  };
  stalledSessions: Array<{ sessionId: string; agent: string | null; model: string | null; detections: number; patternTypes: string[]; worstSeverity: string | null; lastDetectedAt: string; paused: boolean; ended: boolean }>;
}

describe.each(DATABASE_KINDS)("patterns.summary and models.list on %s", (kind) => {
  const app = useTestApp(kind);
  const now = Date.now();
  const recent = now - 20 * 60_000; // inside 1h
  const earlier = now - 3 * HOUR; // inside 24h, not 1h
  const old = now - 10 * DAY; // inside 30d, not 7d
  const sessions = { alpha: uid("s-alpha"), beta: uid("s-beta"), oldAlpha: uid("s-old") };
  let ws: Awaited<ReturnType<typeof app.seedWorkspace>>;
  /** Pattern effects ingest answered, per session. */
  const detected: Record<string, Array<{ patternType: string; severity: string }>> = {};

  const summary = async (input?: Record<string, unknown>): Promise<Summary> => {
    const res = await app.query("patterns.summary", input, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data as Summary;
  };
  const ingest = async (sessionId: string, events: unknown[]) => {
    const answer = await ingestAccepted(app, ws.key, events);
    (detected[sessionId] ??= []).push(...answer.effects.filter((e) => e.type === "pattern").map((e) => ({ patternType: e.patternType, severity: e.severity })));
  };

  beforeAll(async () => {
    ws = await app.seedWorkspace({ scope: "agent" });
    // alpha: the same listing four times (repetitive_calls minor → moderate, two nudges), then an edit
    // (progress: the open nudge was effective); a flaky fetch gives alpha failures on one key.
    const a = sessions.alpha;
    const ls = (m: number) => act(a, "bash", { command: "ls dist", description: `try ${m}` }, { success: true, result: "index.js" }, at(recent, m));
    await ingest(a, [start(a, "model-alpha", "builder", at(recent, 0)), turn(a, 0, at(recent, 0)), ...ls(1), ...ls(2), ...ls(3), ...ls(4)]);
    await ingest(a, [
      turn(a, 1, at(recent, 5)),
      ...act(a, "Edit", { file_path: "/srv/app/a.ts", old_string: "a", new_string: "b" }, { success: true, result: "ok" }, at(recent, 6)),
      ...act(a, "http_request", { url: "https://api.flaky.example/v1/items" }, { success: false, error: "HTTP 503" }, at(recent, 7)),
      ...act(a, "http_request", { url: "https://api.flaky.example/v1/items" }, { success: true, httpStatus: 200 }, at(recent, 8)),
    ]);
    // beta, three hours ago: the same failing build four times (repetitive_calls and error_retry_loop).
    const b = sessions.beta;
    const build = (m: number) => act(b, "bash", { command: "npm run build" }, { success: false, error: "TS2304: Cannot find name 'x'" }, at(earlier, m));
    await ingest(b, [start(b, "model-beta", "fixer", at(earlier, 0)), turn(b, 0, at(earlier, 0)), ...build(1), ...build(2), ...build(3), ...build(4)]);
    // An alpha session ten days ago: three listings (repetitive_calls minor).
    const o = sessions.oldAlpha;
    const lo = (m: number) => act(o, "bash", { command: "ls" }, { success: true, result: "a" }, at(old, m));
    await ingest(o, [start(o, "model-alpha", "builder", at(old, 0)), turn(o, 0, at(old, 0)), ...lo(1), ...lo(2), ...lo(3)]);

    // Another workspace's stalls and models must never show.
    const other = await app.seedWorkspace({ scope: "agent" });
    const x = uid("s-other");
    const lx = (m: number) => act(x, "bash", { command: "ls" }, { success: false, error: "no" }, at(recent, m));
    await ingestAccepted(app, other.key, [start(x, "model-other", "intruder", at(recent, 0)), ...lx(1), ...lx(2), ...lx(3), ...lx(4)]);
  });

  const countOf = (...ids: string[]) => ids.reduce((n, id) => n + (detected[id]?.length ?? 0), 0);

  it("the ingest above triggered the stalls the summary is checked against", () => {
    expect(new Set(detected[sessions.alpha]!.map((d) => d.patternType))).toEqual(new Set(["repetitive_calls"]));
    expect(detected[sessions.alpha]!.map((d) => d.severity)).toEqual(["minor", "moderate"]);
    expect(new Set(detected[sessions.beta]!.map((d) => d.patternType))).toEqual(new Set(["repetitive_calls", "error_retry_loop"]));
    expect(detected[sessions.oldAlpha]!.length).toBeGreaterThan(0);
  });

  it("patterns.summary (default: the Patterns page's 7 days) reports what the Patterns page reports", async () => {
    const out = await summary();
    expect(out.range).toBe("7d");
    expect(out.model).toBeNull();
    expect(Date.parse(out.to) - Date.parse(out.from)).toBeCloseTo(7 * DAY, -4);

    const stats = await patternStats(app.db, { workspaceId: ws.workspaceId, days: 8, from: new Date(out.from), to: new Date(out.to) });
    expect(out.totals).toEqual(stats.totals);
    expect(out.totals.detections).toBe(countOf(sessions.alpha, sessions.beta));
    expect(out.totals.sessions).toBe(2);
    expect(out.patterns).toEqual(stats.severityByType.map((r) => ({ ...r, total: r.minor + r.moderate + r.severe })));
    expect(out.patterns.find((p) => p.patternType === "repetitive_calls")).toMatchObject({ minor: 2 });
    expect(out.nudges.byPattern).toEqual(stats.effectivenessByPattern);
    expect(out.nudges.byModel).toEqual(stats.effectivenessByModel);
    expect(out.nudges.sent).toBe(stats.effectivenessByPattern.reduce((n, r) => n + r.sent, 0));
    expect(out.nudges.sent).toBeGreaterThanOrEqual(3);
    // alpha's direct nudge was followed by the edit; its gentle one by a moderate detection.
    expect(out.nudges.byModel.find((m) => m.model === "model-alpha")).toEqual({ model: "model-alpha", sent: 2, effective: 1, rate: 0.5 });
    expect(out.nudges.effective).toBe(out.nudges.byModel.reduce((n, r) => n + r.effective, 0));

    // Stalled sessions: latest detection first, with the session's agent and model.
    expect(out.stalledSessions.map((s) => s.sessionId)).toEqual([sessions.alpha, sessions.beta]);
    expect(out.stalledSessions[0]).toMatchObject({
      agent: "builder",
      model: "model-alpha",
      detections: countOf(sessions.alpha),
      patternTypes: ["repetitive_calls"],
      worstSeverity: "moderate",
      paused: false,
      ended: false,
    });
    expect(out.stalledSessions[1]).toMatchObject({ agent: "fixer", model: "model-beta", detections: countOf(sessions.beta), patternTypes: ["error_retry_loop", "repetitive_calls"] });
    expect(JSON.stringify(out)).not.toContain("model-other");
  });

  it("range: the window the page's range picker names", async () => {
    const hour = await summary({ range: "1h" });
    expect(hour.totals.detections).toBe(countOf(sessions.alpha));
    expect(hour.stalledSessions.map((s) => s.sessionId)).toEqual([sessions.alpha]);
    expect((await summary({ range: "24h" })).totals.detections).toBe(countOf(sessions.alpha, sessions.beta));
    const month = await summary({ range: "30d" });
    expect(month.totals.detections).toBe(countOf(sessions.alpha, sessions.beta, sessions.oldAlpha));
    expect(month.stalledSessions.map((s) => s.sessionId)).toEqual([sessions.alpha, sessions.beta, sessions.oldAlpha]);
    const all = await summary({ range: "all" });
    expect(all.totals).toEqual(month.totals);
    // "all" starts at the first day with a detection, as on the page.
    expect(all.from.slice(0, 10)).toBe(new Date(old).toISOString().slice(0, 10));
  });

  it("model: only that model's detections, nudges and sessions — the page's per-model chart of the same window", async () => {
    const all = await summary({ range: "30d" });
    const stats = await patternStats(app.db, { workspaceId: ws.workspaceId, days: 31, from: new Date(all.from), to: new Date(all.to) });
    const perModel = (m: string) => stats.byModel.reduce((n, day) => n + Number(day[m] ?? 0), 0);

    const alpha = await summary({ range: "30d", model: "model-alpha" });
    expect(alpha.model).toBe("model-alpha");
    expect(alpha.totals.detections).toBe(perModel("model-alpha"));
    expect(alpha.totals.detections).toBe(countOf(sessions.alpha, sessions.oldAlpha));
    expect(alpha.totals.sessions).toBe(2);
    expect(alpha.stalledSessions.map((s) => s.sessionId)).toEqual([sessions.alpha, sessions.oldAlpha]);
    expect(alpha.nudges.byModel).toEqual(stats.effectivenessByModel.filter((m) => m.model === "model-alpha"));

    const beta = await summary({ range: "30d", model: "model-beta" });
    expect(beta.totals.detections).toBe(perModel("model-beta"));
    expect(beta.patterns.map((p) => p.patternType).sort()).toEqual(["error_retry_loop", "repetitive_calls"]);
    expect(beta.stalledSessions.map((s) => s.sessionId)).toEqual([sessions.beta]);
    expect(alpha.totals.detections + beta.totals.detections).toBe(all.totals.detections);

    const none = await summary({ model: "model-nobody" });
    expect(none.totals).toEqual({ detections: 0, sessions: 0, nudges: 0, interrupts: 0 });
    expect(none.stalledSessions).toEqual([]);
    // Another workspace's model is another workspace's.
    expect((await summary({ range: "all", model: "model-other" })).totals.detections).toBe(0);
  });

  it("bad input is a 400 naming the field", async () => {
    const cases: Array<[unknown, string[]]> = [
      [{ range: "2w" }, ["range"]],
      [{ range: 7 }, ["range"]],
      [{ model: "" }, ["model"]],
      [{ model: "m".repeat(300) }, ["model"]],
    ];
    for (const [input, path] of cases) {
      const res = await app.query("patterns.summary", input, { key: ws.key });
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.body.error!.data.issues!.map((i) => i.path)).toContainEqual(path);
    }
    const extra = await app.query("patterns.summary", { range: "7d", since: "yesterday" }, { key: ws.key });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain("since");
    expect((await app.query("patterns.summary", { range: "7d" }, {})).status).toBe(401);
    expect((await app.query("models.list", undefined, {})).status).toBe(401);
  });

  it("models.list: each model's behaviour profile and tool success rates, as the Models page shows them", async () => {
    const res = await app.query("models.list", undefined, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const out = res.body.result!.data as {
      models: Array<{
        model: string;
        behaviour: Record<string, unknown> | null;
        tools: { attempts: number; failures: number; successRate: number; failureKeys: number; byKey: Array<{ failureKey: string; attempts: number; failures: number; successRate: number; lastFailureAt: string | null }> };
      }>;
      suggestions: unknown[];
    };
    expect(out.models.map((m) => m.model)).toEqual(["model-alpha", "model-beta"]);

    const profiles = await behaviourProfiles(app.db, ws.workspaceId);
    for (const m of out.models) {
      const { model, ...behaviour } = profiles.find((p) => p.model === m.model)!;
      expect(m.behaviour, model).toEqual(behaviour);
    }
    const alpha = out.models[0]!;
    // All time: the recent session's two nudges (one effective) and the old session's open one.
    expect(alpha.behaviour).toMatchObject({ turns: 3, nudgesSent: 3, nudgesEffective: 1 });
    expect((alpha.behaviour!.stalledTurns as number) > 0).toBe(true);
    // alpha: 4 + 3 listings, the edit, two fetches (one failed); beta: four failed builds.
    expect(alpha.tools).toMatchObject({ attempts: 10, failures: 1, successRate: 0.9 });
    expect(out.models[1]!.tools).toMatchObject({ attempts: 4, failures: 4, successRate: 0 });

    const matrix = await modelMatrix(app.db, ws.workspaceId, 12);
    for (const m of out.models) {
      const cells = matrix.cells[m.model] ?? {};
      expect(m.tools.byKey).toEqual(
        matrix.keys
          .filter((k) => cells[k.failureKey])
          .map((k) => ({ failureKey: k.failureKey, attempts: cells[k.failureKey]!.attempts, failures: cells[k.failureKey]!.failures, successRate: cells[k.failureKey]!.rate, lastFailureAt: cells[k.failureKey]!.lastFailureAt })),
      );
    }
    const fetchKey = alpha.tools.byKey.find((k) => k.failureKey.startsWith("http_request|"))!;
    expect(fetchKey).toMatchObject({ attempts: 2, failures: 1, successRate: 0.5 });
    expect(fetchKey.lastFailureAt).toBe(at(recent, 7));
    expect(JSON.stringify(out)).not.toContain("model-other");
  });
});
