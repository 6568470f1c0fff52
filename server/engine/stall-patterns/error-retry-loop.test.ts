import { describe, expect, it } from "vitest";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("error_retry_loop", () => {
  climbsItsLadder("error_retry_loop", (t) => void t.act("bash", { command: "make" }, { error: "make: *** No rule to make target" }));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("error_retry_loop")).toEqual([3, 4, 5]);
  });

  it("error_retry_loop needs the same error; a different error starts over", () => {
    const t = new Trace();
    t.act("bash", { command: "make" }, { error: "E1" });
    t.act("bash", { command: "make" }, { error: "E1" });
    t.act("bash", { command: "make" }, { error: "E2" });
    t.act("bash", { command: "make" }, { error: "E2" });
    expect(t.patternsOf("error_retry_loop")).toEqual([]);
  });
});
