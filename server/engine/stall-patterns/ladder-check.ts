/**
 * The check every pattern's test makes: its built-in ladder, climbed one step at a time, reports
 * minor, moderate and severe at exactly their counts, each once. Test support (vitest only).
 */
import { expect, it } from "vitest";
import { BUILTIN_PATTERN_CONFIG } from "../patterns";
import type { PatternSeverity, PatternType } from "../types";
import { Trace } from "@/tests/unit/peer-suites/trace";

/**
 * `step(t, k)` makes the pattern's count go from k-1 to k; `stepsFor(k)` is how many steps reach
 * count k (k, unless the first step counts nothing).
 */
export function climbsItsLadder(type: PatternType, step: (t: Trace, k: number) => void, stepsFor: (k: number) => number = (k) => k): void {
  const l = BUILTIN_PATTERN_CONFIG.thresholds[type];
  it(`${type}: minor at ${l.minor}, moderate at ${l.moderate}, severe at ${l.severe}; each reported once`, () => {
    const t = new Trace();
    const seen: { severity: PatternSeverity; count: number }[] = [];
    for (let i = 1; i <= stepsFor(l.severe) + 1; i++) step(t, i);
    for (const p of t.patternsOf(type)) seen.push({ severity: p.severity, count: p.count });
    expect(seen).toEqual([
      { severity: "minor", count: l.minor },
      { severity: "moderate", count: l.moderate },
      { severity: "severe", count: l.severe },
    ]);
  });
}

/** The built-in ladder as [minor, moderate, severe]. */
export const ladderOf = (type: PatternType) => Object.values(BUILTIN_PATTERN_CONFIG.thresholds[type]);
