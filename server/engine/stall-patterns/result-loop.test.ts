import { describe, expect, it } from "vitest";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { climbsItsLadder, ladderOf } from "./ladder-check";

const doc = { ok: { title: "Configuring sampling", url: "/docs/sampling" } };

describe("result_loop", () => {
  climbsItsLadder("result_loop", (t, k) => void t.act("searchDocumentation", { query: `sampling rate wording ${k}` }, doc));

  it("the default ladder is SPEC 5.1's", () => {
    expect(ladderOf("result_loop")).toEqual([3, 4, 5]);
  });

  it("a different result ends the run; the call that returned it starts the next one", () => {
    const t = new Trace();
    t.act("search", { q: "a" }, doc);
    t.act("search", { q: "b" }, doc);
    t.act("search", { q: "c" }, { ok: "something else" });
    t.act("search", { q: "d" }, { ok: "something else" });
    expect(t.patternsOf("result_loop")).toEqual([]);
    t.act("search", { q: "e" }, { ok: "something else" });
    expect(t.patternsOf("result_loop").map((p) => [p.severity, p.count])).toEqual([["minor", 3]]);
  });

  it("an action between the results ends the run", () => {
    const t = new Trace();
    t.act("search", { q: "a" }, doc);
    t.act("search", { q: "b" }, doc);
    t.act("bash", { command: "ls" }, { ok: "x" });
    t.act("search", { q: "c" }, doc);
    t.act("search", { q: "d" }, doc);
    expect(t.patternsOf("result_loop")).toEqual([]);
  });

  it("an action called but not answered yet ends the run too", () => {
    const t = new Trace();
    t.act("search", { q: "a" }, doc);
    t.act("search", { q: "b" }, doc);
    t.call("Edit", { file_path: "a.ts" });
    t.act("search", { q: "c" }, doc);
    expect(t.patternsOf("result_loop")).toEqual([]);
  });

  it("another tool's result, a failure or a result without a body ends the run", () => {
    for (const between of [
      (t: Trace) => void t.act("Read", { file_path: "x.md" }, { ok: "x" }),
      (t: Trace) => void t.act("search", { q: "z" }, { error: "timeout" }),
      (t: Trace) => void t.act("search", { q: "z" }, {}),
    ]) {
      const t = new Trace();
      t.act("search", { q: "a" }, doc);
      t.act("search", { q: "b" }, doc);
      between(t);
      t.act("search", { q: "c" }, doc);
      t.act("search", { q: "d" }, doc);
      expect(t.patternsOf("result_loop")).toEqual([]);
    }
  });

  it("the identical call repeated is repetitive_calls', not counted again here", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) t.act("search", { q: "same" }, doc);
    expect(t.patternsOf("result_loop")).toEqual([]);
    expect(t.patternsOf("repetitive_calls").map((p) => p.count)).toEqual([3]);
  });

  it("a person's message ends the run", () => {
    const t = new Trace();
    t.act("search", { q: "a" }, doc);
    t.act("search", { q: "b" }, doc);
    t.user("Try the changelog instead.");
    t.act("search", { q: "c" }, doc);
    expect(t.patternsOf("result_loop")).toEqual([]);
  });

  it("model text between the calls does not end it", () => {
    const t = new Trace();
    for (const q of ["a", "b", "c"]) {
      t.text(`Searching for ${q} instead.`);
      t.act("search", { q }, doc);
    }
    expect(t.patternsOf("result_loop").map((p) => p.count)).toEqual([3]);
    expect(t.nudges().at(-1)!.message).toContain("search returned the same result 3 times");
  });
});
