import { describe, expect, it } from "vitest";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("introspection_loop", () => {
  climbsItsLadder("introspection_loop", (t, k) => void t.call(k % 2 ? "list_tools" : "askPermission", { k }));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("introspection_loop")).toEqual([2, 4, 6]);
  });
});
