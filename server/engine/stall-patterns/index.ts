/**
 * The stall patterns (SPEC 5), one line each, in SPEC 5 table order: ties between patterns rising
 * on one event go to the earlier one. A pattern is its own file (detector, ladder, description,
 * nudge texts) and its test; everything else derives from this list.
 */
import type { StallPattern } from "./pattern";
import { repetitiveCalls } from "./repetitive-calls";
import { errorRetryLoop } from "./error-retry-loop";
import { alternatingCalls } from "./alternating-calls";
import { introspectionLoop } from "./introspection-loop";
import { readOnlyLoop } from "./read-only-loop";
import { announceNoAction } from "./announce-no-action";
import { planningLoop } from "./planning-loop";
import { emptyResponse } from "./empty-response";
import { toolAvoidance } from "./tool-avoidance";
import { resultLoop } from "./result-loop";
import { hungCall } from "./hung-call";

export const STALL_PATTERNS = [
  repetitiveCalls,
  errorRetryLoop,
  alternatingCalls,
  introspectionLoop,
  readOnlyLoop,
  announceNoAction,
  planningLoop,
  emptyResponse,
  toolAvoidance,
  resultLoop,
  hungCall,
] as const;

type Registry = typeof STALL_PATTERNS;
export type PatternType = Registry[number]["name"];

type NamesOf<T extends readonly { name: string }[]> = { readonly [I in keyof T]: T[I] extends { name: infer N } ? N : never };

/** The pattern names in table order. */
export const PATTERN_TYPES = STALL_PATTERNS.map((p) => p.name) as unknown as NamesOf<Registry>;

export const STALL_PATTERN_BY_NAME = Object.fromEntries(STALL_PATTERNS.map((p) => [p.name, p])) as unknown as Record<PatternType, StallPattern<PatternType>>;

/** The table of docs/agent-api.md's "Stall detection" (tests/unit/docs-tables.test.ts keeps it equal). */
export function stallPatternsMarkdownTable(): string {
  return [
    "| pattern | counts | minor / moderate / severe |",
    "| --- | --- | --- |",
    ...STALL_PATTERNS.map((p) => `| \`${p.name}\` | ${p.counts} | ${p.ladder.minor} / ${p.ladder.moderate} / ${p.ladder.severe} |`),
  ].join("\n");
}

export { PATTERN_SEVERITIES, type PatternSeverity, type PatternThresholds, type StallPattern } from "./pattern";
