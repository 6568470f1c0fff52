import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { AppShell } from "@/components/app-shell";
import { DataTable, readTableParams, withSearchParams, type Column, type SearchParamsRecord } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { ErrorState } from "@/components/error-state";
import { FailureKey } from "@/components/failure-key";
import { ButtonLink } from "@/components/form";
import { formatDuration, formatNumber } from "@/components/format";
import { Icon } from "@/components/icons";
import { KeyValue } from "@/components/key-value";
import { LoadingBlock, SkeletonStats, SkeletonTable, Spinner } from "@/components/loading";
import { Meter } from "@/components/meter";
import { PageHeader, Section } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import {
  Badge,
  PatternSeverityBadge,
  RoleBadge,
  SeverityBadge,
  StateBadge,
  type FailureSeverity,
  type TrustState,
} from "@/components/state-badge";
import { StatCard } from "@/components/stat-card";
import { EmptyChart, FailureRateChart, PatternDetectionsChart } from "./charts";
import { DemoActions, DemoForm, DemoTabs } from "./demo-client";
import { nowMinute, toolRows, type FakeToolRow } from "./fake-data";

export const metadata: Metadata = { title: "UI kit", robots: { index: false } };

const SEVERITIES: FailureSeverity[] = [
  "transient",
  "not_found",
  "invalid_input",
  "validation",
  "timeout",
  "permission",
  "server_error",
  "repeated_auth",
  "crash",
  "corruption",
  "security",
];
const STATES: TrustState[] = ["trusted", "recovering", "escalated", "blocked"];
const SORT_KEYS = ["key", "state", "effective", "consecutive", "lastFailure"] as const;

function sortRows(rows: FakeToolRow[], key: string, dir: "asc" | "desc") {
  const order: Record<TrustState, number> = { blocked: 0, escalated: 1, recovering: 2, trusted: 3 };
  const val = (r: FakeToolRow): string | number =>
    key === "key" ? r.key : key === "state" ? order[r.state] : key === "effective" ? r.effective / r.threshold : key === "consecutive" ? r.consecutive : (r.lastFailure ?? 0);
  const s = [...rows].sort((a, b) => (val(a) < val(b) ? -1 : val(a) > val(b) ? 1 : 0));
  return dir === "desc" ? s.reverse() : s;
}

export default async function UiKitPage({ searchParams }: { searchParams: Promise<SearchParamsRecord> }) {
  if (process.env.NODE_ENV === "production" && process.env.VIGIL_UI_KIT !== "1") notFound();
  const sp = await searchParams;
  const { sort, page } = readTableParams(sp, { sortKeys: SORT_KEYS, defaultSort: { key: "state", dir: "asc" }, pageSize: 20 });
  const NOW = nowMinute();
  const rows = sortRows(toolRows(NOW), sort.key, sort.dir);
  const base = "/dev/ui-kit";

  const columns: Column<FakeToolRow>[] = [
    { id: "key", header: "Failure key", sortKey: "key", cell: (r) => <FailureKey value={r.key} /> },
    { id: "state", header: "State", sortKey: "state", cell: (r) => <StateBadge state={r.state} />, width: 120 },
    {
      id: "effective",
      header: "Failures / threshold",
      sortKey: "effective",
      firstDir: "desc",
      headerTitle: "Effective (weighted) failures in the window vs the escalation threshold",
      cell: (r) => (
        <Meter
          value={r.effective}
          max={r.threshold}
          tone={r.state === "trusted" ? "neutral" : r.state}
          ariaLabel={`${r.effective} of ${r.threshold} failures`}
        />
      ),
      width: 140,
    },
    { id: "consecutive", header: "Consecutive", sortKey: "consecutive", align: "right", cell: (r) => (r.consecutive ? r.consecutive : <span className="subtle">0</span>) },
    {
      id: "recovery",
      header: "Recovery / cooldown",
      cell: (r) =>
        r.recovery ? (
          <Meter value={r.recovery.done} max={r.recovery.needed} tone="recovering" label={`${r.recovery.done} / ${r.recovery.needed} ok`} />
        ) : r.cooldownMs ? (
          <span className="row nowrap muted" style={{ gap: 4 }}>
            <Icon name="clock" size={14} /> {formatDuration(r.cooldownMs)} left
          </span>
        ) : (
          <span className="subtle">—</span>
        ),
      width: 140,
    },
    { id: "attempts", header: "Calls (24h)", align: "right", cell: (r) => formatNumber(r.attempts) },
    {
      id: "lastFailure",
      header: "Last failure",
      sortKey: "lastFailure",
      firstDir: "desc",
      align: "right",
      cell: (r) => (r.lastFailure ? <RelativeTime date={r.lastFailure} now={NOW} /> : <span className="subtle">Never</span>),
    },
  ];

  return (
    <AppShell
      org={{ name: "Acme Robotics" }}
      workspaces={[
        { slug: "acme-prod", name: "acme-prod" },
        { slug: "acme-staging", name: "acme-staging" },
        { slug: "support-bots", name: "Support bots" },
      ]}
      currentWorkspace="acme-prod"
      user={{ email: "ana@acme.dev", role: "admin" }}
      approvalsCount={3}
      topbarActions={
        <ButtonLink href="/dev/ui-kit" variant="ghost" size="sm">
          <Icon name="search" />
          <span className="sr-only">Search</span>
        </ButtonLink>
      }
    >
      <PageHeader
        title="UI kit"
        description="Every shared component with fake data. Resize to 390 px to check the phone layout."
        actions={
          <>
            <ButtonLink href="/dev/ui-kit?sort=effective&dir=desc" size="sm">
              Sort by failures
            </ButtonLink>
            <ButtonLink href="/dev/ui-kit" size="sm" variant="primary">
              <Icon name="plus" />
              New rule
            </ButtonLink>
          </>
        }
      />

      <div className="grid-stats">
        <StatCard label="Trusted keys" state="trusted" value={formatNumber(1284)} hint="of 1,311 keys" />
        <StatCard label="Escalated" state="escalated" value={14} delta={{ value: "+5", direction: "up", good: false }} hint="vs yesterday" href="/dev/ui-kit?sort=state" />
        <StatCard label="Blocked" state="blocked" value={3} delta={{ value: "0", direction: "flat" }} hint="vs yesterday" />
        <StatCard label="Failure rate (24h)" value="4.7" unit="%" delta={{ value: "1.2 pt", direction: "down", good: true }} hint="8,912 results" />
        <StatCard label="Open approvals" value={3} hint="oldest 12m ago" />
      </div>

      <Section title="Badges" description="Colour only where it carries meaning.">
        <div className="card card-body stack">
          <div className="row row-wrap">
            <span className="muted text-sm" style={{ width: 110 }}>Trust state</span>
            {STATES.map((s) => (
              <StateBadge key={s} state={s} />
            ))}
          </div>
          <div className="row row-wrap">
            <span className="muted text-sm" style={{ width: 110 }}>Pattern</span>
            <PatternSeverityBadge severity="minor" />
            <PatternSeverityBadge severity="moderate" />
            <PatternSeverityBadge severity="severe" />
          </div>
          <div className="row row-wrap">
            <span className="muted text-sm" style={{ width: 110 }}>Failure severity</span>
            {SEVERITIES.map((s) => (
              <SeverityBadge key={s} severity={s} />
            ))}
          </div>
          <div className="row row-wrap">
            <span className="muted text-sm" style={{ width: 110 }}>Role</span>
            <RoleBadge role="owner" />
            <RoleBadge role="admin" />
            <RoleBadge role="member" />
            <RoleBadge role="viewer" />
            <Badge tone="outline">agent scope</Badge>
            <Badge tone="info" dot>
              paused
            </Badge>
          </div>
        </div>
      </Section>

      <Section
        title="Tools"
        description="Server-sorted via links; 20 rows of a 234-row result."
        actions={
          <div className="toolbar">
            <input className="input input-sm" placeholder="Filter keys…" aria-label="Filter keys" style={{ width: 200 }} />
            <select className="select input-sm" aria-label="State" style={{ width: 130 }} defaultValue="">
              <option value="">All states</option>
              {STATES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
        }
      >
        <DataTable
          label="Failure keys"
          columns={columns}
          rows={rows}
          rowKey={(r) => r.key}
          sort={sort}
          sortHref={(s) => withSearchParams(base, sp, { sort: s.key, dir: s.dir, page: null })}
          pagination={{ page, pageSize: 20, total: 234 }}
          pageHref={(p) => withSearchParams(base, sp, { page: p })}
          rowHref={(r) => `/w/acme-prod/tools/${encodeURIComponent(r.key)}`}
          footer={
            <span>
              Updated <RelativeTime date={NOW - 40_000} now={NOW} />
            </span>
          }
          maxHeight="520px"
        />
      </Section>

      <div className="grid grid-2">
        <PatternDetectionsChart now={NOW} />
        <FailureRateChart />
      </div>

      <div className="grid grid-3">
        <EmptyChart />
        <div className="card">
          <div className="card-head">
            <h2 className="card-title">Session</h2>
          </div>
          <div className="card-body">
            <KeyValue
              layout="grid"
              items={[
                { label: "Model", value: "claude-sonnet-4.5" },
                { label: "Status", value: <Badge tone="info" dot>Paused</Badge> },
                { label: "Started", value: <RelativeTime date={NOW - 3 * 3_600_000} now={NOW} /> },
                { label: "Tool calls", value: formatNumber(1842) },
                { label: "Stall rate", value: "12.4%", hint: "31 of 250 turns" },
                { label: "Nudges", value: "9 sent · 6 effective" },
              ]}
            />
          </div>
        </div>
        <div className="card">
          <EmptyState
            title="No pending approvals"
            description="Recoveries in ask mode wait here for a person to approve or deny."
            icon="approvals"
            actions={
              <ButtonLink href="/dev/ui-kit" size="sm">
                Recovery settings
              </ButtonLink>
            }
          />
        </div>
      </div>

      <Section title="Actions, dialog and toasts">
        <DemoActions />
      </Section>

      <div className="grid grid-2">
        <Section title="Form" description="Field with label, hint and error text next to the control.">
          <div className="card card-body">
            <DemoForm />
          </div>
        </Section>
        <Section title="Tabs & key-value">
          <div className="card card-body">
            <DemoTabs now={NOW} />
          </div>
          <div className="callout" data-tone="warning">
            <Icon name="alert" />
            <div>
              <strong>Global pattern:</strong> <code>bash</code> is escalated in 4 workspaces. Calls answer <em>ask</em> until cleared.
            </div>
          </div>
        </Section>
      </div>

      <Section title="Loading and error states">
        <div className="grid grid-2">
          <div className="stack">
            <SkeletonStats count={3} />
            <SkeletonTable rows={4} columns={4} />
          </div>
          <div className="stack">
            <div className="card">
              <ErrorState detail="digest 3187419152" actions={<ButtonLink href="/dev/ui-kit" size="sm">Reload</ButtonLink>} />
            </div>
            <div className="card">
              <LoadingBlock label="Loading sessions…" />
            </div>
            <div className="row">
              <Spinner /> <Spinner size="lg" />
            </div>
          </div>
        </div>
      </Section>

      <Section title="Empty table">
        <DataTable label="Empty example" columns={columns.slice(0, 4)} rows={[]} rowKey={(r) => r.key} maxHeight="none" />
      </Section>
    </AppShell>
  );
}
