/**
 * guard.check's answer, kept on the recorded `tool.call` event (payload.guard: `GuardRecord`,
 * `guardRecord` in server/engine/guard.ts) so the session timeline can show Vigil's own decisions
 * next to the calls they answered.
 */
import { sql } from "drizzle-orm";
import type { Tx } from "@/db/client";
import type { GuardRecord } from "@/server/engine/batch";

/**
 * The full path records the call inside applyBatch before it decides: merge the answer into that
 * event afterwards, in the same transaction. The event's applied time names its partition: without
 * it the statement would be planned over every daily partition (~1 ms) and probe each one's index.
 */
export async function recordGuardDecision(tx: Tx, workspaceId: string, ev: { id: string; recordedAt: Date }, record: GuardRecord): Promise<void> {
  await tx.execute(sql`
    update event set payload = payload || jsonb_build_object('guard', ${JSON.stringify(record)}::jsonb)
    where workspace_id = ${workspaceId} and id = ${ev.id} and ts = ${ev.recordedAt.toISOString()}::timestamptz and type = 'tool.call'`);
}
