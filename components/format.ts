/**
 * Pure formatting helpers (server- and client-safe, deterministic: fixed "en-US" locale).
 * Safe to import from Server Components.
 */

const nf = new Intl.NumberFormat("en-US");
const nfCompact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

export function formatNumber(n: number | null | undefined): string {
  if (n == null || Number.isNaN(n)) return "—";
  return nf.format(n);
}

/** 1 → "1 attempt", 1200 → "1,200 attempts" (nouns with a plain plural "s"). */
export function formatCount(n: number, noun: string): string {
  return `${nf.format(n)} ${noun}${n === 1 ? "" : "s"}`;
}

export function formatCompact(n: number | null | undefined): string {
  if (n == null || Number.isNaN(n)) return "—";
  return Math.abs(n) < 10_000 ? nf.format(n) : nfCompact.format(n);
}

/** 0.873 → "87.3%"; digits defaults to 1 (0 when the value is a whole percent). */
export function formatPercent(ratio: number | null | undefined, digits?: number): string {
  if (ratio == null || Number.isNaN(ratio)) return "—";
  const pct = ratio * 100;
  const d = digits ?? (Number.isInteger(Math.round(pct * 10) / 10) ? 0 : 1);
  return `${pct.toFixed(d)}%`;
}

export function toDate(d: Date | string | number): Date {
  return d instanceof Date ? d : new Date(d);
}

/** Compact duration: 42s, 5m, 1h 20m, 3d 4h. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  const rm = m % 60;
  if (h < 24) return rm ? `${h}h ${rm}m` : `${h}h`;
  const d = Math.floor(h / 24);
  const rh = h % 24;
  return rh ? `${d}d ${rh}h` : `${d}d`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const pad = (n: number) => String(n).padStart(2, "0");

/** "3m ago", "in 5m", "just now", "2d ago"; older than 30 days → short date. */
export function formatRelative(date: Date | string | number, now: Date | number = Date.now()): string {
  const t = toDate(date).getTime();
  const n = typeof now === "number" ? now : now.getTime();
  if (Number.isNaN(t)) return "—";
  const diff = n - t;
  const abs = Math.abs(diff);
  if (abs < 45_000) return "just now";
  let out: string;
  if (abs < 3_600_000) out = `${Math.round(abs / 60_000)}m`;
  else if (abs < 86_400_000) out = `${Math.round(abs / 3_600_000)}h`;
  else if (abs < 30 * 86_400_000) out = `${Math.round(abs / 86_400_000)}d`;
  else return formatDateUTC(t);
  return diff >= 0 ? `${out} ago` : `in ${out}`;
}

/** Deterministic absolute time in UTC: "Nov 22, 2025, 12:01:05 UTC" (identical on server and client). */
export function formatAbsoluteUTC(date: Date | string | number): string {
  const d = toDate(date);
  if (Number.isNaN(d.getTime())) return "—";
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())} UTC`;
}

/** "Nov 22" or "Nov 22, 2024" (UTC). */
export function formatDateUTC(date: Date | string | number): string {
  const d = toDate(date);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}${
    d.getUTCFullYear() !== new Date().getUTCFullYear() ? `, ${d.getUTCFullYear()}` : ""
  }`;
}

/** Local-time absolute string for the browser (use after mount only). */
export function formatAbsoluteLocal(date: Date | string | number): string {
  return toDate(date).toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
  });
}

/** snake_case / kebab → "Sentence case". */
export function humanize(s: string): string {
  const t = s.replace(/[_-]+/g, " ").trim();
  return t.charAt(0).toUpperCase() + t.slice(1);
}
