/**
 * A result sent without its call is paired with the call stored by an earlier batch
 * (server/ingest/load.ts, loadStoredCalls). The read is bounded by the sessions' first event, so
 * the event log's daily partitions before it are pruned at execution, and a call stored days ago
 * within its session is still found.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { event } from "@/db/schema";
import { rowsOf } from "@/db/client";
import { ensureEventPartitions } from "@/server/services/partitions";
import { storedCallsQuery } from "@/server/ingest/load";
import { extractFailureKey } from "@/server/engine/failure-key";

const DAY = 86_400_000;

describe.each(DATABASE_KINDS)("stored calls bounded by time on %s", (kind) => {
  const app = useTestApp(kind);

  it("a result pairs with a call stored days earlier in its session, and the read skips the partitions before the session", async () => {
    await ensureEventPartitions(app.db);
    const { key, workspaceId } = await app.seedWorkspace();
    const now = Date.now();
    const s = uid("s");
    const callId = uid("c");
    const url = "https://billing.example.com/v2/invoices";
    await ingestAccepted(app, key, [
      { type: "session.start", id: uid(), sessionId: s, agent: "a", ts: new Date(now - 3 * DAY).toISOString() },
      { type: "tool.call", id: uid(), sessionId: s, callId, toolName: "http_request", args: { url }, ts: new Date(now - 2 * DAY).toISOString() },
    ]);
    const result = { type: "tool.result", id: uid(), sessionId: s, callId, toolName: "http_request", success: false, httpStatus: 503, ts: new Date(now).toISOString() };
    await ingestAccepted(app, key, [result]);
    const [stored] = await app.db.select({ k: event.failureKey }).from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.id, result.id)));
    expect(stored.k).toBe(extractFailureKey("http_request", { url }, { domain: null, service: null }, []).failureKey);

    const plan = rowsOf<Record<string, string>>(
      await app.db.execute(sql`explain (analyze, costs off, timing off, summary off) ${storedCallsQuery(app.db, workspaceId, [{ sessionId: s, callId }])}`),
    ).map((r) => Object.values(r)[0]).join("\n");
    // Partitions pruned by the session's start show as never executed; the others were read.
    const scans = plan.split("\n").filter((l) => / on event_p\d{8}/.test(l));
    const read = scans.filter((l) => !l.includes("never executed"));
    expect(scans.length).toBeGreaterThan(20);
    // From the session's start day to the two days created ahead: six, not all ~34.
    expect(read.length).toBeGreaterThan(0);
    expect(read.length).toBeLessThanOrEqual(6);
  });

  it("a result for a session with no stored events finds nothing, and a session Vigil never saw bounds nothing wrongly", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const result = { type: "tool.result", id: uid(), sessionId: s, callId: uid("c"), toolName: "crm_lookup", success: true, ts: new Date().toISOString() };
    expect((await ingestAccepted(app, key, [result])).accepted).toBe(1);
    const rows = await storedCallsQuery(app.db, workspaceId, [{ sessionId: uid("s"), callId: "nothing" }]);
    expect(rows).toEqual([]);
  });
});
