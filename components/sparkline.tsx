/** A small inline bar sparkline (plain SVG, rendered on the server): one bar per point, scaled to the largest. */
export function Sparkline({ values, label, width = 96, height = 22 }: { values: readonly number[]; label: string; width?: number; height?: number }) {
  const max = Math.max(1, ...values);
  const n = Math.max(1, values.length);
  const slot = width / n;
  const bar = Math.max(1, slot - (slot > 3 ? 1 : 0));
  const total = values.reduce((a, b) => a + b, 0);
  return (
    <svg className="sparkline" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${label}: ${total} over ${values.length} points, peak ${max}`}>
      <line x1={0} x2={width} y1={height - 0.5} y2={height - 0.5} stroke="var(--border)" strokeWidth={1} />
      {values.map((v, i) =>
        v > 0 ? <rect key={i} x={i * slot} y={height - 1 - Math.max(2, (v / max) * (height - 2))} width={bar} height={Math.max(2, (v / max) * (height - 2))} rx={0.5} fill="var(--chart-1)" /> : null,
      )}
    </svg>
  );
}
