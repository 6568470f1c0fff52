import type { Metadata } from "next";
import { CreateWorkspaceForm } from "@/components/dashboard/create-workspace-form";
import { DataTable, type Column } from "@/components/data-table";
import { formatNumber } from "@/components/format";
import { PageHeader } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { requireOrgPage } from "@/server/dashboard/access";
import { listOrgWorkspacesWithStats } from "@/server/dashboard/audit";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Workspaces" };

type Row = Awaited<ReturnType<typeof listOrgWorkspacesWithStats>>[number];

export default async function OrgWorkspacesPage() {
  const page = await requireOrgPage();
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const rows = await listOrgWorkspacesWithStats(db, page.organization.id);

  const columns: Column<Row>[] = [
    {
      id: "name",
      header: "Workspace",
      minWidth: 200,
      cell: (r) => (
        <span className="stack" style={{ gap: 2 }}>
          <span className="strong">{r.name}</span>
          <span className="mono text-sm subtle">{r.slug}</span>
        </span>
      ),
    },
    { id: "keys", header: "Tracked keys", align: "right", width: 120, cell: (r) => formatNumber(r.keys) },
    {
      id: "alerts",
      header: "Not trusted",
      align: "right",
      width: 120,
      cell: (r) => (r.alerts > 0 ? <span className="text-warning strong">{formatNumber(r.alerts)}</span> : <span className="subtle">0</span>),
    },
    { id: "created", header: "Created", align: "right", width: 120, cell: (r) => <RelativeTime date={r.createdAt} now={now} /> },
  ];

  return (
    <div className="stack stack-lg">
      <PageHeader title="Workspaces" description={`Workspaces of ${page.organization.name}. Each has its own agents, API keys, rules and state.`} />
      <DataTable label="Workspaces" columns={columns} rows={rows} rowKey={(r) => r.id} rowHref={(r) => `/w/${r.slug}/overview`} maxHeight="none" />
      {page.permissions.canConfigure ? (
        <section className="card">
          <div className="card-head">
            <div>
              <h2 className="card-title">New workspace</h2>
              <p className="card-subtitle">The slug is part of every agent-facing URL and cannot be changed later.</p>
            </div>
          </div>
          <div className="card-body">
            <CreateWorkspaceForm organizationId={page.organization.id} />
          </div>
        </section>
      ) : (
        <p className="text-sm muted">Admins and owners can create workspaces.</p>
      )}
    </div>
  );
}
