/**
 * Nudges and guidance that have not reached the agent yet (SPEC 4.6): a person's message
 * (sessions.message), resume guidance of an agent or of the workspace, and nudges detected from
 * OTLP, whose answers carry no effects. Each is delivered once — on the session's next guard.check,
 * hook answer or ingest.events answer — and marked delivered in the same transaction.
 *
 * Queuing sets the session row's `pending_nudges`, which changes its version: a guard.check that
 * decided from memory (server/ingest/guard-lean.ts) then fails its write and reads the row, sees the
 * flag, and leaves the check to the full path, which delivers. Deliveries run with the session row
 * locked (after applyBatch), so a nudge is never delivered twice.
 */
import { and, eq, sql } from "drizzle-orm";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { pendingNudge } from "@/db/schema";
import { textArray } from "@/db/sql-arrays";
import type { Effect, NudgeType, PatternType } from "@/server/engine/types";
import { redactString } from "@/server/engine/redact";
import { writeAudit, type Actor } from "./audit";
import { badRequest } from "./errors";
import { lockSessionRow } from "./session-lock";

export interface NudgeToQueue {
  sessionId: string;
  nudgeType: NudgeType;
  patternType: PatternType | null;
  message: string;
  /** `sweep`: a `hung_call` nudge of the open-call sweep (SPEC 5.1). */
  source: "message" | "resume" | "otlp" | "sweep";
  createdBy?: string | null;
}

/** Queues nudges for their sessions (rows that exist) and flags the sessions. */
export async function queuePendingNudges(tx: Tx, workspaceId: string, nudges: NudgeToQueue[]): Promise<void> {
  if (!nudges.length) return;
  await tx.insert(pendingNudge).values(
    nudges.map((n) => ({ workspaceId, sessionId: n.sessionId, nudgeType: n.nudgeType, patternType: n.patternType, message: n.message, source: n.source, createdBy: n.createdBy ?? null })),
  );
  const ids = [...new Set(nudges.map((n) => n.sessionId))].sort();
  await tx.execute(sql`
    update agent_session set pending_nudges = true
    where workspace_id = ${workspaceId} and session_id = any(${textArray(ids)}) and not pending_nudges`);
}

/** The nudges of a batch whose answer reaches no agent (OTLP), queued for delivery. */
export async function queueOtlpNudges(tx: Tx, workspaceId: string, effects: readonly Effect[]): Promise<void> {
  const nudges: NudgeToQueue[] = [];
  for (const e of effects) {
    if (e.type === "nudge") nudges.push({ sessionId: e.sessionId, nudgeType: e.nudgeType, patternType: e.patternType, message: e.message, source: "otlp" });
  }
  await queuePendingNudges(tx, workspaceId, nudges);
}

/**
 * Resume guidance for every running session of an agent (or of the workspace): one pending nudge
 * each, queued and flagged in two statements whatever their number. Returns how many sessions.
 */
export async function queueGuidanceFor(tx: Tx, workspaceId: string, target: { agent: string | null }, message: string, by: string): Promise<number> {
  const agentFilter = target.agent === null ? sql`` : sql`and agent = ${target.agent}`;
  const queued = rowsOf<{ session_id: string }>(
    await tx.execute(sql`
      insert into pending_nudge (workspace_id, session_id, nudge_type, pattern_type, message, source, created_by)
      select workspace_id, session_id, 'guidance', null, ${message}, 'resume', ${by}
      from agent_session where workspace_id = ${workspaceId} and ended_at is null ${agentFilter}
      order by session_id
      returning session_id`),
  );
  if (!queued.length) return 0;
  await tx.execute(sql`
    update agent_session set pending_nudges = true
    where workspace_id = ${workspaceId} and ended_at is null ${agentFilter} and not pending_nudges`);
  return queued.length;
}

/**
 * Takes the pending nudges of the given sessions (locked by the caller's batch) as `nudge`
 * effects, oldest first, and marks them delivered; open calls the sweep raised come first, as
 * their `hung_call` pattern effects (SPEC 5.1), marked reported.
 */
export async function deliverPendingNudges(
  tx: Tx,
  workspaceId: string,
  sessionIds: Iterable<string>,
): Promise<Extract<Effect, { type: "nudge" } | { type: "pattern" }>[]> {
  const ids = [...new Set(sessionIds)].sort();
  if (!ids.length) return [];
  const hung = rowsOf<{ session_id: string; call_id: string; tool_name: string; since: string | Date }>(
    await tx.execute(sql`
      update open_call set reported_at = now()
      where workspace_id = ${workspaceId} and session_id = any(${textArray(ids)}) and reported_at is null
      returning session_id, call_id, tool_name, since`),
  );
  const patterns = hung
    .sort((a, b) => new Date(a.since).getTime() - new Date(b.since).getTime() || (a.call_id < b.call_id ? -1 : 1))
    .map((r) => ({ type: "pattern" as const, patternType: "hung_call" as const, severity: "minor" as const, count: 1, sessionId: r.session_id, toolSequence: [r.tool_name] }));
  const rows = rowsOf<{ session_id: string; nudge_type: NudgeType; pattern_type: PatternType | null; message: string; id: number | string }>(
    await tx.execute(sql`
      update pending_nudge set delivered_at = now()
      where workspace_id = ${workspaceId} and session_id = any(${textArray(ids)}) and delivered_at is null
      returning id, session_id, nudge_type, pattern_type, message`),
  );
  await tx.execute(sql`
    update agent_session set pending_nudges = false
    where workspace_id = ${workspaceId} and session_id = any(${textArray(ids)}) and pending_nudges`);
  const nudges = rows
    .sort((a, b) => Number(a.id) - Number(b.id))
    .map((r) => ({ type: "nudge" as const, nudgeType: r.nudge_type, message: r.message, patternType: r.pattern_type, sessionId: r.session_id }));
  return [...patterns, ...nudges];
}

export const MAX_MESSAGE_LENGTH = 4096;

/** `sessions.message`: a person's text for a running session, delivered once as a `guidance` nudge. */
export async function queueSessionMessage(
  db: Db,
  input: { workspaceId: string; organizationId: string; sessionId: string; text: string; actor: Actor },
): Promise<{ sessionId: string; queued: true; text: string }> {
  const text = redactString(input.text.trim());
  if (!text) throw badRequest("text: must not be blank", "text");
  return db.transaction(async (tx) => {
    const row = await lockSessionRow(tx, input.workspaceId, input.sessionId);
    if (row.endedAt) throw badRequest(`Session ${input.sessionId} has ended: nothing would read the message`, "sessionId");
    await queuePendingNudges(tx, input.workspaceId, [{ sessionId: input.sessionId, nudgeType: "guidance", patternType: null, message: text, source: "message", createdBy: input.actor.label }]);
    await writeAudit(tx, {
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      actor: input.actor,
      action: "session.message",
      target: input.sessionId,
      after: { text },
    });
    return { sessionId: input.sessionId, queued: true as const, text };
  });
}

/** The session's nudges not delivered yet (sessions.get, MCP). */
export async function undeliveredNudges(db: Db | Tx, workspaceId: string, sessionId: string) {
  return db
    .select({ nudgeType: pendingNudge.nudgeType, message: pendingNudge.message, source: pendingNudge.source, createdAt: pendingNudge.createdAt })
    .from(pendingNudge)
    .where(and(eq(pendingNudge.workspaceId, workspaceId), eq(pendingNudge.sessionId, sessionId), sql`${pendingNudge.deliveredAt} is null`))
    .orderBy(pendingNudge.id);
}
