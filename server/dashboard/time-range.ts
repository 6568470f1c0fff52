/**
 * The dashboard's one notion of a time window, read from the URL: `?range=24h|7d|14d|30d|90d|all`
 * or a custom UTC day range `?from=yyyy-mm-dd&to=yyyy-mm-dd` (both ends inclusive). Every page that
 * shows history reads it here and passes `from`/`to` to its queries, so the charts and counts on a
 * page cover the same window.
 */
import type { SearchParams } from "./util";

const HOUR = 3_600_000;
const DAY = 86_400_000;

export const RANGE_PRESETS = [
  { id: "1h", label: "1 h", ms: HOUR },
  { id: "24h", label: "24 h", ms: DAY },
  { id: "7d", label: "7 d", ms: 7 * DAY },
  { id: "14d", label: "14 d", ms: 14 * DAY },
  { id: "30d", label: "30 d", ms: 30 * DAY },
  { id: "90d", label: "90 d", ms: 90 * DAY },
  { id: "all", label: "All", ms: null },
] as const;

export type RangePreset = (typeof RANGE_PRESETS)[number]["id"];

/** The window every dashboard page opens on until a person picks another (the pick is then remembered). */
export const DEFAULT_RANGE: RangePreset = "7d";

export interface TimeWindow {
  range: RangePreset | "custom";
  /** Inclusive lower bound; absent for "all" (and a custom range without a start). */
  from?: Date;
  /** Exclusive upper bound; absent when the window runs to now. */
  to?: Date;
  /** The custom range's days as typed (yyyy-mm-dd), to refill the date inputs. */
  fromDay?: string;
  toDay?: string;
  /** "last 7 days", "2026-11-01 – 2026-11-05", "all time": for subtitles. */
  label: string;
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/** yyyy-mm-dd (UTC) → that day's start; with `nextDay` the following day's start (an exclusive end). */
export function dayStart(day: string | undefined, nextDay = false): Date | undefined {
  if (!day || !DAY_RE.test(day)) return undefined;
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== day) return undefined;
  return nextDay ? new Date(d.getTime() + DAY) : d;
}

function presetLabel(id: RangePreset): string {
  switch (id) {
    case "1h":
      return "last hour";
    case "24h":
      return "last 24 hours";
    case "all":
      return "all time";
    default:
      return `last ${id.slice(0, -1)} days`;
  }
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() || undefined;

/** Reads the window from search params; a missing or unknown `range` falls back to the page's default. */
export function readTimeWindow(sp: SearchParams, defaultRange: RangePreset, now = new Date()): TimeWindow {
  const fromDay = first(sp.from);
  const toDay = first(sp.to);
  let from = dayStart(fromDay);
  let to = dayStart(toDay, true);
  if (from && to && from >= to) [from, to] = [dayStart(toDay), dayStart(fromDay, true)];
  if (from || to) {
    const a = from ? from.toISOString().slice(0, 10) : "the start";
    const b = to ? new Date(to.getTime() - DAY).toISOString().slice(0, 10) : "now";
    return { range: "custom", from, to, fromDay: from ? fromDay : undefined, toDay: to ? toDay : undefined, label: a === b ? a : `${a} – ${b}` };
  }
  const id = first(sp.range);
  const preset = RANGE_PRESETS.find((p) => p.id === id) ?? RANGE_PRESETS.find((p) => p.id === defaultRange)!;
  return { range: preset.id, from: preset.ms === null ? undefined : new Date(now.getTime() - preset.ms), label: presetLabel(preset.id) };
}

/**
 * The UTC days a daily chart of the window shows, oldest first: from the window's first day (or
 * `earliest`, the first day with data, for an open start) to its last, at most `maxDays`.
 */
export function windowDays(w: TimeWindow, now: Date, opts: { earliest?: string | null; fallbackDays?: number; maxDays?: number } = {}): string[] {
  const maxDays = opts.maxDays ?? 366;
  const endMs = w.to ? w.to.getTime() - 1 : now.getTime();
  const endDay = Math.floor(endMs / DAY) * DAY;
  let startDay: number;
  if (w.from) startDay = Math.floor(w.from.getTime() / DAY) * DAY;
  else if (opts.earliest && DAY_RE.test(opts.earliest)) startDay = Date.parse(`${opts.earliest}T00:00:00Z`);
  else startDay = endDay - ((opts.fallbackDays ?? 14) - 1) * DAY;
  startDay = Math.max(Math.min(startDay, endDay), endDay - (maxDays - 1) * DAY);
  const out: string[] = [];
  for (let t = startDay; t <= endDay; t += DAY) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** Search-param patch that selects a preset (the page's default is written as no param). */
export function presetParams(id: RangePreset, defaultRange: RangePreset): Record<string, string | null> {
  return { range: id === defaultRange ? null : id, from: null, to: null, page: null };
}
