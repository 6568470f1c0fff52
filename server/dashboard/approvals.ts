/** Read-only queries for the approvals queue (pending recoveries with the key's recent history). */
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { approval, failure, keyState, stateTransition } from "@/db/schema";
import { recoveryOf } from "@/server/engine/trust";
import { iso } from "./util";

export interface ApprovalRow {
  id: string;
  kind: "recovery" | "tool_call" | "reset";
  failureKey: string;
  toolName: string;
  status: "pending" | "approved" | "denied";
  createdAt: string;
  resolvedAt: string | null;
  resolvedBy: string | null;
  comment: string | null;
  /** Tool-call approvals only (null for recoveries). */
  sessionId: string | null;
  callId: string | null;
  agent: string | null;
  model: string | null;
  argsPreview: string | null;
  reason: string | null;
  scope: "once" | "session" | null;
}

export interface ApprovalHistory {
  state: string | null;
  effectiveState: string | null;
  recovery: { successes: number; needed: number } | null;
  failures: { id: number; ts: string; severity: string; errorMessage: string | null; model: string | null; sessionId: string }[];
  transitions: { id: number; at: string; fromState: string; toState: string; reason: string | null; actor: string | null }[];
}

export type PendingApproval = ApprovalRow & { history: ApprovalHistory };

const approvalColumns = {
  id: approval.id,
  kind: approval.kind,
  failureKey: approval.failureKey,
  toolName: approval.toolName,
  status: approval.status,
  createdAt: approval.createdAt,
  resolvedAt: approval.resolvedAt,
  resolvedBy: approval.resolvedBy,
  comment: approval.comment,
  sessionId: approval.sessionId,
  callId: approval.callId,
  agent: approval.agent,
  model: approval.model,
  argsPreview: approval.argsPreview,
  reason: approval.reason,
  scope: approval.scope,
};

function toRow(r: Omit<ApprovalRow, "createdAt" | "resolvedAt"> & { createdAt: Date; resolvedAt: Date | null }): ApprovalRow {
  return { ...r, createdAt: r.createdAt.toISOString(), resolvedAt: iso(r.resolvedAt) };
}

/** Number of pending approvals (uses approval_ws_status_idx). */
export async function countPendingApprovals(db: Db, workspaceId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(approval)
    .where(and(eq(approval.workspaceId, workspaceId), eq(approval.status, "pending")));
  return row?.n ?? 0;
}

/**
 * Pending approvals: waiting tool calls first (an agent is blocked on them), then oldest first; each with the key's current state, its last failures and
 * transitions (one query per table; history is bounded per key with a window function).
 */
export async function listPendingApprovals(
  db: Db,
  workspaceId: string,
  opts: { limit?: number; historyPerKey?: number } = {},
): Promise<{ count: number; approvals: PendingApproval[] }> {
  const limit = opts.limit ?? 50;
  const per = opts.historyPerKey ?? 5;
  const [count, rows] = await Promise.all([
    countPendingApprovals(db, workspaceId),
    db
      .select(approvalColumns)
      .from(approval)
      .where(and(eq(approval.workspaceId, workspaceId), eq(approval.status, "pending")))
      .orderBy(sql`case when ${approval.kind} = 'tool_call' then 0 else 1 end`, approval.createdAt)
      .limit(limit),
  ]);
  const keys = [...new Set(rows.map((r) => r.failureKey))];
  if (keys.length === 0) return { count, approvals: [] };
  if (per <= 0) {
    const empty: ApprovalHistory = { state: null, effectiveState: null, recovery: null, failures: [], transitions: [] };
    return { count, approvals: rows.map((r) => ({ ...toRow(r), history: empty })) };
  }

  const failuresRanked = db
    .select({
      id: failure.id,
      failureKey: failure.failureKey,
      ts: failure.ts,
      severity: failure.severity,
      errorMessage: failure.errorMessage,
      model: failure.model,
      sessionId: failure.sessionId,
      rn: sql<number>`row_number() over (partition by ${failure.failureKey} order by ${failure.ts} desc, ${failure.id} desc)`.as("rn"),
    })
    .from(failure)
    .where(and(eq(failure.workspaceId, workspaceId), inArray(failure.failureKey, keys)))
    .as("f");
  const transitionsRanked = db
    .select({
      id: stateTransition.id,
      failureKey: stateTransition.failureKey,
      at: stateTransition.at,
      fromState: stateTransition.fromState,
      toState: stateTransition.toState,
      reason: stateTransition.reason,
      actor: stateTransition.actor,
      rn: sql<number>`row_number() over (partition by ${stateTransition.failureKey} order by ${stateTransition.at} desc, ${stateTransition.id} desc)`.as("rn"),
    })
    .from(stateTransition)
    .where(and(eq(stateTransition.workspaceId, workspaceId), inArray(stateTransition.failureKey, keys)))
    .as("t");

  const [states, fails, trans] = await Promise.all([
    db
      .select({ failureKey: keyState.failureKey, state: keyState.state, effectiveState: keyState.effectiveState, trust: keyState.trust })
      .from(keyState)
      .where(and(eq(keyState.workspaceId, workspaceId), inArray(keyState.failureKey, keys))),
    db.select().from(failuresRanked).where(sql`${failuresRanked.rn} <= ${per}`),
    db.select().from(transitionsRanked).where(sql`${transitionsRanked.rn} <= ${per}`),
  ]);

  const approvals = rows.map((r): PendingApproval => {
    const st = states.find((s) => s.failureKey === r.failureKey);
    return {
      ...toRow(r),
      history: {
        state: st?.state ?? null,
        effectiveState: st?.effectiveState ?? null,
        recovery: st ? recoveryOf(st.trust) : null,
        failures: fails
          .filter((f) => f.failureKey === r.failureKey)
          .sort((a, b) => b.ts.getTime() - a.ts.getTime() || b.id - a.id)
          .map((f) => ({ id: Number(f.id), ts: f.ts.toISOString(), severity: f.severity, errorMessage: f.errorMessage, model: f.model, sessionId: f.sessionId })),
        transitions: trans
          .filter((t) => t.failureKey === r.failureKey)
          .sort((a, b) => b.at.getTime() - a.at.getTime() || b.id - a.id)
          .map((t) => ({ id: Number(t.id), at: t.at.toISOString(), fromState: t.fromState, toState: t.toState, reason: t.reason, actor: t.actor })),
      },
    };
  });
  return { count, approvals };
}

/** Resolved approvals, newest first, paginated. */
export async function listResolvedApprovals(db: Db, workspaceId: string, opts: { page?: number; pageSize?: number } = {}) {
  const pageSize = opts.pageSize ?? 25;
  const page = Math.max(1, opts.page ?? 1);
  const where = and(eq(approval.workspaceId, workspaceId), inArray(approval.status, ["approved", "denied"]));
  const [[{ total }], rows] = await Promise.all([
    db.select({ total: sql<number>`count(*)::int` }).from(approval).where(where),
    db
      .select(approvalColumns)
      .from(approval)
      .where(where)
      .orderBy(desc(sql`coalesce(${approval.resolvedAt}, ${approval.createdAt})`), desc(approval.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
  ]);
  return { total, page, pageSize, rows: rows.map(toRow) };
}

