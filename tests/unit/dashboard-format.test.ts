/** Pure helpers behind the dashboard's charts, time windows and settings display (issue 11). */
import { describe, expect, it } from "vitest";
import { categoryTick, percentTicks } from "@/components/chart-theme";
import { MODEL_SWITCH_META, humanSeconds, ratioToPercentText, validatePercentText } from "@/components/config/meta";
import { formatCount, formatDecimal, formatPercent } from "@/components/format";
import { middleCut } from "@/components/middle-truncate";
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

describe("formatDecimal (effective failures, thresholds)", () => {
  it("writes whole numbers without decimals and fractions with one", () => {
    expect(formatDecimal(1)).toBe("1");
    expect(formatDecimal(3)).toBe("3");
    expect(formatDecimal(1.5)).toBe("1.5");
    expect(formatDecimal(3.24)).toBe("3.2");
    expect(formatDecimal(0)).toBe("0");
    expect(formatDecimal(1234.56)).toBe("1,234.6");
  });
  it("reads a decayed value that is whole at one decimal as whole, never as 2.0 or -0", () => {
    expect(formatDecimal(2.0000001)).toBe("2");
    expect(formatDecimal(1.99999)).toBe("2");
    expect(formatDecimal(-0.01)).toBe("0");
    expect(formatDecimal(null)).toBe("—");
  });
});

describe("formatPercent (success and failure rates)", () => {
  it("always has one decimal, so rates in one column and across pages read alike", () => {
    expect(formatPercent(0.81)).toBe("81.0%");
    expect(formatPercent(0.719)).toBe("71.9%");
    expect(formatPercent(0.3256)).toBe("32.6%");
    expect(formatPercent(1 / 3)).toBe("33.3%");
  });
  it("keeps 0% and 100% for exact ends and never rounds a near miss onto them", () => {
    expect(formatPercent(0)).toBe("0%");
    expect(formatPercent(1)).toBe("100%");
    expect(formatPercent(4999 / 5000)).toBe(">99.9%");
    expect(formatPercent(1 / 5000)).toBe("<0.1%");
    expect(formatPercent(0.0005)).toBe("0.1%");
  });
  it("takes other precisions for chart axes and has a dash for no value", () => {
    expect(formatPercent(0.2, 0)).toBe("20%");
    expect(formatPercent(0.996, 0)).toBe(">99%");
    expect(formatPercent(undefined)).toBe("—");
    expect(formatPercent(Number.NaN)).toBe("—");
  });
});

describe("percent inputs of ratio settings (minimum success-rate gain)", () => {
  const gain = MODEL_SWITCH_META.find((f) => f.ratio)!;
  it("shows the stored fraction as a percentage and stores the typed percentage as a fraction", () => {
    expect(gain.key).toBe("min_success_rate_diff");
    expect(ratioToPercentText(0.3)).toBe("30");
    expect(ratioToPercentText(0.07)).toBe("7");
    expect(ratioToPercentText(undefined)).toBe("");
    expect(validatePercentText(gain, "30")).toEqual({ value: 0.3 });
    expect(validatePercentText(gain, "12.5")).toEqual({ value: 0.125 });
    expect(validatePercentText(gain, " ")).toEqual({});
  });
  it("rejects a percentage outside the field's range in percent", () => {
    expect(validatePercentText(gain, "150").error).toBe("Enter a percentage from 0 to 100");
    expect(validatePercentText(gain, "-5").error).toBe("Enter a percentage from 0 to 100");
  });
});

describe("middleCut (where a middle-truncated id keeps its end)", () => {
  const tail = (v: string) => v.slice(middleCut(v));
  it("keeps up to 16 characters of a long id, from a separator when one is near", () => {
    expect(tail("demo-b305db-feature-bot-s49")).toBe("-feature-bot-s49");
    expect(tail("demo-h-2026-11-29-refactor-bot-1")).toBe("-refactor-bot-1");
    expect(tail("3f2a9c1e-7b44-4f0e-9a51-0c6d2e8b1f77")).toBe("-0c6d2e8b1f77");
  });
  it("keeps about the last 60 % of a short name and leaves a very short one whole", () => {
    expect(tail("claude-sonnet-4.5")).toBe("-sonnet-4.5");
    expect(tail("gpt-4.1-mini")).toBe("4.1-mini");
    expect(middleCut("glm-4.6")).toBe("glm-4.6".length);
  });
});
