import type { Metadata } from "next";
import Link from "next/link";
import { DataTable, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { formatPercent } from "@/components/format";
import { PageHeader, Section } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { requireOrgPage } from "@/server/dashboard/access";
import { getRuntime } from "@/server/runtime";
import { listGlobalPatterns, type GlobalPatternRow } from "@/server/services/global-patterns";
import { ClearGlobalPattern } from "./clear-button";

export const metadata: Metadata = { title: "Global tool patterns" };
export const dynamic = "force-dynamic";

export default async function GlobalPatternsPage() {
  const page = await requireOrgPage();
  const db = (await getRuntime()).database.db;
  const all = await listGlobalPatterns(db, page.organization.id, { includeCleared: true });
  const active = all.filter((p) => p.status === "active");
  const cleared = all.filter((p) => p.status === "cleared").slice(0, 50);
  const now = new Date().toISOString();
  const canClear = page.permissions.canConfigure;

  const workspacesCell = (p: GlobalPatternRow) => (
    <span className="row row-wrap" style={{ gap: 4 }}>
      {p.workspaces.map((w) => (
        <Link key={w.id} href={`/w/${encodeURIComponent(w.slug)}/tools`} className="badge" data-tone="outline">
          {w.name}
        </Link>
      ))}
    </span>
  );

  const activeColumns: Column<GlobalPatternRow>[] = [
    { id: "tool", header: "Tool", cell: (p) => <span className="mono strong">{p.toolName}</span> },
    { id: "ws", header: "Workspaces", cell: workspacesCell },
    {
      id: "rate",
      header: "Avg failure rate (24 h)",
      align: "right",
      cell: (p) => <span className="num text-danger">{formatPercent(p.avgFailureRate)}</span>,
    },
    { id: "detected", header: "Detected", cell: (p) => <RelativeTime date={p.detectedAt} now={now} /> },
    {
      id: "actions",
      header: <span className="sr-only">Actions</span>,
      align: "right",
      cell: (p) => (canClear ? <ClearGlobalPattern organizationId={page.organization.id} toolName={p.toolName} /> : null),
    },
  ];
  const clearedColumns: Column<GlobalPatternRow>[] = [
    { id: "tool", header: "Tool", cell: (p) => <span className="mono">{p.toolName}</span> },
    { id: "ws", header: "Workspaces", cell: workspacesCell },
    { id: "rate", header: "Avg failure rate", align: "right", cell: (p) => <span className="num">{formatPercent(p.avgFailureRate)}</span> },
    { id: "detected", header: "Detected", cell: (p) => <RelativeTime date={p.detectedAt} now={now} /> },
    {
      id: "cleared",
      header: "Cleared",
      cell: (p) => (
        <span>
          {p.clearedAt ? <RelativeTime date={p.clearedAt} now={now} /> : "—"} {p.clearedBy && <span className="subtle">by {p.clearedBy}</span>}
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title="Global tool patterns"
        description={`A tool escalated or blocked in 3 or more workspaces of ${page.organization.name} with an average failure rate above 50% over the last 24 hours becomes a global pattern: guard.check answers “ask” for it in every workspace until someone clears it.`}
        badge={
          active.length > 0 ? (
            <Badge tone="blocked" dot>
              {active.length} active
            </Badge>
          ) : undefined
        }
      />
      <div className="stack stack-lg">
        <Section title="Active">
          <DataTable
            label="Active global tool patterns"
            columns={activeColumns}
            rows={active}
            rowKey={(p) => p.toolName}
            maxHeight="none"
            empty={
              <EmptyState
                compact
                icon="globe"
                title="No global tool patterns"
                description="No tool is failing across several workspaces of this organization right now."
              />
            }
          />
        </Section>
        {cleared.length > 0 && (
          <Section title="Cleared" description="Patterns a person cleared. They come back if the tool keeps failing across workspaces.">
            <DataTable label="Cleared global tool patterns" columns={clearedColumns} rows={cleared} rowKey={(p) => `${p.toolName}-${p.clearedAt}`} maxHeight="none" />
          </Section>
        )}
      </div>
    </>
  );
}
