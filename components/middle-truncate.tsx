import type { CSSProperties } from "react";
import { CopyValueButton } from "./copy-value-button";

/**
 * An id or name that may be long (session ids, agent and model names): when it does not fit, the
 * middle is elided and the end stays visible, since the end is what tells similar ids apart
 * (`session-…-7f3a`). The text content is the whole value (screen readers and find-in-page see it),
 * the full value shows on hover, and `copy` adds a copy button (not inside links: a button in an
 * <a> is invalid, so row-link cells leave it off).
 */
export function MiddleTruncate({
  value,
  tail = 10,
  maxWidth,
  copy = false,
  copyLabel,
  mono = false,
  className,
}: {
  value: string;
  /** Characters always kept at the end. */
  tail?: number;
  /** CSS width limit (default: the container; 28ch inside tables). */
  maxWidth?: string;
  copy?: boolean;
  copyLabel?: string;
  mono?: boolean;
  className?: string;
}) {
  const cut = value.length > tail * 2 ? value.length - tail : value.length;
  const style = maxWidth ? ({ "--mid-max": maxWidth } as CSSProperties) : undefined;
  return (
    <span className={["mid-trunc", mono && "mono", className].filter(Boolean).join(" ")} style={style}>
      <span className="mid-trunc-text" title={value}>
        <span className="mid-trunc-head">{value.slice(0, cut)}</span>
        {cut < value.length && <span className="mid-trunc-tail">{value.slice(cut)}</span>}
      </span>
      {copy && <CopyValueButton value={value} label={copyLabel} />}
    </span>
  );
}
