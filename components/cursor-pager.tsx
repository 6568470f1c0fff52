import Link from "next/link";
import { formatNumber } from "./format";
import { Icon } from "./icons";

/**
 * "10,234 failures" + newer/older links for a keyset-paginated list: each link carries the cursor
 * of the row it continues from, so a deep page reads from its place in the index and the URL stays
 * shareable.
 */
export function CursorPager({ total, noun, newerHref, olderHref }: { total: number; noun: string; newerHref: string | null; olderHref: string | null }) {
  const nav = (href: string | null, dir: "prev" | "next") => {
    const icon = <Icon name={dir === "prev" ? "chevronLeft" : "chevronRight"} />;
    const label = dir === "prev" ? "Newer" : "Older";
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
