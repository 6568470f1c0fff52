/** reliability.status (SPEC 7.2): every tracked key of a workspace with its numbers. */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { failure, keyState, keyStateSummary } from "@/db/schema";
import { recoveryOf } from "@/server/engine/trust";
import { withThresholdsInForce } from "./thresholds-in-force";
import { timeToRecover } from "./time-to-recover";

export async function reliabilityStatus(db: Db, workspaceId: string, opts: { toolName?: string; includeHistory?: boolean }) {
  const rows = await withThresholdsInForce(
    db,
    workspaceId,
    await db
      .select(keyStateSummary)
      .from(keyState)
      .where(opts.toolName ? and(eq(keyState.workspaceId, workspaceId), eq(keyState.toolName, opts.toolName)) : eq(keyState.workspaceId, workspaceId))
      .orderBy(keyState.failureKey)
      .limit(10_000),
  );
  const mttr = await timeToRecover(db, workspaceId, opts.toolName ? { toolName: opts.toolName } : {});
  const keys = rows.map((r) => {
    const st = r.trust;
    const meanTimeToRecoverSeconds = mttr.byKey.get(r.failureKey);
    return {
      failureKey: r.failureKey,
      toolName: r.toolName,
      state: r.state,
      effectiveState: r.effectiveState,
      effectiveFailures: r.effectiveFailures,
      threshold: r.threshold,
      consecutiveFailures: r.consecutiveFailures,
      totalCalls: r.totalCalls,
      totalFailures: r.totalFailures,
      escalationReason: st.escalationReason,
      escalationExpires: r.escalationExpires ? r.escalationExpires.toISOString() : null,
      recovery: recoveryOf(st),
      // Escalated → trusted, mean over the key's recoveries; absent until it has recovered once.
      ...(meanTimeToRecoverSeconds !== undefined ? { meanTimeToRecoverSeconds } : {}),
    };
  });
  const toolMttr = opts.toolName ? mttr.byTool.get(opts.toolName) : undefined;
  const tool = toolMttr !== undefined ? { meanTimeToRecoverSeconds: toolMttr } : {};
  if (!opts.includeHistory) return { keys, ...tool };
  const history = await db
    .select({
      failureKey: failure.failureKey,
      toolName: failure.toolName,
      severity: failure.severity,
      ts: failure.ts,
      sessionId: failure.sessionId,
      model: failure.model,
      error: failure.errorMessage,
    })
    .from(failure)
    .where(
      opts.toolName ? and(eq(failure.workspaceId, workspaceId), eq(failure.toolName, opts.toolName)) : eq(failure.workspaceId, workspaceId),
    )
    .orderBy(desc(failure.ts))
    .limit(100);
  return { keys, ...tool, history: history.map((h) => ({ ...h, ts: h.ts.toISOString() })) };
}
