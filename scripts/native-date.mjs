/**
 * Next replaces the global `Date` with a wrapper (next/dist/server/node-environment-extensions/
 * date.js) that tells a prerender under `cacheComponents` when rendering code reads the clock.
 * Every `new Date(x)` then goes through `Reflect.construct`: ~660 ns instead of ~45 ns on this
 * machine. The agent path builds several Dates per event (the rows it writes, each timestamp
 * postgres-js parses), which made the wrapper a few per cent of ingest's and guard.check's CPU.
 * Vigil does not enable `cacheComponents`, the only reader of that report, so the server puts the
 * native Date back once Next has loaded. (Dates made by either are the same objects: the wrapper
 * shares the native prototype, so `instanceof Date` holds across the swap.)
 */

/** The global Date as it is now: call before Next is loaded. */
export function captureNativeDate() {
  return globalThis.Date;
}

/**
 * Puts `nativeDate` back as the global Date, unless the app enables `cacheComponents`.
 * Returns whether it did.
 */
export function restoreNativeDate(nativeDate, nextConfig = {}) {
  if (nextConfig.cacheComponents || nextConfig.experimental?.cacheComponents) return false;
  if (globalThis.Date === nativeDate) return false;
  globalThis.Date = nativeDate;
  Object.defineProperty(nativeDate.prototype, "constructor", { value: nativeDate, writable: true, enumerable: false, configurable: true });
  return true;
}
