import { describe, expect, it } from "vitest";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("empty_response", () => {
  climbsItsLadder("empty_response", (t) => void t.text("   "));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("empty_response")).toEqual([1, 2, 3]);
  });
});
