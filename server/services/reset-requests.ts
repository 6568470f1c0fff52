/**
 * `keys.requestReset` (SPEC 7.6, the seed's `reliability_reset`, "requires user approval"): an
 * agent asks for a failure key to be reset, and a person decides in the approvals queue. Approving
 * resets the key (server/services/approvals.ts); denying keeps it, and the comment is what the
 * agent's model reads on its next status (`recentResetRequests`).
 */
import { randomUUID } from "node:crypto";
import { and, desc, eq, gt } from "drizzle-orm";
import type { Db } from "@/db/client";
import { approval, keyState } from "@/db/schema";
import { redactString } from "@/server/engine/redact";
import { writeAudit, type Actor } from "./audit";
import { notFound } from "./errors";

export interface RequestResetInput {
  workspaceId: string;
  organizationId: string;
  failureKey: string;
  reason: string;
  actor: Actor;
  now?: number;
}

/** A pending approval of kind `reset`; asking again while one is pending answers the same approval. */
export async function requestKeyReset(db: Db, input: RequestResetInput): Promise<{ approvalId: string; status: "pending"; created: boolean }> {
  return db.transaction(async (tx) => {
    const [key] = await tx
      .select({ toolName: keyState.toolName, state: keyState.state })
      .from(keyState)
      .where(and(eq(keyState.workspaceId, input.workspaceId), eq(keyState.failureKey, input.failureKey)))
      .for("update");
    if (!key) throw notFound(`Failure key ${input.failureKey}`);
    const [pending] = await tx
      .select({ id: approval.id })
      .from(approval)
      .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.kind, "reset"), eq(approval.failureKey, input.failureKey), eq(approval.status, "pending")))
      .limit(1);
    if (pending) return { approvalId: pending.id, status: "pending" as const, created: false };
    const id = randomUUID();
    // The person reads the reason in the queue; a pasted secret is redacted like args.
    const reason = redactString(input.reason.trim());
    await tx.insert(approval).values({
      workspaceId: input.workspaceId,
      id,
      kind: "reset",
      failureKey: input.failureKey,
      toolName: key.toolName,
      status: "pending",
      createdAt: new Date(input.now ?? Date.now()),
      reason,
    });
    await writeAudit(tx, {
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      actor: input.actor,
      action: "failure_key.reset_requested",
      target: input.failureKey,
      before: { state: key.state },
      after: { approvalId: id, reason },
    });
    return { approvalId: id, status: "pending" as const, created: true };
  });
}

/** The workspace's reset requests of the last day, newest first: what the model reads of the person's answers. */
export async function recentResetRequests(db: Db, workspaceId: string, now = Date.now()) {
  const rows = await db
    .select()
    .from(approval)
    .where(and(eq(approval.workspaceId, workspaceId), eq(approval.kind, "reset"), gt(approval.createdAt, new Date(now - 24 * 3600_000))))
    .orderBy(desc(approval.createdAt))
    .limit(20);
  return rows.map((r) => ({
    approvalId: r.id,
    failureKey: r.failureKey,
    status: r.status,
    reason: r.reason,
    comment: r.comment,
    resolvedBy: r.resolvedBy,
    createdAt: r.createdAt.toISOString(),
    resolvedAt: r.resolvedAt ? r.resolvedAt.toISOString() : null,
  }));
}
