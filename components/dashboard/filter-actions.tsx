/** The end of a filter toolbar form: submit, and a link back to the unfiltered page when filtered. */
import { ButtonLink } from "@/components/form";
import { Icon } from "@/components/icons";

export function FilterActions({ clearHref, filtered }: { clearHref: string; filtered: boolean }) {
  return (
    <>
      <button type="submit" className="btn btn-secondary btn-sm">
        <Icon name="filter" />
        Apply
      </button>
      {filtered && (
        <ButtonLink href={clearHref} size="sm" variant="ghost">
          Clear
        </ButtonLink>
      )}
    </>
  );
}
