/**
 * The time range a person picked, carried from page to page: the range picker stores the window
 * it shows in a cookie, and a page whose URL names no window opens on that one. An explicit
 * `?range=` (or `?from=`/`?to=`) in the URL always wins. Server-only (reads the request's cookies).
 */
import { cookies } from "next/headers";
import type { TimeWindow } from "@/server/dashboard/time-range";
import type { SearchParams } from "@/server/dashboard/util";
import { RANGE_COOKIE, resolvePageWindow } from "./range-cookie";

/** The page's window: see `resolvePageWindow`, with the remembered pick read from the request's cookie. */
export async function pageTimeWindow(sp: SearchParams, now = new Date()): Promise<{ sp: SearchParams; window: TimeWindow }> {
  const inUrl = ["range", "from", "to"].some((k) => sp[k] != null && sp[k] !== "");
  return resolvePageWindow(sp, inUrl ? undefined : (await cookies()).get(RANGE_COOKIE)?.value, now);
}
