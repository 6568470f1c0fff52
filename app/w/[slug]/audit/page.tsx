import { FilterActions } from "@/components/dashboard/filter-actions";
import type { Metadata } from "next";
import { JsonDiff } from "@/components/dashboard/json-diff";
import { DataTable, withSearchParams, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { PageHeader } from "@/components/page-header";
import { ExportMenu } from "@/components/dashboard/export-menu";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { requireWorkspacePage } from "@/server/dashboard/access";
import Link from "next/link";
import { TimeRangePicker, TimeWindowInputs } from "@/components/dashboard/time-range-picker";
import { auditTargetHref, listWorkspaceAudit, type AuditRow } from "@/server/dashboard/audit";
import { readTimeWindow } from "@/server/dashboard/time-range";
import { pageParam, stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

const ACTOR_LABEL = { user: "User", api_key: "API key", system: "System" } as const;

export default async function AuditPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const sp = await searchParams;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const action = stringParam(sp.action);
  const actor = stringParam(sp.actor);
  const window = readTimeWindow(sp, "all", now);
  const list = await listWorkspaceAudit(db, ws.id, { page: pageParam(sp.page), pageSize: 50, action, actorType: actor, organizationId: ws.organizationId, from: window.from, to: window.to });
  const path = `/w/${ws.slug}/audit`;

  const columns: Column<AuditRow>[] = [
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
    { id: "action", header: "Action", width: 170, cell: (r) => <Badge tone="outline" square>{r.action}</Badge> },
    {
      id: "target",
      header: "Target",
      minWidth: 180,
      cell: (r) => {
        if (!r.target) return <span className="subtle">—</span>;
        const href = auditTargetHref(ws.slug, r.action, r.target);
        const text = <span className="mono text-sm audit-target">{r.target}</span>;
        return href ? <Link href={href}>{text}</Link> : text;
      },
    },
    { id: "diff", header: "Before → after", minWidth: 260, cell: (r) => <JsonDiff before={r.before} after={r.after} /> },
  ];

  return (
    <div className="stack stack-lg">
      <PageHeader title="Audit log" description="Every human and API action in this workspace: approvals, resets, resumes, settings and key changes."
        actions={<ExportMenu resource="audit" slug={ws.slug} searchParams={sp} />}
      />
      <TimeRangePicker path={path} searchParams={sp} window={window} defaultRange="all" />
      <form className="toolbar" method="get" action={path} role="search">
        <TimeWindowInputs window={window} defaultRange="all" />
        <label className="sr-only" htmlFor="a-action">
          Action
        </label>
        <select id="a-action" className="select input-sm" name="action" defaultValue={action ?? ""} style={{ width: 200 }}>
          <option value="">All actions</option>
          {list.actions.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="a-actor">
          Actor type
        </label>
        <select id="a-actor" className="select input-sm" name="actor" defaultValue={actor ?? ""} style={{ width: 150 }}>
          <option value="">Anyone</option>
          <option value="user">Users</option>
          <option value="api_key">API keys</option>
          <option value="system">System</option>
        </select>
        <FilterActions clearHref={path} filtered={!!(action || actor || window.range !== "all")} />
      </form>
      <DataTable
        label="Audit log"
        columns={columns}
        rows={list.rows}
        rowKey={(r) => String(r.id)}
        pagination={{ page: list.page, pageSize: list.pageSize, total: list.total }}
        pageHref={(p) => withSearchParams(path, sp, { page: p === 1 ? null : p })}
        empty={<EmptyState compact icon="audit" title={action || actor || window.range !== "all" ? "No entries match" : "No actions recorded yet"} description="Approvals, resets, settings changes and API key changes appear here." />}
      />
    </div>
  );
}
