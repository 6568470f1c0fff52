import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  applyBehaviourStats,
  DEFAULT_MODEL_SWITCH_CONFIG,
  emptyModelBehaviourProfile,
  hasSuggestedModelSwitch,
  mostCommonPattern,
  nudgeEffectiveness,
  recordModelSwitchSuggestion,
  recordModelToolResult,
  resultModel,
  stallRate,
  successRate,
  suggestModelSwitch,
  type ModelToolProfile,
  type SuggestModelSwitchInput,
} from "./models";
import { createSessionBehaviour } from "./behaviour-state";

const KEY = "bash|npm test";
const prof = (model: string, attempts: number, failures: number, failureKey = KEY): ModelToolProfile => ({
  model,
  failureKey,
  attempts,
  failures,
  lastFailureAt: failures > 0 ? 1000 : null,
});
const input = (over: Partial<SuggestModelSwitchInput> = {}): SuggestModelSwitchInput => ({
  failureKey: KEY,
  profilesForKey: [prof("cur", 5, 3), prof("good", 4, 0)],
  currentModel: "cur",
  strategy: "suggest",
  preferredModels: [],
  config: DEFAULT_MODEL_SWITCH_CONFIG,
  alreadySuggested: false,
  ...over,
});

describe("model tool profiles", () => {
  it("success rate is 1 − failures ÷ attempts, 1.0 with no attempts", () => {
    expect(successRate({ attempts: 0, failures: 0 })).toBe(1);
    expect(successRate({ attempts: 4, failures: 1 })).toBe(0.75);
    expect(successRate({ attempts: 2, failures: 2 })).toBe(0);
  });

  it("records attempts, failures and the last failure time", () => {
    let p = recordModelToolResult(undefined, { model: "m", failureKey: KEY, failed: true, now: 10 });
    p = recordModelToolResult(p, { model: "m", failureKey: KEY, failed: false, now: 20 });
    expect(p).toEqual({ model: "m", failureKey: KEY, attempts: 2, failures: 1, lastFailureAt: 10 });
  });

  it("the model of a result is event.model ?? the session's model", () => {
    expect(resultModel("a", "b")).toBe("a");
    expect(resultModel(undefined, "b")).toBe("b");
    expect(resultModel(undefined, null)).toBeNull();
  });
});

describe("suggestModelSwitch", () => {
  it("suggests the better model once the current model has failureThreshold failures", () => {
    expect(suggestModelSwitch(input())).toEqual({
      type: "model_suggestion",
      strategy: "suggest",
      currentModel: "cur",
      suggestedModel: "good",
      failureKey: KEY,
      currentSuccessRate: 0.4,
      suggestedSuccessRate: 1,
    });
  });

  it("nothing just below the failure threshold", () => {
    expect(suggestModelSwitch(input({ profilesForKey: [prof("cur", 5, 2), prof("good", 4, 0)] }))).toBeNull();
  });

  it("candidates need minAttempts attempts (at: yes, just below: no)", () => {
    expect(suggestModelSwitch(input({ profilesForKey: [prof("cur", 5, 3), prof("good", 2, 0)] }))).toBeNull();
    expect(suggestModelSwitch(input({ profilesForKey: [prof("cur", 5, 3), prof("good", 3, 0)] }))?.type).toBe(
      "model_suggestion",
    );
  });

  it("the improvement must be ≥ minSuccessRateDiff (exactly 0.3 counts, despite float rounding)", () => {
    // current 0.4 (6/10 failures), candidate 0.7 (3/10): diff 0.7 − 0.4 = 0.29999999999999993 in floats
    const at = suggestModelSwitch(input({ profilesForKey: [prof("cur", 10, 6), prof("ok", 10, 3)] }));
    expect(at).toMatchObject({ suggestedModel: "ok", currentSuccessRate: 0.4, suggestedSuccessRate: 0.7 });
    // candidate 0.6: diff 0.2 → nothing
    expect(suggestModelSwitch(input({ profilesForKey: [prof("cur", 10, 6), prof("meh", 10, 4)] }))).toBeNull();
  });

  it("auto → an instruction (strategy auto); disabled → null", () => {
    expect(suggestModelSwitch(input({ strategy: "auto" }))).toMatchObject({ strategy: "auto", suggestedModel: "good" });
    expect(suggestModelSwitch(input({ strategy: "disabled" }))).toBeNull();
  });

  it("no profile for the current model → null; the current model is never its own candidate", () => {
    expect(suggestModelSwitch(input({ currentModel: "unknown" }))).toBeNull();
    expect(suggestModelSwitch(input({ profilesForKey: [prof("cur", 10, 3)] }))).toBeNull();
  });

  it("picks the best success rate among candidates", () => {
    const r = suggestModelSwitch(input({ profilesForKey: [prof("cur", 10, 8), prof("a", 10, 3), prof("b", 10, 1), prof("c", 10, 2)] }));
    expect(r).toMatchObject({ suggestedModel: "b", suggestedSuccessRate: 0.9 });
  });

  it("ties go to the earlier model in preferredModels, then by name", () => {
    const profiles = [prof("cur", 10, 8), prof("zeta", 10, 0), prof("alpha", 10, 0), prof("mid", 10, 0)];
    expect(suggestModelSwitch(input({ profilesForKey: profiles }))).toMatchObject({ suggestedModel: "alpha" });
    expect(suggestModelSwitch(input({ profilesForKey: profiles, preferredModels: ["zeta", "alpha", "mid"] }))).toMatchObject({
      suggestedModel: "zeta",
    });
    expect(suggestModelSwitch(input({ profilesForKey: profiles, preferredModels: ["mid", "zeta"] }))).toMatchObject({
      suggestedModel: "mid",
    });
  });

  it("preferredModels non-empty → only those are candidates", () => {
    const profiles = [prof("cur", 10, 8), prof("best", 10, 0), prof("fine", 10, 2)];
    expect(suggestModelSwitch(input({ profilesForKey: profiles, preferredModels: ["fine"] }))).toMatchObject({
      suggestedModel: "fine",
      suggestedSuccessRate: 0.8,
    });
    expect(suggestModelSwitch(input({ profilesForKey: profiles, preferredModels: ["absent"] }))).toBeNull();
  });

  it("ignores profiles of other failure keys", () => {
    expect(suggestModelSwitch(input({ profilesForKey: [prof("cur", 5, 3), prof("good", 4, 0, "other|key")] }))).toBeNull();
  });

  it("once per (session, key, current model)", () => {
    let st = createSessionBehaviour("s");
    const ask = () => suggestModelSwitch(input({ alreadySuggested: hasSuggestedModelSwitch(st, KEY, "cur") }));
    expect(ask()).not.toBeNull();
    st = recordModelSwitchSuggestion(st, KEY, "cur");
    expect(ask()).toBeNull();
    // another current model, or another key, is a different suggestion
    expect(hasSuggestedModelSwitch(st, KEY, "good")).toBe(false);
    expect(hasSuggestedModelSwitch(st, "other|key", "cur")).toBe(false);
    expect(recordModelSwitchSuggestion(st, KEY, "cur")).toBe(st);
    expect(JSON.parse(JSON.stringify(st))).toEqual(st);
  });

  it("the once-only bookkeeping is storable in PostgreSQL jsonb (no \\u0000 anywhere)", () => {
    const st = recordModelSwitchSuggestion(createSessionBehaviour("s"), "bash|command=make", "model-a");
    expect(JSON.stringify(st)).not.toContain("\\u0000");
    expect(hasSuggestedModelSwitch(st, "bash|command=make", "model-a")).toBe(true);
    expect(hasSuggestedModelSwitch(st, "bash|command=make", "model-b")).toBe(false);
  });

  it("property: a suggestion always names a different model with ≥ minAttempts and a rate at least minSuccessRateDiff better", () => {
    const arbProf = fc.record({
      model: fc.constantFrom("cur", "a", "b", "c", "d"),
      attempts: fc.nat({ max: 12 }),
      failures: fc.nat({ max: 12 }),
    });
    fc.assert(
      fc.property(fc.array(arbProf, { maxLength: 8 }), fc.subarray(["a", "b", "c", "d"]), (raw, preferred) => {
        const profiles = raw.map((p) => prof(p.model, Math.max(p.attempts, p.failures), p.failures));
        const r = suggestModelSwitch(input({ profilesForKey: profiles, preferredModels: preferred }));
        if (!r || r.type !== "model_suggestion") return;
        expect(r.suggestedModel).not.toBe("cur");
        if (preferred.length > 0) expect(preferred).toContain(r.suggestedModel);
        const cand = profiles.find((p) => p.model === r.suggestedModel)!;
        expect(cand.attempts).toBeGreaterThanOrEqual(3);
        expect(r.suggestedSuccessRate - r.currentSuccessRate).toBeGreaterThan(0.3 - 1e-9);
      }),
    );
  });
});

describe("model behavioural profiles", () => {
  it("stallRate and nudgeEffectiveness", () => {
    expect(stallRate({ turns: 0, stalledTurns: 0 })).toBe(0);
    expect(stallRate({ turns: 8, stalledTurns: 2 })).toBe(0.25);
    expect(nudgeEffectiveness({ nudgesSent: 0, nudgesEffective: 0 })).toBe(1);
    expect(nudgeEffectiveness({ nudgesSent: 4, nudgesEffective: 3 })).toBe(0.75);
  });

  it("adds engine stats to a profile", () => {
    let p = applyBehaviourStats(undefined, "m", {
      patterns: { planning_loop: 1 },
      nudgesSent: 1,
      nudgesEffective: 0,
      turns: 1,
      stalledTurns: 1,
    });
    p = applyBehaviourStats(p, "m", {
      patterns: { planning_loop: 1, read_only_loop: 1 },
      nudgesSent: 2,
      nudgesEffective: 1,
      turns: 1,
      stalledTurns: 0,
    });
    expect(p).toEqual({
      model: "m",
      patternCounts: { planning_loop: 2, read_only_loop: 1 },
      nudgesSent: 3,
      nudgesEffective: 1,
      turns: 2,
      stalledTurns: 1,
    });
    expect(mostCommonPattern(p)).toBe("planning_loop");
    expect(mostCommonPattern(emptyModelBehaviourProfile("x"))).toBeNull();
  });
});
