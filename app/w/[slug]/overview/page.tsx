import { MiddleTruncate, NameList } from "@/components/middle-truncate";
import type { Metadata } from "next";
import Link from "next/link";
import { ConnectAgent } from "@/components/dashboard/connect-agent";
import { FailureRateChart } from "@/components/dashboard/failure-rate-chart";
import { FailuresMeter } from "@/components/dashboard/key-status";
import { LiveOverview } from "@/components/dashboard/live-overview";
import { DataTable, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { ButtonLink } from "@/components/form";
import { PageHeader } from "@/components/page-header";
import { WatchCounts } from "@/components/policies/watch-counts";
import { RelativeTime } from "@/components/relative-time";
import { StateBadge } from "@/components/state-badge";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { listPendingApprovals } from "@/server/dashboard/approvals";
import { getBaseUrl } from "@/server/dashboard/base-url";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import { failureCounts } from "@/server/dashboard/failure-counts";
import { earliestStatDay, getFailureRateSeries, getLiveCounts, getPausedSessions, getTopFailingKeys, type TopKey } from "@/server/dashboard/overview";
import { windowDays } from "@/server/dashboard/time-range";
import type { SearchParams } from "@/server/dashboard/util";
import { keyHref } from "@/server/dashboard/paths";
import { listFailureGroups, type FailureGroup } from "@/server/dashboard/failures";
import { withSearchParams } from "@/components/data-table";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Overview" };

export default async function OverviewPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const wsId = page.access.workspace.id;
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const { sp, window } = await pageTimeWindow(await searchParams, now);
  const days = windowDays(window, now, { earliest: window.from ? null : await earliestStatDay(db, wsId) });
  const windowCounts = failureCounts(db, wsId, { from: window.from, to: window.to });
  const [live, series, topKeys, pending, paused, topReasons, rangeFailures] = await Promise.all([
    getLiveCounts(db, wsId, now),
    getFailureRateSeries(db, wsId, days, now),
    getTopFailingKeys(db, wsId, 8, window, windowCounts),
    listPendingApprovals(db, wsId, { limit: 5, historyPerKey: 0 }),
    getPausedSessions(db, wsId, 5),
    listFailureGroups(db, wsId, { from: window.from, to: window.to, limit: 5 }),
    windowCounts.then((rows) => ({ failures: rows.reduce((a, r) => a + r.n, 0), keys: new Set(rows.map((r) => r.failureKey)).size })),
  ]);
  const ws = page.access.workspace;
  const isEmpty = live.lastEventAt === null && live.totalKeys === 0;

  const header = <PageHeader title="Overview" description={`Trust states, failures and open work in ${ws.name}.`} />;

  if (isEmpty) {
    return (
      <div className="stack stack-lg">
        {header}
        <ConnectAgent baseUrl={await getBaseUrl()} slug={ws.slug} canConfigure={page.permissions.canConfigure} />
      </div>
    );
  }

  const columns: Column<TopKey>[] = [
    { id: "key", header: "Failure key", cell: (r) => <FailureKey value={r.failureKey} wrap />, minWidth: 200 },
    { id: "state", header: "State", cell: (r) => <StateBadge state={r.effectiveState} />, width: 120 },
    {
      id: "failures",
      header: "Effective / threshold",
      cell: (r) => <FailuresMeter value={r.effectiveFailures} threshold={r.threshold} state={r.effectiveState} ownState={r.state} />,
      width: 170,
    },
    { id: "total", header: window.range === "all" ? "Failures" : "Failures in range", headerTitle: `Failed tool results, ${window.label}`, align: "right", cell: (r) => r.totalFailures.toLocaleString("en-US"), width: 90 },
    { id: "last", header: "Last failure", align: "right", cell: (r) => (r.lastFailureAt ? <RelativeTime date={r.lastFailureAt} now={now} /> : "—"), width: 120 },
  ];

  return (
    <div className="stack stack-lg">
      {header}
      <TimeRangePicker path={`/w/${ws.slug}/overview`} searchParams={sp} window={window} />
      <LiveOverview
        slug={ws.slug}
        initial={live}
        range={{ label: window.label, failures: rangeFailures.failures, failingKeys: rangeFailures.keys, failuresHref: withSearchParams(`/w/${ws.slug}/failures`, windowParams(sp), {}) }}
      />
      <WatchCounts workspaceId={wsId} window={window} scopeLabel={window.label} />
      <FailureRateChart data={series} rangeLabel={window.label} />
      <section className="stack">
        <div className="section-head">
          <h2 className="section-title">Top failing keys · {window.label}</h2>
          <Link href={`/w/${ws.slug}/tools?sort=state&dir=desc`} className="text-sm">
            All tools →
          </Link>
        </div>
        <DataTable
          label="Top failing keys"
          columns={columns}
          rows={topKeys}
          rowKey={(r) => r.failureKey}
          rowHref={(r) => keyHref(ws.slug, r.failureKey)}
          maxHeight="none"
          empty={<EmptyState compact icon="checkCircle" title={window.range === "all" ? "No failures recorded" : "No failures in this range"} description={window.range === "all" ? "Every tool call so far succeeded." : "Every tool call in this window succeeded; widen the range to see older failures."} />}
        />
      </section>
      <TopFailureReasons
        groups={topReasons}
        failuresPath={`/w/${ws.slug}/failures`}
        range={windowParams(sp)}
        now={now}
        label={window.label}
      />
      <div className="grid grid-2">
        <section className="card">
          <div className="card-head">
            <div>
              <h2 className="card-title">Open approvals</h2>
              <p className="card-subtitle">Recoveries waiting for a person (ask mode)</p>
            </div>
            <div className="card-actions">
              <ButtonLink href={`/w/${ws.slug}/approvals`} size="sm" variant="ghost">
                Open queue
              </ButtonLink>
            </div>
          </div>
          {pending.approvals.length === 0 ? (
            <EmptyState compact icon="checkCircle" title="Nothing to approve" />
          ) : (
            <ul className="plain-list">
              {pending.approvals.map((a) => (
                <li key={a.id}>
                  <Link href={keyHref(ws.slug, a.failureKey)} className="plain-list-main">
                    <FailureKey value={a.failureKey} />
                  </Link>
                  <span className="subtle text-sm">
                    <RelativeTime date={a.createdAt} now={now} />
                  </span>
                </li>
              ))}
              {pending.count > pending.approvals.length && (
                <li className="subtle text-sm">and {pending.count - pending.approvals.length} more…</li>
              )}
            </ul>
          )}
        </section>
        <section className="card">
          <div className="card-head">
            <div>
              <h2 className="card-title">Paused sessions</h2>
              <p className="card-subtitle">Agents stopped by a stall pattern, waiting for guidance</p>
            </div>
            <div className="card-actions">
              <ButtonLink href={`/w/${ws.slug}/sessions`} size="sm" variant="ghost">
                Sessions
              </ButtonLink>
            </div>
          </div>
          {paused.length === 0 ? (
            <EmptyState compact icon="play" title="No paused sessions" />
          ) : (
            <ul className="plain-list">
              {paused.map((s) => (
                <li key={s.sessionId}>
                  <Link href={`/w/${ws.slug}/sessions/${encodeURIComponent(s.sessionId)}`} className="plain-list-main">
                    <MiddleTruncate value={s.sessionId} mono />
                    <span className="subtle text-sm truncate">
                      {s.agent}
                      {s.model ? ` · ${s.model}` : ""}
                      {s.pauseReason ? ` — ${s.pauseReason}` : ""}
                    </span>
                  </Link>
                  {s.pausedAt && (
                    <span className="subtle text-sm">
                      <RelativeTime date={s.pausedAt} now={now} />
                    </span>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </div>
  );
}

/** The window's own params (range, or from/to), for links to another page of the same window. */
function windowParams(sp: SearchParams): Record<string, string | undefined> {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return { range: one(sp.range), from: one(sp.from), to: one(sp.to) };
}

/** The range's largest failure groups (SPEC 8 "top failure reasons"); each opens its failures. */
function TopFailureReasons({ groups, failuresPath, range, now, label }: { groups: FailureGroup[]; failuresPath: string; range: Record<string, string | undefined>; now: Date; label: string }) {
  const columns: Column<FailureGroup>[] = [
    { id: "sample", header: "Reason", cell: (g) => <code style={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }}>{g.sample}</code>, minWidth: 240, nowrap: false },
    { id: "count", header: "Failures", align: "right", cell: (g) => g.count.toLocaleString("en-US"), width: 90 },
    {
      id: "tools",
      header: "Tools",
      // One tool name a line, cut in its middle on overflow: a name never breaks inside.
      cell: (g) => <NameList names={g.toolNames} mono />,
      width: 220,
    },
    { id: "last", header: "Last seen", align: "right", cell: (g) => <RelativeTime date={g.lastSeen} now={now} />, width: 120 },
  ];
  return (
    <section className="stack">
      <div className="section-head">
        <h2 className="section-title">Top failure reasons · {label}</h2>
        <Link href={withSearchParams(failuresPath, range, { view: "groups" })} className="text-sm">
          All groups →
        </Link>
      </div>
      <DataTable
        label="Top failure reasons"
        columns={columns}
        rows={groups}
        rowKey={(g) => g.fingerprint}
        rowHref={(g) => withSearchParams(failuresPath, range, { fp: g.fingerprint })}
        maxHeight="none"
        empty={<EmptyState compact icon="checkCircle" title="No failures in this range" />}
      />
    </section>
  );
}
