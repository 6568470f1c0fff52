import { describe, expect, it } from "vitest";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("tool_avoidance", () => {
  climbsItsLadder("tool_avoidance", (t) => void t.text("I could use writeFile for that."));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("tool_avoidance")).toEqual([2, 3, 4]);
  });
});
