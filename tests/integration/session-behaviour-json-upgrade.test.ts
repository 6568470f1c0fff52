/**
 * Sessions stored before migration 0015 (behaviour as jsonb) are carried on: the column becomes json
 * with every document as it was, and the session's next guard.check and batch count on from it — on
 * Citus too, where the table was distributed by the release before.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { agentSession } from "@/db/schema";
import { migrateDatabase, rowsOf } from "@/db/client";
import { storedSessionBehaviour, upgradeSessionBehaviour } from "@/server/engine/behaviour-state";
import { BUILTIN_PATTERN_CONFIG, createSessionBehaviour, observeSessionEvent } from "@/server/engine/patterns";

describe.each(DATABASE_KINDS)("session behaviour stored as jsonb before 0015 on %s", (kind) => {
  const app = useTestApp(kind, { migratedUpTo: "0014_model_profile_shards" });

  it("becomes json with the same document, and the session goes on counting from it", async () => {
    const ws = await app.seedWorkspace();
    const s = uid("s");
    const check = (path: string) => ({ id: uid(), sessionId: s, callId: uid(), toolName: "read_file", args: { path } });
    // The session as that release stored it after three checks: its behaviour folded by the engine,
    // written as a jsonb document (this release's guard.check reads tables the old schema lacks).
    let behaviour = createSessionBehaviour(s);
    for (const [i, path] of ["/a", "/b", "/c"].entries()) {
      const c = check(path);
      const event = { id: c.id, sessionId: s, ts: 0, type: "tool.call" as const, callId: c.callId, toolName: c.toolName, args: c.args, failureKey: `read_file|path=${path}`, argsHash: path };
      const settings = { nudgeLevel: "interrupt" as const, nudgeEnabled: true, patternDetectionEnabled: true };
      behaviour = observeSessionEvent(behaviour, event, { patterns: BUILTIN_PATTERN_CONFIG, settings }, 1_000 * (i + 1)).state;
    }
    await app.db.execute(sql`insert into agent_session (workspace_id, session_id, behaviour, event_count, call_count)
      values (${ws.workspaceId}, ${s}, ${JSON.stringify(storedSessionBehaviour(behaviour))}::jsonb, 3, 3)`);
    /** The stored behaviour's column type and text. */
    const stored = async () =>
      rowsOf<{ type: string; doc: string }>(
        await app.db.execute(sql`select pg_typeof(behaviour)::text as type, behaviour::text as doc from agent_session where workspace_id = ${ws.workspaceId} and session_id = ${s}`),
      );
    const before = await stored();
    expect(before[0].type).toBe("jsonb");

    await migrateDatabase(app.database);

    const after = await stored();
    expect(after[0].type).toBe("json");
    expect(JSON.parse(after[0].doc)).toEqual(JSON.parse(before[0].doc));

    // A guard.check and a batch on the old row: the calls before the migration are still known
    // (a result without args finds its call), and the counters go on.
    const next = check("/d");
    expect((await app.mutation("guard.check", next, { key: ws.key })).status).toBe(200);
    const res = await app.mutation("ingest.events", { events: [{ type: "tool.result", id: uid(), sessionId: s, callId: next.callId, toolName: "read_file", success: true }] }, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
    expect(row).toMatchObject({ eventCount: 5, callCount: 4 });
    const carried = upgradeSessionBehaviour(row.behaviour, s);
    expect(carried.calls).toHaveLength(4);
    expect(carried.calls[3]).toMatchObject({ callId: next.callId, outcome: expect.any(String) });
  });
});
