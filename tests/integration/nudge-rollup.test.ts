/**
 * The Patterns page's nudge counts (totals, interrupts, effectiveness per model and per pattern)
 * read daily_nudge_stat for whole days: they must equal the raw aggregates of `nudge` over
 * whole-day and partial windows, with verdicts decided in the nudge's own batch and in later ones;
 * the migration's fill of existing rows gives what the batches kept; retention keeps them equal.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { rowsOf } from "@/db/client";
import { patternStats } from "@/server/dashboard/patterns-data";
import { pruneWorkspace } from "@/server/services/retention";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MODELS = ["gpt-a", "claude-b", undefined] as const;

type Window = { from?: Date; to?: Date };

describe.each(DATABASE_KINDS)("nudge roll-up equals the raw nudges on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const now = new Date();
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const app = useTestApp(kind);

  const windows: Array<[string, Window]> = [
    ["all", {}],
    ["whole days", { from: new Date(today - 5 * DAY), to: new Date(today - DAY) }],
    ["partial edges", { from: new Date(today - 4 * DAY + 7 * HOUR + 13 * 60_000), to: new Date(today - DAY + 5 * HOUR + 31_000) }],
    ["24h", { from: new Date(now.getTime() - DAY) }],
    ["open start", { to: new Date(today - 2 * DAY + 9 * HOUR) }],
    ["inside one day", { from: new Date(today - 2 * DAY + HOUR), to: new Date(today - 2 * DAY + 20 * HOUR) }],
  ];

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    // Per day and model, sessions that retry one failing call unchanged (a stall, nudged), then:
    // succeed in the same batch (a verdict before the nudge is written), succeed in a later batch
    // (a verdict on a stored nudge), or keep retrying (a pattern that re-fires: not effective).
    for (let d = 5; d >= 0; d--) {
      const first: unknown[] = [];
      const later: unknown[] = [];
      for (const [mi, model] of MODELS.entries()) {
        for (const [vi, ending] of (["same batch", "later batch", "retries on"] as const).entries()) {
          const base = today - d * DAY + (mi * 3 + vi + 1) * 70 * 60_000;
          if (base > now.getTime() - 2 * HOUR) continue;
          const sessionId = uid(`s${d}-${mi}-${vi}`);
          const m = model ? { model } : {};
          const ts = (minute: number) => ({ ts: new Date(base + minute * 60_000).toISOString(), ...m });
          const fail = (minute: number) => result(sessionId, "fetch", { url: "https://retry.example.com/p" }, { success: false, error: "upstream said 502", httpStatus: 502 }, ts(minute));
          const succeed = (minute: number) => result(sessionId, "write", { path: `/srv/${sessionId}` }, { success: true }, ts(minute));
          first.push({ type: "session.start", id: uid(), sessionId, agent: "crawler", ...ts(0) });
          for (let i = 1; i <= 6; i++) first.push(fail(i));
          if (ending === "same batch") first.push(succeed(8));
          else if (ending === "later batch") later.push(succeed(9));
          else for (let i = 10; i <= 20; i++) later.push(fail(i));
        }
      }
      if (first.length) await ingestAccepted(app, ws.key, first);
      if (later.length) await ingestAccepted(app, ws.key, later);
    }
  });

  const raw = async <T,>(q: ReturnType<typeof sql>) => rowsOf<T>(await app.db.execute(q));
  const timeSql = (w: Window) =>
    sql.raw(`${w.from ? `and ts >= '${w.from.toISOString()}'::timestamptz` : ""} ${w.to ? `and ts < '${w.to.toISOString()}'::timestamptz` : ""}`);

  /** What the page showed before the roll-up: the aggregates of the nudge rows. */
  async function rawNudgeStats(w: Window, model?: string) {
    const where = sql`workspace_id = ${ws.workspaceId} ${timeSql(w)} ${model === undefined ? sql`` : sql`and coalesce(model, 'unknown') = ${model}`}`;
    const [totals] = await raw<{ n: number; i: number }>(sql`select count(*)::int as n, (count(*) filter (where nudge_type = 'interrupt'))::int as i from nudge where ${where}`);
    const byModel = await raw<{ k: string; sent: number; effective: number }>(sql`
      select coalesce(model, 'unknown') as k, count(*)::int as sent, (count(*) filter (where effective))::int as effective
      from nudge where ${where} and pattern_type is not null and nudge_type <> 'guidance' group by 1`);
    const byPattern = await raw<{ k: string; sent: number; effective: number }>(sql`
      select pattern_type as k, count(*)::int as sent, (count(*) filter (where effective))::int as effective
      from nudge where ${where} and pattern_type is not null and nudge_type <> 'guidance' group by 1`);
    const norm = (rows: { k: string; sent: number; effective: number }[]) => rows.map((r) => `${r.k}|${Number(r.sent)}|${Number(r.effective)}`).sort();
    return { nudges: Number(totals.n), interrupts: Number(totals.i), byModel: norm(byModel), byPattern: norm(byPattern) };
  }

  async function pageNudgeStats(w: Window, model?: string) {
    const from = w.from ?? new Date(today - 10 * DAY);
    const stats = await patternStats(app.db, { workspaceId: ws.workspaceId, days: 1, from, to: w.to, now: now.getTime(), model });
    return {
      nudges: stats.totals.nudges,
      interrupts: stats.totals.interrupts,
      byModel: stats.effectivenessByModel.map((r) => `${r.model}|${r.sent}|${r.effective}`).sort(),
      byPattern: stats.effectivenessByPattern.map((r) => `${r.patternType}|${r.sent}|${r.effective}`).sort(),
    };
  }

  it("the seed has nudges judged effective, not effective and still open, on several days", async () => {
    const rows = await raw<{ effective: boolean | null; n: number; days: number }>(sql`
      select effective, count(*)::int as n, count(distinct to_char(ts at time zone 'UTC', 'YYYY-MM-DD'))::int as days from nudge where workspace_id = ${ws.workspaceId} group by 1`);
    const by = new Map(rows.map((r) => [r.effective, r]));
    expect(Number(by.get(true)?.n ?? 0)).toBeGreaterThan(3);
    expect(Number(by.get(false)?.n ?? 0)).toBeGreaterThan(0);
    expect(Number(by.get(true)?.days ?? 0)).toBeGreaterThan(2);
  });

  it("totals, interrupts and effectiveness per model and per pattern equal the raw nudges, whole days and edges", async () => {
    for (const [name, w] of windows) {
      expect(await pageNudgeStats(w), name).toEqual(await rawNudgeStats({ from: w.from ?? new Date(today - 10 * DAY), to: w.to }));
      for (const model of ["gpt-a", "unknown"]) expect(await pageNudgeStats(w, model), `${name} / ${model}`).toEqual(await rawNudgeStats({ from: w.from ?? new Date(today - 10 * DAY), to: w.to }, model));
    }
    expect((await pageNudgeStats({})).byModel.length).toBe(3);
  });

  it("the migration's fill of existing nudges gives the roll-up the batches kept", async () => {
    const snapshot = async () => (await raw<Record<string, unknown>>(sql`select * from daily_nudge_stat order by workspace_id, day, pattern_type, model`)).map((r) => JSON.stringify(r));
    const kept = await snapshot();
    expect(kept.length).toBeGreaterThan(5);
    const migration = readFileSync(join(process.cwd(), "drizzle/0027_daily_nudge_stat_and_narrow_session_timeline.sql"), "utf8");
    const fills = migration.split("--> statement-breakpoint").filter((s) => /^\s*(--.*\n)*\s*INSERT/.test(s));
    expect(fills).toHaveLength(1);
    await app.db.execute(sql`delete from daily_nudge_stat`);
    await app.db.execute(sql.raw(fills[0]));
    expect(await snapshot()).toEqual(kept);
  });

  it("retention prunes the roll-up by the raw rows' rule: the counts still equal the raw nudges", async () => {
    const retentionDays = 3;
    const pruneAt = today + 3 * HOUR + 17 * 60_000;
    await pruneWorkspace(app.db, ws.workspaceId, retentionDays, pruneAt);
    const cutoffDay = new Date(pruneAt - retentionDays * DAY).toISOString().slice(0, 10);
    const [{ n: older }] = await raw<{ n: number }>(sql`select count(*)::int as n from daily_nudge_stat where workspace_id = ${ws.workspaceId} and day < ${cutoffDay}`);
    expect(Number(older)).toBe(0);
    const [{ n: left }] = await raw<{ n: number }>(sql`select count(*)::int as n from nudge where workspace_id = ${ws.workspaceId}`);
    expect(Number(left)).toBeGreaterThan(0);
    for (const w of [{ from: new Date(0) }, { from: new Date(today - 6 * DAY), to: new Date(today) }]) expect(await pageNudgeStats(w)).toEqual(await rawNudgeStats(w));
  });
});
