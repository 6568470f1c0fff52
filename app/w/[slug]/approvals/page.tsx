import type { Metadata } from "next";
import { ApprovalsQueue } from "@/components/dashboard/approvals-queue";
import { ToolCallQueue } from "@/components/dashboard/tool-call-queue";
import { DataTable, withSearchParams, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { PageHeader } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { listPendingApprovals, listResolvedApprovals, type ApprovalRow } from "@/server/dashboard/approvals";
import { keyHref } from "@/server/dashboard/paths";
import { pageParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Approvals" };

export default async function ApprovalsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const sp = await searchParams;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const [pending, resolved] = await Promise.all([
    listPendingApprovals(db, ws.id, { limit: 50, historyPerKey: 5 }),
    listResolvedApprovals(db, ws.id, { page: pageParam(sp.page), pageSize: 25 }),
  ]);
  const path = `/w/${ws.slug}/approvals`;

  const columns: Column<ApprovalRow>[] = [
    { id: "key", header: "Failure key", minWidth: 220, cell: (r) => <FailureKey value={r.failureKey} wrap /> },
    {
      id: "kind",
      header: "Kind",
      width: 170,
      cell: (r) =>
        r.kind === "tool_call" ? (
          <span className="text-sm">
            Tool call <span className="mono">{r.toolName}</span>
            {r.scope === "session" && <span className="muted"> · for the session</span>}
          </span>
        ) : (
          <span className="text-sm">Recovery</span>
        ),
    },
    {
      id: "status",
      header: "Decision",
      width: 110,
      cell: (r) => (
        <Badge tone={r.status === "approved" ? "success" : "danger"} dot>
          {r.status === "approved" ? "Approved" : "Denied"}
        </Badge>
      ),
    },
    { id: "by", header: "By", width: 200, cell: (r) => (r.resolvedBy ? <span className="truncate">{r.resolvedBy}</span> : <span className="subtle">—</span>) },
    { id: "comment", header: "Comment", minWidth: 160, cell: (r) => (r.comment ? <span className="text-sm">{r.comment}</span> : <span className="subtle">—</span>) },
    { id: "requested", header: "Requested", align: "right", width: 110, cell: (r) => <RelativeTime date={r.createdAt} now={now} /> },
    { id: "resolved", header: "Resolved", align: "right", width: 110, cell: (r) => (r.resolvedAt ? <RelativeTime date={r.resolvedAt} now={now} /> : "—") },
  ];

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Approvals"
        description={
          page.permissions.canOperate
            ? "Tool calls agents are waiting on, then keys that finished recovery in ask mode. Approve or deny; every decision is audit-logged."
            : "Tool calls agents are waiting on, then keys that finished recovery in ask mode. Your role can view the queue; a member or above approves or denies."
        }
      />
      <ToolCallQueue slug={ws.slug} initial={{ count: pending.count, approvals: pending.approvals }} canOperate={page.permissions.canOperate} />
      <section className="stack">
        <div className="section-head">
          <h2 className="section-title">Recoveries</h2>
        </div>
        <ApprovalsQueue slug={ws.slug} initial={pending} canOperate={page.permissions.canOperate} />
      </section>
      <section className="stack">
        <div className="section-head">
          <h2 className="section-title">Resolved</h2>
        </div>
        <DataTable
          label="Resolved approvals"
          columns={columns}
          rows={resolved.rows}
          rowKey={(r) => r.id}
          rowHref={(r) => keyHref(ws.slug, r.failureKey)}
          pagination={{ page: resolved.page, pageSize: resolved.pageSize, total: resolved.total }}
          pageHref={(p) => withSearchParams(path, sp, { page: p === 1 ? null : p })}
          maxHeight="none"
          empty={<EmptyState compact icon="inbox" title="No decisions yet" />}
        />
      </section>
    </div>
  );
}
