/**
 * The dashboard's daily roll-ups against the raw rows they stand for: events go through the real
 * ingest path, and every page query that reads a roll-up (Models with a range, Overview's top keys
 * and 24 h failures, the Failures total, Patterns, the Tools window) must return exactly what the
 * raw aggregate returns — for whole-day ranges and for ranges with partial edge days. Failures pages
 * by keyset cursors visit every row once, in order, ties on the timestamp included; retention
 * prunes the roll-ups by the raw rows' rule.
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
import { listFailures, NO_MODEL } from "@/server/dashboard/failures";
import { getLiveCounts, getTopFailingKeys } from "@/server/dashboard/overview";
import { modelMatrix, patternStats } from "@/server/dashboard/patterns-data";
import { countKeyStates, failuresInWindowSql } from "@/server/dashboard/key-counts";
import { listKeys } from "@/server/dashboard/tools";
import { splitByDay } from "@/server/dashboard/day-split";
import { pruneWorkspace } from "@/server/services/retention";
import { keyState } from "@/db/schema";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MODELS = ["gpt-a", "claude-b", undefined] as const;
const HOSTS = ["a.example.com", "b.example.com", "c.example.com", "d.example.com"];

type Window = { from?: Date; to?: Date };

describe.each(DATABASE_KINDS)("dashboard roll-ups equal the raw rows on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const now = new Date();
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const app = useTestApp(kind);

  const windows: Array<[string, Window]> = [
    ["whole days", { from: new Date(today - 5 * DAY), to: new Date(today - DAY) }],
    ["partial edges", { from: new Date(today - 4 * DAY + 7 * HOUR + 13 * 60_000), to: new Date(today - DAY + 5 * HOUR + 31_000) }],
    ["24h", { from: new Date(now.getTime() - DAY) }],
    ["open start", { to: new Date(today - 2 * DAY + 9 * HOUR) }],
    ["from a midnight, open end", { from: new Date(today - 3 * DAY) }],
    ["inside one day", { from: new Date(today - 2 * DAY + HOUR), to: new Date(today - 2 * DAY + 20 * HOUR) }],
    ["across one midnight", { from: new Date(today - 3 * DAY + 20 * HOUR), to: new Date(today - 2 * DAY + 4 * HOUR) }],
  ];

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    // Six days of sessions: per day and model one session of results on four hosts, every third
    // call failing (a retry loop on the same error is a stall), at times spread over the day; and
    // per day five failures at one instant (ties on the timestamp).
    for (let d = 6; d >= 0; d--) {
      const events: unknown[] = [];
      for (const [mi, model] of MODELS.entries()) {
        const sessionId = uid(`s${d}-${mi}`);
        const base = today - d * DAY + (mi + 1) * 50 * 60_000;
        if (base > now.getTime() - HOUR) continue;
        events.push({ type: "session.start", id: uid(), sessionId, agent: "crawler", ...(model ? { model } : {}), ts: new Date(base).toISOString() });
        for (let i = 0; i < 24; i++) {
          const ts = Math.min(base + (i + 1) * 37 * 60_000, now.getTime() - 60_000);
          // The last calls retry one failing call unchanged: an error retry loop.
          const retry = i >= 19;
          const failed = i % 3 === 0 || retry;
          const host = retry ? "retry.example.com" : HOSTS[(i + d + mi) % HOSTS.length];
          events.push(
            result(sessionId, "fetch", { url: `https://${host}/p` }, failed ? { success: false, error: "upstream said 502", httpStatus: 502 } : { success: true }, {
              ts: new Date(ts).toISOString(),
              ...(model ? { model } : {}),
            }),
          );
        }
      }
      const tied = today - d * DAY + 11 * HOUR;
      if (tied < now.getTime() - HOUR)
        for (let k = 0; k < 5; k++)
          events.push(
            result(uid(`tie${d}`), "search", { q: "x" }, { success: false, error: "timeout", httpStatus: 504 }, { ts: new Date(tied).toISOString(), model: "gpt-a" }),
          );
      if (events.length) await ingestAccepted(app, ws.key, events);
    }
  });

  const raw = async <T,>(q: ReturnType<typeof sql>) => rowsOf<T>(await app.db.execute(q));
  const timeSql = (col: string, w: Window) =>
    sql.raw(`${w.from ? `and ${col} >= '${w.from.toISOString()}'::timestamptz` : ""} ${w.to ? `and ${col} < '${w.to.toISOString()}'::timestamptz` : ""}`);

  it("the windows under test have whole days and edges of both kinds", () => {
    expect(splitByDay(windows[0][1])).toMatchObject({ edges: [] });
    expect(splitByDay(windows[1][1]).edges).toHaveLength(2);
    expect(splitByDay(windows[5][1]).days).toBeNull();
  });

  it("Models with a range: each cell equals the raw tool.result aggregate", async () => {
    for (const [name, w] of windows) {
      const m = await modelMatrix(app.db, ws.workspaceId, 10_000, w);
      const expected = await raw<{ k: string; m: string; a: number; f: number; last: string | Date | null }>(sql`
        select failure_key as k, coalesce(model, 'unknown') as m, count(*)::int as a, (count(*) filter (where failed))::int as f, max(ts) filter (where failed) as last
        from event where workspace_id = ${ws.workspaceId} and type = 'tool.result' and failure_key is not null ${timeSql("ts", w)}
        group by 1, 2`);
      const got = Object.entries(m.cells).flatMap(([model, byKey]) => Object.entries(byKey).map(([k, c]) => ({ k, m: model, a: c.attempts, f: c.failures, last: c.lastFailureAt })));
      const norm = (rows: { k: string; m: string; a: number; f: number; last: string | Date | null }[]) =>
        rows.map((r) => `${r.k}|${r.m}|${Number(r.a)}|${Number(r.f)}|${r.last ? new Date(r.last).toISOString() : null}`).sort();
      expect(norm(got), name).toEqual(norm(expected));
      if (name !== "inside one day") expect(got.length, name).toBeGreaterThan(0);
    }
  });

  it("Overview: top keys and the 24 h failures equal counts of the failure rows", async () => {
    for (const [name, w] of windows) {
      const top = await getTopFailingKeys(app.db, ws.workspaceId, 10_000, w);
      const expected = await raw<{ k: string; n: number; last: string | Date }>(sql`
        select failure_key as k, count(*)::int as n, max(ts) as last from failure where workspace_id = ${ws.workspaceId} ${timeSql("ts", w)}
        group by 1 order by count(*) desc, max(ts) desc, failure_key`);
      expect(top.map((t) => [t.failureKey, t.totalFailures, t.lastFailureAt]), name).toEqual(expected.map((e) => [e.k, Number(e.n), new Date(e.last).toISOString()]));
    }
    const live = await getLiveCounts(app.db, ws.workspaceId, now);
    const [day] = await raw<{ n: number }>(sql`select count(*)::int as n from failure where workspace_id = ${ws.workspaceId} and ts >= ${new Date(now.getTime() - DAY).toISOString()}::timestamptz`);
    expect(live.failures24h).toBe(Number(day.n));
    expect(live.failures24h).toBeGreaterThan(0);
  });

  it("Failures: the total equals the filtered count of failure rows", async () => {
    for (const [name, w] of windows) {
      for (const [fname, filter, where] of [
        ["none", {}, sql``],
        ["tool", { tool: "search" }, sql`and tool_name = 'search'`],
        ["model", { model: "claude-b" }, sql`and model = 'claude-b'`],
        ["no model", { model: NO_MODEL }, sql`and model is null`],
        ["key", { failureKey: "fetch|domain=a.example.com" }, sql`and failure_key = 'fetch|domain=a.example.com'`],
        ["severity (raw)", { severity: "moderate" }, sql`and severity = 'moderate'`],
      ] as const) {
        const list = await listFailures(app.db, ws.workspaceId, { ...filter, from: w.from, to: w.to });
        const [c] = await raw<{ n: number }>(sql`select count(*)::int as n from failure where workspace_id = ${ws.workspaceId} ${timeSql("ts", w)} ${where}`);
        expect(list.total, `${name} / ${fname}`).toBe(Number(c.n));
      }
    }
  });

  it("Patterns: detections per day, type, severity and model equal the raw detections", async () => {
    const [{ n: all }] = await raw<{ n: number }>(sql`select count(*)::int as n from pattern_detection where workspace_id = ${ws.workspaceId}`);
    expect(Number(all)).toBeGreaterThan(0);
    for (const [name, w] of windows) {
      const from = w.from ?? new Date(today - 10 * DAY);
      const days = Array.from({ length: Math.ceil(((w.to ?? now).getTime() - from.getTime()) / DAY) + 1 }, (_, i) => new Date(Math.floor(from.getTime() / DAY) * DAY + i * DAY).toISOString().slice(0, 10));
      const stats = await patternStats(app.db, { workspaceId: ws.workspaceId, days, from, to: w.to, now: now.getTime() });
      const rawWindow = timeSql("ts", { from, to: w.to });
      const byType = await raw<{ day: string; t: string; n: number }>(sql`
        select to_char(ts at time zone 'UTC', 'YYYY-MM-DD') as day, pattern_type as t, count(*)::int as n from pattern_detection
        where workspace_id = ${ws.workspaceId} ${rawWindow} group by 1, 2`);
      const bySev = await raw<{ t: string; s: string; n: number }>(sql`
        select pattern_type as t, severity as s, count(*)::int as n from pattern_detection where workspace_id = ${ws.workspaceId} ${rawWindow} group by 1, 2`);
      const [tot] = await raw<{ n: number; s: number }>(sql`
        select count(*)::int as n, count(distinct session_id)::int as s from pattern_detection where workspace_id = ${ws.workspaceId} ${rawWindow}`);
      expect(stats.totals.detections, name).toBe(Number(tot.n));
      expect(Number(stats.totals.sessions), name).toBe(Number(tot.s));
      const gotType = stats.byType.flatMap((row) => stats.types.filter((t) => Number(row[t]) > 0).map((t) => `${row.day}|${t}|${row[t]}`)).sort();
      expect(gotType, name).toEqual(byType.map((r) => `${r.day}|${r.t}|${r.n}`).sort());
      const gotSev = stats.severityByType.flatMap((r) => (["minor", "moderate", "severe"] as const).filter((s) => r[s] > 0).map((s) => `${r.patternType}|${s}|${r[s]}`)).sort();
      expect(gotSev, name).toEqual(bySev.map((r) => `${r.t}|${r.s}|${r.n}`).sort());
    }
  });

  it("Tools with a window: the EXISTS test selects the keys the per-key count did", async () => {
    for (const [name, w] of windows.filter(([, w]) => w.to)) {
      const counts = await countKeyStates(app.db, ws.workspaceId, w);
      const [c] = await app.db
        .select({ n: sql<number>`count(*)::int` })
        .from(keyState)
        .where(
          sql`${keyState.workspaceId} = ${ws.workspaceId} ${w.from ? sql`and ${keyState.lastEventAt} >= ${w.from.toISOString()}::timestamptz` : sql``}
            and (${keyState.lastEventAt} < ${w.to!.toISOString()}::timestamptz or ${failuresInWindowSql(w)} > 0)`,
        );
      expect(counts.total, name).toBe(Number(c.n));
    }
  });

  it("Tools with a window: each row's failures in the window, one grouped count, equal the per-row count", async () => {
    for (const [name, w] of windows) {
      const page = await listKeys(app.db, ws.workspaceId, { window: w, pageSize: 200 });
      const expected = await app.db
        .select({ k: keyState.failureKey, n: failuresInWindowSql(w) })
        .from(keyState)
        .where(sql`${keyState.workspaceId} = ${ws.workspaceId}`);
      const perRow = new Map(expected.map((r) => [r.k, Number(r.n)]));
      expect(page.rows.length, name).toBeGreaterThan(0);
      expect(page.rows.map((r) => [r.failureKey, r.windowFailures]), name).toEqual(page.rows.map((r) => [r.failureKey, perRow.get(r.failureKey)]));
      if (name === "whole days") expect(page.rows.filter((r) => r.windowFailures! > 0).length).toBeGreaterThan(1);
    }
  });

  it("Failures by keyset cursors: every row once, newest first, ties on the timestamp by id; and back again", async () => {
    const expected = await raw<{ id: number }>(sql`select id from failure where workspace_id = ${ws.workspaceId} order by ts desc, id desc`);
    const ids = expected.map((r) => Number(r.id));
    expect(ids.length).toBeGreaterThan(20);
    const seen: number[] = [];
    let page = await listFailures(app.db, ws.workspaceId, { pageSize: 4 });
    expect(page.prevCursor).toBeNull();
    const pages = [page];
    seen.push(...page.rows.map((r) => r.id));
    while (page.nextCursor) {
      page = await listFailures(app.db, ws.workspaceId, { pageSize: 4, after: page.nextCursor });
      pages.push(page);
      seen.push(...page.rows.map((r) => r.id));
      expect(page.total).toBe(ids.length);
    }
    expect(seen).toEqual(ids);
    // Back from the last page by `before` cursors: the same pages, in reverse.
    let back = pages[pages.length - 1];
    for (let i = pages.length - 2; i >= 0; i--) {
      back = await listFailures(app.db, ws.workspaceId, { pageSize: 4, before: back.prevCursor! });
      expect(back.rows.map((r) => r.id)).toEqual(pages[i].rows.map((r) => r.id));
    }
    expect(back.prevCursor).toBeNull();
    // A tool's failures with the same cursor rule: only its rows, still in order.
    const search = await raw<{ id: number }>(sql`select id from failure where workspace_id = ${ws.workspaceId} and tool_name = 'search' order by ts desc, id desc`);
    const got: number[] = [];
    let p = await listFailures(app.db, ws.workspaceId, { tool: "search", pageSize: 3 });
    got.push(...p.rows.map((r) => r.id));
    while (p.nextCursor) {
      p = await listFailures(app.db, ws.workspaceId, { tool: "search", pageSize: 3, after: p.nextCursor });
      got.push(...p.rows.map((r) => r.id));
    }
    expect(got).toEqual(search.map((r) => Number(r.id)));
  });

  it("the migration's fill of existing rows gives the roll-ups the batches kept", async () => {
    const snapshot = async () => ({
      keys: (await raw<Record<string, unknown>>(sql`select * from daily_key_stat order by workspace_id, day, failure_key, model`)).map((r) => JSON.stringify(r)),
      patterns: (await raw<Record<string, unknown>>(sql`select * from daily_pattern_stat order by workspace_id, day, pattern_type, severity, model`)).map((r) => JSON.stringify(r)),
    });
    const kept = await snapshot();
    expect(kept.keys.length).toBeGreaterThan(0);
    const migration = readFileSync(join(process.cwd(), "drizzle/0023_daily_key_and_pattern_rollups.sql"), "utf8");
    const fills = migration.split("--> statement-breakpoint").filter((s) => /^\s*(--.*\n)*\s*INSERT/.test(s));
    expect(fills).toHaveLength(2);
    await app.db.execute(sql`delete from daily_key_stat`);
    await app.db.execute(sql`delete from daily_pattern_stat`);
    for (const f of fills) await app.db.execute(sql.raw(f));
    expect(await snapshot()).toEqual(kept);
  });

  it("retention prunes the roll-ups by the raw rows' rule: the pages still equal the raw aggregates", async () => {
    // A cutoff in the middle of a day: that day's roll-up keeps only the rows left.
    const retentionDays = 3;
    const pruneAt = today + 14 * HOUR + 17 * 60_000;
    await pruneWorkspace(app.db, ws.workspaceId, retentionDays, pruneAt);
    const [{ n: left }] = await raw<{ n: number }>(sql`select count(*)::int as n from failure where workspace_id = ${ws.workspaceId}`);
    expect(Number(left)).toBeGreaterThan(0);
    const cutoffDay = new Date(pruneAt - retentionDays * DAY).toISOString().slice(0, 10);
    const [{ n: older }] = await raw<{ n: number }>(sql`select count(*)::int as n from daily_key_stat where workspace_id = ${ws.workspaceId} and day < ${cutoffDay}`);
    expect(Number(older)).toBe(0);
    for (const w of [{ from: new Date(0) }, { from: new Date(today - 6 * DAY), to: new Date(today) }]) {
      const top = await getTopFailingKeys(app.db, ws.workspaceId, 10_000, w);
      const expected = await raw<{ k: string; n: number }>(sql`
        select failure_key as k, count(*)::int as n from failure where workspace_id = ${ws.workspaceId} ${timeSql("ts", w)} group by 1 order by count(*) desc, max(ts) desc, failure_key`);
      expect(top.map((t) => [t.failureKey, t.totalFailures])).toEqual(expected.map((e) => [e.k, Number(e.n)]));
      expect((await listFailures(app.db, ws.workspaceId, w)).total).toBe(expected.reduce((a, e) => a + Number(e.n), 0));
      const m = await modelMatrix(app.db, ws.workspaceId, 10_000, w);
      const attempts = Object.values(m.cells).flatMap((byKey) => Object.values(byKey)).reduce((a, c) => a + c.attempts, 0);
      const [r] = await raw<{ n: number }>(sql`select count(*)::int as n from event where workspace_id = ${ws.workspaceId} and type = 'tool.result' and failure_key is not null ${timeSql("ts", w)}`);
      expect(attempts).toBe(Number(r.n));
      const [d] = await raw<{ n: number }>(sql`select count(*)::int as n from pattern_detection where workspace_id = ${ws.workspaceId} ${timeSql("ts", w)}`);
      const stats = await patternStats(app.db, { workspaceId: ws.workspaceId, days: 7, from: w.from, to: w.to, now: now.getTime() });
      expect(stats.totals.detections).toBe(Number(d.n));
    }
  });
});
