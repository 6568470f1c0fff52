/**
 * A time window split for the daily roll-ups: the whole UTC days inside it (read from a roll-up)
 * and the partial days at its edges (read from the raw rows by their (workspace, ts) index), so a
 * count over the window equals the raw count exactly while reading at most two days of raw rows.
 */
import { sql, type SQL } from "drizzle-orm";

const DAY_MS = 86_400_000;

export interface DaySplit {
  /** Whole days read from the roll-up, `from` inclusive and `to` exclusive (yyyy-mm-dd); an absent bound is open. Null: no whole day. */
  days: { from?: string; to?: string } | null;
  /** Raw ranges [from, to) at the edges. */
  edges: Array<{ from: Date; to: Date }>;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * An open end (no `to`) runs to the last day in the roll-up, as the raw query with no upper bound
 * does; an open start from its first day.
 */
export function splitByDay(window: { from?: Date; to?: Date }): DaySplit {
  const from = window.from?.getTime();
  const to = window.to?.getTime();
  if (from !== undefined && to !== undefined && from >= to) return { days: null, edges: [] };
  const wholeFrom = from === undefined ? undefined : Math.ceil(from / DAY_MS) * DAY_MS;
  const wholeTo = to === undefined ? undefined : Math.floor(to / DAY_MS) * DAY_MS;
  if (wholeFrom !== undefined && wholeTo !== undefined && wholeFrom >= wholeTo) {
    // Inside one day (or across one midnight without a whole day): the raw rows alone.
    return { days: null, edges: [{ from: new Date(from!), to: new Date(to!) }] };
  }
  const edges: DaySplit["edges"] = [];
  if (from !== undefined && wholeFrom! > from) edges.push({ from: new Date(from), to: new Date(wholeFrom!) });
  if (to !== undefined && wholeTo! < to) edges.push({ from: new Date(wholeTo!), to: new Date(to) });
  return { days: { from: wholeFrom === undefined ? undefined : dayOf(wholeFrom), to: wholeTo === undefined ? undefined : dayOf(wholeTo) }, edges };
}

/** `and day >= … and day < …` on a roll-up's `day` column for the split's whole days. */
export function rollupDays(days: NonNullable<DaySplit["days"]>): SQL {
  return sql`${days.from ? sql`and day >= ${days.from}` : sql``} ${days.to ? sql`and day < ${days.to}` : sql``}`;
}

/**
 * How to count a partial edge day exactly while reading the fewer raw rows: the edge's own raw
 * rows, or — for an edge that runs to its day's end (a window's first day) when the part of the
 * day before it is the shorter — the day's roll-up row less the raw rows of that earlier part.
 */
export type EdgeRead = { raw: { from: Date; to: Date } } | { day: string; less: { from: Date; to: Date } };

export function edgeRead(edge: { from: Date; to: Date }): EdgeRead {
  const from = edge.from.getTime();
  const to = edge.to.getTime();
  const dayStart = Math.floor(from / DAY_MS) * DAY_MS;
  const runsToDayEnd = to === dayStart + DAY_MS;
  if (runsToDayEnd && from - dayStart < to - from) return { day: dayOf(dayStart), less: { from: new Date(dayStart), to: edge.from } };
  return { raw: edge };
}
