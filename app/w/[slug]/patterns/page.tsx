import type { Metadata } from "next";
import { EmptyState } from "@/components/empty-state";
import { formatNumber, humanize } from "@/components/format";
import { PageHeader } from "@/components/page-header";
import { StatCard } from "@/components/stat-card";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { patternStats } from "@/server/dashboard/patterns-data";
import { stringParam, type SearchParams } from "@/server/dashboard/util";
import { PATTERN_TYPES } from "@/server/engine/types";
import { getRuntime } from "@/server/runtime";
import { loadEffectiveConfig } from "@/server/services/workspace-config";
import { DetectionsByModel, DetectionsByType, EffectivenessByModel, EffectivenessByPattern, SeverityMix } from "./charts";

export const metadata: Metadata = { title: "Patterns" };
export const dynamic = "force-dynamic";

const PATTERN_HELP: Record<(typeof PATTERN_TYPES)[number], string> = {
  repetitive_calls: "the identical call (same tool, same arguments) three or more times in a row with the same result",
  error_retry_loop: "the identical call failing again and again with the same error",
  alternating_calls: "flip-flopping between two identical calls with unchanged results: A B A B",
  introspection_loop: "listing tools or schemas again and again instead of acting",
  read_only_loop: "re-reading what was already read, without acting (reading new things is progress)",
  announce_no_action: "announcing “let me…” without calling an action tool",
  planning_loop: "several model texts in a row with no tool call (identical texts count double)",
  empty_response: "empty or reasoning-only model responses in a row",
  tool_avoidance: "naming an action tool in text without calling it",
};

export default async function PatternsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const sp = await searchParams;
  const page = await requireWorkspacePage(slug);
  const db = (await getRuntime()).database.db;
  const workspaceId = page.access.workspace.id;
  const days = stringParam(sp.range) === "30d" ? 30 : 7;
  const rangeLabel = `last ${days} days`;
  const { effective } = await loadEffectiveConfig(db, workspaceId);
  const stats = await patternStats(db, { workspaceId, days, actionTools: effective.patterns.actionTools });
  const base = `/w/${encodeURIComponent(slug)}/patterns`;
  const nothing = stats.totals.detections === 0 && stats.effectivenessByModel.length === 0;

  const range = (
    <nav className="segmented" aria-label="Range">
      <a href={`${base}?range=7d`} aria-current={days === 7 ? "page" : undefined}>
        7 days
      </a>
      <a href={`${base}?range=30d`} aria-current={days === 30 ? "page" : undefined}>
        30 days
      </a>
    </nav>
  );

  return (
    <>
      <PageHeader
        title="Patterns"
        description="Behavioural stalls detected in agent sessions, the nudges Vigil sent, and whether they helped."
        actions={range}
      />
      {nothing ? (
        <EmptyState
          bordered
          icon="patterns"
          title={`No patterns detected in the ${rangeLabel}`}
          description={
            <div className="stack stack-sm" style={{ textAlign: "left", maxWidth: 620 }}>
              <p>
                Vigil watches each session for stalls — an agent that keeps working without making progress — and answers with a nudge:
                gentle for minor, a direct instruction for moderate, and an interrupt (the session pauses until a person resumes it) for
                severe. It looks for:
              </p>
              <ul className="dash2-pattern-help">
                {PATTERN_TYPES.map((t) => (
                  <li key={t}>
                    <strong>{humanize(t)}</strong> — {PATTERN_HELP[t]}
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
            <StatCard label="Sessions affected" value={formatNumber(stats.totals.sessions)} hint={rangeLabel} />
            <StatCard label="Nudges sent" value={formatNumber(stats.totals.nudges)} hint={rangeLabel} />
            <StatCard label="Interrupts (pauses)" value={formatNumber(stats.totals.interrupts)} hint={rangeLabel} />
          </div>
          <div className="grid grid-2">
            <DetectionsByType stats={stats} rangeLabel={rangeLabel} />
            <DetectionsByModel stats={stats} rangeLabel={rangeLabel} />
          </div>
          <div className="grid grid-3">
            <SeverityMix stats={stats} rangeLabel={rangeLabel} />
            <EffectivenessByModel stats={stats} />
            <EffectivenessByPattern stats={stats} rangeLabel={rangeLabel} />
          </div>
        </div>
      )}
    </>
  );
}
