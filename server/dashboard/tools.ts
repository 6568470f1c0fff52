/** Read-only queries for the Tools page (every failure key, including @domain:/@tool: level states). */
import { withThresholdsInForce } from "@/server/services/thresholds-in-force";
import { and, asc, desc, eq, ilike, sql, type SQL } from "drizzle-orm";
import { countKeyStates, keyWindowCond, windowCountKey, windowFailuresOf, type KeyWindow } from "./key-counts";
import type { Db } from "@/db/client";
import { keyState, keyStateSummary, type KeyStateSummary } from "@/db/schema";
import { recoveryOf } from "@/server/engine/trust";
import { iso, likeEscape } from "./util";
import { levelReach, type LevelReach } from "./level-reach";
import { timeToRecover } from "@/server/services/time-to-recover";

export const KEY_SORTS = ["key", "state", "failures", "consecutive", "total", "last_failure"] as const;
export type KeySort = (typeof KEY_SORTS)[number];
export const KEY_LEVELS = ["key", "domain", "tool"] as const;

export interface KeyListQuery {
  state?: string;
  level?: string;
  q?: string;
  sort?: KeySort;
  dir?: "asc" | "desc";
  page?: number;
  pageSize?: number;
  /** Only keys active in this window (see keyWindowCond); rows then carry their failures in it. */
  window?: KeyWindow;
}

export interface KeyRow {
  failureKey: string;
  toolName: string;
  level: "key" | "domain" | "tool";
  domain: string | null;
  state: string;
  effectiveState: string;
  effectiveFailures: number;
  threshold: number | null;
  consecutiveFailures: number;
  totalCalls: number;
  totalFailures: number;
  lastFailureAt: string | null;
  lastEventAt: string | null;
  escalationExpires: string | null;
  escalationReason: string | null;
  recovery: { successes: number; needed: number } | null;
  approvalPending: boolean;
  /** Failures inside the list's time window (absent without one). */
  windowFailures?: number;
  /** A domain- or tool-level row that is not trusted: the keys it covers and the calls and agents it stopped (listKeys only). */
  reach?: LevelReach;
  /** Mean time to recover (escalated → trusted), all time: the key's own; a tool-level row's over every key of its tool (listKeys only). */
  meanTimeToRecover?: { seconds: number; recoveries: number; scope: "key" | "tool" };
}

const STATE_RANK = sql`case ${keyState.effectiveState} when 'blocked' then 3 when 'escalated' then 2 when 'recovering' then 1 else 0 end`;

function orderFor(sort: KeySort, dir: "asc" | "desc"): SQL[] {
  const d = dir === "asc" ? asc : desc;
  const nulls = dir === "asc" ? sql`nulls first` : sql`nulls last`;
  switch (sort) {
    case "key":
      return [d(keyState.failureKey)];
    case "state":
      return [d(STATE_RANK), desc(keyState.effectiveFailures), asc(keyState.failureKey)];
    case "failures":
      return [d(keyState.effectiveFailures), asc(keyState.failureKey)];
    case "consecutive":
      return [d(keyState.consecutiveFailures), asc(keyState.failureKey)];
    case "total":
      return [d(keyState.totalFailures), asc(keyState.failureKey)];
    case "last_failure":
      return [sql`${keyState.lastFailureAt} ${sql.raw(dir)} ${nulls}`, asc(keyState.failureKey)];
  }
}

export function keyFilters(workspaceId: string, q: Pick<KeyListQuery, "state" | "level" | "q" | "window">): SQL {
  const conds: SQL[] = [eq(keyState.workspaceId, workspaceId)];
  const inWindow = q.window ? keyWindowCond(q.window) : undefined;
  if (inWindow) conds.push(inWindow);
  if (q.state) conds.push(eq(keyState.effectiveState, q.state));
  if (q.level && (KEY_LEVELS as readonly string[]).includes(q.level)) conds.push(eq(keyState.level, q.level as "key"));
  if (q.q) conds.push(ilike(keyState.failureKey, `%${likeEscape(q.q)}%`));
  return and(...conds)!;
}

/** One page of keys plus the total (count(*) + limit/offset on the workspace's index range). */
export async function listKeys(db: Db, workspaceId: string, query: KeyListQuery = {}) {
  const pageSize = Math.min(200, Math.max(1, query.pageSize ?? 50));
  const page = Math.max(1, query.page ?? 1);
  const where = keyFilters(workspaceId, query);
  const windowed = !!(query.window?.from || query.window?.to);
  const [[{ total }], rows] = await Promise.all([
    db.select({ total: sql<number>`count(*)::int` }).from(keyState).where(where),
    db
      .select({ k: keyStateSummary })
      .from(keyState)
      .where(where)
      .orderBy(...orderFor(query.sort ?? "state", query.dir ?? "desc"))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
  ]);
  // The page's failures in the window: one grouped count for its rows, joined here by level and name.
  const [shown, windowCounts] = await Promise.all([
    withThresholdsInForce(db, workspaceId, rows.map((r) => r.k)),
    windowed ? windowFailuresOf(db, workspaceId, rows.map((r) => r.k), query.window!) : null,
  ]);
  // A blocked or escalated level stops every key under it: say how far it reaches on its row.
  const toolRows = [...new Set(shown.filter((k) => k.level === "tool").map((k) => k.toolName))];
  const [reaches, mttr, toolMttr] = await Promise.all([
    Promise.all(shown.map((k) => (k.level !== "key" && k.state !== "trusted" ? levelReach(db, workspaceId, k) : null))),
    timeToRecover(db, workspaceId, { failureKeys: shown.map((k) => k.failureKey) }),
    Promise.all(toolRows.map((toolName) => timeToRecover(db, workspaceId, { toolName }))),
  ]);
  const mttrOf = (k: KeyStateSummary): KeyRow["meanTimeToRecover"] => {
    if (k.level === "tool") {
      const t = toolMttr[toolRows.indexOf(k.toolName)];
      const seconds = t.byTool.get(k.toolName);
      return seconds === undefined ? undefined : { seconds, recoveries: [...t.recoveries.values()].reduce((a, b) => a + b, 0), scope: "tool" };
    }
    const seconds = mttr.byKey.get(k.failureKey);
    return seconds === undefined ? undefined : { seconds, recoveries: mttr.recoveries.get(k.failureKey) ?? 0, scope: "key" };
  };
  return {
    total,
    page,
    pageSize,
    rows: shown.map((k, i) => ({
      ...toKeyRow(k),
      ...(windowCounts ? { windowFailures: windowCounts.get(windowCountKey(rows[i].k)) ?? 0 } : {}),
      ...(reaches[i] ? { reach: reaches[i] } : {}),
      ...(mttrOf(k) ? { meanTimeToRecover: mttrOf(k) } : {}),
    })),
  };
}

/** Keys per effective state (for the filter's counts): the shared definition Overview uses too. */
export async function countKeysByState(db: Db, workspaceId: string, window: KeyWindow = {}): Promise<Record<string, number>> {
  return (await countKeyStates(db, workspaceId, window)).byState;
}

export function toKeyRow(r: KeyStateSummary): KeyRow {
  return {
    failureKey: r.failureKey,
    toolName: r.toolName,
    level: r.level,
    domain: r.domain,
    state: r.state,
    effectiveState: r.effectiveState,
    effectiveFailures: r.effectiveFailures,
    threshold: r.threshold,
    consecutiveFailures: r.consecutiveFailures,
    totalCalls: r.totalCalls,
    totalFailures: r.totalFailures,
    lastFailureAt: iso(r.lastFailureAt),
    lastEventAt: iso(r.lastEventAt),
    escalationExpires: iso(r.escalationExpires),
    escalationReason: r.trust.escalationReason ?? null,
    recovery: recoveryOf(r.trust),
    approvalPending: !!r.trust.approvalPending,
  };
}
