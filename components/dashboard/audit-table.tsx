/**
 * The audit log as both audit pages show it (a workspace's, and the organization's): one filter
 * toolbar that applies as it is picked (scope, action or action group, actor type; the time range
 * where the page has one) and one table (when, who, workspace where entries span several, action,
 * target linked to what it names, before → after).
 */
import Link from "next/link";
import type { ReactNode } from "react";
import { DataTable, type Column, type DataTableProps } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { auditTargetHref, type AuditRow } from "@/server/dashboard/audit";
import type { TimeWindow } from "@/server/dashboard/time-range";
import { FilterActions, FilterForm } from "./filter-actions";
import { JsonDiff } from "./json-diff";
import { TimeWindowInputs } from "./time-range-picker";

const ACTOR_LABEL = { user: "User", api_key: "API key", system: "System" } as const;

/** An entry of either page; organization entries name their workspace (null: the organization's own). */
export type AuditTableRow = AuditRow & { workspaceSlug?: string | null; workspaceName?: string | null };

/** "invitation.create", "invitation.revoke" → "invitation.": a prefix filter for each group of two or more. */
function actionGroups(actions: string[]): string[] {
  const counts = new Map<string, number>();
  for (const a of actions) {
    const dot = a.indexOf(".");
    if (dot > 0) counts.set(a.slice(0, dot + 1), (counts.get(a.slice(0, dot + 1)) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([p]) => p);
}

export function AuditFilters({
  path,
  actions,
  action,
  actor,
  scope,
  window,
  clearHref,
}: {
  path: string;
  /** The actions recorded, to pick from. */
  actions: string[];
  action?: string;
  actor?: string;
  /** The organization page's scope select: its own entries, or every workspace's too. */
  scope?: "org" | "all";
  /** The page's time range, carried through the form (the picker above changes it). */
  window?: TimeWindow;
  clearHref: string;
}) {
  const groups = actionGroups(actions);
  return (
    <FilterForm action={path} label="Filter the audit log">
      {window && <TimeWindowInputs window={window} />}
      {scope && (
        <>
          <label className="sr-only" htmlFor="audit-scope">
            Scope
          </label>
          <select id="audit-scope" className="select input-sm" name="scope" defaultValue={scope} style={{ width: "auto", maxWidth: "100%" }}>
            <option value="org">Organization only</option>
            <option value="all">Organization and workspaces</option>
          </select>
        </>
      )}
      <label className="sr-only" htmlFor="audit-action">
        Action
      </label>
      <select id="audit-action" className="select input-sm" name="action" defaultValue={action ?? ""} style={{ width: 200 }}>
        <option value="">All actions</option>
        {action && !actions.includes(action) && !groups.includes(action) && <option value={action}>{action}…</option>}
        {groups.map((g) => (
          <option key={g} value={g}>
            {g}* (all)
          </option>
        ))}
        {actions.map((a) => (
          <option key={a} value={a}>
            {a}
          </option>
        ))}
      </select>
      <label className="sr-only" htmlFor="audit-actor">
        Actor type
      </label>
      <select id="audit-actor" className="select input-sm" name="actor" defaultValue={actor ?? ""} style={{ width: 150 }}>
        <option value="">Anyone</option>
        <option value="user">Users</option>
        <option value="api_key">API keys</option>
        <option value="system">System</option>
      </select>
      <FilterActions clearHref={clearHref} filtered={!!(action || actor || scope === "all")} />
    </FilterForm>
  );
}

export function AuditTable({
  label,
  rows,
  now,
  workspaceSlug,
  showWorkspace = false,
  filtered,
  emptyTitle,
  emptyDescription,
  pagination,
  pageHref,
}: {
  label: string;
  rows: AuditTableRow[];
  now: Date;
  /** The workspace every row belongs to (the workspace page); otherwise each row names its own. */
  workspaceSlug?: string;
  /** A Workspace column (entries of several workspaces). */
  showWorkspace?: boolean;
  filtered: boolean;
  emptyTitle: string;
  emptyDescription: ReactNode;
  pagination?: DataTableProps<AuditTableRow>["pagination"];
  pageHref?: DataTableProps<AuditTableRow>["pageHref"];
}) {
  const columns: Column<AuditTableRow>[] = [
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
    ...(showWorkspace
      ? [
          {
            id: "workspace",
            header: "Workspace",
            width: 150,
            cell: (r: AuditTableRow) =>
              r.workspaceSlug ? (
                <Link className="truncate" href={`/w/${encodeURIComponent(r.workspaceSlug)}/audit`} title={r.workspaceName ?? r.workspaceSlug}>
                  {r.workspaceName ?? r.workspaceSlug}
                </Link>
              ) : (
                <span className="subtle">Organization</span>
              ),
          } satisfies Column<AuditTableRow>,
        ]
      : []),
    { id: "action", header: "Action", width: 170, cell: (r) => <Badge tone="outline" square>{r.action}</Badge> },
    {
      id: "target",
      header: "Target",
      minWidth: 180,
      cell: (r) => {
        if (!r.target) return <span className="subtle">—</span>;
        const slug = workspaceSlug ?? r.workspaceSlug;
        const href = slug ? auditTargetHref(slug, r.action, r.target) : null;
        const text = <span className="mono text-sm audit-target">{r.target}</span>;
        return href ? <Link href={href}>{text}</Link> : text;
      },
    },
    { id: "diff", header: "Before → after", minWidth: 260, cell: (r) => <JsonDiff before={r.before} after={r.after} /> },
  ];
  return (
    <DataTable
      label={label}
      columns={columns}
      rows={rows}
      rowKey={(r) => String(r.id)}
      pagination={pagination}
      pageHref={pageHref}
      empty={<EmptyState compact icon="audit" title={filtered ? "No entries match" : emptyTitle} description={emptyDescription} />}
    />
  );
}
