import { FilterActions, FilterForm } from "@/components/dashboard/filter-actions";
import type { Metadata } from "next";
import { ConnectAgent } from "@/components/dashboard/connect-agent";
import { failureColumns } from "@/components/dashboard/failure-columns";
import { DataTable, withSearchParams } from "@/components/data-table";
import { CursorPager } from "@/components/cursor-pager";
import { EmptyState } from "@/components/empty-state";
import { humanize } from "@/components/format";
import { PageHeader } from "@/components/page-header";
import { ExportMenu } from "@/components/dashboard/export-menu";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { getBaseUrl } from "@/server/dashboard/base-url";
import { getFailureFilterOptions, listFailureGroups, listFailures, NO_MODEL, SEVERITIES } from "@/server/dashboard/failures";
import { FailureGroupsTable } from "./failure-groups-table";
import { TimeRangePicker, TimeWindowInputs } from "@/components/dashboard/time-range-picker";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import { hasAnyEvents } from "@/server/dashboard/overview";
import { pageParam, stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Failures" };

const PAGE_SIZE = 50;

export default async function FailuresPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const { db } = (await getRuntime()).database;
  const now = new Date();
  const { sp, window: time } = await pageTimeWindow(await searchParams, now);

  const tool = stringParam(sp.tool);
  const severityParam = stringParam(sp.severity);
  const severity = severityParam && (SEVERITIES as readonly string[]).includes(severityParam) ? severityParam : undefined;
  const model = stringParam(sp.model);
  const text = stringParam(sp.q);
  const pageNo = pageParam(sp.page);
  // Groups by default (failures by normalized message); a group opens the list filtered by its fingerprint (`fp`).
  const fingerprint = stringParam(sp.fp);
  const view = stringParam(sp.view) === "list" || fingerprint ? "list" : "groups";

  const [list, options, groups] = await Promise.all([
    listFailures(db, ws.id, { tool, severity, model, text, fingerprint, from: time.from, to: time.to, page: pageNo, after: stringParam(sp.after), before: stringParam(sp.before), pageSize: PAGE_SIZE }),
    getFailureFilterOptions(db, ws.id),
    view === "groups" ? listFailureGroups(db, ws.id, { from: time.from, to: time.to, toolName: tool, severity, model, text, withDaily: true, now }) : Promise.resolve([]),
  ]);
  const path = `/w/${ws.slug}/failures`;
  const filtered = !!(tool || severity || model || text || fingerprint);

  if (list.total === 0 && !filtered && !(await hasAnyEvents(db, ws.id))) {
    return (
      <div className="stack stack-lg">
        <PageHeader title="Failures" description="Every failed tool call, classified by severity." />
        <ConnectAgent baseUrl={await getBaseUrl()} slug={ws.slug} canConfigure={page.permissions.canConfigure} />
      </div>
    );
  }

  const tools = tool && !options.tools.includes(tool) ? [tool, ...options.tools] : options.tools;
  const models = model && model !== NO_MODEL && !options.models.includes(model) ? [model, ...options.models] : options.models;

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Failures"
        description={view === "groups" ? "Failed tool calls grouped by their normalized message, largest first." : "Every failed tool call, classified by severity. Newest first."}
        actions={<ExportMenu resource="failures" slug={ws.slug} searchParams={sp} />}
      />
      <TimeRangePicker path={path} searchParams={sp} window={time} />
      <nav className="segmented" aria-label="View">
        <a href={withSearchParams(path, sp, { view: null, fp: null, page: null, after: null, before: null })} aria-current={view === "groups" ? "page" : undefined}>
          Groups
        </a>
        <a href={withSearchParams(path, sp, { view: "list", fp: null, page: null, after: null, before: null })} aria-current={view === "list" && !fingerprint ? "page" : undefined}>
          All failures
        </a>
      </nav>
      <FilterForm action={path}>
        <TimeWindowInputs window={time} />
        {view === "list" && !fingerprint && <input type="hidden" name="view" value="list" />}
        {fingerprint && <input type="hidden" name="fp" value={fingerprint} />}
        <input
          className="input input-sm toolbar-search"
          type="search"
          name="q"
          defaultValue={text ?? ""}
          placeholder="Search error text"
          aria-label="Search failures by error text"
        />
        <label className="sr-only" htmlFor="f-tool">
          Tool
        </label>
        <select id="f-tool" className="select input-sm" name="tool" defaultValue={tool ?? ""} style={{ width: 180 }}>
          <option value="">All tools</option>
          {tools.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="f-severity">
          Severity
        </label>
        <select id="f-severity" className="select input-sm" name="severity" defaultValue={severity ?? ""} style={{ width: 150 }}>
          <option value="">All severities</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {humanize(s)}
            </option>
          ))}
        </select>
        <label className="sr-only" htmlFor="f-model">
          Model
        </label>
        <select id="f-model" className="select input-sm" name="model" defaultValue={model ?? ""} style={{ width: 170 }}>
          <option value="">All models</option>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
          <option value={NO_MODEL}>No model reported</option>
        </select>
        <FilterActions clearHref={withSearchParams(path, sp, { q: null, tool: null, severity: null, model: null, fp: null, page: null, after: null, before: null })} filtered={filtered} />
      </FilterForm>
      {fingerprint && view === "list" && (
        <p className="muted" data-testid="group-filter">
          Failures of one group ·{" "}
          <a href={withSearchParams(path, sp, { fp: null, page: null })}>show every failure</a>
        </p>
      )}
      {view === "groups" ? (
        <FailureGroupsTable groups={groups} path={path} sp={sp} now={now} />
      ) : (
        <DataTable
          label="Failures"
          columns={failureColumns({ slug: ws.slug, now, withKey: true })}
          rows={list.rows}
          rowKey={(r) => String(r.id)}
          rowHref={(r) => `/w/${ws.slug}/tools/${encodeURIComponent(r.failureKey)}`}
          linkColumn="key"
          empty={<EmptyState compact title="No failures match" description="Widen the time range or clear a filter." />}
        />
      )}
      {view === "list" && list.total > 0 && (
        <CursorPager
          total={list.total}
          noun={list.total === 1 ? "failure" : "failures"}
          newerHref={list.prevCursor ? withSearchParams(path, sp, { page: null, after: null, before: list.prevCursor }) : null}
          olderHref={list.nextCursor ? withSearchParams(path, sp, { page: null, before: null, after: list.nextCursor }) : null}
        />
      )}
    </div>
  );
}
