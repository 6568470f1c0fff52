/**
 * Pure formatting helpers (server- and client-safe, deterministic: fixed "en-US" locale).
 * Safe to import from Server Components.
 */

const nf = new Intl.NumberFormat("en-US");

export function formatNumber(n: number | null | undefined): string {
  if (n == null || Number.isNaN(n)) return "—";
  return nf.format(n);
}

/** 1 → "1 attempt", 1200 → "1,200 attempts" (nouns with a plain plural "s"). */
export function formatCount(n: number, noun: string): string {
  return `${nf.format(n)} ${noun}${n === 1 ? "" : "s"}`;
}

const nfOneDecimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

/**
 * A measured amount such as effective (weighted, decayed) failures: whole numbers without
 * decimals, fractions with one — 1 → "1", 1.5 → "1.5", 2.0000001 → "2", 1,234.56 → "1,234.6".
 */
export function formatDecimal(n: number | null | undefined): string {
  if (n == null || Number.isNaN(n)) return "—";
  const rounded = Math.round(n * 10) / 10;
  return nfOneDecimal.format(rounded === 0 ? 0 : rounded);
}

/**
 * A ratio as a percentage with a fixed number of decimals (default 1), the same on every page:
 * 0.873 → "87.3%", 0.81 → "81.0%". Exactly 0 and 1 read "0%" and "100%"; a ratio that only
 * rounds to them says so ("<0.1%", ">99.9%"), so one failure in 5,000 calls never reads 100%.
 */
export function formatPercent(ratio: number | null | undefined, digits = 1): string {
  if (ratio == null || Number.isNaN(ratio)) return "—";
  if (ratio === 0 || ratio === 1) return `${ratio * 100}%`;
  const pct = ratio * 100;
  const step = 10 ** -digits;
  if (pct > 0 && pct < step / 2) return `<${step.toFixed(digits)}%`;
  if (pct < 100 && pct >= 100 - step / 2) return `>${(100 - step).toFixed(digits)}%`;
  return `${pct.toFixed(digits)}%`;
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
function formatDateUTC(date: Date | string | number): string {
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
