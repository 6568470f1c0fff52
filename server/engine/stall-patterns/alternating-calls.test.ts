import { describe, expect, it } from "vitest";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("alternating_calls", () => {
  climbsItsLadder("alternating_calls", (t, k) => void t.act("bash", { command: k % 2 ? "git status" : "git diff" }, { ok: k % 2 ? "clean" : "" }));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("alternating_calls")).toEqual([4, 6, 8]);
  });

  it("alternating needs unchanged outcomes on both sides", () => {
    const t = new Trace();
    for (let i = 0; i < 8; i++) t.act("bash", { command: i % 2 ? "npm test" : "git diff" }, { ok: `output ${i}` });
    expect(t.patternsOf("alternating_calls")).toEqual([]);
  });
});
