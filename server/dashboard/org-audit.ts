/**
 * The organization's audit log (app/org/audit): the entries without a workspace — invitations,
 * members and their roles, workspaces created, the organization's configuration and policies —
 * or, with `scope: "all"`, every entry of the organization with its workspace named. Newest first,
 * keyset-paginated on (created_at, id) from audit_org_time_idx, so a deep page reads from its place.
 */
import { and, asc, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { auditLog, workspace, type Role } from "@/db/schema";
import { hasRole } from "@/server/services/roles";
import { getMembership } from "@/server/services/tenancy";
import type { AuditRow } from "./audit";
import { likeEscape } from "./util";

/** Who may read it: any member, as the workspace audit page (requireWorkspacePage: any role). */
const ORG_AUDIT_MIN_ROLE: Role = "viewer";

export interface OrgAuditQuery {
  /** An action or its prefix ("invitation." matches every invitation entry). */
  action?: string;
  actorType?: string;
  /** "org" (default): entries without a workspace; "all": every entry of the organization. */
  scope?: string;
  /** Keyset cursors (OrgAuditRow.cursor): the page of entries older than `after`, or newer than `before`. */
  after?: string;
  before?: string;
  pageSize?: number;
}

export interface OrgAuditRow extends AuditRow {
  workspaceSlug: string | null;
  workspaceName: string | null;
  /** The entry's place in the list (created_at desc, id desc), as the URL carries it: `<UTC time to the microsecond>_<id>`. */
  cursor: string;
}

/** created_at to the microsecond, as text (a JS Date keeps milliseconds: a cursor from it would skip or repeat entries). */
const cursorTime = sql<string>`to_char(${auditLog.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

function readCursor(c: string | undefined): { at: string; id: number } | null {
  const m = c ? /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z)_(\d{1,15})$/.exec(c) : null;
  if (!m || Number.isNaN(new Date(m[1]).getTime())) return null;
  return { at: m[1], id: Number(m[2]) };
}

function scopeWhere(organizationId: string, scope: string | undefined): SQL {
  return scope === "all" ? eq(auditLog.organizationId, organizationId) : and(eq(auditLog.organizationId, organizationId), isNull(auditLog.workspaceId))!;
}

/** The page's conditions: the organization (and no workspace unless `scope: "all"`), action prefix, actor type. */
function orgAuditWhere(organizationId: string, q: OrgAuditQuery): SQL {
  const conds: SQL[] = [scopeWhere(organizationId, q.scope)];
  if (q.action) conds.push(sql`${auditLog.action} like ${likeEscape(q.action) + "%"}`);
  if (q.actorType === "user" || q.actorType === "api_key" || q.actorType === "system") conds.push(eq(auditLog.actorType, q.actorType));
  return and(...conds)!;
}

/** One page of the organization's audit entries, newest first, the total, the actions to filter by and the cursors. */
export async function listOrgAudit(db: Db, organizationId: string, q: OrgAuditQuery = {}) {
  const pageSize = Math.min(200, Math.max(1, q.pageSize ?? 50));
  const after = readCursor(q.after);
  const before = after ? null : readCursor(q.before);
  const where = orgAuditWhere(organizationId, q);
  const at = (c: { at: string; id: number }) => sql`(${c.at}::timestamptz, ${c.id}::bigint)`;
  const columns = {
    id: auditLog.id,
    actorType: auditLog.actorType,
    actorLabel: auditLog.actorLabel,
    action: auditLog.action,
    target: auditLog.target,
    before: auditLog.before,
    after: auditLog.after,
    createdAt: auditLog.createdAt,
    cursorTime,
    workspaceSlug: workspace.slug,
    workspaceName: workspace.name,
  };
  const base = () => db.select(columns).from(auditLog).leftJoin(workspace, eq(workspace.id, auditLog.workspaceId));
  const pageRows = after
    ? base().where(and(where, sql`(${auditLog.createdAt}, ${auditLog.id}) < ${at(after)}`)).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).limit(pageSize + 1)
    : before
      ? base().where(and(where, sql`(${auditLog.createdAt}, ${auditLog.id}) > ${at(before)}`)).orderBy(asc(auditLog.createdAt), asc(auditLog.id)).limit(pageSize + 1)
      : base().where(where).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).limit(pageSize + 1);
  const [total, fetched, actions] = await Promise.all([
    db.select({ total: sql<number>`count(*)::int` }).from(auditLog).where(where).then(([r]) => r.total),
    pageRows,
    db.selectDistinct({ action: auditLog.action }).from(auditLog).where(scopeWhere(organizationId, q.scope)).orderBy(asc(auditLog.action)).limit(100),
  ]);
  const more = fetched.length > pageSize;
  const rows = (before ? fetched.slice(0, pageSize).reverse() : fetched.slice(0, pageSize)).map(
    ({ cursorTime: t, ...r }): OrgAuditRow => ({ ...r, id: Number(r.id), createdAt: r.createdAt.toISOString(), cursor: `${t}_${r.id}` }),
  );
  const hasOlder = before ? true : more;
  const hasNewer = after ? true : before ? more : false;
  return {
    total,
    pageSize,
    rows,
    actions: actions.map((a) => a.action),
    nextCursor: hasOlder && rows.length ? rows[rows.length - 1].cursor : null,
    prevCursor: hasNewer && rows.length ? rows[0].cursor : null,
  };
}

/** The organization's audit log for a person: null unless they are a member with ORG_AUDIT_MIN_ROLE. */
export async function readOrgAudit(db: Db, userId: string, organizationId: string, q: OrgAuditQuery = {}) {
  const membership = await getMembership(db, userId, organizationId);
  if (!membership || !hasRole(membership.role, ORG_AUDIT_MIN_ROLE)) return null;
  return listOrgAudit(db, organizationId, q);
}
