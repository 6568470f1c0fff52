/**
 * The one definition of "how many keys in each state" used by every page (Overview, Tools, live
 * refresh). A tracked key is any key_state row — failure keys and the @domain:/@tool: level states
 * the Tools page lists — counted by its effective state, so Overview's "Blocked 3 of 21" and the Tools
 * filter's "Blocked 3 / All 21" always agree.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { textArray } from "@/db/sql-arrays";
import { keyState } from "@/db/schema";
import { TRUST_STATE_ORDER, type TrustState } from "@/server/engine/vocabulary";

export interface KeyStateCounts {
  /** Tracked keys (every level) by effective state. */
  byState: Record<TrustState, number>;
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

/** A key_state row's place in windowFailuresOf's answer: its level and the name it counts failures by. */
export function windowCountKey(row: { level: string; failureKey: string; domain: string | null; toolName: string }): string {
  return `${row.level}\u0000${row.level === "key" ? row.failureKey : row.level === "domain" ? (row.domain ?? "") : row.toolName}`;
}

/**
 * Failures inside [from, to) of a page's key_state rows (failuresInWindowSql's definition), as
 * one grouped count per level over the failure indexes instead of a correlated count per row;
 * keyed by windowCountKey.
 */
export async function windowFailuresOf(
  db: Db,
  workspaceId: string,
  rows: { level: string; failureKey: string; domain: string | null; toolName: string }[],
  w: KeyWindow,
): Promise<Map<string, number>> {
  const names = (level: string, name: (r: (typeof rows)[number]) => string | null) => [...new Set(rows.filter((r) => r.level === level).map(name).filter((n): n is string => n !== null))];
  const arms: Array<[string, string, string[]]> = [
    ["key", "failure_key", names("key", (r) => r.failureKey)],
    ["domain", "domain", names("domain", (r) => r.domain)],
    ["tool", "tool_name", names("tool", (r) => r.toolName)],
  ];
  const time = sql`${w.from ? sql`and ts >= ${w.from.toISOString()}::timestamptz` : sql``} ${w.to ? sql`and ts < ${w.to.toISOString()}::timestamptz` : sql``}`;
  const parts = arms
    .filter(([, , list]) => list.length)
    .map(([level, col, list]) => sql`
      select ${level}::text as level, ${sql.identifier(col)} as name, count(*)::int as n from failure
      where workspace_id = ${workspaceId} and ${sql.identifier(col)} = any(${textArray(list)}) ${time}
      group by ${sql.identifier(col)}`);
  const out = new Map<string, number>();
  if (!parts.length) return out;
  for (const r of rowsOf<{ level: string; name: string; n: number }>(await db.execute(sql.join(parts, sql` union all `))))
    out.set(`${r.level}\u0000${r.name}`, Number(r.n));
  return out;
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
  const byState: Record<TrustState, number> = { trusted: 0, recovering: 0, escalated: 0, blocked: 0 };
  let total = 0;
  let levelAlerts = 0;
  for (const r of rows) {
    if (!(TRUST_STATE_ORDER as readonly string[]).includes(r.state)) continue;
    byState[r.state as TrustState] += r.n;
    total += r.n;
    if (r.level !== "key" && r.state !== "trusted") levelAlerts += r.n;
  }
  return { byState, total, levelAlerts };
}
