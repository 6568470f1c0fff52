/**
 * The time window control of every history page: presets as links and a custom UTC day range
 * that applies as the days are picked; both keep the page's other search params, so the window
 * lives in the URL. The window shown is remembered (RememberRange) and carried to the next page.
 */
import Link from "next/link";
import { withSearchParams } from "@/components/data-table";
import { RANGE_PRESETS, type RangePreset, type TimeWindow } from "@/server/dashboard/time-range";
import type { SearchParams } from "@/server/dashboard/util";
import { FilterForm } from "./filter-actions";
import { rangeCookieValue } from "./range-cookie";
import { RememberRange } from "./remember-range";

const WINDOW_PARAMS = new Set(["range", "from", "to", "page", "after", "before"]);

/** Hidden inputs that carry the current window through another filter form of the page. */
export function TimeWindowInputs({ window: w }: { window: TimeWindow }) {
  if (w.range === "custom")
    return (
      <>
        {w.fromDay && <input type="hidden" name="from" value={w.fromDay} />}
        {w.toDay && <input type="hidden" name="to" value={w.toDay} />}
      </>
    );
  return <input type="hidden" name="range" value={w.range} />;
}

export function TimeRangePicker({
  path,
  searchParams,
  window: w,
  presets = RANGE_PRESETS.map((p) => p.id),
  custom = true,
}: {
  path: string;
  searchParams: SearchParams;
  window: TimeWindow;
  presets?: readonly RangePreset[];
  /** Show the From/To day inputs (off where the page's own filter form holds them). */
  custom?: boolean;
}) {
  const kept = Object.entries(searchParams).filter(([k, v]) => !WINDOW_PARAMS.has(k) && v != null);
  return (
    <div className="time-range" data-testid="time-range">
      <RememberRange value={rangeCookieValue(w)} />
      <nav className="segmented" aria-label="Time range">
        {RANGE_PRESETS.filter((p) => presets.includes(p.id)).map((p) => (
          <Link
            key={p.id}
            href={withSearchParams(path, searchParams, { range: p.id, from: null, to: null, page: null, after: null, before: null })}
            aria-current={w.range === p.id ? "page" : undefined}
            scroll={false}
          >
            {p.label}
          </Link>
        ))}
        {w.range === "custom" && <span aria-current="page">Custom</span>}
      </nav>
      {custom && (
        <FilterForm action={path} className="time-range-custom" label="Custom date range (UTC)" role="form">
          {kept.flatMap(([k, v]) => (Array.isArray(v) ? v : [v!]).map((x, i) => <input key={`${k}${i}`} type="hidden" name={k} value={x} />))}
          <label className="text-sm muted" htmlFor="tr-from">
            From
          </label>
          <input id="tr-from" className="input input-sm" type="date" name="from" defaultValue={w.fromDay} />
          <label className="text-sm muted" htmlFor="tr-to">
            to
          </label>
          <input id="tr-to" className="input input-sm" type="date" name="to" defaultValue={w.toDay} />
        </FilterForm>
      )}
    </div>
  );
}
