/** The Connect page's live checks: the newest event of the workspace, and the newest from each coding CLI. */
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, event, eventId } from "@/db/schema";
import { clampId, type CliName } from "@/server/hooks/shared";

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

const HOOK_CLIS: readonly CliName[] = ["claude-code", "codex", "gemini"];

/** How many of the most recently active sessions are looked at for a CLI's sessions. */
const CLI_SESSION_CANDIDATES = 500;

export type CliLastEvents = Record<CliName, LastEvent | null>;

/**
 * The newest event each coding CLI sent through its hooks. A hook session starts with the event
 * `<cli>:start:<session>` (server/hooks/shared.ts), so the CLI of a session is known by looking
 * that id up in the event-id key: exact lookups for the most recently active sessions, then the
 * newest event of each CLI's newest session (its own index), never a scan of the event log.
 */
export async function getCliLastEvents(db: Db, workspaceId: string): Promise<CliLastEvents> {
  const result: CliLastEvents = { "claude-code": null, codex: null, gemini: null };
  const sessions = await db
    .select({ sessionId: agentSession.sessionId, agent: agentSession.agent })
    .from(agentSession)
    .where(eq(agentSession.workspaceId, workspaceId))
    .orderBy(sql`${agentSession.activeMinute} desc nulls last`, desc(agentSession.lastEventAt))
    .limit(CLI_SESSION_CANDIDATES);
  if (sessions.length === 0) return result;
  const startIds = new Map<string, { cli: CliName; index: number }>();
  sessions.forEach((s, index) => {
    for (const cli of HOOK_CLIS) startIds.set(clampId(`${cli}:start:${s.sessionId}`), { cli, index });
  });
  const found = await db
    .select({ id: eventId.id })
    .from(eventId)
    .where(and(eq(eventId.workspaceId, workspaceId), inArray(eventId.id, [...startIds.keys()])));
  // The most recently active session of each CLI (the candidates are in that order).
  const newest = new Map<CliName, number>();
  for (const { id } of found) {
    const hit = startIds.get(id);
    if (hit && (newest.get(hit.cli) ?? Infinity) > hit.index) newest.set(hit.cli, hit.index);
  }
  await Promise.all(
    [...newest].map(async ([cli, index]) => {
      const session = sessions[index];
      const [row] = await db
        .select({ receivedAt: event.receivedAt, type: event.type, toolName: event.toolName })
        .from(event)
        .where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, session.sessionId)))
        .orderBy(desc(event.seq))
        .limit(1);
      if (row) result[cli] = { receivedAt: row.receivedAt.toISOString(), type: row.type, sessionId: session.sessionId, agent: session.agent, toolName: row.toolName };
    }),
  );
  return result;
}
