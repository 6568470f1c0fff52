/** The approval queue: ask-mode recoveries and tool calls waiting for a person (SPEC 4.3, 7.2). */
import { and, desc, eq } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { approval, keyState, stateTransition } from "@/db/schema";
import { approveRecovery, denyRecovery } from "@/server/engine/trust";
import { redactString } from "@/server/engine/redact";
import { resolveRule } from "@/server/engine/rules";
import type { ConfigDocument, Effect } from "@/server/engine/types";
import { loadConfigs } from "./config-cache";
import { refreshEffectiveStates, writeTrustState } from "./key-state-writer";
import { enqueueNotifications } from "@/server/notifications/outbox";
import { writeAudit, type Actor } from "./audit";
import { resetKeysInTx } from "./key-reset";
import { notifyDecisionInTx, releaseLocalWaiters } from "./approval-waiters";
import { approvalView } from "./tool-call-approvals";
import { badRequest, notFound, ServiceError } from "./errors";

/** resetKeysInTx's answer for a key that is gone (its not-found is thrown before any write). */
function keyGone(error: unknown): { reset: string[] } {
  if (error instanceof ServiceError && error.code === "NOT_FOUND") return { reset: [] };
  throw error;
}

export type ApprovalStatus = "pending" | "approved" | "denied";

export async function listApprovals(db: Db, workspaceId: string, status?: ApprovalStatus) {
  const rows = await db
    .select()
    .from(approval)
    .where(status ? and(eq(approval.workspaceId, workspaceId), eq(approval.status, status)) : eq(approval.workspaceId, workspaceId))
    .orderBy(desc(approval.createdAt))
    .limit(500);
  return rows.map(approvalView);
}

export interface ResolveApprovalInput {
  workspaceId: string;
  organizationId: string;
  approvalId: string;
  decision: "approve" | "deny";
  comment?: string;
  /** Tool-call approvals: approve this call only (default) or this key for the rest of the session. */
  scope?: "once" | "session";
  actor: Actor;
  now?: number;
}

/**
 * Recovery: approve → the key is trusted; deny → escalated with a fresh window.
 * Tool call: approve (once or for the session) → the waiting call is allowed; deny (a comment is
 * required: the agent's model reads it) → denied. Either way audit-logged, and a tool-call decision
 * wakes the requests waiting on it on every instance.
 */
export async function resolveApproval(db: Db, input: ResolveApprovalInput) {
  const result = await db.transaction(async (tx) => {
    const [a] = await tx
      .select()
      .from(approval)
      .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.id, input.approvalId)))
      .for("update");
    if (!a) throw notFound("Approval");
    if (a.status !== "pending") throw badRequest(`This approval was already ${a.status}`, "approvalId");
    if (a.kind === "tool_call") return resolveToolCall(tx, db, input, a);
    if (a.kind === "reset") return resolveResetRequest(tx, input, a);
    return resolveRecovery(tx, input, a);
  });
  if (result.kind === "tool_call") releaseLocalWaiters(db, result.id);
  return result;
}

async function resolveToolCall(tx: Tx, db: Db, input: ResolveApprovalInput, a: typeof approval.$inferSelect) {
  const now = input.now ?? Date.now();
  // The agent reads the comment and the audit log keeps it: a pasted secret is redacted like args.
  const comment = input.comment?.trim() ? redactString(input.comment.trim()) : null;
  if (input.decision === "deny" && !comment) throw badRequest("A comment is required to deny a tool call (the agent's model reads it)", "comment");
  const status = input.decision === "approve" ? "approved" : "denied";
  const scope = input.decision === "approve" ? (input.scope ?? "once") : null;
  await tx
    .update(approval)
    .set({ status, scope, resolvedAt: new Date(now), resolvedBy: input.actor.label, comment })
    .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.id, a.id)));
  await writeAudit(tx, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: `approval.tool_call.${input.decision}`,
    target: a.failureKey,
    before: { status: "pending", callId: a.callId, sessionId: a.sessionId },
    after: { status, scope, comment },
  });
  await notifyDecisionInTx(tx, db, a.id);
  return { id: a.id, kind: "tool_call" as const, status, scope, failureKey: a.failureKey, effects: [] as Effect[] };
}

/**
 * Reset request (`keys.requestReset`): approve → the key is reset (as `keys.reset` by this person);
 * deny → the key stays as it is, and the comment (required) is what the agent's model reads.
 */
async function resolveResetRequest(tx: Tx, input: ResolveApprovalInput, a: typeof approval.$inferSelect) {
  const now = input.now ?? Date.now();
  const comment = input.comment?.trim() ? redactString(input.comment.trim()) : null;
  if (input.decision === "deny" && !comment) throw badRequest("A comment is required to deny a reset request (the agent's model reads it)", "comment");
  const status = input.decision === "approve" ? "approved" : "denied";
  // A key that no longer exists (retention) has nothing to reset; the approval is still answered.
  const reset = input.decision === "approve" ? await resetKeysInTx(tx, { ...input, target: { failureKey: a.failureKey } }).catch(keyGone) : { reset: [] };
  await tx
    .update(approval)
    .set({ status, resolvedAt: new Date(now), resolvedBy: input.actor.label, comment })
    .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.id, a.id)));
  await writeAudit(tx, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: `approval.reset.${input.decision}`,
    target: a.failureKey,
    before: { status: "pending", reason: a.reason },
    after: { status, comment, reset: reset.reset },
  });
  return { id: a.id, kind: "reset" as const, status, scope: null, failureKey: a.failureKey, effects: [] as Effect[] };
}

async function resolveRecovery(tx: Tx, input: ResolveApprovalInput, a: typeof approval.$inferSelect) {
  const now = input.now ?? Date.now();
  const [row] = await tx
    .select({ trust: keyState.trust, domain: keyState.domain, pluginName: keyState.pluginName })
    .from(keyState)
    .where(and(eq(keyState.workspaceId, input.workspaceId), eq(keyState.failureKey, a.failureKey)))
    .for("update");
  const effects: Effect[] = [];
  if (row) {
    const configs = await loadConfigs(tx, input.workspaceId);
    const rule = resolveRule(configs.workspaceDoc as ConfigDocument, configs.orgDoc, { toolName: row.trust.toolName, domain: row.domain, pluginName: row.pluginName }).rule;
    const result = input.decision === "approve" ? approveRecovery(row.trust, now) : denyRecovery(row.trust, rule, now);
    if (result.applied) {
      await writeTrustState(tx, {
        workspaceId: input.workspaceId,
        failureKey: a.failureKey,
        trust: result.state,
        at: new Date(),
        effectiveState: result.state.state,
        effectiveFailures: input.decision === "approve" ? 0 : undefined,
      });
      // The one effective-state rule: a key is as strict as its domain/tool; a level frees (or holds) the keys under it.
      const isLevel = a.failureKey.startsWith("@");
      await refreshEffectiveStates(tx, input.workspaceId, isLevel ? [a.failureKey] : [], isLevel ? [] : [a.failureKey]);
      await tx.insert(stateTransition).values({
        workspaceId: input.workspaceId,
        failureKey: a.failureKey,
        fromState: row.trust.state,
        toState: result.state.state,
        reason: input.decision === "approve" ? "recovery approved" : "recovery denied",
        actor: input.actor.label,
        at: new Date(now),
      });
      effects.push(...result.effects);
    }
  }
  const status = input.decision === "approve" ? "approved" : "denied";
  await tx
    .update(approval)
    .set({ status, resolvedAt: new Date(now), resolvedBy: input.actor.label, comment: input.comment ? redactString(input.comment) : null })
    .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.id, input.approvalId)));
  await writeAudit(tx, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: `approval.${input.decision}`,
    target: a.failureKey,
    before: { status: "pending" },
    after: { status, comment: input.comment ? redactString(input.comment) : null },
  });
  await enqueueNotifications(tx, input.workspaceId, effects, { now });
  return { id: a.id, kind: "recovery" as const, status, scope: null, failureKey: a.failureKey, effects };
}
