/** A person's action on one session (pause, resume, message) starts by locking its row. */
import { and, eq } from "drizzle-orm";
import type { Tx } from "@/db/client";
import { agentSession } from "@/db/schema";
import { notFound } from "./errors";

/** The session's row, locked for the rest of the transaction; a 404 when the workspace has no such session. */
export async function lockSessionRow(tx: Tx, workspaceId: string, sessionId: string) {
  const [row] = await tx
    .select()
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, sessionId)))
    .for("update");
  if (!row) throw notFound(`Session ${sessionId}`);
  return row;
}
