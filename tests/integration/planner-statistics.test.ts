/**
 * Planner statistics (server/services/planner-statistics.ts): PGlite never runs autovacuum, so
 * Vigil analyzes its tables itself once enough events were written — after which guard.check's
 * session and key-state reads go through their primary keys instead of an index that only matches
 * `workspace_id` (which filtered out every other session of the workspace).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { call, result, uid } from "../support/agent";
import { ensureEventPartitions } from "@/server/services/partitions";
import {
  ANALYZE_BASE_THRESHOLD,
  EMBEDDED_STATISTICS_TARGET,
  analyzeDue,
  analyzeInProgress,
  analyzeTables,
  embeddedAnalyzePlan,
  keepPlannerStatistics,
  tablesToAnalyze,
} from "@/server/services/planner-statistics";

function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}

describe("analyzeDue (autovacuum's rule)", () => {
  it("asks for an analyze at 1,000 events plus 10 % of those before, at most once a minute", () => {
    const now = 1_800_000_000_000;
    expect(analyzeDue(999, 0, null, now)).toBe(false);
    expect(analyzeDue(1_000, 0, null, now)).toBe(true);
    expect(analyzeDue(5_999, 50_000, now - 120_000, now)).toBe(false);
    expect(analyzeDue(6_000, 50_000, now - 120_000, now)).toBe(true);
    expect(analyzeDue(6_000, 50_000, now - 59_000, now)).toBe(false);
    expect(analyzeDue(6_000, 50_000, now - 60_000, now)).toBe(true);
  });
});

describe("tablesToAnalyze", () => {
  const all = ["event", "agent_session", "key_state"];
  it("takes every table where no autovacuum runs: PGlite, or a server with it off", () => {
    expect(tablesToAnalyze(all, null)).toEqual(all);
    expect(tablesToAnalyze(all, { autovacuum: false, neverAnalyzed: [] })).toEqual(all);
  });
  it("on a server with autovacuum, only the tables nothing analyzed yet", () => {
    expect(tablesToAnalyze(all, { autovacuum: true, neverAnalyzed: ["key_state", "event"] })).toEqual(["event", "key_state"]);
    expect(tablesToAnalyze(all, { autovacuum: true, neverAnalyzed: [] })).toEqual([]);
  });
});

describe("embeddedAnalyzePlan (PGlite: what one analyze takes)", () => {
  const tables = ["agent_session", "event", "event_id", "key_state"];
  const sizes = (entries: [string, number][]) => new Map(entries);
  it("takes every other table, the parent's sample the first time, and every partition it never analyzed", () => {
    const now = sizes([["event_default", 0], ["event_p20261129", 8192], ["event_p20261130", 81920]]);
    expect(embeddedAnalyzePlan(tables, now, new Map(), null)).toEqual({
      tables: ["agent_session", "event_id", "key_state"],
      parent: true,
      partitions: ["event_default", "event_p20261129", "event_p20261130"],
    });
  });
  it("then only the partitions whose size changed, and the parent's sample once they changed by more than 10 % together", () => {
    const before = sizes([["event_default", 0], ["event_p20261129", 8192], ["event_p20261130", 81920]]);
    expect(embeddedAnalyzePlan(tables, before, before, 90112)).toMatchObject({ parent: false, partitions: [] });
    const grown = sizes([["event_default", 0], ["event_p20261129", 8192], ["event_p20261130", 90112]]);
    expect(embeddedAnalyzePlan(tables, grown, before, 90112)).toMatchObject({ parent: false, partitions: ["event_p20261130"] });
    const more = sizes([["event_default", 0], ["event_p20261129", 8192], ["event_p20261130", 98304], ["event_p20261201", 8192]]);
    expect(embeddedAnalyzePlan(tables, more, before, 90112)).toMatchObject({ parent: true, partitions: ["event_p20261130", "event_p20261201"] });
  });
});

describe.each(DATABASE_KINDS)("planner statistics on %s", (kind) => {
  const app = useTestApp(kind);
  beforeAll(async () => {
    keepPlannerStatistics(app.db);
  });

  const reltuples = async (table: string) =>
    Number(rowsOf<{ n: number }>(await app.db.execute(sql`select reltuples::float8 as n from pg_class where relname = ${table} and relkind = 'r'`))[0].n);
  const planOf = async (query: ReturnType<typeof sql>) =>
    rowsOf<Record<string, string>>(await app.db.execute(sql`explain ${query}`))
      .map((r) => Object.values(r)[0])
      .join("\n");

  it("analyzes once the events written call for it, and the hot lookups then use their primary keys", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    // 200 sessions of 3 calls: below the threshold nothing is analyzed.
    const sessions = Array.from({ length: 200 }, () => uid("s"));
    const batch = (n: number, offset: number) => sessions.flatMap((s, i) => Array.from({ length: n }, (_, j) => call(s, "read_file", { path: `/src/${i}/${offset + j}.ts` })));
    // Failures on many hosts: key states to look up.
    const failures = sessions.slice(0, 50).map((s, i) => result(s, "http_request", { url: `https://h${i}.example.com/v1/x` }, { success: false, httpStatus: 500, error: "Internal Server Error" }));
    for (const events of [batch(3, 0), failures]) {
      const res = await app.mutation("ingest.events", { events }, { key });
      expect(res.status).toBe(200);
    }
    expect(analyzeInProgress(app.db)).toBeNull();

    // Two more calls per session pass the threshold (1,000 events): an analyze starts in the background.
    const res = await app.mutation("ingest.events", { events: batch(2, 3) }, { key });
    expect(res.body.result?.data.accepted).toBe(400);
    expect(650 + 400).toBeGreaterThanOrEqual(ANALYZE_BASE_THRESHOLD);
    const running = analyzeInProgress(app.db);
    expect(running).not.toBeNull();
    await running;

    expect(await reltuples("agent_session")).toBeGreaterThanOrEqual(200);
    expect(await reltuples("key_state")).toBeGreaterThan(0);
    expect(await planOf(sql`select * from agent_session s where s.workspace_id = ${workspaceId} and s.session_id = ${sessions[7]}`)).toContain(
      "agent_session_workspace_id_session_id_pk",
    );
    const [{ failure_key: someKey }] = rowsOf<{ failure_key: string }>(await app.db.execute(sql`select failure_key from key_state where workspace_id = ${workspaceId} limit 1`));
    // A small table may be read whole; what must not happen is an index matching only workspace_id.
    expect(await planOf(sql`select * from key_state k where k.workspace_id = ${workspaceId} and k.failure_key in (${someKey}, 'http_request')`)).not.toMatch(/key_state_ws_\w+_idx/);

    // On PGlite the analyze runs in the server's thread: a small sample (statistics target 10,
    // at most 11 histogram bounds per column); a server keeps its default (100).
    const [{ bounds }] = rowsOf<{ bounds: number }>(
      await app.db.execute(sql`select coalesce(array_length(histogram_bounds::text::text[], 1), 0) as bounds from pg_stats where tablename = 'event' and attname = 'id'`),
    );
    if (kind === "pglite") expect(Number(bounds)).toBeLessThanOrEqual(EMBEDDED_STATISTICS_TARGET + 1);
    else expect(Number(bounds)).toBeGreaterThan(EMBEDDED_STATISTICS_TARGET + 1);
  });

  it("on a server, analyzes again only what nothing analyzed since (autovacuum keeps the rest); PGlite every table", async () => {
    await analyzeTables(app.db); // whatever the test before left
    const lastAnalyze = async (table: string) =>
      rowsOf<{ at: string | null }>(await app.db.execute(sql`select pg_stat_get_last_analyze_time(${table}::regclass)::text as at`))[0].at;
    const eventAnalyzedAt = await lastAnalyze("event");
    expect(eventAnalyzedAt).not.toBeNull();
    const again = await analyzeTables(app.db);
    if (kind === "pglite") {
      // Every table but the event log, whose partitions did not change since.
      expect(again).toContain("agent_session");
      expect(again).toContain("event_id");
      expect(again.filter((t) => t === "event" || t.startsWith("event_"))).toEqual(["event_id"]);
      return;
    }
    expect(again).toEqual([]);
    expect(await lastAnalyze("event")).toBe(eventAnalyzedAt);
    // A table whose statistics were reset counts as never analyzed: it is analyzed again, alone.
    await app.db.execute(sql`select pg_stat_reset_single_table_counters('agent_session'::regclass)`);
    expect(await lastAnalyze("agent_session")).toBeNull();
    expect(await analyzeTables(app.db)).toEqual(["agent_session"]);
    expect(await lastAnalyze("agent_session")).not.toBeNull();
    expect(await lastAnalyze("event")).toBe(eventAnalyzedAt);
  });
});

describe("planner statistics on PGlite: the event log and its partitions", () => {
  const app = useTestApp("pglite");

  it("analyzes the parent's sample and each partition, then only the partitions written since; requests are served between the statements", async () => {
    const now = Date.now();
    const created = await ensureEventPartitions(app.db, now, 3, 1);
    expect(created.length).toBe(5);
    const today = `event_p${new Date(now).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const yesterday = `event_p${new Date(now - 86_400_000).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const post = async (n: number, at: number) =>
      expect((await app.mutation("ingest.events", { events: Array.from({ length: n }, (_, i) => ({ ...call(s, "read_file", { path: `/src/${uid("f")}.ts` }), ts: at + i })) }, { key })).status).toBe(200);
    await post(300, now - 86_400_000);
    await post(300, now - 60_000);

    // Requests sent one after another while it runs go between its statements (one per table). Each
    // comes from the event loop as a request does (PGlite answers in microtasks: a loop of queries
    // alone would never let the analyze's next statement start).
    const analyzing = analyzeTables(app.db);
    let finished = false;
    void analyzing.then(() => (finished = true));
    let servedMeanwhile = 0;
    while (!finished) {
      await new Promise((resolve) => setImmediate(resolve));
      await app.db.execute(sql`select 1`);
      if (!finished) servedMeanwhile++;
    }
    const first = await analyzing;
    expect(servedMeanwhile).toBeGreaterThanOrEqual(20);
    expect(first).toEqual(expect.arrayContaining(["event", "event_default", today, yesterday, ...created]));

    const stats = async (table: string) =>
      rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from pg_stats where tablename = ${table} and attname = 'session_id'`))[0].n;
    expect(Number(await stats(today))).toBe(1);
    expect(Number(await stats("event"))).toBe(1); // the parent's own (inherited) sample
    const payloadStats = rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from pg_stats where tablename like 'event%' and attname = 'payload'`))[0].n;
    expect(Number(payloadStats)).toBe(0);

    // Nothing written since: no partition again, nor the parent.
    const second = await analyzeTables(app.db);
    expect(second.filter((t) => t === "event" || /^event_(p|default)/.test(t))).toEqual([]);

    // Written today only: today's partition alone (and, grown by more than 10 %, the parent's sample).
    await post(300, now - 30_000);
    const third = await analyzeTables(app.db);
    expect(third.filter((t) => /^event_(p|default)/.test(t))).toEqual([today]);
    expect(third).toContain("event");
  });
});
