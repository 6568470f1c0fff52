/**
 * Sessions stored before migration 0012 (sessions indexed by `last_event_at`) are carried on: the
 * migration derives each row's indexed minute from its clock, keeps room on the pages for in-place
 * updates, and the sessions list and guard.check go on with the old rows — on Citus too, where the
 * tables were distributed by the release before.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { agentSession } from "@/db/schema";
import { migrateDatabase, rowsOf } from "@/db/client";
import { listSessions } from "@/server/dashboard/sessions-data";

describe.each(DATABASE_KINDS)("sessions stored before 0012 on %s", (kind) => {
  const app = useTestApp(kind, { migratedUpTo: "0011_key_state_trust" });

  it("get their minute from their clock, keep their order in the list, and take the next guard.check", async () => {
    const ws = await app.seedWorkspace();
    const minute = Math.floor((Date.now() - 3600_000) / 60_000) * 60_000;
    const older = { id: uid("older"), at: minute + 59_000 };
    const newer = { id: uid("newer"), at: minute + 61_000 };
    for (const s of [newer, older])
      await app.db.execute(sql`
        insert into agent_session (workspace_id, session_id, clock, last_event_at, first_event_at, event_count, call_count)
        values (${ws.workspaceId}, ${s.id}, ${s.at}, ${new Date(s.at).toISOString()}::timestamptz, ${new Date(s.at).toISOString()}::timestamptz, 1, 1)`);

    await migrateDatabase(app.database);

    const rows = rowsOf<{ session_id: string; active_minute: string }>(
      await app.db.execute(sql`select session_id, active_minute::text from agent_session where workspace_id = ${ws.workspaceId} order by session_id`),
    );
    expect(Object.fromEntries(rows.map((r) => [r.session_id, Number(r.active_minute)]))).toEqual({ [older.id]: minute / 60_000, [newer.id]: minute / 60_000 + 1 });
    const [options] = rowsOf<{ reloptions: string[] | null }>(await app.db.execute(sql`select reloptions from pg_class where relname = 'agent_session'`));
    expect(options.reloptions).toContain("fillfactor=70");

    const list = async () => (await listSessions(app.db, { workspaceId: ws.workspaceId, page: 1, pageSize: 10 })).rows.map((r) => r.sessionId);
    expect(await list()).toEqual([newer.id, older.id]);

    const res = await app.mutation("guard.check", { id: uid(), sessionId: older.id, callId: uid(), toolName: "read_file", args: { path: "/a" } }, { key: ws.key });
    expect(res.body.result?.data.decision).toBe("allow");
    const [after] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, older.id)));
    expect(after.callCount).toBe(2);
    expect(after.activeMinute).toBe(Math.floor(after.clock! / 60_000));
    expect(await list()).toEqual([older.id, newer.id]);
  });
});
