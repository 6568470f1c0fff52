/** The cookie that remembers the picked time range; shared by the page reader and the picker. */
import type { TimeWindow } from "@/server/dashboard/time-range";

export const RANGE_COOKIE = "vigil_range";

/** The window as the cookie stores it: `range=30d`, or `from=yyyy-mm-dd&to=yyyy-mm-dd`. */
export function rangeCookieValue(w: TimeWindow): string {
  const q = new URLSearchParams();
  if (w.range !== "custom") q.set("range", w.range);
  else {
    if (w.fromDay) q.set("from", w.fromDay);
    if (w.toDay) q.set("to", w.toDay);
  }
  return q.toString();
}

/** The cookie's window params, or null when it holds nothing usable (readTimeWindow validates values). */
export function rangeCookieParams(value: string | undefined): Record<string, string> | null {
  if (!value) return null;
  let q: URLSearchParams;
  try {
    q = new URLSearchParams(decodeURIComponent(value));
  } catch {
    return null;
  }
  const out: Record<string, string> = {};
  for (const k of ["range", "from", "to"]) {
    const v = q.get(k);
    if (v && v.length <= 20) out[k] = v;
  }
  return Object.keys(out).length ? out : null;
}
