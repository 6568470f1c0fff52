/**
 * The one definition of "how many keys in each state" used by every page (Overview, Tools, live
 * refresh). A tracked key is any key_state row — failure keys and the @domain:/@tool: level states
 * the Tools page lists — counted by its effective state, so Overview's "Blocked 3 of 21" and the Tools
 * filter's "Blocked 3 / All 21" always agree.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { keyState } from "@/db/schema";
import { TRUST_STATE_ORDER } from "@/server/engine/vocabulary";

/** The states in the order pages list them. */
export const TRUST_STATES = TRUST_STATE_ORDER;
export type TrustStateName = (typeof TRUST_STATES)[number];

export interface KeyStateCounts {
  /** Tracked keys (every level) by effective state. */
  byState: Record<TrustStateName, number>;
  /** All tracked keys (the sum of byState). */
  total: number;
  /** Domain- and tool-level states that are not trusted (a subset of the counts above). */
  levelAlerts: number;
}

export interface KeyWindow {
  from?: Date;
  to?: Date;
}

/**
 * Failures of a key_state row inside [from, to): by failure key for a key, by domain or tool for a
 * level state (each served by its failure_ws_*_time_idx index).
 */
export function failuresInWindowSql(w: KeyWindow): SQL<number> {
  // Columns written out with their tables: drizzle leaves column names unqualified inside a sql
  // template, which in a correlated subquery would compare failure's columns with themselves.
  const time = sql`${w.from ? sql`and f.ts >= ${w.from.toISOString()}::timestamptz` : sql``} ${w.to ? sql`and f.ts < ${w.to.toISOString()}::timestamptz` : sql``}`;
  return sql<number>`(case "key_state"."level"
    when 'key' then (select count(*) from failure f where f.workspace_id = "key_state"."workspace_id" and f.failure_key = "key_state"."failure_key" ${time})
    when 'domain' then (select count(*) from failure f where f.workspace_id = "key_state"."workspace_id" and f.domain = "key_state"."domain" ${time})
    else (select count(*) from failure f where f.workspace_id = "key_state"."workspace_id" and f.tool_name = "key_state"."tool_name" ${time})
  end)::int`;
}

/**
 * Whether a key_state row failed inside [from, to): one probe of the same indexes that stops at the
 * first failure, where a count would read every failure of the key in the window.
 */
function failedInWindowSql(w: KeyWindow): SQL<boolean> {
  const time = sql`${w.from ? sql`and f.ts >= ${w.from.toISOString()}::timestamptz` : sql``} ${w.to ? sql`and f.ts < ${w.to.toISOString()}::timestamptz` : sql``}`;
  return sql<boolean>`(case "key_state"."level"
    when 'key' then exists (select 1 from failure f where f.workspace_id = "key_state"."workspace_id" and f.failure_key = "key_state"."failure_key" ${time})
    when 'domain' then exists (select 1 from failure f where f.workspace_id = "key_state"."workspace_id" and f.domain = "key_state"."domain" ${time})
    else exists (select 1 from failure f where f.workspace_id = "key_state"."workspace_id" and f.tool_name = "key_state"."tool_name" ${time})
  end)`;
}

/**
 * Keys active in a window: their last event is at or after `from`; with an end, either their last
 * event is before it or they failed inside the window. No window: every key.
 */
export function keyWindowCond(w: KeyWindow): SQL | undefined {
  if (!w.from && !w.to) return undefined;
  const conds: SQL[] = [];
  if (w.from) conds.push(sql`${keyState.lastEventAt} >= ${w.from.toISOString()}::timestamptz`);
  if (w.to) conds.push(sql`(${keyState.lastEventAt} < ${w.to.toISOString()}::timestamptz or ${failedInWindowSql(w)})`);
  return and(...conds);
}

/** Keys by effective state; with a window, only the keys active in it (same rule as the Tools list). */
export async function countKeyStates(db: Db, workspaceId: string, window: KeyWindow = {}): Promise<KeyStateCounts> {
  const rows = await db
    .select({ level: keyState.level, state: keyState.effectiveState, n: sql<number>`count(*)::int` })
    .from(keyState)
    .where(and(eq(keyState.workspaceId, workspaceId), keyWindowCond(window)))
    .groupBy(keyState.level, keyState.effectiveState);
  const byState: Record<TrustStateName, number> = { trusted: 0, recovering: 0, escalated: 0, blocked: 0 };
  let total = 0;
  let levelAlerts = 0;
  for (const r of rows) {
    if (!(TRUST_STATES as readonly string[]).includes(r.state)) continue;
    byState[r.state as TrustStateName] += r.n;
    total += r.n;
    if (r.level !== "key" && r.state !== "trusted") levelAlerts += r.n;
  }
  return { byState, total, levelAlerts };
}
