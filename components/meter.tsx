import { formatDecimal } from "./format";
import type { TrustState } from "./state-badge";

/** A state's colour; "muted" is a quiet bar for a figure that is shown but not an alarm. */
export type MeterTone = TrustState | "neutral" | "accent" | "muted";

/**
 * Small horizontal progress bar with a numeric label, e.g. effective failures vs threshold
 * ("2.5 / 3") or recovery progress ("1 / 3 successes").
 */
export function Meter({
  value,
  max,
  tone = "neutral",
  label,
  ariaLabel,
}: {
  value: number;
  max: number;
  tone?: MeterTone;
  /** Text next to the bar; defaults to "value / max". Pass null to hide. */
  label?: React.ReactNode | null;
  ariaLabel?: string;
}) {
  const pct = max > 0 ? Math.max(0, Math.min(1, value / max)) * 100 : 0;
  return (
    <span className="meter" data-tone={tone}>
      <span
        className="meter-track"
        role="meter"
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={value}
        aria-label={ariaLabel}
      >
        <span className="meter-fill" style={{ width: `${pct}%` }} />
      </span>
      {label !== null && <span className="meter-label">{label ?? `${formatDecimal(value)} / ${formatDecimal(max)}`}</span>}
    </span>
  );
}
