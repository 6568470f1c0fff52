/**
 * Failures of a window per failure key and tool: whole days from daily_key_total (a row per day and
 * key, over all models), the partial edge days from the failure rows (failure_ws_time_idx), so the
 * counts equal a count of the failure rows while reading at most two days of them.
 */
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { dailyKeyTotal, failure } from "@/db/schema";
import { rollupDays, splitByDay } from "./day-split";

export interface FailureCount {
  failureKey: string;
  toolName: string;
  n: number;
  last: Date;
}

export interface FailureCountFilter {
  failureKey?: string;
  tool?: string;
}

export async function failureCounts(db: Db, workspaceId: string, window: { from?: Date; to?: Date }, filter: FailureCountFilter = {}): Promise<FailureCount[]> {
  const split = splitByDay(window);
  const parts: SQL[] = [];
  const onKey = sql`${filter.failureKey !== undefined ? sql`and failure_key = ${filter.failureKey}` : sql``}
    ${filter.tool !== undefined ? sql`and tool_name = ${filter.tool}` : sql``}`;
  if (split.days)
    parts.push(sql`
      select failure_key, tool_name, failures as n, last_failure_at as last
      from ${dailyKeyTotal}
      where workspace_id = ${workspaceId} and failures > 0 ${rollupDays(split.days)} ${onKey}`);
  for (const e of split.edges)
    parts.push(sql`
      select failure_key, tool_name, count(*) as n, max(ts) as last
      from ${failure}
      where workspace_id = ${workspaceId} and ts >= ${e.from.toISOString()}::timestamptz and ts < ${e.to.toISOString()}::timestamptz ${onKey}
      group by 1, 2`);
  if (!parts.length) return [];
  const rows = rowsOf<{ failureKey: string; toolName: string; n: number; last: string | Date }>(
    await db.execute(sql`
      select failure_key as "failureKey", tool_name as "toolName", sum(n)::int as n, max(last) as last
      from (${sql.join(parts, sql` union all `)}) r
      group by 1, 2`),
  );
  return rows.map((r) => ({ failureKey: r.failureKey, toolName: r.toolName, n: Number(r.n), last: new Date(r.last) }));
}
