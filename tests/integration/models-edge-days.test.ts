/**
 * The Models matrix over a window whose first day is partial, both ways that day is read: its own
 * raw rows, or — when the part of the day before the window is the shorter — the day's roll-up
 * rows less that part's raw rows (day-split.ts `edgeRead`). Either way the keys, their order, the
 * cells, their counts and last failures are those of the raw tool.result events: a cell whose
 * failures all fall before the window has no last failure, a key or a key's model whose results
 * all fall before it is absent, and keys that never fail rank below every key that fails. On
 * PGlite both the day-per-statement read and the one statement are held to the raw rows.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import type { Db } from "@/db/client";
import { pageModelMatrix, rawModelMatrix, type Window } from "../support/models-matrix-reference";
import { edgeRead, splitByDay } from "@/server/dashboard/day-split";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MODELS = ["gpt-a", "claude-b", undefined] as const;
/** Per host, the hours of a day its calls are made at and which of them fail. */
const HOSTS: Array<[host: string, calls: Array<[hour: number, failed: boolean]>]> = [
  // Fails only in the small hours, succeeds later: inside a window starting after 02:00 it has no last failure.
  ["early.example.com", [[1, true], [1.5, true], [10, false]]],
  // Only in the small hours: absent from a window starting after 02:00 that day.
  ["gone.example.com", [[2, false], [2.2, true]]],
  // Never fails, most calls: ranks below every key that fails.
  ["quiet.example.com", [[1, false], [5, false], [9, false], [13, false], [17, false], [21, false], [23, false]]],
  ["a.example.com", [[3, true], [8, false], [15, true], [22, true]]],
  ["b.example.com", [[6, true], [12, false], [20, false]]],
  // Tied on failures and attempts: the name decides.
  ["t2.example.com", [[7, true], [19, false]]],
  ["t1.example.com", [[11, true], [18, false]]],
];


describe.each(DATABASE_KINDS)("the Models matrix's partial first day, read raw or as its roll-up less the part before the window, on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const now = new Date();
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const app = useTestApp(kind);

  const windows: Array<[string, Window]> = [
    ["first day less its small hours, open end", { from: new Date(today - 4 * DAY + 4 * HOUR) }],
    ["first day raw, open end", { from: new Date(today - 4 * DAY + 19 * HOUR) }],
    ["first day less its small hours, last day raw", { from: new Date(today - 5 * DAY + 4 * HOUR + 7 * 60_000), to: new Date(today - 2 * DAY + 13 * HOUR + 31_000) }],
    ["first day raw, last day raw", { from: new Date(today - 5 * DAY + 16 * HOUR), to: new Date(today - 2 * DAY + 9 * HOUR) }],
    ["to a midnight inside one day, less its small hours", { from: new Date(today - 3 * DAY + 3 * HOUR), to: new Date(today - 2 * DAY) }],
    ["to a midnight inside one day, raw", { from: new Date(today - 3 * DAY + 14 * HOUR), to: new Date(today - 2 * DAY) }],
    ["across one midnight", { from: new Date(today - 4 * DAY + 22 * HOUR), to: new Date(today - 3 * DAY + 3 * HOUR) }],
    ["24h", { from: new Date(now.getTime() - DAY) }],
  ];

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    // Seven days; per day, model and host a session of the host's calls.
    for (let d = 7; d >= 1; d--) {
      const events: unknown[] = [];
      for (const [mi, model] of MODELS.entries()) {
        for (const [host, calls] of HOSTS) {
          const sessionId = uid(`s${d}-${mi}-${host}`);
          const m = model ? { model } : {};
          const first = today - d * DAY + calls[0][0] * HOUR + mi * 60_000;
          events.push({ type: "session.start", id: uid(), sessionId, agent: "crawler", ...m, ts: new Date(first - 60_000).toISOString() });
          for (const [hour, failed] of calls)
            events.push(
              result(sessionId, "fetch", { url: `https://${host}/p` }, failed ? { success: false, error: "upstream said 502", httpStatus: 502 } : { success: true }, {
                ts: new Date(today - d * DAY + hour * HOUR + mi * 60_000).toISOString(),
                ...m,
              }),
            );
        }
      }
      // One key, two models: gpt-a's calls only in the small hours, claude-b's later. A window
      // starting after 02:00 that day shows the key without a gpt-a cell.
      for (const [model, hours] of [["gpt-a", [2, 2.5]], ["claude-b", [12]]] as const) {
        const sessionId = uid(`m${d}-${model}`);
        for (const hour of hours)
          events.push(
            result(sessionId, "fetch", { url: "https://mixed.example.com/p" }, { success: false, error: "upstream said 502", httpStatus: 502 }, { ts: new Date(today - d * DAY + hour * HOUR).toISOString(), model }),
          );
      }
      await ingestAccepted(app, ws.key, events);
    }
  });

  const rawMatrix = (w: Window, topKeys: number) => rawModelMatrix(app.db, ws.workspaceId, w, topKeys);
  const pageMatrix = (db: Db, w: Window, topKeys: number) => pageModelMatrix(db, ws.workspaceId, w, topKeys);

  it("the windows under test read a first day both ways, with and without whole days", () => {
    const reads = windows.slice(0, 7).map(([, w]) => splitByDay(w).edges.map((e) => ("raw" in edgeRead(e) ? "raw" : "less")));
    expect(reads).toEqual([["less"], ["raw"], ["less", "raw"], ["raw", "raw"], ["less"], ["raw"], ["raw"]]);
    expect(splitByDay(windows[4][1]).days).toBeNull();
  });

  it("the seed has a cell whose failures all fall before a window and a key whose results all do", async () => {
    const m = await rawMatrix(windows[4][1], 100);
    expect(m.cells.filter((c) => c.startsWith("fetch|domain=early.example.com|")).map((c) => c.split("|").slice(-3).join("|"))).toEqual(["1|0|null", "1|0|null", "1|0|null"]);
    const gone = (keys: Array<{ failureKey: string }>) => keys.some((k) => k.failureKey.startsWith("fetch|domain=gone.example.com"));
    expect(gone(m.keys)).toBe(false);
    expect(m.cells.filter((c) => c.startsWith("fetch|domain=mixed.example.com|")).map((c) => c.split("|").slice(-4, -3)[0])).toEqual(["claude-b"]);
    expect(gone((await rawMatrix({ from: new Date(today - 3 * DAY), to: new Date(today - 2 * DAY) }, 100)).keys)).toBe(true);
  });

  it("equals the raw rows for every window and number of keys: keys, order, cells, counts, last failures, models", async () => {
    for (const [name, w] of windows) {
      for (const top of [1, 2, 3, 5, 100]) {
        const expected = await rawMatrix(w, top);
        expect(await pageMatrix(app.db, w, top), `${name} / top ${top}`).toEqual(expected);
        // Inside a transaction PGlite has no turns to give: the window is read in one statement.
        if (kind === "pglite") expect(await app.db.transaction((tx) => pageMatrix(tx as unknown as Db, w, top)), `${name} / top ${top}, one statement`).toEqual(expected);
      }
    }
  });
});
