/**
 * The rule that turns a late timer into "too far behind" (server/http/event-loop-lag.ts): one long
 * pause never refuses anything, lateness that lasts does at once, and the lag falls back as soon
 * as the thread keeps up.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_EVENT_LOOP_LAG_MS, lagLimitFromEnv, nextSamples, sustainedLag, type LagSamples } from "@/server/http/event-loop-lag";

const LIMIT = 200;
const after = (lateness: number[], start: LagSamples = [0, 0]) => sustainedLag(lateness.reduce(nextSamples, start));

describe("event-loop lag", () => {
  it("one long pause (a module loaded, a large batch) stays under the limit, however long", () => {
    expect(after([30_000])).toBeLessThan(LIMIT);
    expect(after([0, 0, 5_000, 0, 0])).toBeLessThan(LIMIT);
    expect(after([5_000, 0])).toBeLessThan(LIMIT);
    expect(after([400, 100, 400])).toBeLessThan(LIMIT);
  });

  it("lateness that lasts crosses the limit at its second sample", () => {
    expect(after([400, 400])).toBeGreaterThan(LIMIT);
    expect(after([0, 0, 250, 250, 250])).toBeGreaterThan(LIMIT);
    // Late, but by less than the limit: never refused.
    expect(after(Array.from({ length: 100 }, () => 150))).toBeLessThan(LIMIT);
  });

  it("falls back under the limit with the first sample on time once the thread keeps up", () => {
    const saturated = Array.from({ length: 20 }, () => 1_000).reduce(nextSamples, [0, 0] as LagSamples);
    expect(sustainedLag(saturated)).toBeGreaterThan(LIMIT);
    expect(after([0], saturated)).toBeLessThan(1);
  });

  it("VIGIL_MAX_EVENT_LOOP_LAG_MS: a whole number of ms, 0 = off, unset = the default; anything else named", () => {
    expect(lagLimitFromEnv(undefined)).toBe(DEFAULT_MAX_EVENT_LOOP_LAG_MS);
    expect(lagLimitFromEnv(" ")).toBe(DEFAULT_MAX_EVENT_LOOP_LAG_MS);
    expect(lagLimitFromEnv("0")).toBe(0);
    expect(lagLimitFromEnv("500")).toBe(500);
    for (const bad of ["-1", "1.5", "fast", "1e999"]) expect(() => lagLimitFromEnv(bad)).toThrow(/VIGIL_MAX_EVENT_LOOP_LAG_MS/);
  });
});
