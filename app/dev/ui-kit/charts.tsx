"use client";

import { Area, AreaChart, Bar, BarChart, CartesianGrid, Tooltip, XAxis, YAxis } from "recharts";
import { ChartCard, ChartTooltip } from "@/components/chart-card";
import { axisProps, gridProps, PATTERN_COLORS, tooltipProps } from "@/components/chart-theme";
import { formatPercent, humanize } from "@/components/format";
import { FAILURE_RATE, PATTERN_TYPES, patternDays } from "./fake-data";

export function PatternDetectionsChart({ now }: { now: number }) {
  return (
    <ChartCard
      title="Pattern detections"
      subtitle="Per day by pattern type · last 14 days"
      actions={
        <div className="segmented" role="group" aria-label="Range">
          <button type="button" aria-pressed="false">24h</button>
          <button type="button" aria-pressed="true">14d</button>
          <button type="button" aria-pressed="false">30d</button>
        </div>
      }
      legend={PATTERN_TYPES.map((t) => ({ label: humanize(t), color: PATTERN_COLORS[t] }))}
    >
      <BarChart data={patternDays(now)} margin={{ top: 8, right: 8, left: 0, bottom: 0 }} barCategoryGap="22%">
        <CartesianGrid {...gridProps} />
        <XAxis dataKey="day" {...axisProps} interval="preserveStartEnd" minTickGap={12} />
        <YAxis {...axisProps} width={32} allowDecimals={false} />
        <Tooltip {...tooltipProps} content={(p) => <ChartTooltip {...p} total formatName={(n) => humanize(String(n))} />} />
        {PATTERN_TYPES.map((t, i) => (
          <Bar
            key={t}
            dataKey={t}
            name={t}
            stackId="a"
            fill={PATTERN_COLORS[t]}
            radius={i === PATTERN_TYPES.length - 1 ? [2, 2, 0, 0] : 0}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    </ChartCard>
  );
}

export function FailureRateChart() {
  return (
    <ChartCard title="Failure rate" subtitle="Failed results ÷ results · last 24 hours">
      <AreaChart data={FAILURE_RATE} margin={{ top: 8, right: 8, left: 0, bottom: 0 }}>
        <defs>
          <linearGradient id="fr-fill" x1="0" y1="0" x2="0" y2="1">
            <stop offset="0%" stopColor="var(--chart-1)" stopOpacity={0.22} />
            <stop offset="100%" stopColor="var(--chart-1)" stopOpacity={0} />
          </linearGradient>
        </defs>
        <CartesianGrid {...gridProps} />
        <XAxis dataKey="hour" {...axisProps} interval={5} />
        <YAxis {...axisProps} width={40} tickFormatter={(v: number) => formatPercent(v, 0)} />
        <Tooltip
          {...tooltipProps}
          cursor={{ stroke: "var(--border-strong)" }}
          content={(p) => <ChartTooltip {...p} formatValue={(v) => formatPercent(v as number)} />}
        />
        <Area type="monotone" dataKey="rate" name="Failure rate" stroke="var(--chart-1)" strokeWidth={1.75} fill="url(#fr-fill)" isAnimationActive={false} />
      </AreaChart>
    </ChartCard>
  );
}

export function EmptyChart() {
  return (
    <ChartCard title="Nudge effectiveness" subtitle="By model" empty emptyDescription="No nudges were sent in this period." height={180}>
      <BarChart data={[]} />
    </ChartCard>
  );
}
