/**
 * Retention runs while agents keep sending: event ids are deleted in chunks (each its own short
 * transaction) and a day's partition is dropped with a short lock timeout, retried, so batches go
 * on meanwhile. Nothing acknowledged within retention is lost; everything past it is gone, ids too.
 */
import { describe, expect, it } from "vitest";
import { and, eq, lt, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { event, eventId, workspace } from "@/db/schema";
import { ensureEventPartitions, listEventPartitions } from "@/server/services/partitions";
import { pruneAll } from "@/server/services/retention";

const DAY = 86_400_000;
const KEEP_DAYS = 3;

describe.each(DATABASE_KINDS)("retention while ingesting on %s", (kind) => {
  const app = useTestApp(kind);

  it("prunes old days in chunks while batches keep being acknowledged: none lost, none past retention left", async () => {
    const now = Date.now();
    await ensureEventPartitions(app.db, now, 12, 2);
    const { key, workspaceId } = await app.seedWorkspace();
    await app.db.update(workspace).set({ config: { retentionDays: KEEP_DAYS } });

    const batchOf = (sessionId: string, ts: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ type: "tool.call", id: uid(), sessionId, callId: uid("c"), toolName: "crm_lookup", args: { q: i }, ts: new Date(ts + i * 1000).toISOString() }));
    // Days 10 to 4 back (past retention) and 2 back (kept): 400 events each.
    const kept: string[] = [];
    for (const d of [10, 9, 8, 7, 6, 5, 4, 2]) {
      const events = batchOf(uid("s"), now - d * DAY, 400);
      await ingestAccepted(app, key, events);
      if (d < KEEP_DAYS) kept.push(...events.map((e) => e.id));
    }
    const cutoff = now - KEEP_DAYS * DAY;

    // Writers send recent batches for as long as the prune runs.
    let pruning = true;
    let duringPrune = 0;
    let started = 0;
    const writer = async (w: number) => {
      const s = uid(`live${w}`);
      for (let i = 0; pruning || i < 3; i++) {
        // A minute before the moment it is sent (its 40 events span 39 s): however many batches the
        // prune lets through, none lies in the future, which ingest refuses.
        const events = batchOf(s, Date.now() - 60_000, 40);
        await ingestAccepted(app, key, events);
        kept.push(...events.map((e) => e.id));
        if (i === 0) started++;
        else if (pruning) duringPrune++;
      }
    };
    const writers = [writer(0), writer(1)];
    while (started < writers.length) await new Promise((r) => setTimeout(r, 5));
    // A small chunk, so each day takes several statements with batches between them.
    await pruneAll(app.db, now, { chunk: 50 });
    pruning = false;
    await Promise.all(writers);

    expect(duringPrune).toBeGreaterThan(0);
    const day = (ms: number) => `event_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const partitions = (await listEventPartitions(app.db)).map((p) => p.name);
    for (const d of [10, 9, 8, 7, 6, 5, 4]) expect(partitions).not.toContain(day(now - d * DAY));
    expect(partitions).toContain(day(now - 2 * DAY));

    const old = await app.db.select({ n: sql<number>`count(*)::int` }).from(event).where(lt(event.ts, new Date(cutoff)));
    expect(old[0].n).toBe(0);
    const oldIds = await app.db.select({ n: sql<number>`count(*)::int` }).from(eventId).where(lt(eventId.ts, new Date(cutoff)));
    expect(oldIds[0].n).toBe(0);

    const stored = new Set((await app.db.select({ id: event.id }).from(event).where(eq(event.workspaceId, workspaceId))).map((r) => r.id));
    const claimed = new Set((await app.db.select({ id: eventId.id }).from(eventId).where(and(eq(eventId.workspaceId, workspaceId)))).map((r) => r.id));
    expect(kept.filter((id) => !stored.has(id))).toEqual([]);
    expect(kept.filter((id) => !claimed.has(id))).toEqual([]);
    expect(stored.size).toBe(kept.length);
    // On PGlite agents' statements go first (db/pglite-priority.ts): the prune's many small chunks
    // wait behind the writers' batches, several times the default timeout on a busy machine.
  }, 240_000);
});
