/**
 * The one definition of "how many keys in each state" used by every page (Overview, Tools, live
 * refresh). A tracked key is any key_state row — failure keys and the @domain:/@tool: level states
 * the Tools page lists — counted by its effective state, so Overview's "Blocked 3 of 21" and the Tools
 * filter's "Blocked 3 / All 21" always agree.
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { keyState } from "@/db/schema";

export const TRUST_STATES = ["trusted", "recovering", "escalated", "blocked"] as const;
export type TrustStateName = (typeof TRUST_STATES)[number];

export interface KeyStateCounts {
  /** Tracked keys (every level) by effective state. */
  byState: Record<TrustStateName, number>;
  /** All tracked keys (the sum of byState). */
  total: number;
  /** Domain- and tool-level states that are not trusted (a subset of the counts above). */
  levelAlerts: number;
}

export async function countKeyStates(db: Db, workspaceId: string): Promise<KeyStateCounts> {
  const rows = await db
    .select({ level: keyState.level, state: keyState.effectiveState, n: sql<number>`count(*)::int` })
    .from(keyState)
    .where(eq(keyState.workspaceId, workspaceId))
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
