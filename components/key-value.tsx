import type { ReactNode } from "react";

export type KeyValueItem = { label: ReactNode; value: ReactNode; hint?: ReactNode };

/**
 * Definition list. `layout="rows"` (default): label column + value column.
 * `layout="grid"`: label above value, in auto-fitting columns (good for summaries).
 */
export function KeyValue({ items, layout = "rows" }: { items: KeyValueItem[]; layout?: "rows" | "grid" }) {
  if (layout === "grid") {
    return (
      <dl className="kv" data-layout="grid">
        {items.map((it, i) => (
          <div key={i}>
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
