/**
 * The open calls of sessions (SPEC 5.1, 7.6 `openCalls`): calls the open-call sweep marked
 * (server/ingest/open-call-sweep.ts) whose result has not arrived, in sessions not ended. A
 * session's clock never goes back, so a call's result is no older than the call: the lookup reads
 * the event log's partitions from the call's day on.
 */
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { textArray } from "@/db/sql-arrays";

export interface OpenCallView {
  callId: string;
  toolName: string;
  /** When the call was made (ISO). */
  since: string;
}

export async function openCallsOf(db: Db, workspaceId: string, sessionIds: readonly string[]): Promise<Map<string, OpenCallView[]>> {
  const out = new Map<string, OpenCallView[]>();
  const ids = [...new Set(sessionIds)];
  if (!ids.length) return out;
  const rows = rowsOf<{ session_id: string; call_id: string; tool_name: string; since: string | Date }>(
    await db.execute(sql`
      select o.session_id, o.call_id, o.tool_name, o.since
      from open_call o
      join agent_session s on s.workspace_id = o.workspace_id and s.session_id = o.session_id and s.ended_at is null
      where o.workspace_id = ${workspaceId} and o.session_id = any(${textArray(ids)})
        and not exists (select 1 from event r where r.workspace_id = o.workspace_id and r.session_id = o.session_id
          and r.call_id = o.call_id and r.type = 'tool.result' and r.ts >= o.since)
      order by o.since, o.call_id`),
  );
  for (const r of rows) {
    const list = out.get(r.session_id) ?? [];
    list.push({ callId: r.call_id, toolName: r.tool_name, since: new Date(r.since).toISOString() });
    out.set(r.session_id, list);
  }
  return out;
}
