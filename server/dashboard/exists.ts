/**
 * Existence checks for detail pages, run in their layouts before anything streams, so an unknown
 * key or session answers HTTP 404 (a `notFound()` inside a streamed page can only answer 200).
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, failure, keyState, stateTransition } from "@/db/schema";

/** A failure key has a page when it has a state, a failure or a transition in the workspace. */
export async function failureKeyExists(db: Db, workspaceId: string, failureKey: string): Promise<boolean> {
  const [state, anyFailure, transition] = await Promise.all([
    db.select({ one: keyState.failureKey }).from(keyState).where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, failureKey))).limit(1),
    db.select({ one: failure.failureKey }).from(failure).where(and(eq(failure.workspaceId, workspaceId), eq(failure.failureKey, failureKey))).limit(1),
    db.select({ one: stateTransition.failureKey }).from(stateTransition).where(and(eq(stateTransition.workspaceId, workspaceId), eq(stateTransition.failureKey, failureKey))).limit(1),
  ]);
  return state.length + anyFailure.length + transition.length > 0;
}

export async function sessionExists(db: Db, workspaceId: string, sessionId: string): Promise<boolean> {
  const rows = await db
    .select({ one: agentSession.sessionId })
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, sessionId)))
    .limit(1);
  return rows.length > 0;
}

/** Route params arrive URL-encoded; a malformed escape is taken as is. */
export function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
