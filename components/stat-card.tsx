import Link from "next/link";
import type { ReactNode } from "react";
import type { TrustState } from "./state-badge";
import { Icon } from "./icons";

/**
 * Overview tile: label, big number, optional delta and hint.
 * `delta.good` decides the colour (a rising failure count is bad: pass good={false}).
 */
export function StatCard({
  label,
  value,
  unit,
  hint,
  delta,
  state,
  href,
}: {
  label: ReactNode;
  value: ReactNode;
  unit?: ReactNode;
  hint?: ReactNode;
  delta?: { value: ReactNode; direction: "up" | "down" | "flat"; good?: boolean };
  /** Adds a state-coloured dot before the label (e.g. count of blocked keys). */
  state?: TrustState;
  href?: string;
}) {
  const body = (
    <>
      <div className="stat-label">
        {state && <span className="stat-dot" data-state={state} aria-hidden="true" />}
        {label}
      </div>
      <div className="stat-value">
        {value}
        {unit && <span className="stat-unit">{unit}</span>}
      </div>
      <div className="stat-foot">
        {delta && (
          <span
            className="delta"
            data-tone={delta.direction === "flat" || delta.good === undefined ? "neutral" : delta.good ? "good" : "bad"}
          >
            {delta.direction !== "flat" && <Icon name={delta.direction === "up" ? "arrowUp" : "arrowDown"} size={12} strokeWidth={2} />}
            {delta.value}
          </span>
        )}
        {hint && <span className="stat-hint">{hint}</span>}
      </div>
    </>
  );
  if (href) {
    return (
      <Link href={href} className="card stat" prefetch={false}>
        {body}
      </Link>
    );
  }
  return <div className="card stat">{body}</div>;
}
