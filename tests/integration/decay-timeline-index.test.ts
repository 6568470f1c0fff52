/**
 * Session decay's timeline (timelineOfSessions / timelineOfKeys) reads only columns its two
 * agent_session indexes carry: both reads are index-only scans, never a wide session row.
 */
import { describe, expect, it } from "vitest";
import { sql, type SQL } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { rowsOf, type Tx } from "@/db/client";
import { timelineOfKeys, timelineOfSessions } from "@/server/ingest/load";

describe.each(DATABASE_KINDS)("decay timeline index-only on %s", (kind) => {
  const app = useTestApp(kind);

  it("both timeline reads are index-only scans of session_ws_ended_idx and session_ws_agent_start_idx", async () => {
    const w = await app.seedWorkspace();
    const base = Date.now() - 60 * 60_000;
    const at = (m: number) => new Date(base + m * 60_000).toISOString();
    const args = { url: "https://decay-index.example.com/v1/x" };
    const key = "http_request|domain=decay-index.example.com|path_prefix=v1";
    const events: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      const s = `s-${i}`;
      events.push({ type: "session.start", id: uid(), sessionId: s, agent: `agent-${i % 3}`, ts: at(i) });
      if (i % 2 === 0) events.push({ type: "tool.result", id: uid(), sessionId: s, callId: uid(), toolName: "http_request", args, success: false, httpStatus: 503, ts: at(i + 0.5) });
      if (i % 4 === 0) events.push({ type: "session.end", id: uid(), sessionId: s, ts: at(i + 0.7) });
    }
    expect((await app.mutation("ingest.events", { events }, { key: w.key })).status).toBe(200);
    // Index-only needs the visibility map: what a vacuum gives the pages of ended sessions.
    await app.db.execute(sql`vacuum analyze agent_session`);

    const plans: string[] = [];
    await app.db.transaction(async (tx) => {
      // A few dozen rows: without this the planner reads the table whole, whatever the indexes carry.
      await tx.execute(sql`set local enable_seqscan = off`);
      await tx.execute(sql`set local enable_bitmapscan = off`);
      const explaining = { execute: async (q: SQL) => plans.push(rowsOf<Record<string, string>>(await tx.execute(sql`explain (costs off) ${q}`)).map((r) => Object.values(r)[0]).join("\n")) } as unknown as Tx;
      const ids = Array.from({ length: 20 }, (_, i) => `s-${i * 2}`);
      await timelineOfSessions(explaining, w.workspaceId, { ids, agents: ids.map((_, i) => `agent-${(i * 2) % 3}`) }, { agents: ["agent-1"], since: base });
      await timelineOfKeys(explaining, w.workspaceId, [key], { agents: [], since: null });
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).toContain("Index Only Scan using session_ws_ended_idx");
      expect(plan).toContain("Index Only Scan using session_ws_agent_start_idx");
      expect(plan).not.toMatch(/(?<!Only )Index Scan using session_ws_/);
    }
  });
});
