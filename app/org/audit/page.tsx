import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { CursorPager } from "@/components/cursor-pager";
import { FilterActions } from "@/components/dashboard/filter-actions";
import { JsonDiff } from "@/components/dashboard/json-diff";
import { DataTable, withSearchParams, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { requireOrgPage } from "@/server/dashboard/access";
import { auditTargetHref } from "@/server/dashboard/audit";
import { readOrgAudit, type OrgAuditRow } from "@/server/dashboard/org-audit";
import { stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Organization audit log" };

const ACTOR_LABEL = { user: "User", api_key: "API key", system: "System" } as const;
const PATH = "/org/audit";

/** "invitation.create", "invitation.revoke" → "invitation." : a prefix filter for each group of two or more. */
function actionGroups(actions: string[]): string[] {
  const counts = new Map<string, number>();
  for (const a of actions) {
    const dot = a.indexOf(".");
    if (dot > 0) counts.set(a.slice(0, dot + 1), (counts.get(a.slice(0, dot + 1)) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([p]) => p);
}

export default async function OrgAuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const page = await requireOrgPage();
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const action = stringParam(sp.action);
  const actor = stringParam(sp.actor);
  const scope = stringParam(sp.scope) === "all" ? "all" : "org";
  const list = await readOrgAudit(db, page.user.id, page.organization.id, {
    action,
    actorType: actor,
    scope,
    after: stringParam(sp.after),
    before: stringParam(sp.before),
    pageSize: 50,
  });
  if (!list) notFound();
  const filtered = !!(action || actor || scope === "all");

  const columns: Column<OrgAuditRow>[] = [
    { id: "time", header: "When", width: 110, nowrap: true, cell: (r) => <RelativeTime date={r.createdAt} now={now} /> },
    {
      id: "who",
      header: "Who",
      width: 220,
      cell: (r) => (
        <span className="stack" style={{ gap: 2, minWidth: 0 }}>
          <span className={r.actorType === "api_key" ? "mono truncate" : "truncate"} title={r.actorLabel}>
            {r.actorLabel}
          </span>
          <span className="text-xs subtle">{ACTOR_LABEL[r.actorType] ?? r.actorType}</span>
        </span>
      ),
    },
    ...(scope === "all"
      ? [
          {
            id: "workspace",
            header: "Workspace",
            width: 150,
            cell: (r: OrgAuditRow) =>
              r.workspaceSlug ? (
                <Link className="truncate" href={`/w/${encodeURIComponent(r.workspaceSlug)}/audit`} title={r.workspaceName ?? r.workspaceSlug}>
                  {r.workspaceName ?? r.workspaceSlug}
                </Link>
              ) : (
                <span className="subtle">Organization</span>
              ),
          } satisfies Column<OrgAuditRow>,
        ]
      : []),
    { id: "action", header: "Action", width: 170, cell: (r) => <Badge tone="outline" square>{r.action}</Badge> },
    {
      id: "target",
      header: "Target",
      minWidth: 180,
      cell: (r) => {
        if (!r.target) return <span className="subtle">—</span>;
        const href = r.workspaceSlug ? auditTargetHref(r.workspaceSlug, r.action, r.target) : null;
        const text = <span className="mono text-sm audit-target">{r.target}</span>;
        return href ? <Link href={href}>{text}</Link> : text;
      },
    },
    { id: "diff", header: "Before → after", minWidth: 260, cell: (r) => <JsonDiff before={r.before} after={r.after} /> },
  ];

  const groups = actionGroups(list.actions);
  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Audit log"
        description={`What people and keys did to ${page.organization.name}: invitations, members and roles, workspaces, organization defaults and policies.`}
      />
      <form className="toolbar" method="get" action={PATH} role="search">
        <label className="sr-only" htmlFor="oa-scope">
          Scope
        </label>
        <select id="oa-scope" className="select input-sm" name="scope" defaultValue={scope} style={{ width: 240 }}>
          <option value="org">Organization only</option>
          <option value="all">Organization and workspaces</option>
        </select>
        <label className="sr-only" htmlFor="oa-action">
          Action
        </label>
        <select id="oa-action" className="select input-sm" name="action" defaultValue={action ?? ""} style={{ width: 200 }}>
          <option value="">All actions</option>
          {action && !list.actions.includes(action) && !groups.includes(action) && <option value={action}>{action}…</option>}
          {groups.map((g) => (
            <option key={g} value={g}>
              {g}* (all)
            </option>
          ))}
          {list.actions.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="oa-actor">
          Actor type
        </label>
        <select id="oa-actor" className="select input-sm" name="actor" defaultValue={actor ?? ""} style={{ width: 150 }}>
          <option value="">Anyone</option>
          <option value="user">Users</option>
          <option value="api_key">API keys</option>
          <option value="system">System</option>
        </select>
        <FilterActions clearHref={PATH} filtered={filtered} />
      </form>
      <DataTable
        label="Organization audit log"
        columns={columns}
        rows={list.rows}
        rowKey={(r) => String(r.id)}
        empty={
          <EmptyState
            compact
            icon="audit"
            title={filtered ? "No entries match" : "No organization actions recorded yet"}
            description="Invitations, member and role changes, new workspaces, organization defaults and policies appear here."
          />
        }
      />
      {list.total > 0 && (
        <CursorPager
          total={list.total}
          noun={list.total === 1 ? "entry" : "entries"}
          newerHref={list.prevCursor ? withSearchParams(PATH, sp, { after: null, before: list.prevCursor }) : null}
          olderHref={list.nextCursor ? withSearchParams(PATH, sp, { before: null, after: list.nextCursor }) : null}
        />
      )}
    </div>
  );
}
