/**
 * daily_key_total (daily_key_stat summed over models) against the rows it stands for: after
 * concurrent batches through the real ingest path, after migration 0029's fill of existing rows and
 * after retention (the cutoff day recounted), it equals daily_key_stat summed over models; and the
 * pages that rank keys from it (Models with a range, Overview's top keys) show the keys, order
 * (ties included), cells, counts and last failures of the raw rows for any number of keys.
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
import { getTopFailingKeys } from "@/server/dashboard/overview";
import { pageModelMatrix, rawModelMatrix, windowTimeSql, type Window } from "../support/models-matrix-reference";
import { pruneWorkspace } from "@/server/services/retention";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MODELS = ["gpt-a", "claude-b", undefined] as const;
/**
 * Per host: calls and failures of each session. The t-hosts tie on both (the name decides their
 * order) and fail at the same instants (Overview's ties on count and last failure).
 */
const HOSTS: Array<[host: string, calls: number, failures: number]> = [
  ["a.example.com", 6, 3],
  ["b.example.com", 4, 1],
  ["c.example.com", 6, 2],
  ["t3.example.com", 5, 2],
  ["t1.example.com", 5, 2],
  ["t2.example.com", 5, 2],
];


describe.each(DATABASE_KINDS)("daily_key_total equals daily_key_stat summed over models on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const now = new Date();
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const app = useTestApp(kind);

  const windows: Array<[string, Window]> = [
    ["24h", { from: new Date(now.getTime() - DAY) }],
    ["7d", { from: new Date(now.getTime() - 7 * DAY) }],
    ["30d", { from: new Date(now.getTime() - 30 * DAY) }],
    ["all (from the epoch)", { from: new Date(0) }],
    ["custom whole days", { from: new Date(today - 7 * DAY), to: new Date(today - 2 * DAY) }],
    ["custom partial edges", { from: new Date(today - 6 * DAY + 9 * HOUR + 7 * 60_000), to: new Date(today - DAY + 15 * HOUR + 31_000) }],
    ["open start", { to: new Date(today - 3 * DAY + 10 * HOUR) }],
    ["inside one day", { from: new Date(today - 2 * DAY + HOUR), to: new Date(today - 2 * DAY + 22 * HOUR) }],
  ];

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    // Nine days; per day, model and host a session, each its own batch, all of a day's batches at
    // once: the same day × key total row is added to by several batches at the same time.
    for (let d = 8; d >= 0; d--) {
      const batches: unknown[][] = [];
      for (const [mi, model] of MODELS.entries()) {
        for (const [hi, [host, calls, failures]] of HOSTS.entries()) {
          const base = today - d * DAY + (mi * HOSTS.length + hi + 1) * 35 * 60_000;
          // The t-hosts' failures of a day and model at the same instants, after all their sessions started.
          const tiedAt = today - d * DAY + (mi + 1) * HOSTS.length * 35 * 60_000 + 10 * 60_000;
          const times = Array.from({ length: calls }, (_, i) => (i < failures && host.startsWith("t") ? tiedAt + i * 1000 : base + (i + 1) * 60_000));
          if (Math.max(...times) > now.getTime() - HOUR) continue;
          const sessionId = uid(`s${d}-${mi}-${hi}`);
          const m = model ? { model } : {};
          const events: unknown[] = [{ type: "session.start", id: uid(), sessionId, agent: "crawler", ...m, ts: new Date(base).toISOString() }];
          for (const [i, ts] of times.entries()) {
            const failed = i < failures;
            events.push(
              result(sessionId, "fetch", { url: `https://${host}/p` }, failed ? { success: false, error: "upstream said 502", httpStatus: 502 } : { success: true }, { ts: new Date(ts).toISOString(), ...m }),
            );
          }
          batches.push(events);
        }
      }
      await Promise.all(batches.map((events) => ingestAccepted(app, ws.key, events)));
    }
  });

  const raw = async <T,>(q: ReturnType<typeof sql>) => rowsOf<T>(await app.db.execute(q));

  const totals = async () =>
    (await raw<Record<string, unknown>>(sql`
      select workspace_id, day, failure_key, tool_name, results, failed, last_failed_at, failures, last_failure_at
      from daily_key_total order by 1, 2, 3`)).map((r) => JSON.stringify(r));
  const summedOverModels = async () =>
    (await raw<Record<string, unknown>>(sql`
      select workspace_id, day, failure_key, max(tool_name) as tool_name, sum(results)::int as results, sum(failed)::int as failed,
        max(last_failed_at) as last_failed_at, sum(failures)::int as failures, max(last_failure_at) as last_failure_at
      from daily_key_stat group by 1, 2, 3 order by 1, 2, 3`)).map((r) => JSON.stringify(r));

  /** Models with a range as the raw events define it, and as the page reads it: keys and cells. */
  const rawMatrix = async (w: Window, topKeys: number) => {
    const { keys, cells } = await rawModelMatrix(app.db, ws.workspaceId, w, topKeys);
    return { keys, cells };
  };
  const pageMatrix = async (w: Window, topKeys: number) => {
    const { keys, cells } = await pageModelMatrix(app.db, ws.workspaceId, w, topKeys);
    return { keys, cells };
  };

  /** Overview's top keys as the failure rows define them: by count, last failure, name. */
  async function rawTopKeys(w: Window, limit: number) {
    const rows = await raw<{ k: string; t: string; n: number; last: string | Date }>(sql`
      select failure_key as k, tool_name as t, count(*)::int as n, max(ts) as last from failure where workspace_id = ${ws.workspaceId} ${windowTimeSql(w)} group by 1, 2`);
    return rows
      .map((r) => ({ k: r.k, t: r.t, n: Number(r.n), last: new Date(r.last) }))
      .sort((a, b) => b.n - a.n || b.last.getTime() - a.last.getTime() || (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
      .slice(0, limit)
      .map((r) => [r.k, r.t, r.n, r.last.toISOString()]);
  }
  const pageTopKeys = async (w: Window, limit: number) => (await getTopFailingKeys(app.db, ws.workspaceId, limit, w)).map((t) => [t.failureKey, t.toolName, t.totalFailures, t.lastFailureAt]);

  async function expectPagesEqualRaw(ws: Array<[string, Window]>) {
    for (const [name, w] of ws) {
      for (const top of [1, 2, 3, 4, 5, 6, 12]) {
        expect(await pageMatrix(w, top), `${name} / top ${top}`).toEqual(await rawMatrix(w, top));
        expect(await pageTopKeys(w, top), `${name} / top ${top}`).toEqual(await rawTopKeys(w, top));
      }
    }
  }

  it("after concurrent batches: a row per day and key, the sums of its models' rows", async () => {
    const kept = await totals();
    expect(kept.length).toBeGreaterThan(HOSTS.length * 7);
    expect(kept).toEqual(await summedOverModels());
  });

  it("the seed ranks keys with ties on failures and attempts, and failures tied on count and last failure", async () => {
    const m = await rawMatrix({ from: new Date(today - 7 * DAY), to: new Date(today - 2 * DAY) }, 12);
    expect(m.keys.filter((k) => k.failureKey.startsWith("fetch|domain=t")).map((k) => [k.attempts, k.failures])).toEqual([[75, 30], [75, 30], [75, 30]]);
    const top = await rawTopKeys({ from: new Date(today - 7 * DAY), to: new Date(today - 2 * DAY) }, 12);
    expect(new Set(top.filter((t) => String(t[0]).startsWith("fetch|domain=t")).map((t) => `${t[2]} ${t[3]}`)).size).toBe(1);
  });

  it("Models with a range and Overview's top keys equal the raw rows: keys, order, cells, counts, last failures", async () => {
    await expectPagesEqualRaw(windows);
  });

  it("migration 0029's fill of existing rows gives the totals the batches kept", async () => {
    const kept = await totals();
    const migration = readFileSync(join(process.cwd(), "drizzle/0029_failure_group_and_key_total_rollups.sql"), "utf8");
    const fills = migration.split("--> statement-breakpoint").filter((s) => /^\s*(--.*\n)*\s*INSERT INTO "daily_key_total"/.test(s));
    expect(fills).toHaveLength(1);
    await app.db.execute(sql`delete from daily_key_total`);
    await app.db.execute(sql.raw(fills[0]));
    expect(await totals()).toEqual(kept);
  });

  it("retention deletes the days before the cutoff and recounts the cutoff day: still the sums, the pages still the raw rows", async () => {
    const retentionDays = 4;
    const pruneAt = today + 2 * HOUR + 17 * 60_000;
    const cutoffDay = new Date(pruneAt - retentionDays * DAY).toISOString().slice(0, 10);
    const dayFailures = async () => (await raw<{ n: number }>(sql`select coalesce(sum(failures), 0)::int as n from daily_key_total where workspace_id = ${ws.workspaceId} and day = ${cutoffDay}`))[0].n;
    const before = Number(await dayFailures());
    await pruneWorkspace(app.db, ws.workspaceId, retentionDays, pruneAt);
    const [{ n: older }] = await raw<{ n: number }>(sql`select count(*)::int as n from daily_key_total where workspace_id = ${ws.workspaceId} and day < ${cutoffDay}`);
    expect(Number(older)).toBe(0);
    const after = Number(await dayFailures());
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(before);
    expect(await totals()).toEqual(await summedOverModels());
    await expectPagesEqualRaw([
      ["from the epoch", { from: new Date(0) }],
      ["across the cutoff", { from: new Date(today - 6 * DAY), to: new Date(today - HOUR) }],
    ]);
  });
});
