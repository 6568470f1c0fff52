import Link from "next/link";
import type { CSSProperties, ReactNode } from "react";
import { EmptyState } from "./empty-state";
import { formatNumber } from "./format";
import { Icon } from "./icons";
import { StickyHeaderWhenFits } from "./table-sticky-header";

/*
 * Generic, dependency-free data table for server-side sorted / paginated data.
 * No hooks and no "use client": render it from Server Components (with `sortHref` /
 * `pageHref` links) or from Client Components (with `onSortChange` / `onPageChange`).
 */

export type SortDir = "asc" | "desc";
export type SortState = { key: string; dir: SortDir };
export type PaginationState = { page: number; pageSize: number; total: number };

export type Column<T> = {
  /** Stable id (React key). */
  id: string;
  header: ReactNode;
  cell: (row: T, index: number) => ReactNode;
  /** Enables sorting on this column; the key sent to the server. */
  sortKey?: string;
  /** Direction used on first click (default: "desc" for right-aligned/numeric columns, else "asc"). */
  firstDir?: SortDir;
  align?: "left" | "right" | "center";
  width?: number | string;
  minWidth?: number | string;
  /** Prevent wrapping in this column (default true for right-aligned columns). */
  nowrap?: boolean;
  /** Tooltip / explanation for the header. */
  headerTitle?: string;
  /** The cell's label in the phone card layout (default: the header when it is a string). */
  cardLabel?: string;
  className?: string;
};

export type DataTableProps<T> = {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T, index: number) => string;
  /** Accessible name for the table (rendered as a visually hidden caption). */
  label: string;
  sort?: SortState | null;
  /** Link-based sorting (Server Components): returns the URL for a sort state. */
  sortHref?: (sort: SortState) => string;
  /** Callback-based sorting (Client Components). */
  onSortChange?: (sort: SortState) => void;
  pagination?: PaginationState;
  pageHref?: (page: number) => string;
  onPageChange?: (page: number) => void;
  /** Whole-row link: the cell of `linkColumn` (default: first column) becomes the link, stretched over the row. */
  rowHref?: (row: T) => string | undefined;
  linkColumn?: string;
  isRowSelected?: (row: T) => boolean;
  /** Shown in place of rows when `rows` is empty. */
  empty?: ReactNode;
  /**
   * Height limit of a scroll area inside the card, the header sticking inside it. Default: no limit —
   * the table grows with the page (one scrollbar) and on wide screens its header sticks below the
   * top bar. "none": no limit and no page-sticky header (short tables inside cards and panels).
   */
  maxHeight?: string;
  density?: "compact" | "comfortable";
  /** Extra content on the left of the footer (e.g. "Updated 2m ago"). */
  footer?: ReactNode;
  /** Dims rows while a client-side refetch is in flight. */
  busy?: boolean;
  /**
   * Below 640 px each row becomes a card of "label value" lines, so a wide table never scrolls
   * sideways on a phone (default). "scroll" keeps the table and scrolls it inside its card.
   */
  phoneLayout?: "cards" | "scroll";
  className?: string;
};

function nextSort(col: Column<unknown>, current?: SortState | null): SortState {
  const key = col.sortKey!;
  if (current && current.key === key) return { key, dir: current.dir === "asc" ? "desc" : "asc" };
  return { key, dir: col.firstDir ?? (col.align === "right" ? "desc" : "asc") };
}

export function DataTable<T>(props: DataTableProps<T>) {
  const {
    columns,
    rows,
    rowKey,
    label,
    sort,
    sortHref,
    onSortChange,
    pagination,
    pageHref,
    onPageChange,
    rowHref,
    linkColumn,
    isRowSelected,
    empty,
    maxHeight,
    density = "compact",
    footer,
    busy,
    phoneLayout = "cards",
    className,
  } = props;
  const linkCol = linkColumn ?? columns[0]?.id;
  const scrollStyle: CSSProperties | undefined = maxHeight && maxHeight !== "none" ? { maxHeight } : undefined;
  // An empty table says so in its body; "0–0 of 0 · Page 1 of 1" adds nothing.
  const showPager = !!pagination && pagination.total > 0;

  return (
    <div
      className={["table-wrap", className].filter(Boolean).join(" ")}
      data-phone-layout={phoneLayout}
      data-scroll={maxHeight ? undefined : "page"}
    >
      <div className="table-scroll" style={scrollStyle} tabIndex={0} role="region" aria-label={label}>
        <table className="table" data-density={density} aria-busy={busy || undefined} style={busy ? { opacity: 0.6 } : undefined}>
          <caption className="sr-only">{label}</caption>
          <thead>
            <tr>
              {columns.map((col) => {
                const active = !!sort && !!col.sortKey && sort.key === col.sortKey;
                const ariaSort = active ? (sort!.dir === "asc" ? "ascending" : "descending") : undefined;
                let inner: ReactNode = col.header;
                if (col.sortKey && (sortHref || onSortChange)) {
                  const target = nextSort(col as Column<unknown>, sort);
                  const arrow = <Icon name={active ? (sort!.dir === "asc" ? "arrowUp" : "arrowDown") : "arrowUpDown"} size={12} />;
                  const srHint = <span className="sr-only">, sort {target.dir === "asc" ? "ascending" : "descending"}</span>;
                  inner = sortHref ? (
                    <Link className="th-sort" href={sortHref(target)} scroll={false} prefetch={false}>
                      {col.header}
                      {arrow}
                      {srHint}
                    </Link>
                  ) : (
                    <button type="button" className="th-sort" onClick={() => onSortChange!(target)}>
                      {col.header}
                      {arrow}
                      {srHint}
                    </button>
                  );
                }
                return (
                  <th
                    key={col.id}
                    scope="col"
                    aria-sort={ariaSort}
                    data-align={col.align}
                    title={col.headerTitle}
                    style={{ width: col.width, minWidth: col.minWidth }}
                    className={col.className}
                  >
                    {inner}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 ? (
              <tr>
                <td colSpan={columns.length} className="table-empty">
                  {empty ?? <EmptyState compact title="No results" description="Nothing matches the current filters." />}
                </td>
              </tr>
            ) : (
              rows.map((row, i) => {
                const href = rowHref?.(row);
                return (
                  <tr key={rowKey(row, i)} data-href={href ? "" : undefined} data-selected={isRowSelected?.(row) || undefined}>
                    {columns.map((col) => {
                      let content = col.cell(row, i);
                      if (href && col.id === linkCol) {
                        content = (
                          <Link href={href} className="row-link" prefetch={false}>
                            {content}
                          </Link>
                        );
                      }
                      const nowrap = col.nowrap ?? col.align === "right";
                      return (
                        <td
                          key={col.id}
                          data-align={col.align}
                          data-label={col.cardLabel ?? (typeof col.header === "string" ? col.header : undefined)}
                          className={[nowrap && "nowrap", col.className].filter(Boolean).join(" ") || undefined}
                        >
                          {content}
                        </td>
                      );
                    })}
                  </tr>
                );
              })
            )}
          </tbody>
        </table>
      </div>
      {!maxHeight && <StickyHeaderWhenFits />}
      {(showPager || footer) && (
        <div className="table-footer">
          <div className="row">{footer}</div>
          {showPager && <Pager {...pagination} pageHref={pageHref} onPageChange={onPageChange} />}
        </div>
      )}
    </div>
  );
}

/** "1–50 of 10,234" + prev/next. Usable on its own under lists that are not tables. */
function Pager({
  page,
  pageSize,
  total,
  pageHref,
  onPageChange,
}: PaginationState & { pageHref?: (page: number) => string; onPageChange?: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const from = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const to = Math.min(total, page * pageSize);
  const nav = (target: number, dir: "prev" | "next") => {
    const disabled = target < 1 || target > pages;
    const icon = <Icon name={dir === "prev" ? "chevronLeft" : "chevronRight"} />;
    const labelText = dir === "prev" ? "Previous page" : "Next page";
    if (disabled || (!pageHref && !onPageChange)) {
      return (
        <span className="btn btn-ghost btn-sm btn-icon" aria-disabled="true" aria-label={labelText} role="link">
          {icon}
        </span>
      );
    }
    return pageHref ? (
      <Link className="btn btn-ghost btn-sm btn-icon" href={pageHref(target)} aria-label={labelText} scroll={false} prefetch={false}>
        {icon}
      </Link>
    ) : (
      <button type="button" className="btn btn-ghost btn-sm btn-icon" onClick={() => onPageChange!(target)} aria-label={labelText}>
        {icon}
      </button>
    );
  };
  return (
    <nav className="pager" aria-label="Pagination">
      <span aria-live="polite">
        {formatNumber(from)}–{formatNumber(to)} of {formatNumber(total)}
      </span>
      <span className="pager-page subtle">
        · Page {formatNumber(page)} of {formatNumber(pages)}
      </span>
      {nav(page - 1, "prev")}
      {nav(page + 1, "next")}
    </nav>
  );
}

/* ---------- URL helpers for server-side tables ---------- */

export type SearchParamsRecord = Record<string, string | string[] | undefined>;

/**
 * Build `pathname?query` from current search params plus a patch (null/undefined/"" removes a key).
 *   withSearchParams("/w/acme/tools", searchParams, { sort: "failures", dir: "desc", page: null })
 */
export function withSearchParams(
  pathname: string,
  current: SearchParamsRecord | URLSearchParams | undefined,
  patch: Record<string, string | number | null | undefined>,
): string {
  const sp = new URLSearchParams();
  if (current instanceof URLSearchParams) current.forEach((v, k) => sp.append(k, v));
  else if (current)
    for (const [k, v] of Object.entries(current)) {
      if (Array.isArray(v)) v.forEach((x) => sp.append(k, x));
      else if (v != null) sp.set(k, v);
    }
  for (const [k, v] of Object.entries(patch)) {
    if (v == null || v === "") sp.delete(k);
    else sp.set(k, String(v));
  }
  const q = sp.toString();
  return q ? `${pathname}?${q}` : pathname;
}

/**
 * Read `sort`, `dir`, `page` from search params with validation.
 *   const { sort, page, pageSize } = readTableParams(searchParams, { sortKeys: ["key","failures"], defaultSort: { key: "failures", dir: "desc" } })
 */
export function readTableParams(
  sp: SearchParamsRecord | undefined,
  opts: { sortKeys: readonly string[]; defaultSort: SortState; pageSize?: number },
): { sort: SortState; page: number; pageSize: number } {
  const one = (k: string) => {
    const v = sp?.[k];
    return Array.isArray(v) ? v[0] : v;
  };
  const key = one("sort");
  const dir = one("dir");
  const page = Math.max(1, Number.parseInt(one("page") ?? "1", 10) || 1);
  return {
    sort:
      key && opts.sortKeys.includes(key)
        ? { key, dir: dir === "asc" || dir === "desc" ? dir : opts.defaultSort.dir }
        : opts.defaultSort,
    page,
    pageSize: opts.pageSize ?? 50,
  };
}
