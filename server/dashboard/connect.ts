/** The Connect page's live check: the newest event the workspace received, from any agent. */
import { and, desc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, event } from "@/db/schema";

export interface LastEvent {
  /** ISO time the event was received. */
  receivedAt: string;
  type: string;
  sessionId: string;
  agent: string | null;
  toolName: string | null;
}

export async function getLastEvent(db: Db, workspaceId: string): Promise<LastEvent | null> {
  const [row] = await db
    .select({ receivedAt: event.receivedAt, type: event.type, sessionId: event.sessionId, toolName: event.toolName, agent: agentSession.agent })
    .from(event)
    .leftJoin(agentSession, and(eq(agentSession.workspaceId, event.workspaceId), eq(agentSession.sessionId, event.sessionId)))
    .where(eq(event.workspaceId, workspaceId))
    .orderBy(desc(event.ts), desc(event.seq))
    .limit(1);
  if (!row) return null;
  return { receivedAt: row.receivedAt.toISOString(), type: row.type, sessionId: row.sessionId, agent: row.agent, toolName: row.toolName };
}
