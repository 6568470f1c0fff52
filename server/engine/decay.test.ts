import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  ageDecay,
  buildSessionTimeline,
  countFailuresInWindow,
  effectiveFailures,
  emptyTimeline,
  failureRate,
  sessionsCrossed,
  withSession,
  recordSession,
  copyTimeline,
} from "./decay";
import { BUILTIN_RULE } from "./rules";
import { SEVERITIES, type FailureRecord, type Severity } from "./types";

const T0 = 1_700_000_000_000;
const MIN = 60_000;
const HOUR = 3_600_000;
const rule = { ...BUILTIN_RULE, severityFilter: [...BUILTIN_RULE.severityFilter] };

let seq = 0;
function f(ts: number, severity: Severity = "server_error", extra: Partial<FailureRecord> = {}): FailureRecord {
  return { ts, severity, weight: severity === "invalid_input" ? 0.5 : 1, sessionId: "s1", agent: "default", seq: ++seq, ...extra };
}

describe("age decay (whole hours)", () => {
  it("59 minutes → 1.0, 61 minutes → 0.9, floor at 0.1", () => {
    expect(ageDecay(0)).toBe(1);
    expect(ageDecay(59 * MIN)).toBe(1);
    expect(ageDecay(60 * MIN - 1)).toBe(1);
    expect(ageDecay(60 * MIN)).toBe(0.9);
    expect(ageDecay(61 * MIN)).toBe(0.9);
    expect(ageDecay(2 * HOUR + 1)).toBe(0.8);
    expect(ageDecay(9 * HOUR)).toBe(0.1);
    expect(ageDecay(50 * HOUR)).toBe(0.1);
    expect(ageDecay(-5 * MIN)).toBe(1);
  });

  it("effective failures use it", () => {
    const wide = { ...rule, windowSeconds: 100 * 3600 };
    const t = emptyTimeline();
    expect(effectiveFailures([f(T0)], wide, t, T0 + 59 * MIN)).toBe(1);
    expect(effectiveFailures([f(T0)], wide, t, T0 + 61 * MIN)).toBeCloseTo(0.9, 10);
    expect(effectiveFailures([f(T0)], wide, t, T0 + 20 * HOUR)).toBeCloseTo(0.1, 10);
  });

  it("three failures a minute apart reach a count threshold of 3", () => {
    const fs = [f(T0), f(T0 + MIN), f(T0 + 2 * MIN)];
    expect(effectiveFailures(fs, rule, emptyTimeline(), T0 + 2 * MIN)).toBe(3);
  });
});

describe("window and filter", () => {
  it("failures older than the window are cut off (the window edge is inside)", () => {
    const r = { ...rule, windowSeconds: 600 };
    const t = emptyTimeline();
    expect(effectiveFailures([f(T0)], r, t, T0 + 600_000)).toBe(1);
    expect(effectiveFailures([f(T0)], r, t, T0 + 600_001)).toBe(0);
  });

  it("only severities in the filter count", () => {
    const fs = [f(T0, "timeout"), f(T0, "not_found"), f(T0, "crash"), f(T0, "security")];
    expect(effectiveFailures(fs, rule, emptyTimeline(), T0)).toBe(2);
    expect(effectiveFailures(fs, { ...rule, severityFilter: ["timeout"] }, emptyTimeline(), T0)).toBe(1);
    expect(countFailuresInWindow(fs, rule, T0)).toBe(2);
  });

  it("invalid_input weighs 0.5", () => {
    const r = { ...rule, severityFilter: ["invalid_input" as const] };
    expect(effectiveFailures([f(T0, "invalid_input"), f(T0, "invalid_input"), f(T0, "invalid_input")], r, emptyTimeline(), T0)).toBe(1.5);
  });

  it("afterSeq excludes earlier records", () => {
    const a = f(T0);
    const b = f(T0);
    expect(effectiveFailures([a, b], rule, emptyTimeline(), T0, { afterSeq: a.seq })).toBe(1);
  });
});

describe("session decay", () => {
  const tl = buildSessionTimeline([
    { sessionId: "s1", agent: "default", startedAt: T0, endedAt: T0 + 5 * MIN },
    { sessionId: "s2", agent: "default", startedAt: T0 + 10 * MIN, endedAt: T0 + 15 * MIN },
    { sessionId: "s3", agent: "default", startedAt: T0 + 20 * MIN, endedAt: null },
    { sessionId: "o1", agent: "other", startedAt: T0 + 11 * MIN, endedAt: null },
    { sessionId: "live", agent: "default", startedAt: T0 - MIN, endedAt: null },
  ]);

  it("0.8^n for sessions of the same agent started after the failure's session ended", () => {
    const fail = f(T0 + MIN, "server_error", { sessionId: "s1" });
    expect(sessionsCrossed(fail, tl, T0 + 30 * MIN)).toBe(2); // s2, s3 (not o1: other agent)
    expect(effectiveFailures([fail], rule, tl, T0 + 30 * MIN)).toBeCloseTo(0.64, 10);
  });

  it("sessions starting after now are not counted", () => {
    const fail = f(T0 + MIN, "server_error", { sessionId: "s1" });
    expect(sessionsCrossed(fail, tl, T0 + 12 * MIN)).toBe(1);
  });

  it("a session that has not ended is not session-decayed", () => {
    const fail = f(T0, "server_error", { sessionId: "live" });
    expect(sessionsCrossed(fail, tl, T0 + 30 * MIN)).toBe(0);
    expect(effectiveFailures([fail], rule, tl, T0 + 30 * MIN)).toBe(1);
  });

  it("only sessions of the same agent name count", () => {
    const t2 = withSession(tl, { sessionId: "o0", agent: "other", startedAt: T0, endedAt: T0 + MIN });
    const fail = f(T0, "server_error", { sessionId: "o0", agent: "other" });
    expect(sessionsCrossed(fail, t2, T0 + 30 * MIN)).toBe(1); // o1 only
  });

  it("unknown sessions are not decayed", () => {
    expect(sessionsCrossed(f(T0, "crash", { sessionId: "nope" }), tl, T0 + HOUR)).toBe(0);
  });

  it("session ids and agent names are keys like any other, `__proto__` and `constructor` too", () => {
    const named = (agent: string) => [
      { sessionId: "__proto__", agent, startedAt: T0, endedAt: T0 + MIN },
      { sessionId: "constructor", agent, startedAt: T0 + 2 * MIN, endedAt: T0 + 3 * MIN },
      { sessionId: "toString", agent, startedAt: T0 + 4 * MIN, endedAt: null },
    ];
    for (const agent of ["__proto__", "constructor", "default"]) {
      const t = buildSessionTimeline(named(agent));
      expect(sessionsCrossed(f(T0, "server_error", { sessionId: "__proto__", agent }), t, T0 + HOUR)).toBe(2);
      expect(sessionsCrossed(f(T0, "server_error", { sessionId: "constructor", agent }), t, T0 + HOUR)).toBe(1);
      const moved = withSession(t, { sessionId: "__proto__", agent, startedAt: T0 + 5 * MIN, endedAt: null });
      expect(moved.startsByAgent[agent]).toEqual([T0 + 2 * MIN, T0 + 4 * MIN, T0 + 5 * MIN]);
    }
    expect(sessionsCrossed(f(T0, "server_error", { sessionId: "hasOwnProperty" }), tl, T0 + HOUR)).toBe(0);
  });

  it("age and session decay multiply with weight", () => {
    const wide = { ...rule, windowSeconds: 10 * 3600, severityFilter: ["invalid_input" as const] };
    const fail = f(T0 + MIN, "invalid_input", { sessionId: "s1" });
    // 0.5 × 0.8 (2 full hours) × 0.8² (s2, s3)
    expect(effectiveFailures([fail], wide, tl, T0 + MIN + 2 * HOUR + 5 * MIN)).toBeCloseTo(0.5 * 0.8 * 0.64, 10);
  });
});

describe("failure rate", () => {
  /** A state's results as the engine keeps them: times from a first seq, failures by seq. */
  const history = (records: { ts: number; failed: boolean }[], firstSeq = 1) => ({
    results: { firstSeq, ts: records.map((r) => r.ts) },
    failures: records.flatMap((r, i) => (r.failed ? [f(r.ts, "server_error", { seq: firstSeq + i })] : [])),
  });
  const r = (ts: number, failed: boolean) => ({ ts, failed });

  it("failures ÷ results in the window, only with ≥ rateMinCalls results", () => {
    const rs = [r(T0, true), r(T0, false), r(T0, true)];
    const h = history(rs);
    expect(failureRate(h.results, h.failures, rule, T0)).toBeNull();
    const h4 = history([...rs, r(T0, true)]);
    expect(failureRate(h4.results, h4.failures, rule, T0)).toBe(0.75);
    expect(failureRate(h.results, h.failures, { ...rule, rateMinCalls: 3 }, T0)).toBeCloseTo(2 / 3, 10);
  });

  it("results outside the window do not count, nor those up to afterSeq", () => {
    const h = history([r(T0 - 2 * HOUR, true), r(T0, false), r(T0, false), r(T0, false), r(T0, true)], 11);
    expect(failureRate(h.results, h.failures, rule, T0)).toBe(0.25);
    expect(failureRate(h.results, h.failures, { ...rule, rateMinCalls: 1 }, T0, { afterSeq: 14 })).toBe(1);
    expect(failureRate(h.results, h.failures, { ...rule, rateMinCalls: 1 }, T0, { afterSeq: 15 })).toBeNull();
  });

  it("failures older than the first kept result do not count (results were not kept then)", () => {
    const h = history([r(T0, false), r(T0, false), r(T0, false), r(T0, true)], 8);
    h.failures.unshift(f(T0 - MIN, "server_error", { seq: 5 }), f(T0 - MIN, "server_error", { seq: 7 }));
    expect(failureRate(h.results, h.failures, rule, T0)).toBe(0.25);
  });
});

describe("properties", () => {
  const failureArb = fc.record({
    ts: fc.integer({ min: T0 - 20 * HOUR, max: T0 }),
    severity: fc.constantFrom(...SEVERITIES),
    sessionId: fc.constantFrom("s1", "s2", "s3"),
    agent: fc.constantFrom("default", "other"),
  });
  const timelineArb = fc
    .array(
      fc.record({
        sessionId: fc.constantFrom("s1", "s2", "s3", "s4"),
        agent: fc.constantFrom("default", "other"),
        startedAt: fc.option(fc.integer({ min: T0 - 20 * HOUR, max: T0 }), { nil: null }),
        endedAt: fc.option(fc.integer({ min: T0 - 20 * HOUR, max: T0 }), { nil: null }),
      }),
    )
    .map(buildSessionTimeline);
  const ruleArb = fc.record({
    windowSeconds: fc.integer({ min: 1, max: 30 * 3600 }),
    severityFilter: fc.subarray([...SEVERITIES]),
  });

  it("sessions crossed are the starts of the failure's agent after its session's end, up to now", () => {
    // Times on a coarse grid, so starts, ends and now often coincide.
    const at = fc.integer({ min: 0, max: 12 }).map((m) => T0 + m * MIN);
    const sessions = fc.array(
      fc.record({ sessionId: fc.constantFrom("s1", "s2", "s3", "s4", "s5", "s6"), agent: fc.constantFrom("default", "other"), startedAt: fc.option(at, { nil: null }), endedAt: fc.option(at, { nil: null }) }),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(sessions.map(buildSessionTimeline), failureArb, at, (tl, raw, now) => {
        const info = tl.sessions[raw.sessionId];
        const agent = raw.agent || info?.agent;
        const expected =
          !info || info.endedAt === null ? 0 : (tl.startsByAgent[agent] ?? []).filter((s) => s > info.endedAt! && s <= now).length;
        expect(sessionsCrossed(raw, tl, now)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("effective failures are never negative and never exceed the weighted count", () => {
    fc.assert(
      fc.property(fc.array(failureArb, { maxLength: 40 }), timelineArb, ruleArb, (raw, tl, r) => {
        const fs = raw.map((x, i) => ({ ...x, weight: x.severity === "invalid_input" ? 0.5 : 1, seq: i + 1 }));
        const eff = effectiveFailures(fs, r, tl, T0);
        const weighted = fs
          .filter((x) => r.severityFilter.includes(x.severity) && T0 - x.ts <= r.windowSeconds * 1000)
          .reduce((a, x) => a + x.weight, 0);
        expect(eff).toBeGreaterThanOrEqual(0);
        expect(eff).toBeLessThanOrEqual(weighted + 1e-9);
      }),
    );
  });
});

describe("withSession and recordSession", () => {
  it("give the timeline a rebuild from all sessions would give, whatever is added, moved or restarted", () => {
    // A seeded walk: sessions are added, restarted (new start), handed to another agent, or lose their start.
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    let tl = buildSessionTimeline([]);
    const live = copyTimeline(tl); // recordSession changes this one in place
    const all = new Map<string, { sessionId: string; agent: string; startedAt: number | null; endedAt: number | null }>();
    for (let step = 0; step < 400; step++) {
      const s = { sessionId: `s${rand(40)}`, agent: `a${rand(4)}`, startedAt: rand(5) === 0 ? null : T0 + rand(50) * MIN, endedAt: rand(2) ? null : T0 + rand(90) * MIN };
      all.set(s.sessionId, s);
      tl = withSession(tl, s);
      recordSession(live, s);
      expect(tl).toEqual(buildSessionTimeline([...all.values()]));
      expect(live).toEqual(tl);
    }
  });

  it("leaves the timeline it was given unchanged", () => {
    const tl = buildSessionTimeline([{ sessionId: "s1", agent: "a", startedAt: T0, endedAt: null }]);
    const copy = structuredClone(tl);
    withSession(tl, { sessionId: "s1", agent: "b", startedAt: T0 + MIN, endedAt: null });
    withSession(tl, { sessionId: "s2", agent: "a", startedAt: T0 - MIN, endedAt: null });
    expect(tl).toEqual(copy);
  });

  it("copyTimeline gives a copy recordSession can change without changing the original", () => {
    const tl = buildSessionTimeline([{ sessionId: "s1", agent: "a", startedAt: T0, endedAt: null }]);
    const copy = structuredClone(tl);
    const mine = copyTimeline(tl);
    recordSession(mine, { sessionId: "s1", agent: "b", startedAt: T0 + MIN, endedAt: null });
    recordSession(mine, { sessionId: "s2", agent: "a", startedAt: T0 - MIN, endedAt: null });
    expect(tl).toEqual(copy);
    expect(mine.startsByAgent).toEqual({ a: [T0 - MIN], b: [T0 + MIN] });
  });
});

