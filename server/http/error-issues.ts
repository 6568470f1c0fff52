/**
 * The one validation-error shape of every procedure: `error.data.issues[]` with
 * `{ path: string[], message, code }` (SPEC 7: a 400 names the offending field paths). Built from
 * whatever carried the problem — zod's input errors, the ingest's second pass (InputIssuesError),
 * a configuration document's issues or a service error naming a field — so clients read fields
 * from `data.issues` and never parse message text.
 */

export interface ApiIssue {
  /** Field path segments, outermost first (`["events", "3", "ts"]`); `[]` for the input as a whole. */
  path: string[];
  /** The sentence shown to people; it names the field. */
  message: string;
  /** zod's issue code (`invalid_type`, `too_big`, `unrecognized_keys`, …) or `custom` for a hand-raised error. */
  code: string;
}

type PathLike = string | ReadonlyArray<PropertyKey | { key: PropertyKey }>;

interface IssueLike {
  path?: PathLike;
  /** Document issues carry their path segments beside the display path. */
  segments?: ReadonlyArray<string | number>;
  message: string;
  code?: string;
  /** zod `unrecognized_keys`: the unknown keys under `path`. */
  keys?: readonly string[];
}

/**
 * Splits a display path into segments: `settings.nudgeLevel` → ["settings", "nudgeLevel"],
 * `extractors[0].field` → ["extractors", "0", "field"].
 */
function splitFieldPath(path: string): string[] {
  if (path === "") return [];
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .filter((s) => s !== "");
}

function segmentsOf(issue: IssueLike): string[] {
  if (issue.segments) return issue.segments.map(String);
  if (typeof issue.path === "string") return splitFieldPath(issue.path);
  return (issue.path ?? []).map((p) => (typeof p === "object" && p !== null ? String(p.key) : String(p)));
}

/** Field issues from a list of zod-like issues (an unrecognized-keys issue becomes one issue per key). */
function toApiIssues(issues: readonly IssueLike[]): ApiIssue[] {
  const out: ApiIssue[] = [];
  for (const i of issues) {
    const path = segmentsOf(i);
    const code = i.code ?? "custom";
    if (code === "unrecognized_keys" && i.keys?.length && !i.segments && typeof i.path !== "string") {
      for (const k of i.keys) out.push({ path: [...path, k], message: i.message, code });
    } else out.push({ path, message: i.message, code });
  }
  return out;
}

/** `path: message` for a 400's message text (the message names every field, for people and logs). */
export function describeApiIssues(issues: readonly ApiIssue[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const i of issues) {
    const where = i.path.join(".");
    const text = where && !i.message.includes(where) ? `${where}: ${i.message}` : i.message;
    if (!seen.has(text)) parts.push(text);
    seen.add(text);
  }
  return parts.join("; ");
}

/**
 * The issues an error carries: `cause.issues` (zod, ingest, configuration document) or a single
 * issue for an error naming a `field`. Undefined when the error is not about fields.
 */
export function issuesOfCause(cause: unknown): ApiIssue[] | undefined {
  if (!cause || typeof cause !== "object") return undefined;
  const c = cause as { issues?: unknown; field?: unknown; message?: unknown };
  if (Array.isArray(c.issues) && c.issues.length > 0) return toApiIssues(c.issues as IssueLike[]);
  if (typeof c.field === "string" && c.field !== "") {
    return [{ path: splitFieldPath(c.field), message: String(c.message ?? ""), code: "custom" }];
  }
  return undefined;
}
