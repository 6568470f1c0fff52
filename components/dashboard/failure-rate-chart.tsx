"use client";

import { Bar, CartesianGrid, ComposedChart, Line, Tooltip, XAxis, YAxis } from "recharts";
import { ChartCard, ChartTooltip } from "@/components/chart-card";
import { axisProps, axisTitle, gridProps, percentTicks, tooltipProps } from "@/components/chart-theme";
import { formatNumber, formatPercent } from "@/components/format";

export type RatePoint = { day: string; results: number; failures: number; rate: number | null };

const shortDay = (day: string) => {
  const d = new Date(day + "T00:00:00Z");
  return d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
};

/** Daily failures (bars) and failure rate (line) from the daily_tool_stat roll-up. */
export function FailureRateChart({ data, rangeLabel }: { data: RatePoint[]; rangeLabel: string }) {
  const empty = data.every((d) => d.results === 0);
  const chartData = data.map((d) => ({ ...d, label: shortDay(d.day), ratePct: d.rate == null ? null : d.rate * 100 }));
  const ticks = percentTicks(Math.max(0, ...chartData.map((d) => d.ratePct ?? 0)));
  // A line needs two points: with fewer days that have results, draw each as a dot.
  const sparse = chartData.filter((d) => d.ratePct !== null).length < 3;
  return (
    <ChartCard
      title="Failure rate"
      subtitle={`Failed tool results (bars) and share of tool results that failed (line), per UTC day · ${rangeLabel}`}
      empty={empty}
      emptyTitle="No tool results yet"
      emptyDescription="The chart fills in as agents post tool.result events."
      legend={[
        { label: "Failures", color: "var(--chart-5)" },
        { label: "Failure rate", color: "var(--chart-1)" },
      ]}
    >
      <ComposedChart data={chartData} margin={{ top: 8, right: 4, bottom: 12, left: 0 }}>
        <CartesianGrid {...gridProps} />
        <XAxis dataKey="label" {...axisProps} interval="preserveStartEnd" minTickGap={16} label={axisTitle("Day (UTC)", "x")} />
        <YAxis yAxisId="n" {...axisProps} allowDecimals={false} width={52} label={axisTitle("Failures", "y")} />
        <YAxis
          yAxisId="pct"
          orientation="right"
          {...axisProps}
          width={52}
          domain={[0, ticks[ticks.length - 1]]}
          ticks={ticks}
          tickFormatter={(v: number) => `${v}%`}
          label={axisTitle("Failure rate", "y-right")}
        />
        <Tooltip
          {...tooltipProps}
          content={(p) => (
            <ChartTooltip
              {...(p as object)}
              hideZero={false}
              formatValue={(v) => (typeof v === "number" ? formatNumber(Math.round(v * 10) / 10) : "—")}
              formatName={(n) => n}
            />
          )}
        />
        <Bar yAxisId="n" dataKey="failures" name="Failures" fill="var(--chart-5)" radius={[3, 3, 0, 0]} maxBarSize={28} isAnimationActive={false} />
        <Line
          yAxisId="pct"
          dataKey="ratePct"
          name="Failure rate (%)"
          stroke="var(--chart-1)"
          strokeWidth={2}
          dot={sparse ? { r: 3, fill: "var(--chart-1)", strokeWidth: 0 } : false}
          connectNulls
          isAnimationActive={false}
        />
      </ComposedChart>
    </ChartCard>
  );
}
