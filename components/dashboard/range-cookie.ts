/** The cookie that remembers the picked time range; shared by the page reader and the picker. */
import { DEFAULT_RANGE, readTimeWindow, type TimeWindow } from "@/server/dashboard/time-range";
import type { SearchParams } from "@/server/dashboard/util";

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

/**
 * The page's search params with its window made explicit — from the URL, else the remembered pick
 * (`remembered`, the cookie's value), else the dashboard's default — and that window. Links, filter
 * forms and exports built from the returned params all carry the window the page shows.
 */
export function resolvePageWindow(sp: SearchParams, remembered: string | undefined, now = new Date()): { sp: SearchParams; window: TimeWindow } {
  const inUrl = ["range", "from", "to"].some((k) => sp[k] != null && sp[k] !== "");
  const windowParams: SearchParams = inUrl ? {} : (rangeCookieParams(remembered) ?? { range: DEFAULT_RANGE });
  const merged: SearchParams = { ...sp, ...windowParams };
  const window = readTimeWindow(merged, DEFAULT_RANGE, now);
  // Keep exactly the window that was read (an unknown ?range= reads as the default).
  const { range: _range, from: _from, to: _to, ...rest } = merged;
  const explicit: SearchParams =
    window.range === "custom" ? { ...(window.fromDay ? { from: window.fromDay } : {}), ...(window.toDay ? { to: window.toDay } : {}) } : { range: window.range };
  return { sp: { ...rest, ...explicit }, window };
}
