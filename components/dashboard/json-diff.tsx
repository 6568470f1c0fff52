/**
 * Compact before → after view of two JSON values (audit log). Objects are compared key by key
 * (one level deep, nested values shown as compact JSON); other values as a whole. Server-safe.
 */

const MAX = 120;

function compact(v: unknown): string {
  if (v === undefined) return "∅";
  const s = typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v);
  return s.length > MAX ? s.slice(0, MAX - 1) + "…" : s;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export type DiffLine = { key: string | null; kind: "added" | "removed" | "changed"; before?: unknown; after?: unknown };

export function diffJson(before: unknown, after: unknown): DiffLine[] {
  const b = before ?? undefined;
  const a = after ?? undefined;
  if (b === undefined && a === undefined) return [];
  if (isObj(b) || isObj(a)) {
    const bo = isObj(b) ? b : {};
    const ao = isObj(a) ? a : {};
    const keys = [...new Set([...Object.keys(bo), ...Object.keys(ao)])].sort();
    const out: DiffLine[] = [];
    for (const k of keys) {
      const inB = k in bo;
      const inA = k in ao;
      if (inB && inA) {
        if (JSON.stringify(bo[k]) !== JSON.stringify(ao[k])) out.push({ key: k, kind: "changed", before: bo[k], after: ao[k] });
      } else if (inA) out.push({ key: k, kind: "added", after: ao[k] });
      else out.push({ key: k, kind: "removed", before: bo[k] });
    }
    return out;
  }
  if (JSON.stringify(b) === JSON.stringify(a)) return [];
  if (b === undefined) return [{ key: null, kind: "added", after: a }];
  if (a === undefined) return [{ key: null, kind: "removed", before: b }];
  return [{ key: null, kind: "changed", before: b, after: a }];
}

export function JsonDiff({ before, after, maxLines = 6 }: { before: unknown; after: unknown; maxLines?: number }) {
  const lines = diffJson(before, after);
  if (lines.length === 0) return <span className="subtle">{before == null && after == null ? "—" : "no change"}</span>;
  const shown = lines.slice(0, maxLines);
  const full = JSON.stringify({ before: before ?? null, after: after ?? null }, null, 2);
  return (
    <ul className="json-diff" title={full}>
      {shown.map((l, i) => (
        <li key={i} data-kind={l.kind}>
          {l.key !== null && <span className="json-diff-key">{l.key}</span>}
          {l.kind === "changed" && (
            <>
              <span className="json-diff-before">{compact(l.before)}</span>
              <span className="json-diff-arrow" aria-label="changed to">
                →
              </span>
              <span className="json-diff-after">{compact(l.after)}</span>
            </>
          )}
          {l.kind === "added" && <span className="json-diff-after">{compact(l.after)}</span>}
          {l.kind === "removed" && <span className="json-diff-before">{compact(l.before)}</span>}
        </li>
      ))}
      {lines.length > shown.length && <li className="subtle">+{lines.length - shown.length} more</li>}
    </ul>
  );
}
