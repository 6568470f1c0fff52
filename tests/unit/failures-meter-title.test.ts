/** The effective-failures meter says what its figure means in each trust state (SPEC 4.2, 4.3). */
import { describe, expect, it } from "vitest";
import { failuresMeterTitle } from "@/components/dashboard/key-status";

describe("failuresMeterTitle", () => {
  it("keeps the decayed figure and, for a recovering key, says recovery counts successes", () => {
    const t = failuresMeterTitle({ value: 3.24, threshold: 3, state: "recovering", recovery: { successes: 1, needed: 3 } });
    expect(t).toMatch(/^Effective failures \(decayed[^)]*\) 3\.2 of 3 — the key is recovering/);
    expect(t).toContain("it needs 2 more successful calls (1 of 3)");
    expect(t).toContain("escalates it again");
  });

  it("says a complete recovery waits for a person in ask mode", () => {
    const t = failuresMeterTitle({ value: 3.2, threshold: 3, state: "recovering", recovery: { successes: 5, needed: 3 }, approvalPending: true });
    expect(t).toContain("it has the 3 successful calls it needs and waits for a person's approval");
  });

  it("explains escalated, blocked and a stricter domain or tool state", () => {
    expect(failuresMeterTitle({ value: 3, threshold: 3, state: "escalated" })).toContain("the key is escalated");
    expect(failuresMeterTitle({ value: 0, threshold: 3, state: "blocked" })).toContain("only a person's reset unblocks it");
    const level = failuresMeterTitle({ value: 0, threshold: 3, state: "blocked", ownState: "trusted" });
    expect(level).toContain("the key itself is trusted, but its domain or tool state is blocked");
  });

  it("says when a trusted key escalates", () => {
    expect(failuresMeterTitle({ value: 1.5, threshold: 3, state: "trusted" })).toBe(
      "Effective failures (decayed by age and later sessions) 1.5 of 3 — the key escalates when the figure reaches 3.",
    );
  });
});
