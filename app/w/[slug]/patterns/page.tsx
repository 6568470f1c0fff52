import type { Metadata } from "next";
import { EmptyState } from "@/components/empty-state";
import { formatNumber, humanize } from "@/components/format";
import { PageHeader } from "@/components/page-header";
import { StatCard } from "@/components/stat-card";
import { requireWorkspacePage } from "@/server/dashboard/access";
import Link from "next/link";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { earliestDetectionDay, patternStats } from "@/server/dashboard/patterns-data";
import { windowDays } from "@/server/dashboard/time-range";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import type { SearchParams } from "@/server/dashboard/util";
import { STALL_PATTERNS } from "@/server/engine/stall-patterns";
import { getRuntime } from "@/server/runtime";
import { DetectionsByModel, DetectionsByType, EffectivenessByModel, EffectivenessByPattern, SeverityMix } from "./charts";

export const metadata: Metadata = { title: "Patterns" };
export const dynamic = "force-dynamic";

export default async function PatternsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const db = (await getRuntime()).database.db;
  const workspaceId = page.access.workspace.id;
  const now = new Date();
  const { sp, window } = await pageTimeWindow(await searchParams, now);
  const rangeLabel = window.label;
  const days = windowDays(window, now, { earliest: window.from ? null : await earliestDetectionDay(db, workspaceId), fallbackDays: 7 });
  const stats = await patternStats(db, { workspaceId, days, from: window.from ?? new Date(`${days[0]}T00:00:00Z`), to: window.to, now: now.getTime() });
  const base = `/w/${encodeURIComponent(slug)}/patterns`;
  const nothing = stats.totals.detections === 0 && stats.effectivenessByModel.length === 0;
  // Where a count leads: the sessions with those detections, in the same window.
  const windowParams = new URLSearchParams();
  if (window.range === "custom") {
    if (window.fromDay) windowParams.set("from", window.fromDay);
    if (window.toDay) windowParams.set("to", window.toDay);
  } else windowParams.set("range", window.range);
  const sessionsHref = (pattern: string) => {
    const q = new URLSearchParams(windowParams);
    q.set("pattern", pattern);
    return `/w/${encodeURIComponent(slug)}/sessions?${q}`;
  };

  return (
    <>
      <PageHeader title="Patterns" description="Behavioural stalls detected in agent sessions, the nudges Vigil sent, and whether they helped." />
      <TimeRangePicker path={base} searchParams={sp} window={window} />
      {nothing ? (
        <EmptyState
          bordered
          icon="patterns"
          title={`No patterns detected · ${rangeLabel}`}
          description={
            <div className="stack stack-sm" style={{ textAlign: "left", maxWidth: 620 }}>
              <p>
                Vigil watches each session for stalls — an agent that keeps working without making progress — and answers with a nudge:
                gentle for minor, a direct instruction for moderate, and an interrupt (the session pauses until a person resumes it) for
                severe. It looks for:
              </p>
              <ul className="dash2-pattern-help">
                {STALL_PATTERNS.map((p) => (
                  <li key={p.name}>
                    <strong>{humanize(p.name)}</strong> — {p.counts}
                  </li>
                ))}
              </ul>
              <p className="muted">Thresholds, tool classes, announce phrases and volatile argument fields are configurable under Settings → Tool classes.</p>
            </div>
          }
        />
      ) : (
        <div className="stack stack-lg">
          <div className="grid-stats">
            <StatCard label="Detections" value={formatNumber(stats.totals.detections)} hint={rangeLabel} />
            <StatCard
              label="Sessions affected"
              value={
                <Link href={sessionsHref("any")} title="Open these sessions">
                  {formatNumber(stats.totals.sessions)}
                </Link>
              }
              hint={rangeLabel}
            />
            <StatCard label="Nudges sent" value={formatNumber(stats.totals.nudges)} hint={rangeLabel} />
            <StatCard label="Interrupts (pauses)" value={formatNumber(stats.totals.interrupts)} hint={rangeLabel} />
          </div>
          <div className="grid grid-2">
            <DetectionsByType stats={stats} rangeLabel={rangeLabel} sessionsBase={`/w/${encodeURIComponent(slug)}/sessions`} windowQuery={windowParams.toString()} />
            <DetectionsByModel stats={stats} rangeLabel={rangeLabel} />
          </div>
          <div className="grid grid-3">
            <SeverityMix stats={stats} rangeLabel={rangeLabel} />
            <EffectivenessByModel stats={stats} rangeLabel={rangeLabel} />
            <EffectivenessByPattern stats={stats} rangeLabel={rangeLabel} />
          </div>
        </div>
      )}
    </>
  );
}
