"use client";

import { Bar, CartesianGrid, ComposedChart, Line, Tooltip, XAxis, YAxis } from "recharts";
import { ChartCard, ChartTooltip } from "@/components/chart-card";
import { axisProps, gridProps, tooltipProps } from "@/components/chart-theme";
import { formatNumber, formatPercent } from "@/components/format";

export type RatePoint = { day: string; results: number; failures: number; rate: number | null };

const shortDay = (day: string) => {
  const d = new Date(day + "T00:00:00Z");
  return d.toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
};

/** Daily failures (bars) and failure rate (line) from the daily_tool_stat roll-up. */
export function FailureRateChart({ data, days }: { data: RatePoint[]; days: number }) {
  const empty = data.every((d) => d.results === 0);
  const chartData = data.map((d) => ({ ...d, label: shortDay(d.day), ratePct: d.rate == null ? null : d.rate * 100 }));
  return (
    <ChartCard
      title="Failure rate"
      subtitle={`Tool results per day (UTC), last ${days} days`}
      empty={empty}
      emptyTitle="No tool results yet"
      emptyDescription="The chart fills in as agents post tool.result events."
      legend={[
        { label: "Failures", color: "var(--chart-5)" },
        { label: "Failure rate", color: "var(--chart-1)" },
      ]}
    >
      <ComposedChart data={chartData} margin={{ top: 8, right: 4, bottom: 0, left: -12 }}>
        <CartesianGrid {...gridProps} />
        <XAxis dataKey="label" {...axisProps} interval="preserveStartEnd" minTickGap={16} />
        <YAxis yAxisId="n" {...axisProps} allowDecimals={false} width={44} />
        <YAxis yAxisId="pct" orientation="right" {...axisProps} width={40} domain={[0, (max: number) => Math.min(100, Math.max(10, Math.ceil(max / 10) * 10))]} tickFormatter={(v: number) => `${v}%`} />
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
          dot={false}
          connectNulls
          isAnimationActive={false}
        />
      </ComposedChart>
    </ChartCard>
  );
}

export { formatPercent };
