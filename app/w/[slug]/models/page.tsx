import type { Metadata } from "next";
import { MiddleTruncate } from "@/components/middle-truncate";
import { DataTable, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { formatCount, formatNumber, formatPercent, humanize } from "@/components/format";
import { Icon } from "@/components/icons";
import { PageHeader, Section } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { behaviourProfiles, modelMatrix, recentSuggestions } from "@/server/dashboard/patterns-data";
import { getRuntime } from "@/server/runtime";
import Link from "next/link";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { keyHref } from "@/server/dashboard/paths";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import type { SearchParams } from "@/server/dashboard/util";

export const metadata: Metadata = { title: "Models" };
export const dynamic = "force-dynamic";

/** Success rate → a cell colour on a red (0) → amber (0.7) → green (1) scale. */
function cellStyle(rate: number): React.CSSProperties {
  const r = Math.min(1, Math.max(0, rate));
  const hue =
    r < 0.7
      ? `color-mix(in srgb, var(--escalated-dot) ${Math.round((r / 0.7) * 100)}%, var(--blocked-dot))`
      : `color-mix(in srgb, var(--trusted-dot) ${Math.round(((r - 0.7) / 0.3) * 100)}%, var(--escalated-dot))`;
  return { background: `color-mix(in srgb, ${hue} 30%, var(--surface))`, color: "var(--text)" };
}

type Profile = Awaited<ReturnType<typeof behaviourProfiles>>[number];
type Suggestion = Awaited<ReturnType<typeof recentSuggestions>>[number];

export default async function ModelsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const db = (await getRuntime()).database.db;
  const workspaceId = page.access.workspace.id;
  const { sp, window } = await pageTimeWindow(await searchParams);
  const [matrix, profiles, suggestions] = await Promise.all([
    modelMatrix(db, workspaceId, 12, window),
    behaviourProfiles(db, workspaceId),
    recentSuggestions(db, workspaceId, 50, window),
  ]);
  const now = new Date().toISOString();
  const base = `/w/${encodeURIComponent(slug)}`;

  const profileColumns: Column<Profile>[] = [
    { id: "model", header: "Model", cell: (p) => <span className="mono">{p.model}</span> },
    { id: "turns", header: "Turns", align: "right", cell: (p) => <span className="num">{formatNumber(p.turns)}</span> },
    { id: "stalled", header: "Stalled turns", align: "right", cell: (p) => <span className="num">{formatNumber(p.stalledTurns)}</span> },
    {
      id: "stall",
      header: "Stall rate",
      align: "right",
      headerTitle: "Turns with at least one detected pattern ÷ turns",
      cell: (p) => <span className={p.stallRate > 0.25 ? "num text-warning" : "num"}>{p.turns ? formatPercent(p.stallRate) : "—"}</span>,
    },
    { id: "sent", header: "Nudges sent", align: "right", cell: (p) => <span className="num">{formatNumber(p.nudgesSent)}</span> },
    { id: "effective", header: "Effective", align: "right", cell: (p) => <span className="num">{formatNumber(p.nudgesEffective)}</span> },
    {
      id: "eff",
      header: "Effectiveness",
      align: "right",
      headerTitle: "Nudges followed by progress ÷ nudges sent (100% with none sent)",
      cell: (p) => <span className="num">{p.nudgesSent ? formatPercent(p.nudgeEffectiveness) : <span className="subtle">—</span>}</span>,
    },
    {
      id: "errors",
      header: "API errors",
      align: "right",
      headerTitle: "The model's API calls that failed (rate limit, overload, bad request); never counted against a tool",
      cell: (p) => <span className={p.modelErrors ? "num text-warning" : "num"}>{formatNumber(p.modelErrors)}</span>,
    },
    {
      id: "common",
      header: "Most common pattern",
      cell: (p) =>
        p.mostCommonPattern ? (
          <span>
            {humanize(p.mostCommonPattern)} <span className="subtle">({formatNumber(p.patternCounts[p.mostCommonPattern] ?? 0)})</span>
          </span>
        ) : (
          <span className="subtle">—</span>
        ),
    },
  ];

  const suggestionColumns: Column<Suggestion>[] = [
    { id: "when", header: "When", width: 110, cell: (s) => <RelativeTime date={s.ts} now={now} /> },
    {
      id: "key",
      header: "Failure key",
      cell: (s) => (
        <Link href={keyHref(slug, s.failureKey)}>
          <FailureKey value={s.failureKey} />
        </Link>
      ),
    },
    {
      id: "switch",
      header: "Switch (rates when suggested)",
      cell: (s) => (
        // Each model keeps its rate on its line; a narrow column wraps between the two models only.
        // The rates are those the suggestion was made on, so they may differ from the heatmap's range.
        <span
          className="row row-wrap"
          style={{ gap: 6 }}
          title={`Success rates on this key when the suggestion was made (${new Date(s.ts).toLocaleString("en-GB", { timeZone: "UTC" })} UTC); the heatmap above shows the selected range.`}
        >
          <span className="nowrap">
            <span className="mono">{s.currentModel}</span> <span className="subtle">{formatPercent(s.currentSuccessRate)}</span>
          </span>
          <Icon name="chevronRight" size={12} />
          <span className="nowrap">
            <span className="mono strong">{s.suggestedModel}</span> <span className="text-success">{formatPercent(s.suggestedSuccessRate)}</span>
          </span>
        </span>
      ),
    },
    {
      id: "strategy",
      header: "Strategy",
      cell: (s) => (
        <Badge tone={s.strategy === "auto" ? "info" : "neutral"} square>
          {s.strategy === "auto" ? "Auto (instructed)" : "Suggested"}
        </Badge>
      ),
    },
    {
      id: "session",
      header: "Latest session",
      cell: (s) => (
        <a href={`${base}/sessions/${encodeURIComponent(s.sessionId)}`} title={s.sessionId}>
          <MiddleTruncate value={s.sessionId} mono className="text-sm" />
        </a>
      ),
    },
    { id: "sessions", header: "Sessions", align: "right", width: 90, cell: (s) => <span className="num">{formatNumber(s.sessions)}</span> },
  ];

  return (
    <>
      <PageHeader title="Models" description="How each model fares per failure key, how often each stalls, and the model switches Vigil suggested." />
      <TimeRangePicker path={`${base}/models`} searchParams={sp} window={window} />
      <div className="stack stack-lg">
        <Section
          title="Success rate by model and failure key"
          description={`The 12 keys with the most failures · ${window.label}. Success rate = 1 − failures ÷ attempts; hover a cell for its attempts.`}
        >
          {matrix.keys.length === 0 ? (
            <EmptyState
              bordered
              icon="models"
              title={window.range === "all" ? "No tool results yet" : "No tool results in this range"}
              description="Per-model profiles fill in as agents post tool.result events with a model (on the event or its session)."
            />
          ) : (
            <div className="table-wrap" data-phone-layout="cards">
              <div className="table-scroll" tabIndex={0} role="region" aria-label="Success rate matrix">
                <table className="table dash2-matrix" data-density="compact">
                  <caption className="sr-only">Success rate per model (columns) and failure key (rows)</caption>
                  <thead>
                    <tr>
                      <th scope="col">Failure key</th>
                      {matrix.models.map((m) => (
                        <th key={m} scope="col" data-align="center">
                          <MiddleTruncate value={m} mono maxWidth="24ch" tail={6} />
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {matrix.keys.map((k) => (
                      <tr key={k.failureKey}>
                        <th scope="row" className="dash2-matrix-key">
                          <Link href={keyHref(slug, k.failureKey)} style={{ display: "block", minWidth: 0 }}>
                            <FailureKey value={k.failureKey} />
                          </Link>
                          <div className="subtle text-xs">
                            {formatNumber(k.failures)} of {formatCount(k.attempts, "attempt")} failed
                          </div>
                        </th>
                        {matrix.models.map((m) => {
                          const c = matrix.cells[m]?.[k.failureKey];
                          if (!c || c.attempts === 0)
                            return (
                              <td key={m} data-align="center" data-label={m} className="subtle" title={`${m}: no attempts`}>
                                —
                              </td>
                            );
                          return (
                            <td
                              key={m}
                              data-align="center"
                              data-label={m}
                              className="dash2-cell num"
                              style={cellStyle(c.rate)}
                              title={`${m} on ${k.failureKey}: ${formatNumber(c.attempts - c.failures)} of ${formatNumber(c.attempts)} attempts succeeded (${formatNumber(c.failures)} failed)`}
                            >
                              {formatPercent(c.rate)}
                              <span className="dash2-cell-n">{formatCount(c.attempts, "attempt")}</span>
                            </td>
                          );
                        })}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </div>
          )}
        </Section>

        <Section
          title="Behavioural profiles"
          description="Per model, all time (profiles are cumulative; the Patterns page breaks detections and nudges down by time): turns, turns with at least one detected pattern, and how well nudges worked."
        >
          <DataTable
            label="Behavioural profiles"
            columns={profileColumns}
            rows={profiles}
            rowKey={(p) => p.model}
            maxHeight="none"
            empty={<EmptyState compact icon="models" title="No behavioural data yet" description="Profiles are built from turn.start events, detections and nudges." />}
          />
        </Section>

        <Section
          title="Recent switch suggestions"
          description={`Made when a model keeps failing on a key another model handles clearly better (Settings → General → Model switch) · ${window.label}.`}
        >
          <DataTable
            label="Model switch suggestions"
            columns={suggestionColumns}
            rows={suggestions}
            rowKey={(s) => `${s.sessionId}|${s.failureKey}|${s.currentModel}`}
            maxHeight="none"
            empty={<EmptyState compact icon="models" title="No suggestions yet" description="None of the models has failed often enough on a key that another model handles better." />}
          />
        </Section>
      </div>
    </>
  );
}
