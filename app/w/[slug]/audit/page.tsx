import type { Metadata } from "next";
import { AuditFilters, AuditTable } from "@/components/dashboard/audit-table";
import { ExportMenu } from "@/components/dashboard/export-menu";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { withSearchParams } from "@/components/data-table";
import { PageHeader } from "@/components/page-header";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { listWorkspaceAudit } from "@/server/dashboard/audit";
import { pageParam, stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Audit log" };

export default async function AuditPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const { sp, window } = await pageTimeWindow(await searchParams, now);
  const action = stringParam(sp.action);
  const actor = stringParam(sp.actor);
  const list = await listWorkspaceAudit(db, ws.id, { page: pageParam(sp.page), pageSize: 50, action, actorType: actor, organizationId: ws.organizationId, from: window.from, to: window.to });
  const path = `/w/${ws.slug}/audit`;

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Audit log"
        description="Every human and API action in this workspace: approvals, resets, resumes, settings and key changes."
        actions={<ExportMenu resource="audit" slug={ws.slug} searchParams={sp} />}
      />
      <TimeRangePicker path={path} searchParams={sp} window={window} />
      <AuditFilters path={path} actions={list.actions} action={action} actor={actor} window={window} clearHref={withSearchParams(path, sp, { action: null, actor: null, page: null })} />
      <AuditTable
        label="Audit log"
        rows={list.rows}
        now={now}
        workspaceSlug={ws.slug}
        filtered={!!(action || actor)}
        emptyTitle={window.range === "all" ? "No actions recorded yet" : `No actions in ${window.label}`}
        emptyDescription="Approvals, resets, settings changes and API key changes appear here."
        pagination={{ page: list.page, pageSize: list.pageSize, total: list.total }}
        pageHref={(p) => withSearchParams(path, sp, { page: p === 1 ? null : p })}
      />
    </div>
  );
}
