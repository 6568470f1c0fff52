/** Read-only queries for the workspace overview. */
import { withThresholdsInForce } from "@/server/services/thresholds-in-force";
import { and, desc, eq, gte, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, dailyToolStat, event, keyState } from "@/db/schema";
import { countPendingApprovals } from "./approvals";
import { failureCounts } from "./failure-counts";
import { iso } from "./util";

import { countKeyStates } from "./key-counts";
import type { TrustState } from "@/server/engine/vocabulary";


export interface LiveCounts {
  /** Tracked keys (every level) by effective state: the same counts as the Tools page (see key-counts.ts). */
  keys: Record<TrustState, number>;
  /** Domain- and tool-level states that are not trusted. */
  levelAlerts: number;
  totalKeys: number;
  pendingApprovals: number;
  pausedSessions: number;
  failures24h: number;
  /** ISO time of the workspace's last received event, or null when nothing was ever posted. */
  lastEventAt: string | null;
  at: string;
}

/** Small, index-backed counts for the overview (polled every few seconds). */
export async function getLiveCounts(db: Db, workspaceId: string, now = new Date()): Promise<LiveCounts> {
  const since = new Date(now.getTime() - 24 * 3600_000);
  const [counts, pendingApprovals, [paused], [fails], [last]] = await Promise.all([
    countKeyStates(db, workspaceId),
    countPendingApprovals(db, workspaceId),
    db
      .select({ n: sql<number>`count(*)::int` })
      .from(agentSession)
      .where(and(eq(agentSession.workspaceId, workspaceId), sql`${agentSession.paused}`)),
    failureCounts(db, workspaceId, { from: since }).then((rows) => [{ n: rows.reduce((a, r) => a + r.n, 0) }]),
    db.select({ ts: event.ts }).from(event).where(eq(event.workspaceId, workspaceId)).orderBy(desc(event.ts)).limit(1),
  ]);
  const keys: Record<TrustState, number> = counts.byState;
  return {
    keys,
    levelAlerts: counts.levelAlerts,
    totalKeys: counts.total,
    pendingApprovals,
    pausedSessions: paused?.n ?? 0,
    failures24h: fails?.n ?? 0,
    lastEventAt: iso(last?.ts),
    at: now.toISOString(),
  };
}

export interface DailyPoint {
  day: string;
  results: number;
  failures: number;
  rate: number | null;
}

/** The first UTC day with tool results (for an "all time" chart), or null. */
export async function earliestStatDay(db: Db, workspaceId: string): Promise<string | null> {
  const [r] = await db
    .select({ day: dailyToolStat.day })
    .from(dailyToolStat)
    .where(eq(dailyToolStat.workspaceId, workspaceId))
    .orderBy(dailyToolStat.day)
    .limit(1);
  return r?.day ?? null;
}

/**
 * Results, failures and failure rate per UTC day (from daily_tool_stat): over the last `days` days,
 * or over the given list of days (oldest first, from `windowDays`).
 */
export async function getFailureRateSeries(db: Db, workspaceId: string, days: number | string[] = 14, now = new Date()): Promise<DailyPoint[]> {
  const dayList =
    typeof days === "number"
      ? Array.from({ length: days }, (_, i) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1 - i))).toISOString().slice(0, 10))
      : days;
  if (dayList.length === 0) return [];
  const rows = await db
    .select({
      day: dailyToolStat.day,
      results: sql<number>`sum(${dailyToolStat.results})::int`,
      failures: sql<number>`sum(${dailyToolStat.failures})::int`,
    })
    .from(dailyToolStat)
    .where(and(eq(dailyToolStat.workspaceId, workspaceId), gte(dailyToolStat.day, dayList[0]), lte(dailyToolStat.day, dayList[dayList.length - 1])))
    .groupBy(dailyToolStat.day);
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: DailyPoint[] = [];
  for (const day of dayList) {
    const r = byDay.get(day);
    const results = r?.results ?? 0;
    const failures = r?.failures ?? 0;
    out.push({ day, results, failures, rate: results > 0 ? failures / results : null });
  }
  return out;
}

export interface TopKey {
  failureKey: string;
  toolName: string;
  level: string;
  state: string;
  effectiveState: string;
  effectiveFailures: number;
  threshold: number | null;
  totalFailures: number;
  lastFailureAt: string | null;
}

/** What a top-key row shows of the key's state (domain and plugin only to find the rule in force). */
const TOP_KEY_STATE_COLUMNS = {
  failureKey: keyState.failureKey,
  toolName: keyState.toolName,
  level: keyState.level,
  state: keyState.state,
  effectiveState: keyState.effectiveState,
  effectiveFailures: keyState.effectiveFailures,
  threshold: keyState.threshold,
  domain: keyState.domain,
  pluginName: keyState.pluginName,
};

/**
 * The worst keys first: most failures, then most effective (recent, decayed) failures, then the latest.
 * With a window, "failures" are the ones inside it (failure-counts.ts), so the list follows the
 * page's time range; without one, the keys' all-time totals.
 */
/**
 * `windowCounts`: the window's `failureCounts`, when the caller reads them too (Overview's failure
 * card): one read of the window's failures instead of two.
 */
export async function getTopFailingKeys(
  db: Db,
  workspaceId: string,
  limit = 8,
  window: { from?: Date; to?: Date } = {},
  windowCounts?: ReturnType<typeof failureCounts>,
): Promise<TopKey[]> {
  if (window.from || window.to) return topFailingKeysIn(db, workspaceId, limit, windowCounts ?? failureCounts(db, workspaceId, window));
  const rows = await db
    .select({
      ...TOP_KEY_STATE_COLUMNS,
      totalFailures: keyState.totalFailures,
      lastFailureAt: keyState.lastFailureAt,
    })
    .from(keyState)
    .where(and(eq(keyState.workspaceId, workspaceId), sql`${keyState.totalFailures} > 0`))
    .orderBy(desc(keyState.totalFailures), desc(keyState.effectiveFailures), desc(keyState.lastFailureAt))
    .limit(limit);
  return (await withThresholdsInForce(db, workspaceId, rows)).map(({ domain: _d, pluginName: _p, ...r }) => ({ ...r, lastFailureAt: iso(r.lastFailureAt) }));
}

async function topFailingKeysIn(db: Db, workspaceId: string, limit: number, windowCounts: ReturnType<typeof failureCounts>): Promise<TopKey[]> {
  // A row per key and tool already (failure-counts.ts).
  const counted = [...(await windowCounts)]
    .sort((a, b) => b.n - a.n || b.last.getTime() - a.last.getTime() || (a.failureKey < b.failureKey ? -1 : a.failureKey > b.failureKey ? 1 : 0))
    .slice(0, limit);
  if (counted.length === 0) return [];
  const states = await db
    .select(TOP_KEY_STATE_COLUMNS)
    .from(keyState)
    .where(and(eq(keyState.workspaceId, workspaceId), inArray(keyState.failureKey, counted.map((c) => c.failureKey))));
  const shown = new Map((await withThresholdsInForce(db, workspaceId, states)).map((r) => [r.failureKey, r]));
  return counted.map((c) => {
    const st = shown.get(c.failureKey);
    return {
      failureKey: c.failureKey,
      toolName: c.toolName,
      level: st?.level ?? "key",
      state: st?.state ?? "trusted",
      effectiveState: st?.effectiveState ?? "trusted",
      effectiveFailures: st?.effectiveFailures ?? 0,
      threshold: st?.threshold ?? null,
      totalFailures: Number(c.n),
      lastFailureAt: c.last.toISOString(),
    };
  });
}

export interface PausedSession {
  sessionId: string;
  agent: string;
  model: string | null;
  pauseReason: string | null;
  pausedAt: string | null;
}

export async function getPausedSessions(db: Db, workspaceId: string, limit = 10): Promise<PausedSession[]> {
  const rows = await db
    .select({ sessionId: agentSession.sessionId, agent: agentSession.agent, model: agentSession.model, pauseReason: agentSession.pauseReason, pausedAt: agentSession.pausedAt })
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, workspaceId), sql`${agentSession.paused}`))
    .orderBy(desc(agentSession.pausedAt))
    .limit(limit);
  return rows.map((r) => ({ ...r, pausedAt: iso(r.pausedAt) }));
}

/** Whether anything was ever posted to the workspace (for the empty state). */
export async function hasAnyEvents(db: Db, workspaceId: string): Promise<boolean> {
  const rows = await db.select({ one: sql`1` }).from(event).where(eq(event.workspaceId, workspaceId)).limit(1);
  if (rows.length) return true;
  const ks = await db.select({ one: sql`1` }).from(keyState).where(eq(keyState.workspaceId, workspaceId)).limit(1);
  return ks.length > 0;
}
