/**
 * Watch mode's "would have" counts (Overview, Tools, a session) and the Policies page's hits read
 * only the calls a rule or policy touched, through their partial indexes — not every tool call of
 * the window (at a million events, ~0.5 s of sequential scan per page against well under 1 ms).
 */
import { describe, expect, it } from "vitest";
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { policyHitsQuery, wouldDecideQuery } from "@/server/dashboard/policies";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";

/** The index and, on a partitioned table, its partitions' indexes (the names a plan shows). */
async function indexNames(db: Db, parent: string): Promise<string[]> {
  const rows = rowsOf<{ name: string }>(
    await db.execute(sql`
      select c.relname as name from pg_inherits i
      join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
      where p.relname = ${parent}`),
  );
  return [parent, ...rows.map((r) => r.name)];
}

describe.each(DATABASE_KINDS)("policy and watch counts by partial index on %s", (kind) => {
  const app = useTestApp(kind);

  it("both counts' plans read event_ws_would_decide_idx / event_ws_policy_hit_idx", async () => {
    const w = await app.seedWorkspace();
    const base = Date.now() - 30 * 60_000;
    const events = Array.from({ length: 200 }, (_, i) => ({
      type: "tool.call", id: uid(), sessionId: `s-${i % 10}`, callId: uid("c"), toolName: "Read", args: { file_path: `/repo/f${i}.ts` }, ts: base + i * 1000,
    }));
    expect((await app.mutation("ingest.events", { events }, { key: w.key })).status).toBe(200);
    await app.db.execute(sql`analyze event`);

    const window = { from: new Date(base - 60_000), to: new Date() };
    const plans: Record<string, string> = {};
    await app.db.transaction(async (tx) => {
      // Two hundred rows: without this the planner would read them whole whatever the indexes are.
      // (On Citus the workers plan the shards: the settings go to them too.)
      if (kind === "citus") await tx.execute(sql`set local citus.propagate_set_commands = 'local'`);
      await tx.execute(sql`set local enable_seqscan = off`);
      await tx.execute(sql`set local enable_bitmapscan = off`);
      const explain = async (q: { getSQL(): SQL }) =>
        rowsOf<Record<string, string>>(await tx.execute(sql`explain (costs off) ${q.getSQL()}`)).map((r) => Object.values(r)[0]).join("\n");
      plans.would = await explain(wouldDecideQuery(tx as unknown as Db, w.workspaceId, window));
      plans.wouldSession = await explain(wouldDecideQuery(tx as unknown as Db, w.workspaceId, { sessionId: "s-1" }));
      plans.hits = await explain(policyHitsQuery(tx as unknown as Db, [w.workspaceId], window));
    });
    // On Citus a shard's index carries the shard id after the name, and the workers' plans may take a
    // bitmap scan (the session's settings stay on the coordinator).
    const uses = (plan: string, names: string[]) =>
      names.some((n) => new RegExp(`(Index (Only )?Scan using|Bitmap Index Scan on) ${n}(_\\d+)?(\\s|$)`).test(plan));
    const wouldIdx = await indexNames(app.db, "event_ws_would_decide_idx");
    const hitIdx = await indexNames(app.db, "event_ws_policy_hit_idx");
    expect(uses(plans.would, wouldIdx), plans.would).toBe(true);
    expect(uses(plans.wouldSession, wouldIdx), plans.wouldSession).toBe(true);
    expect(uses(plans.hits, hitIdx), plans.hits).toBe(true);
  });
});
