/**
 * The Sessions list by keyset cursors: walking `after` cursors visits every session once, in the
 * list's order (ties on the last event's time by session id), while new sessions arrive between
 * pages; `before` cursors walk the same pages back; other sorts (with null values) walk the same
 * way; a cursor of another filter or a broken one reads as the first page.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { rowsOf } from "@/db/client";
import { listSessions, type SessionSortKey } from "@/server/dashboard/sessions-data";

const MINUTE = 60_000;

describe.each(DATABASE_KINDS)("Sessions keyset pagination on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const app = useTestApp(kind);
  const base = Date.now() - 6 * 60 * MINUTE;

  beforeAll(async () => {
    ws = await app.seedWorkspace();
    const events: unknown[] = [];
    for (let i = 0; i < 23; i++) {
      const sessionId = uid(`s${i}`);
      // Every third session shares its last event's instant with the next; some start without session.start (no started_at).
      const last = base + Math.floor(i / 3) * 7 * MINUTE + (i % 3 === 2 ? 1234 : 0);
      if (i % 4 !== 0) events.push({ type: "session.start", id: uid(), sessionId, agent: "crawler", ts: new Date(last - (i % 5) * MINUTE).toISOString() });
      for (let k = 0; k <= i % 3; k++) events.push(result(sessionId, "fetch", { url: `https://h${k}.example.com/` }, { success: k !== 1 }, { ts: new Date(last).toISOString() }));
    }
    await ingestAccepted(app, ws.key, events);
  });

  const expectedOrder = async (order: string) =>
    rowsOf<{ session_id: string }>(await app.db.execute(sql`select session_id from agent_session where workspace_id = ${ws.workspaceId} order by ${sql.raw(order)}`)).map((r) => r.session_id);

  async function walk(sort: { key: SessionSortKey; dir: "asc" | "desc" }, pageSize: number, between?: () => Promise<void>) {
    let page = await listSessions(app.db, { workspaceId: ws.workspaceId, sort, pageSize });
    expect(page.prevCursor).toBeNull();
    const pages = [page];
    while (page.nextCursor) {
      if (between) await between();
      page = await listSessions(app.db, { workspaceId: ws.workspaceId, sort, pageSize, after: page.nextCursor });
      pages.push(page);
    }
    return pages;
  }

  it("after cursors visit every session once, in order, while new sessions arrive; before cursors walk back", async () => {
    const expected = await expectedOrder("active_minute desc nulls last, last_event_at desc nulls last, session_id asc");
    expect(expected.length).toBe(23);
    let arrivals = 0;
    const pages = await walk({ key: "last", dir: "desc" }, 4, async () => {
      // A session newer than every other: offset paging would push a row onto the next page again.
      await ingestAccepted(app, ws.key, [result(uid("new"), "fetch", { url: "https://new.example.com/" }, { success: true }, { ts: new Date(Date.now() - 1000).toISOString() })]);
      arrivals++;
    });
    expect(arrivals).toBeGreaterThan(3);
    expect(pages.flatMap((p) => p.rows.map((r) => r.sessionId))).toEqual(expected);
    expect(pages[pages.length - 1].total).toBe(23 + arrivals);

    let back = pages[pages.length - 1];
    for (let i = pages.length - 2; i >= 0; i--) {
      back = await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 4, before: back.prevCursor });
      expect(back.rows.map((r) => r.sessionId)).toEqual(pages[i].rows.map((r) => r.sessionId));
    }
    // Before the first page are the sessions that arrived meanwhile, newest first.
    const newer = await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 50, before: back.prevCursor });
    expect(newer.rows.map((r) => r.sessionId.startsWith("new-"))).toEqual(new Array(arrivals).fill(true));
    expect(newer.prevCursor).toBeNull();
  });

  it("other sorts walk the same way, null values at their end", async () => {
    for (const [sort, order] of [
      [{ key: "started", dir: "desc" }, "started_at desc nulls last, session_id asc"],
      [{ key: "started", dir: "asc" }, "started_at asc nulls first, session_id asc"],
      [{ key: "events", dir: "asc" }, "event_count asc, session_id asc"],
      [{ key: "failures", dir: "desc" }, "failure_count desc, session_id asc"],
    ] as const) {
      const expected = await expectedOrder(order);
      const pages = await walk(sort, 3);
      expect(pages.flatMap((p) => p.rows.map((r) => r.sessionId)), `${sort.key} ${sort.dir}`).toEqual(expected);
      const [{ n }] = rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from agent_session where workspace_id = ${ws.workspaceId} and started_at is null`));
      expect(Number(n)).toBeGreaterThan(0);
    }
  });

  it("a cursor of another sort or filter, or a broken one, reads as the first page", async () => {
    const first = await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 4 });
    const second = await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 4, after: first.nextCursor });
    expect(second.rows[0].sessionId).not.toBe(first.rows[0].sessionId);
    const otherSort = await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 4, sort: { key: "events", dir: "desc" }, after: first.nextCursor });
    expect(otherSort.prevCursor).toBeNull();
    const otherStatus = await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 4, status: "idle", after: first.nextCursor });
    expect(otherStatus.prevCursor).toBeNull();
    for (const broken of ["x", "%%%", Buffer.from('["a",[1],2]').toString("base64url"), "a".repeat(5000)])
      expect((await listSessions(app.db, { workspaceId: ws.workspaceId, pageSize: 4, after: broken })).rows.map((r) => r.sessionId)).toEqual(first.rows.map((r) => r.sessionId));
  });
});
