/**
 * The time range a person picked, carried from page to page: the range picker stores the window
 * it shows in a cookie, and a page whose URL names no window opens on that one. An explicit
 * `?range=` (or `?from=`/`?to=`) in the URL always wins. Server-only (reads the request's cookies).
 */
import { cookies } from "next/headers";
import { DEFAULT_RANGE, readTimeWindow, type TimeWindow } from "@/server/dashboard/time-range";
import type { SearchParams } from "@/server/dashboard/util";
import { RANGE_COOKIE, rangeCookieParams } from "./range-cookie";

/**
 * The page's search params with its window made explicit (from the URL, else the remembered pick,
 * else the dashboard's default), and that window. Links, filter forms and exports built from the
 * returned params all carry the window the page shows.
 */
export async function pageTimeWindow(sp: SearchParams, now = new Date()): Promise<{ sp: SearchParams; window: TimeWindow }> {
  const inUrl = ["range", "from", "to"].some((k) => sp[k] != null && sp[k] !== "");
  let windowParams: SearchParams = { range: DEFAULT_RANGE };
  if (inUrl) windowParams = {};
  else {
    const remembered = rangeCookieParams((await cookies()).get(RANGE_COOKIE)?.value);
    if (remembered) windowParams = remembered;
  }
  const merged: SearchParams = { ...sp, ...windowParams };
  const window = readTimeWindow(merged, DEFAULT_RANGE, now);
  // Keep exactly the window that was read (an unknown ?range= reads as the default).
  const { range: _r, from: _f, to: _t, ...rest } = merged;
  const explicit: SearchParams = window.range === "custom" ? { ...(window.fromDay ? { from: window.fromDay } : {}), ...(window.toDay ? { to: window.toDay } : {}) } : { range: window.range };
  return { sp: { ...rest, ...explicit }, window };
}
