import { LivePageRefresh } from "@/components/dashboard/live-page-refresh";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { failureColumns } from "@/components/dashboard/failure-columns";
import { FailuresMeter, KeyProgress, LevelBadge } from "@/components/dashboard/key-status";
import { ResetKeyButton } from "@/components/dashboard/reset-keys";
import { StateTimeline } from "@/components/dashboard/state-timeline";
import { DataTable, withSearchParams, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { formatDuration, formatPercent } from "@/components/format";
import { Icon } from "@/components/icons";
import { KeyValue } from "@/components/key-value";
import { Meter } from "@/components/meter";
import { PageHeader } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge, StateBadge } from "@/components/state-badge";
import { SetKeyStateButtons } from "@/components/controls/key-controls";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { listFailures } from "@/server/dashboard/failures";
import { getKeyDetail, type KeyDetail } from "@/server/dashboard/key-detail";
import { countingNote, getKeyCounting } from "@/server/dashboard/key-counting";
import { keyHref } from "@/server/dashboard/paths";
import { pageParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";

export const dynamic = "force-dynamic";

function decodeKey(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export async function generateMetadata({ params }: { params: Promise<{ key: string }> }): Promise<Metadata> {
  const { key } = await params;
  return { title: decodeKey(key) };
}

const FAILURES_PAGE_SIZE = 25;

export default async function KeyDetailPage({ params, searchParams }: { params: Promise<{ slug: string; key: string }>; searchParams: Promise<SearchParams> }) {
  const { slug, key: rawKey } = await params;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const failureKey = decodeKey(rawKey);
  if (!failureKey || failureKey.length > 2048) notFound();
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const { sp, window } = await pageTimeWindow(await searchParams, now);
  const fpage = pageParam(sp.page);
  const [detail, failures, counting] = await Promise.all([
    getKeyDetail(db, ws.id, failureKey, window),
    listFailures(db, ws.id, { failureKey, from: window.from, to: window.to, page: fpage, pageSize: FAILURES_PAGE_SIZE }),
    getKeyCounting(db, ws.id, failureKey),
  ]);
  if (!detail) notFound();
  const k = detail.key;
  const effective = k?.effectiveState ?? "trusted";
  const path = keyHref(ws.slug, failureKey);

  return (
    <div className="stack stack-lg">
      <PageHeader
        title={
          <span className="key-title">
            <FailureKey value={failureKey} wrap copy />
          </span>
        }
        badge={
          <span className="row" style={{ gap: 6 }}>
            <StateBadge state={effective} />
            {detail.manual && (
              <Badge tone="outline" square title={`Set by hand by ${detail.manual.by}: ${detail.manual.reason}`}>
                manual
              </Badge>
            )}
            {k && <LevelBadge level={k.level} />}
          </span>
        }
        description={k ? `Tool ${k.toolName}${k.domain ? ` · domain ${k.domain}` : ""}` : "This key has no state yet."}
        actions={
          <div className="row" style={{ gap: 12 }}>
            <LivePageRefresh slug={ws.slug} workspaceId={ws.id} />
            <SetKeyStateButtons slug={ws.slug} failureKey={failureKey} state={k?.state ?? "trusted"} manual={!!detail.manual} canOperate={page.permissions.canOperate} />
            {k && (
              <ResetKeyButton
                slug={ws.slug}
                failureKey={failureKey}
                state={effective}
                size="md"
                canOperate={page.permissions.canOperate}
                levels={detail.levels
                  .filter((l) => l.state !== "trusted")
                  .map((l) => ({ failureKey: l.failureKey, state: l.state, keys: l.reach.keys, stoppedCalls: l.reach.stoppedCalls, stoppedAgents: l.reach.stoppedAgents }))}
              />
            )}
          </div>
        }
      />

      <StatusCallout detail={detail} slug={ws.slug} now={now} />

      <TimeRangePicker path={path} searchParams={sp} window={window} />

      {k && (
        <section className="card">
          <div className="card-body">
            <KeyValue
              layout="grid"
              items={[
                { label: "Own state", value: <StateBadge state={k.state} />, hint: k.state !== k.effectiveState ? `effective: ${k.effectiveState}` : undefined },
                {
                  label: "Effective failures",
                  value: (
                    <FailuresMeter
                      value={k.effectiveFailures}
                      threshold={k.threshold}
                      state={k.effectiveState}
                      ownState={k.state}
                      recovery={k.recovery}
                      approvalPending={k.approvalPending}
                    />
                  ),
                  // The rule counts only failures in its severity filter: say what it left out.
                  hint: countingNote(counting) ? <span data-testid="counting-note">{countingNote(counting)}</span> : undefined,
                },
                { label: "Consecutive failures", value: <span className="num">{k.consecutiveFailures}</span> },
                {
                  label: "Failures / calls",
                  value: (
                    <span className="num">
                      {k.totalFailures.toLocaleString("en-US")} / {k.totalCalls.toLocaleString("en-US")}
                    </span>
                  ),
                  hint: k.totalCalls > 0 ? `${formatPercent(k.totalFailures / k.totalCalls)} failed` : undefined,
                },
                { label: "Recovery / escalation", value: <KeyProgress state={k.state} recovery={k.recovery} escalationExpires={k.escalationExpires} approvalPending={k.approvalPending} now={now} /> },
                {
                  label: "Last failure",
                  value: k.lastFailureAt ? <RelativeTime date={k.lastFailureAt} now={now} /> : "—",
                  // Six items fill the grid's row; the last event rides along instead of wrapping alone.
                  hint: k.lastEventAt ? (
                    <>
                      last event <RelativeTime date={k.lastEventAt} now={now} />
                    </>
                  ) : undefined,
                },
              ]}
            />
          </div>
        </section>
      )}

      {detail.levels.length > 0 && <LevelStates levels={detail.levels} slug={ws.slug} />}

      <div className="grid grid-2 key-detail-grid">
        <section className="card">
          <div className="card-head">
            <div>
              <h2 className="card-title">State timeline</h2>
              <p className="card-subtitle">
                Latest {detail.transitions.length >= 100 ? "100 " : ""}state changes, newest first · {window.label}
              </p>
              <p className="card-subtitle" data-testid="mean-time-to-recover">
                Mean time to recover:{" "}
                {detail.meanTimeToRecover.keySeconds === null
                  ? "no recovery yet"
                  : `${formatDuration(detail.meanTimeToRecover.keySeconds * 1000)} over ${detail.meanTimeToRecover.keyRecoveries} ${detail.meanTimeToRecover.keyRecoveries === 1 ? "recovery" : "recoveries"}`}
                {detail.meanTimeToRecover.toolSeconds !== null && ` · tool ${formatDuration(detail.meanTimeToRecover.toolSeconds * 1000)}`}
              </p>
            </div>
          </div>
          <div className="card-body">
            {detail.transitions.length === 0 ? (
              <EmptyState
                compact
                icon="clock"
                title="No state changes"
                description={window.range === "all" ? "This key has always been trusted." : "None in this range; widen the time range to see older ones."}
              />
            ) : (
              <StateTimeline items={detail.transitions} now={now} />
            )}
          </div>
        </section>
        <section className="card">
          <div className="card-head">
            <div>
              <h2 className="card-title">Success rate by model</h2>
              <p className="card-subtitle">Calls of this key per model · all time (the model profile is cumulative)</p>
            </div>
          </div>
          <ModelTable models={detail.models} />
        </section>
      </div>

      <section className="stack">
        <div className="section-head">
          <h2 className="section-title">Failure history · {window.label}</h2>
          <Link href={withSearchParams(`/w/${ws.slug}/failures`, undefined, { tool: k?.toolName })} className="text-sm">
            All failures of {k?.toolName ?? "this tool"} →
          </Link>
        </div>
        <DataTable
          label="Failure history"
          columns={failureColumns({ slug: ws.slug, now, withKey: false })}
          rows={failures.rows}
          rowKey={(r) => String(r.id)}
          pagination={{ page: failures.page, pageSize: failures.pageSize, total: failures.total }}
          pageHref={(p) => withSearchParams(path, sp, { page: p === 1 ? null : p })}
          maxHeight="none"
          empty={<EmptyState compact icon="checkCircle" title={window.range === "all" ? "No failures recorded for this key" : "No failures of this key in this range"} />}
        />
      </section>
    </div>
  );
}

function StatusCallout({ detail, slug, now }: { detail: KeyDetail; slug: string; now: Date }) {
  const k = detail.key;
  if (!k) return null;
  if (detail.pendingApprovalId) {
    return (
      <div className="callout" data-tone="info">
        <Icon name="info" />
        <span>
          {/* The engine keeps counting past `needed` while it waits; like the meter, say what recovery needed. */}
          Recovery complete{k.recovery ? ` (${k.recovery.needed} of ${k.recovery.needed} successes)` : ""} — waiting for a person to approve it in the{" "}
          <Link href={`/w/${slug}/approvals`}>approval queue</Link>.
        </span>
      </div>
    );
  }
  const reach = detail.reach ? (
    <>
      {" "}
      It covers {detail.reach.keys.toLocaleString("en-US")} key{detail.reach.keys === 1 ? "" : "s"}
      {detail.reach.since
        ? ` and since then stopped ${detail.reach.stoppedCalls.toLocaleString("en-US")} call${detail.reach.stoppedCalls === 1 ? "" : "s"} from ${detail.reach.stoppedAgents.toLocaleString("en-US")} agent${detail.reach.stoppedAgents === 1 ? "" : "s"}`
        : ""}
      .
    </>
  ) : null;
  if (detail.manual && (k.state === "blocked" || k.state === "escalated")) {
    return (
      <div className="callout" data-tone={k.state === "blocked" ? "danger" : "warning"} data-testid="manual-state">
        <Icon name={k.state === "blocked" ? "ban" : "alert"} />
        <span>
          <strong>{k.state === "blocked" ? "Blocked" : "Escalated"} by hand</strong> by {detail.manual.by} <RelativeTime date={new Date(detail.manual.at)} now={now} />:{" "}
          {detail.manual.reason}. Vigil leaves it {k.state} until someone resets it.{reach}
        </span>
      </div>
    );
  }
  if (k.state === "blocked") {
    return (
      <div className="callout" data-tone="danger">
        <Icon name="alertCircle" />
        <span>
          <strong>Blocked</strong>
          {k.escalationReason ? `: ${k.escalationReason}` : ""}. Only a reset brings it back to trusted.{reach}
        </span>
      </div>
    );
  }
  if (k.state === "escalated") {
    const left = k.escalationExpires ? new Date(k.escalationExpires).getTime() - now.getTime() : null;
    return (
      <div className="callout" data-tone="warning">
        <Icon name="alert" />
        <span>
          <strong>Escalated</strong>
          {k.escalationReason ? `: ${k.escalationReason}` : ""}. Agents must ask before calling it.{" "}
          {k.escalationExpires &&
            (left !== null && left > 0 ? (
              <>
                The escalation expires <RelativeTime date={k.escalationExpires} now={now} />; then the next success after the cooldown starts
                recovery.
              </>
            ) : (
              <>The escalation window has passed: the next success after the cooldown starts recovery.</>
            ))}
        </span>
      </div>
    );
  }
  if (k.effectiveState !== k.state) {
    const strict = detail.levels.find((l) => l.state === k.effectiveState);
    return (
      <div className="callout" data-tone="warning">
        <Icon name="alert" />
        <span>
          This key is {k.state} itself, but {strict ? <Link href={keyHref(slug, strict.failureKey)} className="mono">{strict.failureKey}</Link> : "its domain or tool"} is {k.effectiveState}, so
          agents see it as {k.effectiveState}
          {strict ? ` (it stopped ${strict.reach.stoppedCalls.toLocaleString("en-US")} calls from ${strict.reach.stoppedAgents.toLocaleString("en-US")} agents across ${strict.reach.keys.toLocaleString("en-US")} keys)` : ""}. Reset offers to reset it too.
        </span>
      </div>
    );
  }
  return null;
}

function LevelStates({ levels, slug }: { levels: KeyDetail["levels"]; slug: string }) {
  const cols: Column<KeyDetail["levels"][number]>[] = [
    { id: "key", header: "Level state", cell: (r) => <FailureKey value={r.failureKey} />, minWidth: 200 },
    {
      id: "state",
      header: "State",
      width: 150,
      cell: (r) => (
        <span className="row" style={{ gap: 4 }}>
          <StateBadge state={r.state} />
          {r.manual && (
            <Badge tone="outline" square title={`Set by hand by ${r.manual.by}`}>
              manual
            </Badge>
          )}
        </span>
      ),
    },
    {
      id: "reach",
      header: "Reach",
      cell: (r) => (
        <span className="text-sm">
          {r.reach.keys.toLocaleString("en-US")} keys
          {r.reach.since ? ` · stopped ${r.reach.stoppedCalls.toLocaleString("en-US")} calls, ${r.reach.stoppedAgents.toLocaleString("en-US")} agents` : ""}
        </span>
      ),
    },
    { id: "failures", header: "Effective / threshold", width: 170, cell: (r) => <FailuresMeter value={r.effectiveFailures} threshold={r.threshold} state={r.state} recovery={r.recovery} approvalPending={r.approvalPending} /> },
    { id: "reason", header: "Reason", cell: (r) => r.escalationReason ?? <span className="subtle">—</span> },
  ];
  return (
    <section className="stack">
      <div className="section-head">
        <div>
          <h2 className="section-title">Domain and tool states</h2>
          <p className="section-description">The key&apos;s effective state is the strictest of its own and these.</p>
        </div>
      </div>
      <DataTable label="Domain and tool states" columns={cols} rows={levels} rowKey={(r) => r.failureKey} rowHref={(r) => keyHref(slug, r.failureKey)} maxHeight="none" />
    </section>
  );
}

function ModelTable({ models }: { models: KeyDetail["models"] }) {
  if (models.length === 0) return <EmptyState compact icon="models" title="No model data" description="Agents did not report a model for calls of this key." />;
  const cols: Column<KeyDetail["models"][number]>[] = [
    { id: "model", header: "Model", cell: (m) => <span className="mono">{m.model}</span> },
    {
      id: "rate",
      header: "Success rate",
      width: 170,
      cell: (m) =>
        m.successRate == null ? (
          "—"
        ) : (
          <Meter value={m.successRate * 100} max={100} tone={m.successRate >= 0.9 ? "trusted" : m.successRate >= 0.6 ? "escalated" : "blocked"} label={formatPercent(m.successRate)} />
        ),
    },
    { id: "attempts", header: "Calls", align: "right", width: 70, cell: (m) => m.attempts.toLocaleString("en-US") },
    { id: "failures", header: "Failed", align: "right", width: 70, cell: (m) => m.failures.toLocaleString("en-US") },
  ];
  return <DataTable label="Success rate by model" columns={cols} rows={models} rowKey={(m) => m.model} maxHeight="none" className="table-flush" />;
}
