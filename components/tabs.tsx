"use client";

import { useId, useRef, useState, type KeyboardEvent, type ReactNode } from "react";

export type TabItem = { id: string; label: ReactNode; count?: number; content: ReactNode };

/**
 * In-page tabs (WAI-ARIA tabs pattern: roving tabindex, ←/→/Home/End).
 * Uncontrolled by default; pass `value` + `onValueChange` to control.
 */
export function Tabs({
  items,
  value,
  defaultValue,
  onValueChange,
  label,
}: {
  items: TabItem[];
  value?: string;
  defaultValue?: string;
  onValueChange?: (id: string) => void;
  label: string;
}) {
  const [inner, setInner] = useState(defaultValue ?? items[0]?.id);
  const active = value ?? inner;
  const base = useId();
  const listRef = useRef<HTMLDivElement>(null);
  const select = (id: string) => {
    if (value === undefined) setInner(id);
    onValueChange?.(id);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    const idx = items.findIndex((t) => t.id === active);
    let next = -1;
    if (e.key === "ArrowRight") next = (idx + 1) % items.length;
    else if (e.key === "ArrowLeft") next = (idx - 1 + items.length) % items.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = items.length - 1;
    if (next < 0) return;
    e.preventDefault();
    select(items[next].id);
    listRef.current?.querySelectorAll<HTMLButtonElement>('[role="tab"]')[next]?.focus();
  };
  return (
    <div>
      <div className="tabs" role="tablist" aria-label={label} ref={listRef} onKeyDown={onKeyDown}>
        {items.map((t) => {
          const selected = t.id === active;
          return (
            <button
              key={t.id}
              type="button"
              role="tab"
              className="tab"
              id={`${base}-tab-${t.id}`}
              aria-selected={selected}
              aria-controls={`${base}-panel-${t.id}`}
              tabIndex={selected ? 0 : -1}
              onClick={() => select(t.id)}
            >
              {t.label}
              {t.count !== undefined && <span className="tab-count">{t.count}</span>}
            </button>
          );
        })}
      </div>
      {items.map((t) =>
        t.id === active ? (
          <div key={t.id} role="tabpanel" className="tab-panel" id={`${base}-panel-${t.id}`} aria-labelledby={`${base}-tab-${t.id}`} tabIndex={0}>
            {t.content}
          </div>
        ) : null,
      )}
    </div>
  );
}
