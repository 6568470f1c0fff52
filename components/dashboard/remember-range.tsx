"use client";

import { useEffect } from "react";
import { RANGE_COOKIE } from "./range-cookie";

/** Stores the window the page shows, so the next page without a window in its URL opens on it. */
export function RememberRange({ value }: { value: string }) {
  useEffect(() => {
    document.cookie = `${RANGE_COOKIE}=${encodeURIComponent(value)}; path=/; max-age=31536000; samesite=lax`;
  }, [value]);
  return null;
}
