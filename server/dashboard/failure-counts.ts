/**
 * Failures of a window per failure key, tool and model: whole days from daily_key_stat, the
 * partial edge days from the failure rows (failure_ws_time_idx), so the counts equal a count of
 * the failure rows while reading at most two days of them.
 */
import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { dailyKeyStat, failure } from "@/db/schema";
import { rollupDays, splitByDay } from "./day-split";

export interface FailureCount {
  failureKey: string;
  toolName: string;
  /** `null`: failures without a model. */
  model: string | null;
  n: number;
  last: Date;
}

export interface FailureCountFilter {
  failureKey?: string;
  tool?: string;
  /** A model name, or null for failures without one. */
  model?: string | null;
}

export async function failureCounts(db: Db, workspaceId: string, window: { from?: Date; to?: Date }, filter: FailureCountFilter = {}): Promise<FailureCount[]> {
  const split = splitByDay(window);
  const parts: SQL[] = [];
  const rollupFilter = sql`${filter.failureKey !== undefined ? sql`and failure_key = ${filter.failureKey}` : sql``}
    ${filter.tool !== undefined ? sql`and tool_name = ${filter.tool}` : sql``}
    ${filter.model !== undefined ? sql`and model = ${filter.model ?? ""}` : sql``}`;
  const rawFilter = sql`${filter.failureKey !== undefined ? sql`and failure_key = ${filter.failureKey}` : sql``}
    ${filter.tool !== undefined ? sql`and tool_name = ${filter.tool}` : sql``}
    ${filter.model === undefined ? sql`` : filter.model === null ? sql`and model is null` : sql`and model = ${filter.model}`}`;
  if (split.days)
    parts.push(sql`
      select failure_key, tool_name, nullif(model, '') as model, failures as n, last_failure_at as last
      from ${dailyKeyStat}
      where workspace_id = ${workspaceId} and failures > 0 ${rollupDays(split.days)} ${rollupFilter}`);
  for (const e of split.edges)
    parts.push(sql`
      select failure_key, tool_name, model, count(*) as n, max(ts) as last
      from ${failure}
      where workspace_id = ${workspaceId} and ts >= ${e.from.toISOString()}::timestamptz and ts < ${e.to.toISOString()}::timestamptz ${rawFilter}
      group by 1, 2, 3`);
  if (!parts.length) return [];
  const rows = rowsOf<{ failureKey: string; toolName: string; model: string | null; n: number; last: string | Date }>(
    await db.execute(sql`
      select failure_key as "failureKey", tool_name as "toolName", model, sum(n)::int as n, max(last) as last
      from (${sql.join(parts, sql` union all `)}) r
      group by 1, 2, 3`),
  );
  return rows.map((r) => ({ failureKey: r.failureKey, toolName: r.toolName, model: r.model, n: Number(r.n), last: new Date(r.last) }));
}
