import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { dailyKeyStat, dailyKeyTotal, dailyToolStat, event, eventId, failure, keyState } from "@/db/schema";
import { pruneAll } from "@/server/services/retention";

describe.each(DATABASE_KINDS)("retention on %s", (kind) => {
  const app = useTestApp(kind);

  it("deletes raw events and failures past the workspace retention; keeps states and roll-ups", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    await app.mutation("config.put", { retention_days: 2 }, { key });
    const s = uid("s");
    const old = Date.now() - 3 * 86_400_000;
    const res = await app.mutation("ingest.events", {
      events: [
        result(s, "fetch", { url: "https://a.example/x" }, { success: false, httpStatus: 500 }, { ts: old }),
        result(s, "fetch", { url: "https://a.example/x" }, { success: false, httpStatus: 500 }, { ts: Date.now() - 1000 }),
      ],
    }, { key });
    expect(res.status).toBe(200);
    await pruneAll(app.db);
    const events = await app.db.select().from(event).where(eq(event.workspaceId, workspaceId));
    expect(events).toHaveLength(1);
    // The deleted event's id goes with it; the kept one's stays (a re-send is still a duplicate).
    const ids = await app.db.select({ id: eventId.id }).from(eventId).where(eq(eventId.workspaceId, workspaceId));
    expect(ids.map((r) => r.id)).toEqual([events[0].id]);
    expect(await app.db.select().from(failure).where(eq(failure.workspaceId, workspaceId))).toHaveLength(1);
    expect(await app.db.select().from(keyState).where(eq(keyState.workspaceId, workspaceId))).toHaveLength(1);
    expect((await app.db.select().from(dailyToolStat).where(eq(dailyToolStat.workspaceId, workspaceId))).length).toBe(2);
  });

  it("recounts a cutoff day with more key × model rows than one statement carries as parameters", async () => {
    const { workspaceId } = await app.seedWorkspace();
    await app.db.execute(sql`update workspace set config = ${JSON.stringify({ retentionDays: 2 })}::jsonb where id = ${workspaceId}`);
    // Noon today: the cutoff falls at noon two days ago, and its day keeps results after it on
    // 7,000 keys × two models — 14,000 roll-up rows of ten columns.
    const now = Date.parse(`${new Date().toISOString().slice(0, 10)}T12:00:00Z`);
    const cutoff = now - 2 * 86_400_000;
    const day = new Date(cutoff).toISOString().slice(0, 10);
    const kept = cutoff + 60_000;
    await app.db.execute(sql`
      insert into event (workspace_id, id, session_id, type, ts, model, tool_name, failure_key, failed, payload)
      select ${workspaceId}, 'bulk-' || k || '-' || m, 's-bulk', 'tool.result', ${new Date(kept).toISOString()}::timestamptz, 'model-' || m, 'fetch', 'fetch|k=' || k, k % 3 = 0, '{}'::jsonb
      from generate_series(1, 7000) k, generate_series(1, 2) m`);
    await pruneAll(app.db, now);
    const stats = await app.db.select().from(dailyKeyStat).where(and(eq(dailyKeyStat.workspaceId, workspaceId), eq(dailyKeyStat.day, day)));
    expect(stats).toHaveLength(14_000);
    expect(stats.reduce((n, r) => n + r.results, 0)).toBe(14_000);
    expect(stats.reduce((n, r) => n + r.failed, 0)).toBe(2 * 2333);
    const totals = await app.db.select().from(dailyKeyTotal).where(and(eq(dailyKeyTotal.workspaceId, workspaceId), eq(dailyKeyTotal.day, day)));
    expect(totals).toHaveLength(7000);
    expect(totals.find((t) => t.failureKey === "fetch|k=3")).toMatchObject({ results: 2, failed: 2, toolName: "fetch" });
  });
});
