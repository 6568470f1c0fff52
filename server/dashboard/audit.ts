/** Read-only queries for the workspace audit log and the organization pages. */
import { and, asc, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditLog, keyState, workspace } from "@/db/schema";

export interface AuditRow {
  id: number;
  actorType: "user" | "api_key" | "system";
  actorLabel: string;
  action: string;
  target: string | null;
  before: unknown;
  after: unknown;
  createdAt: string;
}

export interface AuditFilters {
  action?: string;
  actorType?: string;
  organizationId?: string;
  from?: Date;
  to?: Date;
}

/** The audit page's conditions (its list and its export). */
export function workspaceAuditWhere(workspaceId: string, opts: AuditFilters): SQL {
  const conds: SQL[] = [eq(auditLog.workspaceId, workspaceId), ...(opts.organizationId ? [eq(auditLog.organizationId, opts.organizationId)] : [])];
  if (opts.action) conds.push(sql`${auditLog.action} like ${opts.action.replace(/[\\%_]/g, (c) => "\\" + c) + "%"}`);
  // audit_ws_time_idx (workspace_id, created_at) serves the window.
  if (opts.from) conds.push(gte(auditLog.createdAt, opts.from));
  if (opts.to) conds.push(lt(auditLog.createdAt, opts.to));
  if (opts.actorType === "user" || opts.actorType === "api_key" || opts.actorType === "system") conds.push(eq(auditLog.actorType, opts.actorType));
  return and(...conds)!;
}

/**
 * A workspace's audit entries, newest first (audit_ws_time_idx), paginated; optional action prefix
 * filter. `organizationId` (the workspace's) lets Citus route to the one shard holding them.
 */
export async function listWorkspaceAudit(
  db: Db,
  workspaceId: string,
  opts: { page?: number; pageSize?: number; action?: string; actorType?: string; organizationId?: string; from?: Date; to?: Date } = {},
) {
  const pageSize = Math.min(200, Math.max(1, opts.pageSize ?? 50));
  const page = Math.max(1, opts.page ?? 1);
  const scope: SQL[] = [eq(auditLog.workspaceId, workspaceId), ...(opts.organizationId ? [eq(auditLog.organizationId, opts.organizationId)] : [])];
  const where = workspaceAuditWhere(workspaceId, opts);
  const [[{ total }], rows, actions] = await Promise.all([
    db.select({ total: sql<number>`count(*)::int` }).from(auditLog).where(where),
    db
      .select()
      .from(auditLog)
      .where(where)
      .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db
      .selectDistinct({ action: auditLog.action })
      .from(auditLog)
      .where(and(...scope))
      .orderBy(asc(auditLog.action))
      .limit(100),
  ]);
  return {
    total,
    page,
    pageSize,
    actions: actions.map((a) => a.action),
    rows: rows.map(
      (r): AuditRow => ({
        id: Number(r.id),
        actorType: r.actorType,
        actorLabel: r.actorLabel,
        action: r.action,
        target: r.target,
        before: r.before,
        after: r.after,
        createdAt: r.createdAt.toISOString(),
      }),
    ),
  };
}

/** The dashboard page an audit entry's target names (a failure key or a session), or null. */
export function auditTargetHref(slug: string, action: string, target: string | null): string | null {
  if (!target) return null;
  const ws = `/w/${encodeURIComponent(slug)}`;
  if (action === "session.resume") return `${ws}/sessions/${encodeURIComponent(target)}`;
  if (action.startsWith("approval.") || (action === "failure_key.reset" && target !== "all")) return `${ws}/tools/${encodeURIComponent(target)}`;
  return null;
}

/** Workspaces of an organization with their key counts and non-trusted keys (one grouped query). */
export async function listOrgWorkspacesWithStats(db: Db, organizationId: string) {
  const rows = await db
    .select({
      id: workspace.id,
      slug: workspace.slug,
      name: workspace.name,
      createdAt: workspace.createdAt,
      // Every level, as Overview and Tools count them (key-counts.ts): "Not trusted" is a part of it.
      keys: sql<number>`count(${keyState.failureKey})::int`,
      alerts: sql<number>`count(${keyState.failureKey}) filter (where ${keyState.effectiveState} <> 'trusted')::int`,
    })
    .from(workspace)
    .leftJoin(keyState, eq(keyState.workspaceId, workspace.id))
    .where(eq(workspace.organizationId, organizationId))
    .groupBy(workspace.id)
    .orderBy(asc(workspace.createdAt));
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
}
