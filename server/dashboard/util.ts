/** Small helpers shared by the dashboard queries. */

export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** Parses a positive page number from a search param (default 1). */
export function pageParam(v: string | string[] | undefined, fallback = 1): number {
  const s = Array.isArray(v) ? v[0] : v;
  const n = Number.parseInt(s ?? "", 10);
  return Number.isFinite(n) && n >= 1 && n <= 1_000_000 ? n : fallback;
}

export function stringParam(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  const t = s?.trim();
  return t ? t.slice(0, 200) : undefined;
}

/** Escapes LIKE wildcards so user text matches literally. */
export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => "\\" + c);
}

export type SearchParams = Record<string, string | string[] | undefined>;
