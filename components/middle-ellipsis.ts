/**
 * Middle truncation of identifiers (session ids, model and tool names, failure keys), pure: which
 * end of a value is kept, and the longest "head…tail" that fits a given width. The end is what
 * tells similar ids apart (`…-feature-bot-s49`, `…|args_hash=9f3c`), so the head shrinks first and
 * the tail only when "…" + the whole tail alone does not fit. Used by components/middle-truncate.tsx
 * with a real text measurement; unit-tested with a character count.
 */

export const ELLIPSIS = "…";

/**
 * Where the kept end starts: up to `tail` characters, about the last 60 % of a short value
 * ("claude-sonnet-4.5" keeps "-sonnet-4.5"), starting at a separator when one is near so the end
 * reads as whole words ("…-refactor-bot-1", not "…9-refactor-bot-1"). value.length: nothing cut.
 */
export function middleCut(value: string, tail = 16): number {
  const tailLength = Math.min(tail, Math.ceil(value.length * 0.6));
  if (value.length <= tailLength + 2) return value.length;
  const cut = value.length - tailLength;
  const separator = value.slice(cut, cut + 6).search(/[-_/:|@]/);
  return separator > 0 && tailLength - separator >= 10 ? cut + separator : cut;
}

/** Largest n in [lo, hi] with ok(n), given ok is monotone (true up to some n, false after); lo - 1 when none. */
function largest(lo: number, hi: number, ok: (n: number) => boolean): number {
  let best = lo - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ok(mid)) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/**
 * The text to show for `value` where `fits(text)` says whether a text fits the room: the whole value
 * when it fits (nothing is cut without a real overflow); else the value's start, "…", and its end
 * from `cut` (middleCut) on, the start as long as fits; when not even one character of the start
 * fits, "…" and as much of the end as fits. Never cuts inside the ellipsis or adds characters.
 */
export function middleEllipsis(value: string, fits: (text: string) => boolean, cut = middleCut(value)): string {
  if (fits(value)) return value;
  const tailStart = Math.min(Math.max(cut, 1), value.length);
  const tail = value.slice(tailStart);
  const head = largest(1, tailStart - 1, (n) => fits(value.slice(0, n) + ELLIPSIS + tail));
  if (head >= 1) return value.slice(0, head) + ELLIPSIS + tail;
  const kept = largest(1, tail.length, (n) => fits(ELLIPSIS + value.slice(value.length - n)));
  return kept >= 1 ? ELLIPSIS + value.slice(value.length - kept) : ELLIPSIS;
}

/** The kept end of a failure key: its last parameter (`args_hash=…`, `path_prefix=…`) when short enough, else 28 characters. */
export function failureKeyTail(key: string): number {
  const last = key.lastIndexOf("|");
  return last < 0 ? 16 : Math.min(key.length - last, 28);
}
