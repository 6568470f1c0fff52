import { describe, expect, it } from "vitest";
import { MODEL_SWITCH_META, RULE_FIELD_META, SETTING_META, numberFieldChars } from "@/components/config/meta";

describe("numberFieldChars (a number input as wide as the largest value its field accepts)", () => {
  const numbers = [...SETTING_META, ...RULE_FIELD_META, ...MODEL_SWITCH_META].filter((m) => m.kind === "number");

  it("fits every number field's maximum from the registry, as the editor shows it", () => {
    expect(numbers.length).toBeGreaterThan(5);
    for (const m of numbers) {
      const widest = m.max === undefined ? "9999999999" : m.ratio ? String(m.max * 100) : String(m.max);
      expect(numberFieldChars(m), m.key).toBeGreaterThanOrEqual(widest.length);
    }
  });

  it("leaves room for a fraction where a value need not be whole, and none where it must", () => {
    const count = numbers.find((m) => m.key === "count_threshold")!; // greater than 0, fractions allowed, no maximum
    const idle = numbers.find((m) => m.key === "session_idle_minutes")!; // whole minutes, no maximum
    const gain = numbers.find((m) => m.key === "min_success_rate_diff")!; // 0–1 shown as 0–100 %
    expect(numberFieldChars(idle)).toBe(10);
    expect(numberFieldChars(count)).toBe(13);
    expect(numberFieldChars(gain)).toBe("100.00".length);
  });
});
