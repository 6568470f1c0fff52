/**
 * The peers' configured stuck detection, expressed as Vigil ladders (SPEC 5.1: a ladder is
 * non-decreasing, equal levels jump straight to the higher severity): Roo Code's "block on the
 * (N+1)th identical call" for limits 1–5 and unlimited, Cline's soft 2 / hard 3, OpenHands' custom
 * threshold. Each is a configuration document accepted by the same parser config.put uses.
 */
import { describe, expect, it } from "vitest";
import { mergeEffectiveConfig, parseConfigDocument } from "@/server/engine/config";
import type { PatternThresholds } from "@/server/engine/types";
import { Trace } from "./trace";

/** A pattern configuration from a configuration document, as config.put would store it. */
function configured(patterns: Record<string, unknown>) {
  const parsed = parseConfigDocument({ patterns });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return mergeEffectiveConfig(parsed.doc, {}).patterns;
}

/** For each call: the nudge type it drew (null: none) and whether the session was paused after it. */
function identicalCalls(t: Trace, n: number, result: unknown = "same output") {
  const out: { nudge: string | null; paused: boolean }[] = [];
  for (let i = 0; i < n; i++) {
    const before = t.nudges().length;
    t.act("bash", { command: "ls dist" }, { ok: result });
    out.push({ nudge: t.nudges().length > before ? t.nudges().at(-1)!.nudgeType : null, paused: t.paused });
  }
  return out;
}

describe("Roo Code: block on the (N+1)th identical call, nothing before it", () => {
  for (const limit of [1, 2, 3, 4, 5]) {
    it(`limit ${limit}: ${JSON.stringify({ minor: limit + 1, moderate: limit + 1, severe: limit + 1 })} pauses at call ${limit + 1}`, () => {
      const ladder: PatternThresholds = { minor: limit + 1, moderate: limit + 1, severe: limit + 1 };
      const t = new Trace(configured({ repetitive_calls: ladder }));
      const calls = identicalCalls(t, limit + 1);
      expect(calls.slice(0, limit)).toEqual(Array.from({ length: limit }, () => ({ nudge: null, paused: false })));
      expect(calls[limit]).toEqual({ nudge: "interrupt", paused: true });
      expect(t.patternsOf("repetitive_calls").map((p) => [p.severity, p.count])).toEqual([["severe", limit + 1]]);
    });
  }

  it("unlimited (0): nudge level off — recorded, never blocked", () => {
    const t = new Trace(undefined, { nudgeLevel: "off", nudgeEnabled: true, patternDetectionEnabled: true });
    expect(identicalCalls(t, 10).every((c) => c.nudge === null && !c.paused)).toBe(true);
  });
});

describe("Cline: soft warning at 2, hard stop at 3", () => {
  it("{minor: 2, moderate: 3, severe: 3}: a gentle nudge at 2, the pause at 3", () => {
    const t = new Trace(configured({ repetitive_calls: { minor: 2, moderate: 3, severe: 3 } }));
    expect(identicalCalls(t, 3)).toEqual([
      { nudge: null, paused: false },
      { nudge: "gentle", paused: false },
      { nudge: "interrupt", paused: true },
    ]);
  });
});

describe("OpenHands: a custom threshold for repeated action–observation pairs", () => {
  it("threshold 6: {minor: 6, moderate: 6, severe: 6} pauses at the 6th and not before", () => {
    const t = new Trace(configured({ repetitive_calls: { minor: 6, moderate: 6, severe: 6 } }));
    const calls = identicalCalls(t, 6);
    expect(calls.filter((c) => c.nudge !== null)).toEqual([{ nudge: "interrupt", paused: true }]);
    expect(calls[5].paused).toBe(true);
  });

  it("the same failing call: error_retry_loop's own jump ladder pauses at its threshold", () => {
    const t = new Trace(configured({ repetitive_calls: { minor: 9, moderate: 9, severe: 9 }, error_retry_loop: { minor: 3, moderate: 3, severe: 3 } }));
    for (let i = 0; i < 3; i++) t.act("bash", { command: "make" }, { error: "make: *** No rule to make target" });
    expect(t.patternsOf("error_retry_loop").map((p) => p.severity)).toEqual(["severe"]);
    expect(t.paused).toBe(true);
  });
});
