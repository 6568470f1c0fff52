/** How far a blocked or escalated tool- or domain-level state reaches: for the key page and the Tools list. */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, event, keyState } from "@/db/schema";

/**
 * What a domain- or tool-level state stops (issue: a reset of a key under a blocked tool left the
 * tool blocked): the keys it covers and, since it left trusted, the calls it answered ask or deny
 * and the agents that made them.
 */
export interface LevelReach {
  failureKey: string;
  /** Keys of the tool (or domain) besides the level row itself. */
  keys: number;
  /** When the level left trusted (its escalation or block); null when it is trusted. */
  since: string | null;
  /** guard.check answers of ask or deny for calls under the level since then. */
  stoppedCalls: number;
  /** Agents whose calls it stopped. */
  stoppedAgents: number;
}

/** The keys a level covers and what it stopped since it left trusted (event_ws_time_idx bounds the scan). */
export async function levelReach(
  db: Db,
  workspaceId: string,
  level: { failureKey: string; level: string; toolName: string; domain: string | null; state: string; trust: { escalatedAt?: number | null } },
): Promise<LevelReach> {
  const under = level.level === "tool" ? eq(keyState.toolName, level.toolName) : eq(keyState.domain, level.domain ?? "");
  const [{ n }] = await db
    .select({ n: sql<number>`count(*)` })
    .from(keyState)
    .where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.level, "key"), under));
  const since = level.state !== "trusted" && level.trust.escalatedAt ? new Date(level.trust.escalatedAt) : null;
  if (!since) return { failureKey: level.failureKey, keys: Number(n), since: null, stoppedCalls: 0, stoppedAgents: 0 };
  const callsUnder =
    level.level === "tool"
      ? eq(event.toolName, level.toolName)
      : sql`${event.failureKey} in (select failure_key from key_state where workspace_id = ${workspaceId} and level = 'key' and domain = ${level.domain ?? ""})`;
  const [r] = await db
    .select({ calls: sql<number>`count(*)`, agents: sql<number>`count(distinct ${agentSession.agent})` })
    .from(event)
    .leftJoin(agentSession, and(eq(agentSession.workspaceId, event.workspaceId), eq(agentSession.sessionId, event.sessionId)))
    .where(
      and(
        eq(event.workspaceId, workspaceId),
        gte(event.ts, since),
        eq(event.type, "tool.call"),
        callsUnder,
        sql`${event.payload}->'guard'->>'decision' in ('ask', 'deny')`,
      ),
    );
  return { failureKey: level.failureKey, keys: Number(n), since: since.toISOString(), stoppedCalls: Number(r?.calls ?? 0), stoppedAgents: Number(r?.agents ?? 0) };
}
