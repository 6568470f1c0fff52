import { FilterActions } from "@/components/dashboard/filter-actions";
import type { Metadata } from "next";
import { ConnectAgent } from "@/components/dashboard/connect-agent";
import { failureColumns } from "@/components/dashboard/failure-columns";
import { DataTable, withSearchParams } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { humanize } from "@/components/format";
import { PageHeader } from "@/components/page-header";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { getBaseUrl } from "@/server/dashboard/base-url";
import { getFailureFilterOptions, listFailures, NO_MODEL, resolveTimeRange, SEVERITIES } from "@/server/dashboard/failures";
import { hasAnyEvents } from "@/server/dashboard/overview";
import { pageParam, stringParam, type SearchParams } from "@/server/dashboard/util";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Failures" };

const PAGE_SIZE = 50;
const RANGES = [
  { id: "1h", label: "1 h" },
  { id: "24h", label: "24 h" },
  { id: "7d", label: "7 d" },
  { id: "30d", label: "30 d" },
  { id: "all", label: "All" },
] as const;

/** yyyy-mm-dd (UTC day) → Date at its start; `endOfDay` → the next day's start. */
function dayToIso(day: string | undefined, endOfDay = false): string | undefined {
  if (!day || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const d = new Date(day + "T00:00:00Z");
  if (Number.isNaN(d.getTime())) return undefined;
  if (endOfDay) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

export default async function FailuresPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const sp = await searchParams;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const { db } = (await getRuntime()).database;
  const now = new Date();

  const tool = stringParam(sp.tool);
  const severityParam = stringParam(sp.severity);
  const severity = severityParam && (SEVERITIES as readonly string[]).includes(severityParam) ? severityParam : undefined;
  const model = stringParam(sp.model);
  const fromDay = stringParam(sp.from);
  const toDay = stringParam(sp.to);
  const time = resolveTimeRange(stringParam(sp.range), dayToIso(fromDay), dayToIso(toDay, true), now);
  const pageNo = pageParam(sp.page);

  const [list, options] = await Promise.all([
    listFailures(db, ws.id, { tool, severity, model, from: time.from, to: time.to, page: pageNo, pageSize: PAGE_SIZE }),
    getFailureFilterOptions(db, ws.id),
  ]);
  const path = `/w/${ws.slug}/failures`;
  const filtered = !!(tool || severity || model || time.range !== "all");

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
      <PageHeader title="Failures" description="Every failed tool call, classified by severity. Newest first." />
      <nav className="segmented" aria-label="Time range">
        {RANGES.map((r) => (
          <a
            key={r.id}
            href={withSearchParams(path, sp, { range: r.id === "all" ? null : r.id, from: null, to: null, page: null })}
            aria-current={time.range === r.id ? "page" : undefined}
          >
            {r.label}
          </a>
        ))}
        {time.range === "custom" && <span aria-current="page">Custom</span>}
      </nav>
      <form className="toolbar" method="get" action={path} role="search">
        {time.range !== "custom" && time.range !== "all" && <input type="hidden" name="range" value={time.range} />}
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
        <span className="row date-range">
          <label className="text-sm muted" htmlFor="f-from">
            From
          </label>
          <input id="f-from" className="input input-sm" type="date" name="from" defaultValue={fromDay} />
          <label className="text-sm muted" htmlFor="f-to">
            to
          </label>
          <input id="f-to" className="input input-sm" type="date" name="to" defaultValue={toDay} />
        </span>
        <FilterActions clearHref={path} filtered={filtered} />
      </form>
      <DataTable
        label="Failures"
        columns={failureColumns({ slug: ws.slug, now, withKey: true })}
        rows={list.rows}
        rowKey={(r) => String(r.id)}
        rowHref={(r) => `/w/${ws.slug}/tools/${encodeURIComponent(r.failureKey)}`}
        linkColumn="key"
        pagination={{ page: list.page, pageSize: list.pageSize, total: list.total }}
        pageHref={(p) => withSearchParams(path, sp, { page: p === 1 ? null : p })}
        empty={<EmptyState compact title="No failures match" description="Widen the time range or clear a filter." />}
      />
    </div>
  );
}
