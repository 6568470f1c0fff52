/**
 * The failure-group roll-ups (daily_failure_group, daily_failure_group_member) against the failure
 * rows they stand for: after ingest through the agent API (several days and groups, sessions
 * across midnight, batches at once), after retention cuts a day, after the fingerprint backfill
 * fills old rows, and as migration 0029 fills them — each day's row equal to the raw aggregate.
 * And the Failures page's groups (listFailureGroups: counts, names, distinct counts, first/last
 * seen, sample, order, limit and sparklines) equal the raw aggregate of the window's failures, for
 * preset, custom and partial-day windows, with and without filters. PGlite and PostgreSQL.
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
import { failure } from "@/db/schema";
import { listFailureGroups, MAX_GROUP_NAMES, sparkBuckets } from "@/server/dashboard/failures";
import { fingerprintError } from "@/server/engine/failure-fingerprint";
import { backfillFingerprints } from "@/server/services/fingerprint-backfill";
import { pruneWorkspace } from "@/server/services/retention";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MIN = 60_000;

type Window = { from?: Date; to?: Date };
type Filter = { toolName?: string; severity?: string; model?: string; text?: string };

/** Messages of four groups, varying in ids and case (one group, several messages: the sample is the greatest). */
const MESSAGES = [
  (i: number) => `${i % 2 ? "UPSTREAM" : "Upstream"} said 502 for request ${1000 + i}`,
  (i: number) => `Error: ENOENT: no such file or directory, open '/srv/data/f${i}.json'`,
  () => "bash: line 3: kubectl: command not found",
  () => null,
];
const TOOLS = ["fetch", "read_file", "bash"];
const MODELS = ["gpt-a", "claude-b", undefined];

describe.each(DATABASE_KINDS)("failure-group roll-ups equal the raw failures on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const now = new Date();
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const app = useTestApp(kind);

  /** A session's failures at the given times, each of a group chosen by its index. */
  const sessionEvents = (sessionId: string, agent: string, times: number[], seed: number) => {
    const model = MODELS[seed % MODELS.length];
    const m = model ? { model } : {};
    const events: unknown[] = [{ type: "session.start", id: uid(), sessionId, agent, ...m, ts: new Date(times[0] - MIN).toISOString() }];
    times.forEach((t, i) => {
      const n = seed + i;
      const tool = TOOLS[n % TOOLS.length];
      const error = MESSAGES[n % MESSAGES.length](n);
      const outcome = error === null ? { success: false, httpStatus: 500 } : { success: false, error, httpStatus: 502 };
      events.push(result(sessionId, tool, { path: `/srv/p${n % 5}` }, outcome, { ts: new Date(t).toISOString(), ...m }));
    });
    return events;
  };

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    // Eight days back: per day two sessions of failures spread over the day, by two agents.
    for (let d = 8; d >= 1; d--) {
      const events: unknown[] = [];
      for (const [si, agent] of ["crawler", "indexer"].entries())
        events.push(...sessionEvents(uid(`s${d}-${si}`), agent, Array.from({ length: 9 }, (_, i) => today - d * DAY + (si * 30 + i * 150 + 7) * MIN), d * 7 + si));
      await ingestAccepted(app, ws.key, events);
    }
    // Sessions across midnight: failures before and after it, in one batch and in two.
    for (const d of [5, 2]) {
      const midnight = today - d * DAY;
      await ingestAccepted(app, ws.key, sessionEvents(uid(`mid${d}`), "nightly", [midnight - 40 * MIN, midnight - 5 * MIN, midnight + 10 * MIN, midnight + 50 * MIN], d));
      const split = uid(`mid2-${d}`);
      await ingestAccepted(app, ws.key, sessionEvents(split, "nightly", [midnight - 20 * MIN, midnight - 2 * MIN], d + 1));
      await ingestAccepted(app, ws.key, [result(split, "fetch", { path: "/srv/p1" }, { success: false, error: MESSAGES[0](77), httpStatus: 502 }, { ts: new Date(midnight + 3 * MIN).toISOString() })]);
    }
    // Batches at once adding to the same days, groups and members.
    await Promise.all(
      Array.from({ length: 6 }, (_, b) => ingestAccepted(app, ws.key, sessionEvents(uid(`c${b}`), b % 2 ? "crawler" : "indexer", [today - 3 * DAY + 5 * HOUR + b * MIN, today - 3 * DAY + 9 * HOUR + b * MIN, today - 2 * DAY + HOUR + b * MIN], b))),
    );
    // The last hours, up to a few minutes ago.
    await ingestAccepted(app, ws.key, sessionEvents(uid("recent"), "crawler", [now.getTime() - 3 * HOUR, now.getTime() - 2 * HOUR, now.getTime() - 5 * MIN], 3));
  });

  const raw = async <T,>(q: ReturnType<typeof sql>) => rowsOf<T>(await app.db.execute(q));
  const json = (rows: unknown[]) => rows.map((r) => JSON.stringify(r));

  /** Each day's roll-up rows of the workspace, and the aggregate of its failure rows they stand for. */
  async function rollupsAndRaw(workspaceId: string) {
    const groups = await raw(sql`
      select day, fingerprint, failures, to_json(first_at) as first_at, to_json(last_at) as last_at, error_message
      from daily_failure_group where workspace_id = ${workspaceId} order by day, fingerprint`);
    const rawGroups = await raw(sql`
      select to_char(ts at time zone 'UTC', 'YYYY-MM-DD') as day, fingerprint, count(*)::int as failures, to_json(min(ts)) as first_at, to_json(max(ts)) as last_at, max(error_message) as error_message
      from failure where workspace_id = ${workspaceId} and fingerprint is not null group by 1, 2 order by 1, 2`);
    const members = await raw(sql`
      select day, fingerprint, kind, value from daily_failure_group_member where workspace_id = ${workspaceId} order by day, fingerprint, kind, value`);
    const rawMembers = await raw(sql`
      select distinct to_char(f.ts at time zone 'UTC', 'YYYY-MM-DD') as day, f.fingerprint, m.kind, m.value
      from failure f cross join lateral (values ('key', f.failure_key), ('tool', f.tool_name), ('agent', f.agent), ('session', f.session_id)) as m(kind, value)
      where f.workspace_id = ${workspaceId} and f.fingerprint is not null order by 1, 2, 3, 4`);
    return { rollups: { groups: json(groups), members: json(members) }, raw: { groups: json(rawGroups), members: json(rawMembers) } };
  }

  /** What the page showed from the failure rows alone: the groups' aggregate and their failures per bucket. */
  async function rawGroups(workspaceId: string, w: Window, f: Filter = {}, limit = 100) {
    const where = sql`workspace_id = ${workspaceId} and fingerprint is not null
      ${w.from ? sql`and ts >= ${w.from.toISOString()}::timestamptz` : sql``} ${w.to ? sql`and ts < ${w.to.toISOString()}::timestamptz` : sql``}
      ${f.toolName ? sql`and tool_name = ${f.toolName}` : sql``} ${f.severity ? sql`and severity = ${f.severity}` : sql``}
      ${f.model ? sql`and model = ${f.model}` : sql``} ${f.text ? sql`and error_message ilike ${`%${f.text}%`}` : sql``}`;
    const rows = await raw<{ fingerprint: string; message: string | null; count: number; tools: string[]; keys: string[]; key_count: number; agents: string[]; sessions: number; first: string; last: string }>(sql`
      select fingerprint, max(error_message) as message, count(*)::int as count, array_agg(distinct tool_name) as tools, array_agg(distinct failure_key) as keys,
        count(distinct failure_key)::int as key_count, array_agg(distinct agent) as agents, count(distinct session_id)::int as sessions, to_json(min(ts)) #>> '{}' as first, to_json(max(ts)) #>> '{}' as last
      from failure where ${where} group by fingerprint order by count(*) desc, max(ts) desc, fingerprint limit ${limit}`);
    const groups = rows.map((r) => ({
      fingerprint: r.fingerprint,
      sample: fingerprintError(r.message).sample,
      count: Number(r.count),
      toolNames: r.tools.slice(0, MAX_GROUP_NAMES),
      failureKeys: r.keys.slice(0, MAX_GROUP_NAMES),
      sessions: Number(r.sessions),
      agents: r.agents.slice(0, MAX_GROUP_NAMES),
      keyCount: Number(r.key_count),
      firstSeen: new Date(r.first).toISOString(),
      lastSeen: new Date(r.last).toISOString(),
    }));
    if (!groups.length) return { groups, daily: [] };
    const to = w.to && w.to < now ? w.to : now;
    const earliest = Math.min(to.getTime(), ...groups.map((g) => Date.parse(g.firstSeen)));
    const from = w.from ?? new Date(Math.min(earliest, to.getTime() - 7 * DAY));
    const { start, bucketMs, count } = sparkBuckets(from, to);
    const buckets = await raw<{ fingerprint: string; b: number; n: number }>(sql`
      select fingerprint, floor((extract(epoch from ts) * 1000 - ${start}) / ${bucketMs})::int as b, count(*)::int as n
      from failure where ${where} and ts >= ${from.toISOString()}::timestamptz and ts < ${to.toISOString()}::timestamptz group by 1, 2`);
    const daily = groups.map((g) => {
      const series = new Array<number>(count).fill(0);
      for (const b of buckets) if (b.fingerprint === g.fingerprint) series[Number(b.b)] += Number(b.n);
      return { series, bucketMs };
    });
    return { groups, daily };
  }

  async function pageGroups(workspaceId: string, w: Window, f: Filter = {}, limit?: number) {
    const groups = await listFailureGroups(app.db, workspaceId, { ...w, ...f, limit, withDaily: true, now });
    return {
      groups: groups.map(({ daily: _daily, trendBucketMs: _bucket, ...g }) => g),
      daily: groups.map((g) => ({ series: g.daily, bucketMs: g.trendBucketMs })),
    };
  }

  const windows = (): Array<[string, Window]> => [
    ["24h", { from: new Date(now.getTime() - DAY) }],
    ["7d", { from: new Date(now.getTime() - 7 * DAY) }],
    ["30d", { from: new Date(now.getTime() - 30 * DAY) }],
    ["all", {}],
    ["custom, partial edges", { from: new Date(today - 6 * DAY + 7 * HOUR + 13 * MIN), to: new Date(today - DAY + 5 * HOUR + 31_000) }],
    ["custom, whole days", { from: new Date(today - 8 * DAY), to: new Date(today - 2 * DAY) }],
    ["inside one day", { from: new Date(today - 4 * DAY + HOUR), to: new Date(today - 4 * DAY + 20 * HOUR) }],
    ["across one midnight", { from: new Date(today - 3 * DAY + 20 * HOUR), to: new Date(today - 2 * DAY + 4 * HOUR) }],
    ["open start", { to: new Date(today - 2 * DAY + 9 * HOUR) }],
  ];

  async function expectPageEqualsRaw(workspaceId: string) {
    for (const [name, w] of windows()) {
      const expected = await rawGroups(workspaceId, w);
      expect(await pageGroups(workspaceId, w), name).toEqual(expected);
      expect(await pageGroups(workspaceId, w, {}, 2), `${name}, limit 2`).toEqual({ groups: expected.groups.slice(0, 2), daily: expected.daily.slice(0, 2) });
    }
  }

  it("the seed has several groups over several days, sessions across midnight, and a group with several messages", async () => {
    const [r] = await raw<{ groups: number; days: number; across: number; messages: number }>(sql`
      select count(distinct fingerprint)::int as groups, count(distinct to_char(ts at time zone 'UTC', 'YYYY-MM-DD'))::int as days,
        (select count(*)::int from (select session_id from failure where workspace_id = ${ws.workspaceId} group by 1 having count(distinct to_char(ts at time zone 'UTC', 'YYYY-MM-DD')) > 1) s) as across,
        (select max(n)::int from (select count(distinct error_message) as n from failure where workspace_id = ${ws.workspaceId} group by fingerprint) m) as messages
      from failure where workspace_id = ${ws.workspaceId}`);
    expect(Number(r.groups)).toBe(4);
    expect(Number(r.days)).toBeGreaterThanOrEqual(8);
    expect(Number(r.across)).toBeGreaterThanOrEqual(2);
    expect(Number(r.messages)).toBeGreaterThan(1);
  });

  it("after ingest, each day's roll-up rows equal the aggregate of the failure rows", async () => {
    const { rollups, raw: fromRows } = await rollupsAndRaw(ws.workspaceId);
    expect(rollups.groups.length).toBeGreaterThan(20);
    expect(rollups).toEqual(fromRows);
  });

  it("the groups of every window equal the raw aggregate: counts, names, distinct counts, first/last seen, sample, order, limit and sparklines", async () => {
    await expectPageEqualsRaw(ws.workspaceId);
    const week = await pageGroups(ws.workspaceId, { from: new Date(now.getTime() - 7 * DAY) });
    expect(week.groups.length).toBe(4);
    expect(week.groups.some((g) => g.sessions > 1 && g.keyCount > 1 && g.toolNames.length > 1)).toBe(true);
  });

  it("with a tool, severity, model or text filter, the groups equal the filtered raw aggregate", async () => {
    const filters: Filter[] = [{ toolName: "fetch" }, { severity: "error" }, { model: "gpt-a" }, { text: "enoent" }, { toolName: "bash", text: "KUBECTL" }];
    for (const f of filters)
      for (const [name, w] of windows()) expect(await pageGroups(ws.workspaceId, w, f), `${name} ${JSON.stringify(f)}`).toEqual(await rawGroups(ws.workspaceId, w, f));
  });

  it("a group with more keys, tools and agents than it lists names the first ones of the whole days and the edges together", async () => {
    const wide = await app.seedWorkspace();
    // One group; its names alternate between the custom window's front edge (odd), its whole days
    // (even) and its back edge (every fifth), so the first MAX_GROUP_NAMES come from all three.
    const parts: Array<[number, (n: number) => boolean]> = [
      [today - 6 * DAY + 10 * HOUR, (n) => n % 2 === 1],
      [today - 3 * DAY + 10 * HOUR, (n) => n % 2 === 0],
      [today - DAY + 2 * HOUR, (n) => n % 5 === 0],
    ];
    for (const [base, takes] of parts) {
      const events: unknown[] = [];
      for (let n = 0; n < 2 * MAX_GROUP_NAMES; n++) {
        if (!takes(n)) continue;
        const name = String(n).padStart(2, "0");
        // A session per name, and one across all three parts.
        for (const s of [`wide-${name}`, "wide-all"]) {
          events.push({ type: "session.start", id: uid(), sessionId: s, agent: `agent-${name}`, ts: new Date(base + n * MIN).toISOString() });
          events.push(result(s, `tool_${name}`, { path: `/srv/k${name}` }, { success: false, error: MESSAGES[2](0), httpStatus: 502 }, { ts: new Date(base + n * MIN + 1000).toISOString() }));
        }
      }
      await ingestAccepted(app, wide.key, events);
    }
    const [group] = (await rawGroups(wide.workspaceId, {})).groups;
    expect(group.toolNames).toHaveLength(MAX_GROUP_NAMES);
    expect(group.keyCount).toBeGreaterThan(MAX_GROUP_NAMES);
    expect(group.agents).toHaveLength(MAX_GROUP_NAMES);
    await expectPageEqualsRaw(wide.workspaceId);
  });

  it("the migration's fill of existing failures gives the roll-ups the batches kept", async () => {
    const snapshot = async () => ({
      groups: json(await raw(sql`select workspace_id, day, fingerprint, failures, to_json(first_at) as f, to_json(last_at) as l, error_message from daily_failure_group order by 1, 2, 3`)),
      members: json(await raw(sql`select * from daily_failure_group_member order by 1, 2, 3, 4, 5`)),
    });
    const kept = await snapshot();
    expect(kept.members.length).toBeGreaterThan(50);
    const migration = readFileSync(join(process.cwd(), "drizzle/0029_failure_group_and_key_total_rollups.sql"), "utf8");
    const fills = migration.split("--> statement-breakpoint").filter((s) => /^\s*(--.*\n)*\s*INSERT INTO "daily_failure_group/.test(s));
    expect(fills).toHaveLength(2);
    await app.db.execute(sql`delete from daily_failure_group`);
    await app.db.execute(sql`delete from daily_failure_group_member`);
    for (const f of fills) await app.db.execute(sql.raw(f));
    expect(await snapshot()).toEqual(kept);
  });

  it("the fingerprint backfill adds old failures to the roll-ups once, even with two passes at once", async () => {
    const other = await app.seedWorkspace();
    await ingestAccepted(app, other.key, sessionEvents(uid("new"), "crawler", [today - 2 * DAY + 3 * HOUR, today - DAY + 3 * HOUR], 1));
    // Rows as a release before fingerprints wrote them, on days the roll-ups already hold and new ones.
    await app.db.insert(failure).values(
      Array.from({ length: 40 }, (_, i) => ({
        workspaceId: other.workspaceId,
        eventId: uid("old"),
        failureKey: `fetch|p=${i % 3}`,
        toolName: i % 2 ? "fetch" : "read_file",
        severity: "error",
        weight: 1,
        ts: new Date(today - (i % 5) * DAY - (i + 1) * 23 * MIN),
        sessionId: `old-${i % 4}`,
        agent: "legacy",
        errorMessage: MESSAGES[i % MESSAGES.length](i),
      })),
    );
    const before = await rollupsAndRaw(other.workspaceId);
    expect(before.rollups).toEqual(before.raw);
    await Promise.all([backfillFingerprints(app.db, { batchSize: 7, pauseMs: 0 }), backfillFingerprints(app.db, { batchSize: 7, pauseMs: 0 })]);
    await backfillFingerprints(app.db, { batchSize: 7, pauseMs: 0 });
    const [{ n }] = await raw<{ n: number }>(sql`select count(*)::int as n from failure where workspace_id = ${other.workspaceId} and fingerprint is null`);
    expect(Number(n)).toBe(0);
    const after = await rollupsAndRaw(other.workspaceId);
    expect(after.rollups.groups.length).toBeGreaterThan(before.rollups.groups.length);
    expect(after.rollups).toEqual(after.raw);
    await expectPageEqualsRaw(other.workspaceId);
  });

  it("retention deletes the days before the cutoff's and recounts the cutoff's day from the rows it keeps", async () => {
    const retentionDays = 4;
    const pruneAt = today + 14 * HOUR + 17 * MIN;
    const cutoffDay = new Date(pruneAt - retentionDays * DAY).toISOString().slice(0, 10);
    const [{ n: cut }] = await raw<{ n: number }>(sql`select count(*)::int as n from failure where workspace_id = ${ws.workspaceId} and to_char(ts at time zone 'UTC', 'YYYY-MM-DD') = ${cutoffDay}`);
    expect(Number(cut)).toBeGreaterThan(0);
    await pruneWorkspace(app.db, ws.workspaceId, retentionDays, pruneAt);
    const [{ n: older }] = await raw<{ n: number }>(sql`
      select ((select count(*) from daily_failure_group where workspace_id = ${ws.workspaceId} and day < ${cutoffDay}) + (select count(*) from daily_failure_group_member where workspace_id = ${ws.workspaceId} and day < ${cutoffDay}))::int as n`);
    expect(Number(older)).toBe(0);
    const [{ n: kept }] = await raw<{ n: number }>(sql`select count(*)::int as n from failure where workspace_id = ${ws.workspaceId} and to_char(ts at time zone 'UTC', 'YYYY-MM-DD') = ${cutoffDay}`);
    expect(Number(kept)).toBeGreaterThan(0);
    expect(Number(kept)).toBeLessThan(Number(cut));
    const { rollups, raw: fromRows } = await rollupsAndRaw(ws.workspaceId);
    expect(rollups).toEqual(fromRows);
    await expectPageEqualsRaw(ws.workspaceId);
  });
});
