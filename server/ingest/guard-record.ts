/**
 * guard.check's answer, kept on the recorded `tool.call` event (payload.guard) so the session
 * timeline can show Vigil's own decisions next to the calls they answered.
 */
import { sql } from "drizzle-orm";
import type { Tx } from "@/db/client";

export interface GuardRecord {
  decision: string;
  reason: string | null;
  failureKey: string;
  /** The policy that matched (name and level), when one did (SPEC 4.5: counts per policy). */
  policy?: { name: string; level: string; decision: string };
  /** Watch mode: what enforcement would have answered. */
  wouldDecide?: string;
}

export function guardRecord(v: {
  decision: string;
  reason: string | null;
  failureKey: string;
  policy?: { name: string; level: string; decision: string } | null;
  wouldDecide?: string | null;
}): GuardRecord {
  const r: GuardRecord = { decision: v.decision, reason: v.reason, failureKey: v.failureKey };
  if (v.policy) r.policy = { name: v.policy.name, level: v.policy.level, decision: v.policy.decision };
  if (v.wouldDecide) r.wouldDecide = v.wouldDecide;
  return r;
}

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
