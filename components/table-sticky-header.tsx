"use client";

import { useEffect, useRef } from "react";

/**
 * Lets a page-scrolling DataTable's header stick below the top bar. A header sticks to the page
 * only when no box around it scrolls, so this marks the table's card `data-fits` while the table
 * fits its width (the card then clips instead of scrolling sideways); a table too wide for it
 * keeps its sideways scroll, and its header scrolls with the page. Without JavaScript, the same.
 */
export function StickyHeaderWhenFits() {
  const ref = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    const wrap = ref.current?.closest<HTMLElement>(".table-wrap");
    const table = wrap?.querySelector<HTMLElement>("table");
    if (!wrap || !table) return;
    // The table is as wide as its card or, when its columns need more, wider: the same in both modes.
    const update = () => wrap.toggleAttribute("data-fits", table.offsetWidth <= wrap.clientWidth);
    const observer = new ResizeObserver(update);
    observer.observe(wrap);
    observer.observe(table);
    update();
    return () => {
      observer.disconnect();
      wrap.removeAttribute("data-fits");
    };
  }, []);
  return <span ref={ref} hidden />;
}
