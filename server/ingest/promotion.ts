/**
 * SPEC 6 promotion: a tool escalated or blocked in ≥ 3 workspaces of an organization with an
 * average failure rate > 0.5 over the last 24 h becomes an organization-wide global tool pattern.
 * Re-evaluated when a batch escalates or blocks a tool (rare), aggregated per workspace.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { rowsOf, type Tx } from "@/db/client";
import { globalToolPattern, keyState, workspace } from "@/db/schema";
import { PROMOTION_MIN_WORKSPACES, findGlobalToolPatterns } from "@/server/engine/promotion";
import type { TrustState } from "@/server/engine/types";
import { enqueueGlobalPatternNotifications } from "@/server/notifications/outbox";

export async function refreshPromotion(tx: Tx, scope: { organizationId: string }, tools: string[]): Promise<void> {
  const wsRows = await tx.select({ id: workspace.id }).from(workspace).where(eq(workspace.organizationId, scope.organizationId));
  const wsIds = wsRows.map((w) => w.id);
  if (wsIds.length < PROMOTION_MIN_WORKSPACES) return;
  const worst = await tx
    .select({ workspaceId: keyState.workspaceId, toolName: keyState.toolName, state: keyState.state })
    .from(keyState)
    .where(and(inArray(keyState.workspaceId, wsIds), inArray(keyState.toolName, tools), inArray(keyState.state, ["escalated", "blocked"])));
  if (!worst.length) return;
  const since = new Date(Date.now() - 24 * 3600 * 1000);
  const rates = (await tx.execute(sql`
    select workspace_id, tool_name, count(*) filter (where failed) as failures, count(*) as results
    from event
    where workspace_id in (${sql.join(wsIds.map((w) => sql`${w}`), sql`, `)})
      and tool_name in (${sql.join(tools.map((t) => sql`${t}`), sql`, `)})
      and type = 'tool.result' and ts >= ${since.toISOString()}::timestamptz
    group by workspace_id, tool_name`));
  const rateRows = rowsOf<{ workspace_id: string; tool_name: string; failures: string | number; results: string | number }>(rates);
  const rate = new Map(rateRows.map((r) => [`${r.workspace_id}\u0000${r.tool_name}`, Number(r.failures) / Math.max(1, Number(r.results))]));
  const rows = worst.map((w) => ({
    workspaceId: w.workspaceId,
    toolName: w.toolName,
    worstState: w.state as TrustState,
    failureRate24h: rate.get(`${w.workspaceId}\u0000${w.toolName}`) ?? 0,
  }));
  const patterns = findGlobalToolPatterns(rows);
  await enqueueGlobalPatternNotifications(tx, scope.organizationId, patterns);
  for (const p of patterns) {
    await tx
      .insert(globalToolPattern)
      .values({
        organizationId: scope.organizationId,
        toolName: p.toolName,
        status: "active",
        workspaceIds: p.workspaceIds,
        avgFailureRate: p.avgFailureRate,
        detectedAt: new Date(),
      })
      .onConflictDoUpdate({
        target: [globalToolPattern.organizationId, globalToolPattern.toolName],
        set: { status: "active", workspaceIds: p.workspaceIds, avgFailureRate: p.avgFailureRate, detectedAt: new Date(), clearedAt: null, clearedBy: null },
      });
  }
}
