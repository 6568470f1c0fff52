/**
 * Tool-call approvals (SPEC 7.2): when `guard.check` would answer `ask` and the agent is willing to
 * wait, a person answers in the dashboard instead of the agent's own prompt.
 *
 * Two halves around the guard transaction:
 *  - `settleAsk` runs INSIDE it: an earlier decision on this call, a session grant for this key, or
 *    a new pending approval (once per call id);
 *  - `awaitToolCallDecision` runs AFTER it committed: the request waits on an in-memory waiter
 *    (no transaction, no connection held), then re-reads the approval.
 */
import { and, eq, isNull, or, gt, sql } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import type { Db, Tx } from "@/db/client";
import { approval } from "@/db/schema";
import type { Decision, Effect } from "@/server/engine/types";
import { redactedPreview } from "@/server/engine/redact";
import { waitForApprovalDecision } from "./approval-waiters";
import { releaseSlot, type CapacitySlot } from "@/server/http/capacity";

const ARGS_PREVIEW_BYTES = 1024;

type ApprovalRow = typeof approval.$inferSelect;

export interface AskContext {
  workspaceId: string;
  sessionId: string;
  callId: string;
  failureKey: string;
  toolName: string;
  args: Record<string, unknown>;
  agent: string | null;
  model: string | null;
  /** Why Vigil asks (the escalation reason), shown to the person. */
  reason: string | null;
  /** When the session ended, if it did (a session grant lasts until then). */
  sessionEndedAt: number | null;
  waitForApprovalSeconds: number;
  now: number;
}

export interface SettledAsk {
  decision: Decision;
  reason: string | null;
  approvalId: string | null;
  effects: Effect[];
  /** Set when the request should wait for a person on this approval. */
  waitFor: string | null;
}

/** The answer an approval gives, or null while it is pending. */
function decisionOf(a: Pick<ApprovalRow, "status" | "comment">): { decision: Decision; reason: string | null } | null {
  if (a.status === "approved") return { decision: "allow", reason: null };
  if (a.status === "denied") return { decision: "deny", reason: a.comment ?? "Denied by a person" };
  return null;
}

/** Inside the guard transaction, only when the decision would be `ask`. */
export async function settleAsk(tx: Tx, c: AskContext): Promise<SettledAsk> {
  const [existing] = await tx
    .select()
    .from(approval)
    .where(and(eq(approval.workspaceId, c.workspaceId), eq(approval.kind, "tool_call"), eq(approval.sessionId, c.sessionId), eq(approval.callId, c.callId)))
    .limit(1);
  if (existing) {
    const decided = decisionOf(existing);
    if (decided) return { ...decided, approvalId: existing.id, effects: [], waitFor: null };
    return { decision: "ask", reason: c.reason, approvalId: existing.id, effects: [], waitFor: c.waitForApprovalSeconds > 0 ? existing.id : null };
  }
  const [grant] = await tx
    .select({ id: approval.id })
    .from(approval)
    .where(
      and(
        eq(approval.workspaceId, c.workspaceId),
        eq(approval.sessionId, c.sessionId),
        eq(approval.failureKey, c.failureKey),
        eq(approval.kind, "tool_call"),
        eq(approval.scope, "session"),
        eq(approval.status, "approved"),
        // The grant lasts until the session ends.
        c.sessionEndedAt === null ? sql`true` : or(isNull(approval.resolvedAt), gt(approval.resolvedAt, new Date(c.sessionEndedAt))),
      ),
    )
    .limit(1);
  if (grant) return { decision: "allow", reason: null, approvalId: grant.id, effects: [], waitFor: null };
  if (c.waitForApprovalSeconds <= 0) return { decision: "ask", reason: c.reason, approvalId: null, effects: [], waitFor: null };

  const id = randomUUID();
  // A plain insert: a concurrent request for the same call loses on the unique index and the
  // guard's retry then finds this row.
  await tx.insert(approval).values({
    workspaceId: c.workspaceId,
    id,
    kind: "tool_call",
    failureKey: c.failureKey,
    toolName: c.toolName,
    status: "pending",
    createdAt: new Date(c.now),
    sessionId: c.sessionId,
    callId: c.callId,
    agent: c.agent,
    model: c.model,
    argsPreview: redactedPreview(c.args, ARGS_PREVIEW_BYTES),
    reason: c.reason,
  });
  return {
    decision: "ask",
    reason: c.reason,
    approvalId: id,
    effects: [{ type: "approval_pending", approvalId: id, failureKey: c.failureKey, callId: c.callId, sessionId: c.sessionId, toolName: c.toolName, reason: c.reason }],
    waitFor: id,
  };
}

async function readApproval(db: Db, workspaceId: string, approvalId: string) {
  const [row] = await db
    .select({ status: approval.status, comment: approval.comment })
    .from(approval)
    .where(and(eq(approval.workspaceId, workspaceId), eq(approval.id, approvalId)));
  return row ?? null;
}

/**
 * After the guard transaction committed: waits (holding nothing) until a person decides or the
 * deadline passes, then answers from the approval as it is now. Still pending → null (the caller
 * keeps its `ask`).
 */
export async function awaitToolCallDecision(
  db: Db,
  workspaceId: string,
  approvalId: string,
  deadline: number,
  signal?: AbortSignal,
  capacitySlot: CapacitySlot | null = null,
): Promise<{ decision: Decision; reason: string | null } | null> {
  const remaining = deadline - Date.now();
  if (remaining > 0) {
    // Waiting for a person uses no connection: it does not count against the instance's capacity.
    if (capacitySlot) releaseSlot(capacitySlot);
    await waitForApprovalDecision(
      db,
      approvalId,
      remaining,
      async () => {
        const row = await readApproval(db, workspaceId, approvalId);
        return !row || row.status !== "pending";
      },
      signal,
    );
  }
  const row = await readApproval(db, workspaceId, approvalId);
  return row ? decisionOf(row) : null;
}

/** `approvals.get` (agent scope): one approval with its status and comment. */
export async function getApproval(db: Db, workspaceId: string, approvalId: string) {
  const [r] = await db
    .select()
    .from(approval)
    .where(and(eq(approval.workspaceId, workspaceId), eq(approval.id, approvalId)));
  return r ? approvalView(r) : null;
}

/** The public shape of an approval of either kind (SPEC 7.2 `approvals.list` / `approvals.get`). */
export function approvalView(r: ApprovalRow) {
  return {
    id: r.id,
    kind: r.kind,
    failureKey: r.failureKey,
    toolName: r.toolName,
    status: r.status,
    createdAt: r.createdAt.toISOString(),
    resolvedAt: r.resolvedAt ? r.resolvedAt.toISOString() : null,
    resolvedBy: r.resolvedBy,
    comment: r.comment,
    ...(r.kind === "tool_call"
      ? { callId: r.callId, sessionId: r.sessionId, agent: r.agent, model: r.model, argsPreview: r.argsPreview, reason: r.reason, scope: r.scope }
      : r.kind === "reset"
        ? { reason: r.reason }
        : {}),
  };
}
