import { FilterActions, FilterForm } from "@/components/dashboard/filter-actions";
import type { Metadata } from "next";
import { ConnectAgent } from "@/components/dashboard/connect-agent";
import { FailuresMeter, KeyProgress, LevelBadge } from "@/components/dashboard/key-status";
import { ResetAllButton } from "@/components/dashboard/reset-keys";
import { DataTable, readTableParams, withSearchParams, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { formatDuration } from "@/components/format";
import { PageHeader } from "@/components/page-header";
import { WatchCounts } from "@/components/policies/watch-counts";
import { LivePageRefresh } from "@/components/dashboard/live-page-refresh";
import { RelativeTime } from "@/components/relative-time";
import { StateBadge } from "@/components/state-badge";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { getBaseUrl } from "@/server/dashboard/base-url";
import { keyHref } from "@/server/dashboard/paths";
import { countKeysByState, KEY_SORTS, listKeys, type KeyRow, type KeySort } from "@/server/dashboard/tools";
import { stringParam, type SearchParams } from "@/server/dashboard/util";
import { TimeRangePicker, TimeWindowInputs } from "@/components/dashboard/time-range-picker";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Tools" };

const STATES = ["trusted", "recovering", "escalated", "blocked"] as const;

const plural = (n: number, noun: string) => `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
const PAGE_SIZE = 50;

export default async function ToolsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const { sp, window } = await pageTimeWindow(await searchParams, now);

  const { sort, page: pageNo } = readTableParams(sp, { sortKeys: KEY_SORTS, defaultSort: { key: "state", dir: "desc" }, pageSize: PAGE_SIZE });
  const stateParam = stringParam(sp.state);
  const state = stateParam && (STATES as readonly string[]).includes(stateParam) ? stateParam : undefined;
  const levelParam = stringParam(sp.level);
  const level = levelParam === "key" || levelParam === "domain" || levelParam === "tool" ? levelParam : undefined;
  const q = stringParam(sp.q);
  const windowed = window.range !== "all";
  const keyWindow = { from: window.from, to: window.to };

  const [list, byState] = await Promise.all([
    listKeys(db, ws.id, { state, level, q, window: keyWindow, sort: sort.key as KeySort, dir: sort.dir, page: pageNo, pageSize: PAGE_SIZE }),
    countKeysByState(db, ws.id, keyWindow),
  ]);
  const totalAll = Object.values(byState).reduce((a, b) => a + b, 0);
  const notTrusted = totalAll - (byState.trusted ?? 0);
  const path = `/w/${ws.slug}/tools`;
  const filtered = !!(state || level || q);

  const columns: Column<KeyRow>[] = [
    {
      id: "key",
      header: "Failure key",
      sortKey: "key",
      minWidth: 200,
      cell: (r) => (
        <span className="stack" style={{ gap: 2 }}>
          <span className="row" style={{ gap: 6 }}>
            <FailureKey value={r.failureKey} wrap />
            <LevelBadge level={r.level} />
          </span>
          {r.reach && (
            <span className="text-xs muted" data-testid="level-reach">
              {`Stops ${plural(r.reach.keys, "key")} of this ${r.level}`}
              {r.reach.since ? ` · ${plural(r.reach.stoppedCalls, "call")} from ${plural(r.reach.stoppedAgents, "agent")} since ${r.effectiveState === "blocked" ? "blocked" : "escalated"}` : ""}
            </span>
          )}
        </span>
      ),
    },
    {
      id: "state",
      header: "State",
      sortKey: "state",
      firstDir: "desc",
      width: 130,
      cell: (r) => (
        <span className="stack" style={{ gap: 2 }}>
          <StateBadge state={r.effectiveState} title={r.escalationReason ?? undefined} />
          {r.state !== r.effectiveState && <span className="text-xs subtle">own: {r.state}</span>}
        </span>
      ),
    },
    {
      id: "failures",
      header: "Effective / threshold",
      headerTitle: "Weighted failures in the rule's window, versus the count threshold",
      sortKey: "failures",
      firstDir: "desc",
      width: 170,
      cell: (r) => (
        <FailuresMeter value={r.effectiveFailures} threshold={r.threshold} state={r.effectiveState} ownState={r.state} recovery={r.recovery} approvalPending={r.approvalPending} />
      ),
    },
    { id: "consecutive", header: "Consec.", headerTitle: "Consecutive failures since the last success", sortKey: "consecutive", align: "right", width: 80, cell: (r) => r.consecutiveFailures },
    {
      id: "progress",
      header: "Recovery / escalation",
      headerTitle: "Recovery progress or time left in the escalation; under it the mean time to recover (escalated → trusted, all time)",
      width: 170,
      cell: (r) => {
        const progress = <KeyProgress state={r.state} recovery={r.recovery} escalationExpires={r.escalationExpires} approvalPending={r.approvalPending} now={now} />;
        const m = r.meanTimeToRecover;
        if (!m) return progress;
        const mttr = (
          <span
            className="text-xs subtle nowrap"
            data-testid="mttr"
            title={`Mean time to recover (escalated → trusted) over ${m.recoveries.toLocaleString("en-US")} ${m.recoveries === 1 ? "recovery" : "recoveries"}${m.scope === "tool" ? " of every key of this tool" : ""}`}
          >
            MTTR {formatDuration(m.seconds * 1000)}
            {m.scope === "tool" ? " · tool" : ""}
          </span>
        );
        return r.state === "trusted" ? (
          mttr
        ) : (
          <span className="stack" style={{ gap: 2 }}>
            {progress}
            {mttr}
          </span>
        );
      },
    },
    // Under a time range the failures follow the range, with the all-time figures beside them named
    // as such, in one column (a second one squeezed the key names). A level row's own counters start
    // when the level was first tracked, while its range count covers every failure of the domain or tool.
    windowed
      ? {
          id: "window",
          header: "Failures in range",
          headerTitle: `Failed tool results of this key (of every key of the domain or tool for a level row), ${window.label}; under it the all-time failures / calls`,
          align: "right" as const,
          width: 150,
          cell: (r: KeyRow) => (
            <span className="stack" style={{ gap: 2, alignItems: "flex-end" }}>
              <span className={r.windowFailures ? "num text-danger" : "num subtle"}>{(r.windowFailures ?? 0).toLocaleString("en-US")}</span>
              <span className="text-xs subtle num" title={r.level === "key" ? "Every failure and call of this key" : "Failures and calls counted on this level since it was first tracked"}>
                {r.level === "key" ? "all time" : "level, all time"} {r.totalFailures.toLocaleString("en-US")} / {r.totalCalls.toLocaleString("en-US")}
              </span>
            </span>
          ),
        }
      : {
          id: "total",
          header: "Failures / calls",
          headerTitle: "All time: failures and calls of this key (a domain- or tool-level row: counted since the level was first tracked)",
          sortKey: "total",
          align: "right" as const,
          width: 120,
          cell: (r: KeyRow) => (
            <span className="num">
              {r.totalFailures.toLocaleString("en-US")} <span className="subtle">/ {r.totalCalls.toLocaleString("en-US")}</span>
            </span>
          ),
        },
    {
      id: "last",
      header: "Last failure",
      sortKey: "last_failure",
      firstDir: "desc",
      align: "right",
      width: 120,
      cell: (r) => (r.lastFailureAt ? <RelativeTime date={r.lastFailureAt} now={now} /> : <span className="subtle">—</span>),
    },
  ];

  if (totalAll === 0 && !windowed) {
    return (
      <div className="stack stack-lg">
        <PageHeader title="Tools" description="Every failure key Vigil tracks, with its trust state." />
        <WatchCounts workspaceId={ws.id} window={keyWindow} scopeLabel={window.label} />
        <ConnectAgent baseUrl={await getBaseUrl()} slug={ws.slug} canConfigure={page.permissions.canConfigure} />
      </div>
    );
  }

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Tools"
        description="Every failure key (tool + parameters) with its trust state, including domain- and tool-level states."
        actions={
          <div className="row" style={{ gap: 12 }}>
            <LivePageRefresh slug={ws.slug} workspaceId={ws.id} />
            {page.permissions.canOperate && <ResetAllButton slug={ws.slug} count={notTrusted} />}
          </div>
        }
      />
      <TimeRangePicker path={path} searchParams={sp} window={window} />
      <WatchCounts workspaceId={ws.id} window={keyWindow} scopeLabel={window.label} />
      <nav className="segmented state-filter" aria-label="Filter by state">
        <a href={withSearchParams(path, sp, { state: null, page: null })} aria-current={!state ? "page" : undefined}>
          All <span className="seg-count">{totalAll.toLocaleString("en-US")}</span>
        </a>
        {STATES.map((s) => (
          <a key={s} href={withSearchParams(path, sp, { state: s, page: null })} aria-current={state === s ? "page" : undefined}>
            <span className="stat-dot" data-state={s} aria-hidden="true" />
            {s[0].toUpperCase() + s.slice(1)} <span className="seg-count">{(byState[s] ?? 0).toLocaleString("en-US")}</span>
          </a>
        ))}
      </nav>
      <FilterForm action={path}>
        {state && <input type="hidden" name="state" value={state} />}
        <TimeWindowInputs window={window} />
        {sp.sort && <input type="hidden" name="sort" value={sort.key} />}
        {sp.dir && <input type="hidden" name="dir" value={sort.dir} />}
        <input className="input input-sm toolbar-search" type="search" name="q" defaultValue={q} placeholder="Filter keys, e.g. bash or domain=api" aria-label="Filter failure keys" />
        <select className="select input-sm" name="level" defaultValue={level ?? ""} aria-label="Level" style={{ width: 150 }}>
          <option value="">All levels</option>
          <option value="key">Keys</option>
          <option value="domain">Domain-level</option>
          <option value="tool">Tool-level</option>
        </select>
        <FilterActions clearHref={withSearchParams(path, sp, { q: null, level: null, state: null, page: null })} filtered={filtered} />
      </FilterForm>
      <DataTable
        label="Failure keys"
        columns={columns}
        rows={list.rows}
        rowKey={(r) => r.failureKey}
        rowHref={(r) => keyHref(ws.slug, r.failureKey)}
        sort={sort}
        sortHref={(s) => withSearchParams(path, sp, { sort: s.key, dir: s.dir, page: null })}
        pagination={{ page: list.page, pageSize: list.pageSize, total: list.total }}
        pageHref={(p) => withSearchParams(path, sp, { page: p === 1 ? null : p })}
        empty={<EmptyState compact title="No keys match" description={windowed ? `No key matches with activity in ${window.label}; widen the time range.` : "Try another state, level or search text."} />}
      />
    </div>
  );
}
