/**
 * The time window control of every history page: presets as links and a custom UTC day range as a
 * GET form; both keep the page's other search params, so the window lives in the URL.
 */
import { withSearchParams } from "@/components/data-table";
import { Icon } from "@/components/icons";
import { RANGE_PRESETS, presetParams, type RangePreset, type TimeWindow } from "@/server/dashboard/time-range";
import type { SearchParams } from "@/server/dashboard/util";

const WINDOW_PARAMS = new Set(["range", "from", "to", "page"]);

/** Hidden inputs that carry the current window through another filter form of the page. */
export function TimeWindowInputs({ window: w, defaultRange }: { window: TimeWindow; defaultRange: RangePreset }) {
  if (w.range === "custom")
    return (
      <>
        {w.fromDay && <input type="hidden" name="from" value={w.fromDay} />}
        {w.toDay && <input type="hidden" name="to" value={w.toDay} />}
      </>
    );
  return w.range === defaultRange ? null : <input type="hidden" name="range" value={w.range} />;
}

export function TimeRangePicker({
  path,
  searchParams,
  window: w,
  defaultRange,
  presets = RANGE_PRESETS.map((p) => p.id),
  custom = true,
}: {
  path: string;
  searchParams: SearchParams;
  window: TimeWindow;
  defaultRange: RangePreset;
  presets?: readonly RangePreset[];
  /** Show the From/To day inputs (off where the page's own filter form holds them). */
  custom?: boolean;
}) {
  const kept = Object.entries(searchParams).filter(([k, v]) => !WINDOW_PARAMS.has(k) && v != null);
  return (
    <div className="time-range" data-testid="time-range">
      <nav className="segmented" aria-label="Time range">
        {RANGE_PRESETS.filter((p) => presets.includes(p.id)).map((p) => (
          <a key={p.id} href={withSearchParams(path, searchParams, presetParams(p.id, defaultRange))} aria-current={w.range === p.id ? "page" : undefined}>
            {p.label}
          </a>
        ))}
        {w.range === "custom" && <span aria-current="page">Custom</span>}
      </nav>
      {custom && (
        <form className="time-range-custom" method="get" action={path} aria-label="Custom date range (UTC)">
          {kept.flatMap(([k, v]) => (Array.isArray(v) ? v : [v!]).map((x, i) => <input key={`${k}${i}`} type="hidden" name={k} value={x} />))}
          <label className="text-sm muted" htmlFor="tr-from">
            From
          </label>
          <input id="tr-from" className="input input-sm" type="date" name="from" defaultValue={w.fromDay} />
          <label className="text-sm muted" htmlFor="tr-to">
            to
          </label>
          <input id="tr-to" className="input input-sm" type="date" name="to" defaultValue={w.toDay} />
          <button type="submit" className="btn btn-secondary btn-sm">
            <Icon name="clock" />
            Show
          </button>
        </form>
      )}
    </div>
  );
}
