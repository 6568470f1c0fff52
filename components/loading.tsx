import type { CSSProperties } from "react";

/*
 * Loading indicators for Suspense fallbacks and `loading.tsx` route files.
 * Server-safe (no hooks).
 */

function Spinner({ size = "md", label = "Loading" }: { size?: "md" | "lg"; label?: string }) {
  return <span className={size === "lg" ? "spinner spinner-lg" : "spinner"} role="status" aria-label={label} />;
}

function Skeleton({ width = "100%", height = 12, style }: { width?: number | string; height?: number; style?: CSSProperties }) {
  return <span className="skeleton" aria-hidden="true" style={{ width, height, ...style }} />;
}

/** Spinner + text, centered; for a card or section that is loading. */
export function LoadingBlock({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="loading-block" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

const WIDTHS = ["72%", "48%", "60%", "36%", "54%", "66%", "42%"];

/** Placeholder table with the same chrome as DataTable. */
function SkeletonTable({ rows = 8, columns = 5 }: { rows?: number; columns?: number }) {
  return (
    <div className="table-wrap" role="status" aria-label="Loading table">
      <div className="table-scroll">
        <table className="table">
          <thead>
            <tr>
              {Array.from({ length: columns }, (_, c) => (
                <th key={c}>
                  <Skeleton width={c === 0 ? 96 : 56} height={10} />
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {Array.from({ length: rows }, (_, r) => (
              <tr key={r}>
                {Array.from({ length: columns }, (_, c) => (
                  <td key={c}>
                    <Skeleton width={c === 0 ? WIDTHS[r % WIDTHS.length] : WIDTHS[(r + c) % WIDTHS.length]} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** Placeholder stat tiles. */
function SkeletonStats({ count = 4 }: { count?: number }) {
  return (
    <div className="grid-stats" aria-hidden="true">
      {Array.from({ length: count }, (_, i) => (
        <div key={i} className="card stat">
          <Skeleton width={80} height={10} />
          <Skeleton width={64} height={26} style={{ marginTop: 8 }} />
          <Skeleton width={110} height={10} style={{ marginTop: 8 }} />
        </div>
      ))}
    </div>
  );
}

/** Full-page fallback for `app/**\/loading.tsx`: header + stats + table skeleton. */
export function PageLoading({ stats = false, rows = 10 }: { stats?: boolean; rows?: number }) {
  return (
    <div className="stack stack-lg" role="status" aria-label="Loading page">
      <div className="stack stack-sm">
        <Skeleton width={180} height={22} />
        <Skeleton width={320} height={12} />
      </div>
      {stats && <SkeletonStats />}
      <SkeletonTable rows={rows} />
    </div>
  );
}
