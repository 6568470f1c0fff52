"use client";

import { useLayoutEffect, useRef, useState, type CSSProperties, type ReactNode } from "react";
import { CopyValueButton } from "./copy-value-button";
import { middleCut, middleEllipsis } from "./middle-ellipsis";

export { middleCut } from "./middle-ellipsis";

let canvas: CanvasRenderingContext2D | null = null;

/** Width of `text` in the font `el` renders with (a canvas measurement: no layout per try). */
function textMeasurer(el: HTMLElement): (text: string) => number {
  canvas ??= document.createElement("canvas").getContext("2d");
  const ctx = canvas;
  if (!ctx) return (t) => t.length * 8;
  const cs = getComputedStyle(el);
  ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
  const spacing = Number.parseFloat(cs.letterSpacing) || 0;
  return (t) => ctx.measureText(t).width + spacing * t.length;
}

/**
 * An identifier that may be long (session ids, agent, model and tool names, failure keys). It
 * shows whole whenever it fits — it is as wide as the whole value when there is room (a table
 * column grows to show it) — and only on a real overflow is its middle replaced by "…", keeping
 * the end that tells similar ids apart (`demo-…-feature-bot-s49`, `http|…|args_hash=9f3c`). It
 * never wraps. The whole value stays the text (screen readers, find-in-page and a selection see
 * it; the shortened text is drawn over it), it shows on hover, and `copy` adds a copy button (not
 * inside links: a button in an <a> is invalid, so row-link cells leave it off). `children` renders
 * the whole value styled (a failure key's parts), drawn while it fits.
 */
export function MiddleTruncate({
  value,
  tail = 16,
  maxWidth,
  copy = false,
  copyLabel,
  mono = false,
  className,
  children,
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
  children?: ReactNode;
}) {
  const cut = middleCut(value, tail);
  const boxRef = useRef<HTMLSpanElement>(null);
  const [shown, setShown] = useState<string | null>(null);

  useLayoutEffect(() => {
    const box = boxRef.current;
    const whole = box?.firstElementChild as HTMLElement | null;
    if (!box || !whole) return;
    let frame = 0;
    const update = () => {
      const room = box.clientWidth;
      const wholeWidth = whole.getBoundingClientRect().width;
      if (wholeWidth <= room + 0.5) {
        setShown(null);
        return;
      }
      const measure = textMeasurer(whole);
      // Canvas and layout can differ slightly (font features): scale to the laid-out width.
      const scale = wholeWidth / Math.max(1, measure(value));
      setShown(middleEllipsis(value, (t) => measure(t) * scale <= room - 0.5, cut));
    };
    update();
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(update);
    });
    // The room (box) and the whole text's own width (it changes when a web font arrives).
    observer.observe(box);
    observer.observe(whole);
    let live = true;
    void document.fonts?.ready.then(() => live && update());
    return () => {
      live = false;
      cancelAnimationFrame(frame);
      observer.disconnect();
    };
  }, [value, cut]);

  const style = {
    "--mid-tail": `${value.length - cut}ch`,
    ...(maxWidth ? { "--mid-max": maxWidth } : {}),
  } as CSSProperties;
  return (
    <span className={["mid-trunc", mono && "mono", className].filter(Boolean).join(" ")} style={style} data-truncated={shown !== null || undefined}>
      <span className="mid-trunc-text" title={value} ref={boxRef}>
        <span className="mid-trunc-whole">{children ?? value}</span>
        {shown !== null && (
          <span className="mid-trunc-shown" aria-hidden="true">
            {shown}
          </span>
        )}
      </span>
      {copy && <CopyValueButton value={value} label={copyLabel} />}
    </span>
  );
}

/**
 * A few identifiers (tool or agent names) one a line, each cut in its middle on a real overflow and
 * never broken inside; "+N more" when there are more than `max` (all of them in the tooltip).
 */
export function NameList({ names, max = 3, mono = false }: { names: string[]; max?: number; mono?: boolean }) {
  return (
    <span className="stack" style={{ gap: 0, minWidth: 0 }} title={names.join("\n")}>
      {names.slice(0, max).map((n) => (
        <MiddleTruncate key={n} value={n} mono={mono} className={mono ? "text-sm" : undefined} />
      ))}
      {names.length > max && <span className="text-xs muted">+{names.length - max} more</span>}
    </span>
  );
}
