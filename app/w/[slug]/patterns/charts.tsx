"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { Bar, BarChart, CartesianGrid, Cell, LabelList, Tooltip, XAxis, YAxis } from "recharts";
import { ChartCard, ChartTooltip } from "@/components/chart-card";
import { PATTERN_COLORS, PATTERN_SEVERITY_COLORS, axisProps, axisTitle, categoryTick, gridProps, seriesColor, tooltipProps } from "@/components/chart-theme";
import { formatNumber, formatPercent, humanize } from "@/components/format";
import type { PatternStats } from "@/server/dashboard/patterns-data";

const shortDay = (d: unknown) => {
  const s = String(d);
  const m = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Number(s.slice(5, 7)) - 1];
  return m ? `${m} ${Number(s.slice(8, 10))}` : s;
};

function StackedDaily({
  title,
  subtitle,
  data,
  series,
  color,
  nameFormat,
  emptyDescription,
  seriesHref,
  barHref,
}: {
  title: string;
  subtitle: string;
  data: PatternStats["byType"];
  series: string[];
  color: (s: string, i: number) => string;
  nameFormat: (s: string) => string;
  emptyDescription: string;
  /** Where a series (legend entry) leads, e.g. the sessions with that pattern in the window. */
  seriesHref?: (s: string) => string;
  /** Where one bar segment (series on a day) leads. */
  barHref?: (s: string, day: string) => string;
}) {
  const router = useRouter();
  return (
    <ChartCard
      title={title}
      subtitle={subtitle}
      empty={series.length === 0}
      emptyTitle="No detections"
      emptyDescription={emptyDescription}
      legend={series.map((s, i) => ({
        label: seriesHref ? (
          <Link href={seriesHref(s)} title={`Sessions with ${nameFormat(s)}`}>
            {nameFormat(s)}
          </Link>
        ) : (
          nameFormat(s)
        ),
        color: color(s, i),
      }))}
    >
      <BarChart data={data} margin={{ top: 8, right: 8, left: 4, bottom: 12 }} barCategoryGap="22%">
        <CartesianGrid {...gridProps} />
        <XAxis dataKey="day" {...axisProps} tickFormatter={shortDay} interval="preserveStartEnd" minTickGap={14} label={axisTitle("Day (UTC)", "x")} />
        <YAxis {...axisProps} width={44} allowDecimals={false} label={axisTitle("Detections", "y")} />
        <Tooltip
          {...tooltipProps}
          content={(p) => <ChartTooltip {...p} total formatLabel={(l) => shortDay(l)} formatName={(n) => nameFormat(String(n))} />}
        />
        {series.map((s, i) => (
          <Bar
            key={s}
            dataKey={s}
            name={s}
            stackId="a"
            fill={color(s, i)}
            radius={i === series.length - 1 ? [2, 2, 0, 0] : 0}
            isAnimationActive={false}
            cursor={barHref ? "pointer" : undefined}
            onClick={barHref ? (entry: { payload?: { day?: string } }) => entry?.payload?.day && router.push(barHref(s, entry.payload.day)) : undefined}
          />
        ))}
      </BarChart>
    </ChartCard>
  );
}

export function DetectionsByType({ stats, rangeLabel, sessionsBase, windowQuery }: { stats: PatternStats; rangeLabel: string; sessionsBase?: string; windowQuery?: string }) {
  return (
    <StackedDaily
      title="Detections by pattern type"
      subtitle={`Pattern detections per UTC day · ${rangeLabel} · a bar or a legend entry opens its sessions`}
      seriesHref={sessionsBase ? (s) => `${sessionsBase}?${windowQuery ? windowQuery + "&" : ""}pattern=${encodeURIComponent(s)}` : undefined}
      barHref={sessionsBase ? (s, day) => `${sessionsBase}?pattern=${encodeURIComponent(s)}&from=${day}&to=${day}` : undefined}
      data={stats.byType}
      series={stats.types}
      color={(s, i) => PATTERN_COLORS[s] ?? seriesColor(i)}
      nameFormat={(s) => humanize(s)}
      emptyDescription="No behavioural patterns were detected in this period."
    />
  );
}

export function DetectionsByModel({ stats, rangeLabel }: { stats: PatternStats; rangeLabel: string }) {
  return (
    <StackedDaily
      title="Detections by model"
      subtitle={`Pattern detections per UTC day, by the session's model · ${rangeLabel}`}
      data={stats.byModel}
      series={stats.models}
      color={(_s, i) => seriesColor(i)}
      nameFormat={(s) => s}
      emptyDescription="No behavioural patterns were detected in this period."
    />
  );
}

export function SeverityMix({ stats, rangeLabel }: { stats: PatternStats; rangeLabel: string }) {
  const data = stats.severityByType.map((r) => ({ ...r, name: humanize(r.patternType) }));
  const height = Math.max(160, data.length * 34 + 24);
  return (
    <ChartCard
      title="Severity mix"
      subtitle={`Detections per pattern type by severity · ${rangeLabel}`}
      empty={data.length === 0}
      emptyTitle="No detections"
      emptyDescription="Minor detections send gentle nudges, moderate ones direct instructions, severe ones interrupt (pause) the session."
      height={height}
      legend={(["minor", "moderate", "severe"] as const).map((s) => ({ label: humanize(s), color: PATTERN_SEVERITY_COLORS[s] }))}
    >
      <BarChart data={data} layout="vertical" margin={{ top: 4, right: 12, left: 0, bottom: 12 }} barCategoryGap="28%">
        <CartesianGrid {...gridProps} vertical horizontal={false} />
        <XAxis type="number" {...axisProps} allowDecimals={false} label={axisTitle("Detections", "x")} />
        <YAxis type="category" dataKey="name" {...axisProps} width={132} tickFormatter={(v) => categoryTick(v)} />
        <Tooltip {...tooltipProps} content={(p) => <ChartTooltip {...p} total formatName={(n) => humanize(String(n))} />} />
        {(["minor", "moderate", "severe"] as const).map((s, i) => (
          <Bar key={s} dataKey={s} name={s} stackId="s" fill={PATTERN_SEVERITY_COLORS[s]} radius={i === 2 ? [0, 2, 2, 0] : 0} isAnimationActive={false} />
        ))}
      </BarChart>
    </ChartCard>
  );
}

type EffRow = { label: string; sent: number; effective: number; rate: number };

function EffectivenessTooltip({ active, payload }: { active?: boolean; payload?: readonly { payload?: EffRow }[] }) {
  const row = active ? payload?.[0]?.payload : undefined;
  if (!row) return null;
  return (
    <div className="chart-tooltip">
      <div className="chart-tooltip-title">{row.label}</div>
      <div className="chart-tooltip-row">
        <span className="muted">Effective</span>
        <span>{formatPercent(row.rate)}</span>
      </div>
      <div className="chart-tooltip-row">
        <span className="muted">Nudges effective / sent</span>
        <span>
          {formatNumber(row.effective)} / {formatNumber(row.sent)}
        </span>
      </div>
    </div>
  );
}

function EffectivenessChart({ title, subtitle, rows, colorFor }: { title: string; subtitle: string; rows: EffRow[]; colorFor: (r: EffRow, i: number) => string }) {
  const height = Math.max(140, rows.length * 34 + 24);
  return (
    <ChartCard
      title={title}
      subtitle={subtitle}
      empty={rows.length === 0}
      emptyTitle="No nudges sent"
      emptyDescription="A nudge is effective when the agent's next productive action (a successful action with a new call or a new result) comes before the same pattern is detected again."
      height={height}
    >
      <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 40, left: 0, bottom: 12 }} barCategoryGap="28%">
        <CartesianGrid {...gridProps} vertical horizontal={false} />
        <XAxis
          type="number"
          domain={[0, 1]}
          ticks={[0, 0.25, 0.5, 0.75, 1]}
          {...axisProps}
          tickFormatter={(v: number) => formatPercent(v, 0)}
          label={axisTitle("Effective nudges (%)", "x")}
        />
        <YAxis type="category" dataKey="label" {...axisProps} width={132} tickFormatter={(v) => categoryTick(v)} />
        <Tooltip {...tooltipProps} content={(p) => <EffectivenessTooltip active={p.active} payload={p.payload as never} />} />
        {/* minPointSize keeps a 0 % row visible as a sliver with its label, not a blank line. */}
        <Bar dataKey="rate" name="Effective" radius={[0, 2, 2, 0]} isAnimationActive={false} minPointSize={2}>
          {rows.map((r, i) => (
            <Cell key={r.label} fill={colorFor(r, i)} />
          ))}
          <LabelList dataKey="rate" position="right" fontSize={11} fill="var(--text-muted)" formatter={(v: unknown) => formatPercent(Number(v), 0)} />
        </Bar>
      </BarChart>
    </ChartCard>
  );
}

export function EffectivenessByModel({ stats, rangeLabel }: { stats: PatternStats; rangeLabel: string }) {
  return (
    <EffectivenessChart
      title="Nudge effectiveness by model"
      subtitle={`Share of nudges that got the agent moving again (effective ÷ sent) · ${rangeLabel}`}
      rows={stats.effectivenessByModel.map((r) => ({ label: r.model, sent: r.sent, effective: r.effective, rate: r.rate }))}
      colorFor={(_r, i) => seriesColor(i)}
    />
  );
}

export function EffectivenessByPattern({ stats, rangeLabel }: { stats: PatternStats; rangeLabel: string }) {
  return (
    <EffectivenessChart
      title="Nudge effectiveness by pattern"
      subtitle={`Share of nudges that got the agent moving again (effective ÷ sent) · ${rangeLabel}`}
      rows={stats.effectivenessByPattern.map((r) => ({ label: humanize(r.patternType), sent: r.sent, effective: r.effective, rate: r.rate, key: r.patternType }))}
      colorFor={(r, i) => PATTERN_COLORS[(r as EffRow & { key?: string }).key ?? ""] ?? seriesColor(i)}
    />
  );
}
