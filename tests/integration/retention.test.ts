import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { dailyToolStat, event, eventId, failure, keyState } from "@/db/schema";
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
});
