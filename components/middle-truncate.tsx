import type { CSSProperties } from "react";
import { CopyValueButton } from "./copy-value-button";

/**
 * Where the kept end starts: up to `tail` characters, about the last 60 % of a short value
 * ("claude-sonnet-4.5" keeps "-sonnet-4.5"), starting at a separator when one is near so the end
 * reads as whole words ("…-refactor-bot-1", not "…9-refactor-bot-1"). value.length: nothing cut.
 */
export function middleCut(value: string, tail = 16): number {
  const tailLength = Math.min(tail, Math.ceil(value.length * 0.6));
  if (value.length <= tailLength + 2) return value.length;
  const cut = value.length - tailLength;
  const separator = value.slice(cut, cut + 6).search(/[-_/:|@]/);
  return separator > 0 && tailLength - separator >= 10 ? cut + separator : cut;
}

/**
 * An id or name that may be long (session ids, agent and model names): when it does not fit, the
 * middle is elided and the end stays visible, since the end is what tells similar ids apart
 * (`demo-…-feature-bot-s49`, `clau…-sonnet-4.5`). It is as wide as the whole value when there is
 * room (a table column grows to show it) and shrinks down to its kept end when there is not. The
 * text content is the whole value (screen readers and find-in-page see it), the full value shows
 * on hover, and `copy` adds a copy button (not inside links: a button in an <a> is invalid, so
 * row-link cells leave it off).
 */
export function MiddleTruncate({
  value,
  tail = 16,
  maxWidth,
  copy = false,
  copyLabel,
  mono = false,
  className,
}: {
  value: string;
  /** Characters kept at the end at most; short values keep about their last 60 %. */
  tail?: number;
  /** CSS width limit (default: the container). */
  maxWidth?: string;
  copy?: boolean;
  copyLabel?: string;
  mono?: boolean;
  className?: string;
}) {
  const cut = middleCut(value, tail);
  const style = {
    "--mid-head": `${cut}ch`,
    "--mid-tail": `${value.length - cut}ch`,
    ...(maxWidth ? { "--mid-max": maxWidth } : {}),
  } as CSSProperties;
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
