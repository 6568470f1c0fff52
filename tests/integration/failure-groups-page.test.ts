/**
 * What the Failures and Tools pages read, after real ingest: each failure group's per-day counts
 * (the sparkline) and exact key count, groups following the page's filters, and the mean time to
 * recover on the Tools rows of keys that recovered. PGlite and PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { at, result, uid } from "../support/agent";
import { listFailureGroups, MAX_GROUP_NAMES, sparkBuckets } from "@/server/dashboard/failures";
import { listKeys } from "@/server/dashboard/tools";

const DAY = 86_400_000;

describe.each(DATABASE_KINDS)("failure groups and MTTR on the pages, %s", (kind) => {
  const app = useTestApp(kind);

  it("a group carries its failures per day of the range, its exact key count, and follows the severity and text filters", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const now = Date.now();
    const notFound = (id: number) => `Error: ENOENT: no such file or directory, open '/srv/data/f${id}.json'`;
    // 25 distinct paths (25 keys, more than the names listed) across three days; one 503 today.
    const minutesAgo = [3 * 24 * 60 + 5, 3 * 24 * 60 + 6, 2 * 24 * 60, ...Array.from({ length: 22 }, (_, i) => 30 + i)];
    const files = minutesAgo.map((m, i) => ({ id: i, ts: at(now, -m) }));
    await ingestAccepted(app, key, [
      ...files.map((f) => result(uid("s"), "read_file", { path: `/srv/data/f${f.id}.json` }, { success: false, error: notFound(f.id) }, { ts: f.ts })),
      result(uid("s"), "http_request", { url: "https://api.example.com/v1/x" }, { success: false, httpStatus: 503, error: "HTTP 503 Service Unavailable" }, { ts: at(now, -10) }),
    ]);

    const from = new Date(now - 7 * DAY);
    const [group, http] = await listFailureGroups(app.db, workspaceId, { from, withDaily: true, now: new Date(now) });
    expect(group.count).toBe(25);
    expect(group.keyCount).toBe(25);
    expect(group.failureKeys).toHaveLength(MAX_GROUP_NAMES);
    const { start, count } = sparkBuckets(from, new Date(now));
    expect(count).toBeGreaterThanOrEqual(7);
    expect(group.daily).toHaveLength(count);
    const expected = new Array(count).fill(0);
    for (const f of files) expected[Math.floor((Date.parse(f.ts) - start) / DAY)]++;
    expect(group.daily).toEqual(expected);
    expect(expected.filter((n) => n > 0).length).toBeGreaterThanOrEqual(3);
    expect(http.daily!.reduce((a, b) => a + b, 0)).toBe(1);
    expect(http.daily![count - 1]).toBe(1);

    expect(group.trendBucketMs).toBe(DAY);
    // Without a start (all time) the sparkline covers a week at least: here the same days as the 7-day window.
    const [allTime] = await listFailureGroups(app.db, workspaceId, { withDaily: true, now: new Date(now) });
    expect(allTime.daily).toEqual(group.daily);
    // A window under a week is drawn in steps under a day: 24 h → hourly bars.
    const dayFrom = new Date(now - DAY);
    const [lastDay] = await listFailureGroups(app.db, workspaceId, { from: dayFrom, withDaily: true, now: new Date(now) });
    const hourly = sparkBuckets(dayFrom, new Date(now));
    expect(lastDay.trendBucketMs).toBe(3_600_000);
    expect(lastDay.daily).toHaveLength(hourly.count);
    expect(lastDay.daily!.reduce((a, b) => a + b, 0)).toBe(22);
    expect(lastDay.daily!.filter((n) => n > 0).length).toBeGreaterThanOrEqual(1);
    // Without withDaily (failures.groups) there is no sparkline.
    expect((await listFailureGroups(app.db, workspaceId, { from }))[0]).not.toHaveProperty("daily");

    // The page's text filter narrows groups as it narrows the list.
    const bySearch = await listFailureGroups(app.db, workspaceId, { text: "503 service", withDaily: true });
    expect(bySearch.map((g) => [g.sample, g.count])).toEqual([["HTTP 503 Service Unavailable", 1]]);
    expect(await listFailureGroups(app.db, workspaceId, { severity: "no_such_severity" })).toEqual([]);
  });

  it("Tools rows carry the mean time to recover of keys that recovered, and none for keys that never did", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const base = Date.now() - 60 * 60_000;
    const s = uid("s");
    const url = "https://api.example.com/v1/users";
    const fkey = "http_request|domain=api.example.com|path_prefix=v1";
    await ingestAccepted(app, key, [
      { type: "session.start", id: uid(), sessionId: s, agent: "crawler", ts: at(base, 0) },
      ...[1, 2, 3].map((m) => result(s, "http_request", { url: `${url}/${m}` }, { success: false, httpStatus: 503, error: "HTTP 503" }, { ts: at(base, m) })),
      result(s, "read_file", { path: "/etc/app.conf" }, { success: false, error: "EACCES" }, { ts: at(base, 4) }),
    ]);
    const escalated = await listKeys(app.db, workspaceId, { pageSize: 200 });
    expect(escalated.rows.find((r) => r.failureKey === fkey)).toMatchObject({ state: "escalated" });
    expect(escalated.rows.find((r) => r.failureKey === fkey)).not.toHaveProperty("meanTimeToRecover");

    // Escalated at minute 3; after the window and cooldown, three successes recover it at minute 36.
    await ingestAccepted(app, key, [34, 35, 36].map((m) => result(s, "http_request", { url }, { success: true, httpStatus: 200 }, { ts: at(base, m) })));
    const { rows } = await listKeys(app.db, workspaceId, { pageSize: 200 });
    expect(rows.find((r) => r.failureKey === fkey)).toMatchObject({ state: "trusted", meanTimeToRecover: { seconds: 33 * 60, recoveries: 1, scope: "key" } });
    for (const r of rows.filter((r) => r.toolName === "read_file")) expect(r).not.toHaveProperty("meanTimeToRecover");
    // A tool-level row, when the tool has one, shows the mean over every key of its tool.
    for (const r of rows.filter((r) => r.level === "tool" && r.toolName === "http_request")) expect(r.meanTimeToRecover).toMatchObject({ seconds: 33 * 60, scope: "tool" });
  });
});
