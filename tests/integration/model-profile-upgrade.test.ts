/**
 * Model behaviour profiles stored before migration 0014 (one row per model) are carried on: the
 * row becomes the model's shard 0, its counters keep counting, and the Patterns page sums it with
 * the rows new batches add — on Citus too, where the table was distributed by the release before.
 */
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { call, uid } from "../support/agent";
import { migrateDatabase, rowsOf } from "@/db/client";
import { behaviourProfiles } from "@/server/dashboard/patterns-data";

describe.each(DATABASE_KINDS)("model behaviour profiles stored before 0014 on %s", (kind) => {
  const app = useTestApp(kind, { migratedUpTo: "0013_event_id_without_time_index" });

  it("become shard 0 of their model and are summed with what new batches add", async () => {
    const ws = await app.seedWorkspace();
    await app.db.execute(sql`
      insert into model_behaviour_profile (workspace_id, model, pattern_counts, nudges_sent, nudges_effective, turns, stalled_turns)
      values (${ws.workspaceId}, 'model-old', '{"announce_no_action": 3}'::jsonb, 4, 1, 10, 2)`);

    await migrateDatabase(app.database);

    const rows = rowsOf<{ shard: number; turns: number }>(
      await app.db.execute(sql`select shard, turns from model_behaviour_profile where workspace_id = ${ws.workspaceId}`),
    );
    expect(rows).toEqual([{ shard: 0, turns: 10 }]);

    // New batches of the model add to its rows: two turns and a stalled one (announced, no action).
    const s = uid("s");
    const res = await app.mutation(
      "ingest.events",
      {
        events: [
          { type: "session.start", id: uid(), sessionId: s, model: "model-old" },
          { type: "turn.start", id: uid(), sessionId: s, turnIndex: 0 },
          { type: "model.text", id: uid(), sessionId: s, text: "Proceeding now with the fix." },
          { type: "turn.start", id: uid(), sessionId: s, turnIndex: 1 },
          call(s, "writeFile", { path: "/srv/a.txt" }),
        ],
      },
      { key: ws.key },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [profile] = await behaviourProfiles(app.db, ws.workspaceId);
    expect(profile.model).toBe("model-old");
    expect(profile.turns).toBeGreaterThan(10);
    expect(profile.nudgesSent).toBeGreaterThanOrEqual(4);
    expect(profile.patternCounts.announce_no_action).toBeGreaterThanOrEqual(3);
  });
});
