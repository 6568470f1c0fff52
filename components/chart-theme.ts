/**
 * Chart colours and recharts prop presets. Plain module (no "use client"), so values can be
 * imported anywhere. Colours are CSS variables, so charts follow the light/dark theme.
 */

const CHART_COLORS = [
  "var(--chart-1)",
  "var(--chart-2)",
  "var(--chart-3)",
  "var(--chart-4)",
  "var(--chart-5)",
  "var(--chart-6)",
  "var(--chart-7)",
  "var(--chart-8)",
] as const;

/** Stable colour per behavioural pattern type. */
export const PATTERN_COLORS: Record<string, string> = {
  repetitive_calls: "var(--chart-1)",
  introspection_loop: "var(--chart-2)",
  read_only_loop: "var(--chart-3)",
  announce_no_action: "var(--chart-4)",
  error_retry_loop: "var(--chart-5)",
  planning_loop: "var(--chart-6)",
  alternating_calls: "var(--chart-7)",
  tool_avoidance: "var(--chart-8)",
  empty_response: "var(--chart-9)",
};

export const PATTERN_SEVERITY_COLORS = {
  minor: "var(--minor-dot)",
  moderate: "var(--moderate-dot)",
  severe: "var(--severe-dot)",
} as const;

/** Colour for the i-th series (models, arbitrary categories). */
export function seriesColor(i: number): string {
  return CHART_COLORS[((i % CHART_COLORS.length) + CHART_COLORS.length) % CHART_COLORS.length];
}

/** Spread onto <XAxis {...axisProps}> / <YAxis {...axisProps}>. */
export const axisProps = {
  stroke: "var(--chart-axis)",
  tick: { fill: "var(--chart-axis)", fontSize: 11 },
  tickLine: false,
  axisLine: false,
  tickMargin: 6,
} as const;

/** Spread onto <CartesianGrid {...gridProps}>. */
export const gridProps = {
  stroke: "var(--chart-grid)",
  vertical: false,
} as const;

/** Spread onto <Tooltip {...tooltipProps} content={ChartTooltip}> for the cursor style. */
export const tooltipProps = {
  cursor: { fill: "var(--surface-hover)" },
  isAnimationActive: false,
} as const;

/**
 * Even percentage ticks from 0 to a round top that holds `maxPct` (0–100): steps of 5, 10, 20 or 25,
 * never more than six ticks, so the axis reads 0 % 20 % 40 %… rather than recharts' uneven picks.
 */
export function percentTicks(maxPct: number): number[] {
  const top = Math.min(100, Math.max(10, maxPct));
  const step = [2, 5, 10, 20, 25].find((s) => Math.ceil(top / s) <= 5) ?? 25;
  const end = Math.min(100, Math.ceil(top / step) * step);
  const out: number[] = [];
  for (let v = 0; v <= end; v += step) out.push(v);
  return out;
}

/** An axis title (recharts `label` prop) in the axis colour. */
export function axisTitle(value: string, axis: "x" | "y" | "y-right") {
  const base = { value, fill: "var(--chart-axis)", fontSize: 11 };
  if (axis === "x") return { ...base, position: "insideBottom" as const, offset: -2 };
  return { ...base, angle: axis === "y" ? -90 : 90, position: axis === "y" ? ("insideLeft" as const) : ("insideRight" as const), style: { textAnchor: "middle" as const } };
}

/**
 * A category-axis label that fits its 132 px column: SVG text does not clip, so a long model or
 * agent name would run out of the card. The middle is elided (the end tells similar names
 * apart, as MiddleTruncate does); the tooltip shows the whole name.
 */
export function categoryTick(value: unknown, max = 20): string {
  const s = String(value);
  if (s.length <= max) return s;
  const tail = Math.floor((max - 1) / 2);
  return `${s.slice(0, max - 1 - tail)}…${s.slice(-tail)}`;
}
