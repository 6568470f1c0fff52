import type { Metadata } from "next";
import type { CSSProperties } from "react";
import { DataTable, readTableParams, withSearchParams, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { CursorPager } from "@/components/cursor-pager";
import { formatNumber } from "@/components/format";
import { MiddleTruncate } from "@/components/middle-truncate";
import { PageHeader } from "@/components/page-header";
import { ExportMenu } from "@/components/dashboard/export-menu";
import { LivePageRefresh } from "@/components/dashboard/live-page-refresh";
import { RelativeTime } from "@/components/relative-time";
import { requireWorkspacePage } from "@/server/dashboard/access";
import {
  SESSION_SORT_KEYS,
  SESSION_STATUSES,
  listAgentSummaries,
  listSessionAgents,
  listSessions,
  loadSessionControl,
  sessionStatusCounts,
  type SessionRow,
  type SessionSortKey,
  type SessionStatus,
} from "@/server/dashboard/sessions-data";
import { TimeRangePicker, TimeWindowInputs } from "@/components/dashboard/time-range-picker";
import { FilterActions, FilterForm } from "@/components/dashboard/filter-actions";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import { PATTERN_TYPES } from "@/server/engine/types";
import { humanize } from "@/components/format";
import { stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";
import { AgentFilter } from "../agent-filter";
import { SessionStatusBadge } from "../session-status-badge";
import { OpenCallsNote } from "../open-calls";
import { SessionPhoneLine } from "../session-phone-line";
import { openCallsOf } from "@/server/services/open-calls";
import { ResumeSession } from "../[sessionId]/resume-session";
import { AgentHoldButton, PauseSessionButton } from "@/components/controls/session-controls";
import { Badge } from "@/components/state-badge";

export const metadata: Metadata = { title: "Sessions" };
export const dynamic = "force-dynamic";

export default async function SessionsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const { sp, window } = await pageTimeWindow(await searchParams);
  const db = (await getRuntime()).database.db;
  const workspaceId = page.access.workspace.id;

  const statusParam = stringParam(sp.status);
  const status = (SESSION_STATUSES as readonly string[]).includes(statusParam ?? "") ? (statusParam as SessionStatus) : null;
  const agent = stringParam(sp.agent) ?? null;
  const q = stringParam(sp.q) ?? null;
  const patternParam = stringParam(sp.pattern);
  const pattern = patternParam === "any" || (PATTERN_TYPES as readonly string[]).includes(patternParam ?? "") ? patternParam! : null;
  const scope = { from: window.from, to: window.to, q, pattern };
  const { sort, page: pageNo, pageSize } = readTableParams(sp, {
    sortKeys: SESSION_SORT_KEYS,
    defaultSort: { key: "last", dir: "desc" },
    pageSize: 50,
  });
  const control = await loadSessionControl(db, workspaceId);
  const [{ rows, total, nextCursor, prevCursor }, counts, agents, agentSummaries] = await Promise.all([
    listSessions(db, { workspaceId, status, agent, ...scope, sort: sort as { key: SessionSortKey; dir: "asc" | "desc" }, page: pageNo, pageSize, after: stringParam(sp.after), before: stringParam(sp.before), control }),
    sessionStatusCounts(db, workspaceId, scope, control),
    listSessionAgents(db, workspaceId),
    listAgentSummaries(db, workspaceId, control),
  ]);
  const openCalls = await openCallsOf(db, workspaceId, rows.map((r) => r.sessionId));
  const canOperate = page.permissions.canOperate;
  const base = `/w/${encodeURIComponent(slug)}/sessions`;
  const now = new Date().toISOString();

  const columns: Column<SessionRow>[] = [
    {
      id: "session",
      header: "Session",
      className: "session-col-id",
      cell: (r) => <MiddleTruncate value={r.sessionId} mono tail={12} />,
    },
    {
      id: "phone",
      header: <span className="sr-only">Summary</span>,
      cardLabel: "",
      className: "session-col-phone",
      cell: (r) => <SessionPhoneLine row={r} openCalls={openCalls.get(r.sessionId)?.length ?? 0} now={now} />,
    },
    {
      id: "status",
      header: "Status",
      className: "session-col-status",
      cell: (r) => (
        <>
          <SessionStatusBadge status={r.status} held={r.held} />
          <OpenCallsNote calls={openCalls.get(r.sessionId) ?? []} />
        </>
      ),
    },
    { id: "agent", header: "Agent", nowrap: true, cell: (r) => <MiddleTruncate value={r.agent} tail={10} /> },
    {
      id: "model",
      header: "Model",
      nowrap: true,
      cell: (r) =>
        r.model ? (
          // A model name of up to 32 characters (dated ones: claude-sonnet-4-5-20250929) is never cut:
          // the ids and agent names give way first (app/globals.css, `.session-model`).
          <span className="session-model" style={{ "--model-whole": `${Math.min(r.model.length, 32)}ch` } as CSSProperties}>
            <MiddleTruncate value={r.model} mono className="text-sm" tail={10} />
          </span>
        ) : (
          <span className="subtle">—</span>
        ),
    },
    {
      id: "started",
      header: "Started",
      sortKey: "started",
      firstDir: "desc",
      nowrap: true,
      // Only on wide screens, unless the list is sorted by it (app/globals.css, `.session-col-wide`).
      className: sort.key === "started" ? undefined : "session-col-wide",
      cell: (r) => (r.startedAt ? <RelativeTime date={r.startedAt} now={now} /> : <span className="subtle">—</span>),
    },
    {
      id: "last",
      header: "Last event",
      sortKey: "last",
      firstDir: "desc",
      nowrap: true,
      cell: (r) => (r.lastEventAt ? <RelativeTime date={r.lastEventAt} now={now} /> : <span className="subtle">—</span>),
    },
    { id: "events", header: "Events", align: "right", sortKey: "events", cell: (r) => <span className="num">{formatNumber(r.eventCount)}</span> },
    { id: "calls", header: "Calls", align: "right", cell: (r) => <span className="num">{formatNumber(r.callCount)}</span> },
    {
      id: "failures",
      header: "Failures",
      align: "right",
      sortKey: "failures",
      cell: (r) => <span className={r.failureCount > 0 ? "num text-danger" : "num subtle"}>{formatNumber(r.failureCount)}</span>,
    },
    {
      id: "patterns",
      header: "Patterns",
      align: "right",
      sortKey: "patterns",
      cell: (r) => <span className={r.patternCount > 0 ? "num text-warning" : "num subtle"}>{formatNumber(r.patternCount)}</span>,
    },
    {
      id: "control",
      header: <span className="sr-only">Pause or resume</span>,
      align: "right",
      className: "session-col-control",
      cell: (r) =>
        r.status === "ended" ? null : r.held?.scope === "session" ? (
          canOperate ? <ResumeSession workspaceSlug={slug} sessionId={r.sessionId} compact /> : null
        ) : r.held ? (
          <span className="text-xs subtle" title={`Resume the ${r.held.scope === "workspace" ? "workspace" : "agent"} to lift it`}>
            held by {r.held.scope}
          </span>
        ) : (
          <PauseSessionButton slug={slug} sessionId={r.sessionId} canOperate={canOperate} size="xs" compact />
        ),
    },
  ];

  const tabs: { id: SessionStatus | null; label: string; n: number }[] = [
    { id: null, label: "All", n: counts.all },
    { id: "active", label: "Active", n: counts.active },
    { id: "idle", label: "Idle", n: counts.idle },
    { id: "paused", label: "Paused", n: counts.paused },
    { id: "ended", label: "Ended", n: counts.ended },
  ];

  return (
    <>
      <PageHeader
        title="Sessions"
        description="Every agent session posting to this workspace: its calls, failures and detected stalls. A paused session — by a person, its agent's hold, the kill switch or an interrupt nudge — waits for a person to resume it."
        actions={
          <>
            <LivePageRefresh slug={slug} workspaceId={workspaceId} />
            <ExportMenu resource="sessions" slug={page.access.workspace.slug} searchParams={sp} />
          </>
        }
      />
      {agentSummaries.length > 0 && (
        <section className="card" aria-labelledby="agents-title">
          <div className="card-head">
            <div>
              <h2 className="card-title" id="agents-title">
                Agents
              </h2>
              <p className="card-subtitle">Pause every session of an agent, running or started later; paused agents first.</p>
            </div>
          </div>
          <div className="card-body">
            <ul className="controls-agents dash2-plain-list" aria-label="Agents">
              {agentSummaries.map((a) => (
                <li key={a.agent} className="controls-agent" data-held={a.hold ? "" : undefined} data-testid={`agent-${a.agent}`}>
                  <a className="controls-agent-name" href={withSearchParams(base, sp, { agent: a.agent, page: null })} title={a.agent}>
                    {a.agent}
                  </a>
                  <span className="text-xs muted num nowrap">{formatNumber(a.running)} running</span>
                  {a.hold && (
                    <Badge tone="escalated" dot title={`Paused by ${a.hold.by}: ${a.hold.reason}`}>
                      held
                    </Badge>
                  )}
                  <AgentHoldButton slug={slug} agent={a.agent} held={!!a.hold} canOperate={canOperate} />
                </li>
              ))}
            </ul>
          </div>
        </section>
      )}
      <TimeRangePicker path={base} searchParams={sp} window={window} />
      <div className="toolbar dash2-toolbar">
        <nav className="segmented" aria-label="Filter by status">
          {tabs.map((t) => (
            <a
              key={t.label}
              href={withSearchParams(base, sp, { status: t.id, page: null })}
              aria-current={status === t.id ? "page" : undefined}
            >
              {t.label}
              <span className="dash2-seg-count">{formatNumber(t.n)}</span>
            </a>
          ))}
        </nav>
        <div className="toolbar-spacer" />
        <AgentFilter agents={agents} value={agent} />
      </div>
      <div className="toolbar dash2-toolbar">
        <FilterForm action={base} className="row" style={{ gap: 8, minWidth: 0, flex: "1 1 300px", maxWidth: 520 }}>
          {status && <input type="hidden" name="status" value={status} />}
          {agent && <input type="hidden" name="agent" value={agent} />}
          {pattern && <input type="hidden" name="pattern" value={pattern} />}
          <TimeWindowInputs window={window} />
          <input
            className="input input-sm"
            style={{ flex: "1 1 auto", minWidth: 0, width: "auto" }}
            type="search"
            name="q"
            defaultValue={q ?? ""}
            placeholder="Search session id"
            aria-label="Search sessions by id"
          />
          <FilterActions clearHref={withSearchParams(base, sp, { q: null, page: null })} filtered={!!q} />
        </FilterForm>
        {pattern && (
          <a className="badge" data-tone="warning" href={withSearchParams(base, sp, { pattern: null, page: null })} title="Show sessions with or without detections">
            {pattern === "any" ? "With a stall pattern" : `Pattern: ${humanize(pattern)}`} ×
          </a>
        )}
      </div>
      {counts.all === 0 && !q && !pattern && window.range === "all" ? (
        <EmptyState
          bordered
          icon="sessions"
          title="No sessions yet"
          description="Sessions appear when an agent posts events (session.start, tool.call, tool.result, model.text) with a sessionId to ingest.events or guard.check."
        />
      ) : (
        <DataTable
          label="Agent sessions"
          className="sessions-table"
          columns={columns}
          rows={rows}
          rowKey={(r) => r.sessionId}
          rowHref={(r) => `${base}/${encodeURIComponent(r.sessionId)}`}
          sort={sort}
          sortHref={(s) => withSearchParams(base, sp, { sort: s.key, dir: s.dir, page: null, after: null, before: null })}
          empty={<EmptyState compact title="No sessions match" description={q ? `No session id contains “${q}” in ${window.label}.` : `Try another status, agent or time range (${window.label}).`} />}
        />
      )}
      {total > 0 && (
        <CursorPager
          total={total}
          noun={total === 1 ? "session" : "sessions"}
          newerHref={prevCursor ? withSearchParams(base, sp, { page: null, after: null, before: prevCursor }) : null}
          olderHref={nextCursor ? withSearchParams(base, sp, { page: null, before: null, after: nextCursor }) : null}
          order={sort.key === "started" || sort.key === "last" ? (sort.dir === "desc" ? "newest-first" : "oldest-first") : "other"}
        />
      )}
    </>
  );
}
