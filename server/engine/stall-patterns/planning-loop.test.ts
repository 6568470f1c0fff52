import { describe, expect, it } from "vitest";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("planning_loop", () => {
  climbsItsLadder("planning_loop", (t, k) => void t.text(`Thinking about step ${k}.`));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("planning_loop")).toEqual([3, 4, 6]);
  });
});
