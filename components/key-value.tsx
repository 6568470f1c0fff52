import type { ReactNode } from "react";

/** `wide`: in the grid layout, the item takes a whole row (long names that a column would cut to nothing). */
export type KeyValueItem = { label: ReactNode; value: ReactNode; hint?: ReactNode; wide?: boolean };

/**
 * Definition list. `layout="rows"` (default): label column + value column.
 * `layout="grid"`: label above value, in auto-fitting columns (good for summaries).
 */
export function KeyValue({ items, layout = "rows" }: { items: KeyValueItem[]; layout?: "rows" | "grid" }) {
  if (layout === "grid") {
    return (
      <dl className="kv" data-layout="grid">
        {items.map((it, i) => (
          <div key={i} data-wide={it.wide ? "" : undefined}>
            <dt>{it.label}</dt>
            <dd>
              {it.value}
              {it.hint && <span className="kv-hint">{it.hint}</span>}
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return (
    <dl className="kv">
      {items.map((it, i) => (
        <KvPair key={i} {...it} />
      ))}
    </dl>
  );
}

function KvPair({ label, value, hint }: KeyValueItem) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {value}
        {hint && <span className="kv-hint">{hint}</span>}
      </dd>
    </>
  );
}
