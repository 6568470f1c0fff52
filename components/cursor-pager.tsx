import Link from "next/link";
import { formatNumber } from "./format";
import { Icon } from "./icons";

/** What the pager's two links lead to: rows newer or older by time, or simply the pages before and after under another order. */
type PagerOrder = "newest-first" | "oldest-first" | "other";

const PAGER_LABELS: Record<PagerOrder, { prev: string; next: string }> = {
  "newest-first": { prev: "Newer", next: "Older" },
  "oldest-first": { prev: "Older", next: "Newer" },
  other: { prev: "Previous page", next: "Next page" },
};

/**
 * "10,234 failures" + links to the pages before and after for a keyset-paginated list: each link
 * carries the cursor of the row it continues from, so a deep page reads from its place in the index
 * and the URL stays shareable. Named Newer/Older when the list is ordered by time.
 */
export function CursorPager({
  total,
  noun,
  newerHref,
  olderHref,
  order = "newest-first",
}: {
  total: number;
  noun: string;
  /** The page before (newer rows when newest first). */
  newerHref: string | null;
  /** The page after. */
  olderHref: string | null;
  order?: PagerOrder;
}) {
  const nav = (href: string | null, dir: "prev" | "next") => {
    const icon = <Icon name={dir === "prev" ? "chevronLeft" : "chevronRight"} />;
    const label = PAGER_LABELS[order][dir];
    return href ? (
      <Link className="btn btn-ghost btn-sm btn-icon" href={href} aria-label={label} rel={dir} scroll={false} prefetch={false}>
        {icon}
      </Link>
    ) : (
      <span className="btn btn-ghost btn-sm btn-icon" aria-disabled="true" aria-label={label} role="link">
        {icon}
      </span>
    );
  };
  return (
    <nav className="pager" aria-label="Pagination">
      <span aria-live="polite">
        {formatNumber(total)} {noun}
      </span>
      {nav(newerHref, "prev")}
      {nav(olderHref, "next")}
    </nav>
  );
}
