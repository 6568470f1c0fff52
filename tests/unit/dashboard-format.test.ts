/** Pure helpers behind the dashboard's charts, time windows and settings display (issue 11). */
import { describe, expect, it } from "vitest";
import { categoryTick, percentTicks } from "@/components/chart-theme";
import { humanSeconds } from "@/components/config/meta";
import { formatCount } from "@/components/format";
import { presetParams, readTimeWindow, windowDays } from "@/server/dashboard/time-range";

describe("percentTicks", () => {
  it("gives even steps from 0 to a round top that holds the maximum", () => {
    expect(percentTicks(0)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(percentTicks(7)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(percentTicks(33)).toEqual([0, 10, 20, 30, 40]);
    expect(percentTicks(100)).toEqual([0, 20, 40, 60, 80, 100]);
    for (const max of [1, 12, 37, 55, 64, 81, 99]) {
      const t = percentTicks(max);
      const steps = new Set(t.slice(1).map((v, i) => v - t[i]));
      expect(steps.size, `max ${max}: ${t}`).toBe(1);
      expect(t.at(-1)!).toBeGreaterThanOrEqual(Math.min(max, 100));
      expect(t.length).toBeLessThanOrEqual(6);
    }
  });
});

describe("humanSeconds", () => {
  it("reads as a duration, with the stored number where it helps", () => {
    expect(humanSeconds(3600)).toBe("1h");
    expect(humanSeconds(1800, true)).toBe("30m (1800 s)");
    expect(humanSeconds(45, true)).toBe("45s");
  });
});

describe("time window", () => {
  it("writes the page's default as no parameter and clears a custom range and the page", () => {
    expect(presetParams("7d", "7d")).toEqual({ range: null, from: null, to: null, page: null });
    expect(presetParams("24h", "7d")).toEqual({ range: "24h", from: null, to: null, page: null });
  });
  it("caps an open window's days and starts a one-sided custom range at its day", () => {
    const now = new Date("2026-11-20T12:00:00Z");
    expect(windowDays(readTimeWindow({ range: "all" }, "all", now), now, { earliest: "2020-01-01", maxDays: 30 })).toHaveLength(30);
    const since = readTimeWindow({ from: "2026-11-19" }, "all", now);
    expect(since).toMatchObject({ range: "custom", to: undefined, label: "2026-11-19 – now" });
    expect(windowDays(since, now)).toEqual(["2026-11-19", "2026-11-20"]);
  });
});

describe("categoryTick (chart category labels that fit their column)", () => {
  it("keeps short names and elides the middle of long ones, keeping both ends", () => {
    expect(categoryTick("claude-sonnet")).toBe("claude-sonnet");
    const long = "model-very-long-fine-tune-name-very-long-fine-tune-v1";
    const label = categoryTick(long);
    expect(label).toHaveLength(20);
    expect(label.startsWith("model-very")).toBe(true);
    expect(label.endsWith("tune-v1")).toBe(true);
    expect(label).toContain("…");
  });
});

describe("formatCount", () => {
  it("says one thing in the singular and groups thousands", () => {
    expect(formatCount(1, "attempt")).toBe("1 attempt");
    expect(formatCount(0, "attempt")).toBe("0 attempts");
    expect(formatCount(1200, "successful call")).toBe("1,200 successful calls");
  });
});
