"use client";

import type { ReactNode } from "react";
import { ResponsiveContainer } from "recharts";
import { EmptyState } from "./empty-state";
import { formatNumber } from "./format";

/**
 * Card wrapping a recharts chart. Children: one recharts chart element (BarChart, LineChart, …);
 * the card provides the responsive size. Use `axisProps`, `gridProps`, `tooltipProps`,
 * `PATTERN_COLORS` from "./chart-theme" and `ChartTooltip` below for a consistent look.
 *
 * <ChartCard title="Pattern detections" subtitle="Per day, last 14 days" empty={data.length === 0}
 *   legend={types.map((t) => ({ label: t, color: PATTERN_COLORS[t] }))}>
 *   <BarChart data={data}>...</BarChart>
 * </ChartCard>
 */
export function ChartCard({
  title,
  subtitle,
  actions,
  height = 240,
  empty = false,
  emptyTitle = "No data yet",
  emptyDescription,
  legend,
  footer,
  children,
}: {
  title: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
  height?: number;
  empty?: boolean;
  emptyTitle?: ReactNode;
  emptyDescription?: ReactNode;
  /** HTML legend under the chart (preferred over recharts <Legend>). */
  legend?: { label: ReactNode; color: string }[];
  footer?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section className="card chart-card">
      <div className="card-head">
        <div style={{ minWidth: 0 }}>
          <h2 className="card-title">{title}</h2>
          {subtitle && <p className="card-subtitle">{subtitle}</p>}
        </div>
        {actions && <div className="card-actions">{actions}</div>}
      </div>
      {empty ? (
        <div style={{ height, display: "grid", placeItems: "center" }}>
          <EmptyState compact icon="patterns" title={emptyTitle} description={emptyDescription} />
        </div>
      ) : (
        <>
          <div className="chart-body" style={{ height: height + 24 }}>
            <ResponsiveContainer width="100%" height={height} initialDimension={{ width: 520, height }}>
              {children}
            </ResponsiveContainer>
          </div>
          {legend && legend.length > 0 && (
            <ul className="chart-legend">
              {legend.map((l, i) => (
                <li key={i}>
                  <span className="chart-swatch" style={{ background: l.color }} />
                  {l.label}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      {footer}
    </section>
  );
}

type TooltipEntry = { name?: ReactNode; value?: unknown; color?: string; fill?: string; dataKey?: unknown };

/**
 * Tooltip content for recharts: <Tooltip content={<ChartTooltip />} /> or
 * <Tooltip content={(p) => <ChartTooltip {...p} formatValue={formatPercent} />} />.
 * Hides zero-value rows and shows a total for stacked series when `total` is set.
 */
export function ChartTooltip({
  active,
  payload,
  label,
  formatValue = (v) => (typeof v === "number" ? formatNumber(v) : String(v ?? "")),
  formatLabel,
  formatName,
  total = false,
  hideZero = true,
}: {
  active?: boolean;
  payload?: readonly TooltipEntry[];
  label?: ReactNode;
  formatValue?: (v: unknown) => ReactNode;
  formatLabel?: (label: ReactNode) => ReactNode;
  formatName?: (name: ReactNode) => ReactNode;
  total?: boolean;
  hideZero?: boolean;
}) {
  if (!active || !payload || payload.length === 0) return null;
  const rows = payload.filter((p) => !hideZero || (p.value !== 0 && p.value != null));
  const sum = payload.reduce((acc, p) => acc + (typeof p.value === "number" ? p.value : 0), 0);
  return (
    <div className="chart-tooltip">
      {label !== undefined && <div className="chart-tooltip-title">{formatLabel ? formatLabel(label) : label}</div>}
      {rows
        .slice()
        .reverse()
        .map((p, i) => (
          <div className="chart-tooltip-row" key={i}>
            <span className="chart-swatch" style={{ background: p.color ?? p.fill }} />
            <span className="muted">{formatName ? formatName(p.name) : p.name}</span>
            <span>{formatValue(p.value)}</span>
          </div>
        ))}
      {total && rows.length > 1 && (
        <div className="chart-tooltip-row" style={{ borderTop: "1px solid var(--border)", marginTop: 4, paddingTop: 2 }}>
          <span className="muted">Total</span>
          <span>{formatValue(sum)}</span>
        </div>
      )}
    </div>
  );
}
