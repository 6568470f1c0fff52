"use client";

import { useEffect, useState } from "react";
import { formatAbsoluteLocal, formatAbsoluteUTC, formatRelative, toDate } from "./format";

/**
 * "3m ago" with the absolute time in `title`. Hydration-safe:
 * - with a `now` prop (e.g. the server's request time) it renders relative text immediately;
 * - without it, the server renders a deterministic UTC time and switches to relative after mount.
 * Re-renders every 30 s while mounted.
 */
export function RelativeTime({
  date,
  now,
  live = true,
}: {
  date: Date | string | number;
  now?: Date | string | number;
  /** Keep updating while mounted (default true). */
  live?: boolean;
}) {
  const d = toDate(date);
  const [clientNow, setClientNow] = useState<number | null>(null);

  useEffect(() => {
    setClientNow(Date.now());
    if (!live) return;
    const h = window.setInterval(() => setClientNow(Date.now()), 30_000);
    return () => window.clearInterval(h);
  }, [live]);

  if (Number.isNaN(d.getTime())) return <span className="subtle">—</span>;
  const ref = clientNow ?? (now !== undefined ? toDate(now).getTime() : null);
  const text = ref === null ? formatAbsoluteUTC(d) : formatRelative(d, ref);
  const title = clientNow === null ? formatAbsoluteUTC(d) : formatAbsoluteLocal(d);
  return (
    <time dateTime={d.toISOString()} title={title} className="nowrap">
      {text}
    </time>
  );
}
