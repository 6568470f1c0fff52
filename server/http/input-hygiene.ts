/**
 * Checks every JSON input before anything of ours walks it (tRPC procedures, hook payloads, OTLP
 * JSON): nesting deeper than MAX_JSON_DEPTH, and any string — value or object key — holding a NUL
 * byte or a lone UTF-16 surrogate. PostgreSQL cannot store either (text refuses 0x00, jsonb refuses
 * \u0000 and unpaired surrogates), so they failed as 500s deep in a write; here they are a 400
 * naming the field. The walk is iterative and stops at the depth limit, so a 1 MiB body of `[[[[…`
 * costs no more than 64 steps. (JSON.parse itself is iterative in V8.)
 */
import { describeApiIssues, type ApiIssue } from "./error-issues";

/** The deepest nesting of arrays and objects an input may have (the input itself is depth 0). */
export const MAX_JSON_DEPTH = 64;

/** The problem of one string, or null. */
function stringProblem(s: string): string | null {
  if (s.includes("\u0000")) return "contains a NUL byte (\\u0000)";
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return "contains a lone UTF-16 surrogate (not valid Unicode)";
  return null;
}

/**
 * The first problem of a parsed JSON value (depth first), or null. `strings: false` checks the depth
 * only: the hook and OTLP routes store what a third-party program sent with unstorable characters
 * as U+FFFD (db/storable.ts) — a 400 there would let a coding agent's tool call through unguarded,
 * or drop an exporter's whole batch, for one character it did not choose.
 */
export function inputProblem(value: unknown, { maxDepth = MAX_JSON_DEPTH, strings = true }: { maxDepth?: number; strings?: boolean } = {}): ApiIssue | null {
  // Each entry: a value, its depth and its path segments (built only when a problem is found).
  const stack: { value: unknown; depth: number; path: () => string[] }[] = [{ value, depth: 0, path: () => [] }];
  while (stack.length > 0) {
    const { value: v, depth, path } = stack.pop()!;
    if (typeof v === "string") {
      if (!strings) continue;
      const problem = stringProblem(v);
      if (problem) return { path: path(), message: problem, code: "custom" };
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= maxDepth) return { path: path(), message: `is nested more than ${maxDepth} levels deep`, code: "custom" };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth: depth + 1, path: () => [...path(), String(i)] });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const keyProblem = strings ? stringProblem(key) : null;
      if (keyProblem) return { path: [...path(), key], message: `key ${keyProblem}`, code: "custom" };
      stack.push({ value: (v as Record<string, unknown>)[key], depth: depth + 1, path: () => [...path(), key] });
    }
  }
  return null;
}

/** A 400's cause: carries `issues` (the one error shape, server/http/error-issues.ts). */
export class InputHygieneError extends Error {
  readonly issues: ApiIssue[];
  constructor(issue: ApiIssue) {
    super(`Invalid input: ${describeApiIssues([issue]) || issue.message}`);
    this.name = "InputHygieneError";
    this.issues = [issue];
  }
}
