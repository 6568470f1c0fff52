import { describe, expect, it } from "vitest";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("read_only_loop", () => {
  // It counts re-reads: the first read is new.
  climbsItsLadder("read_only_loop", (t) => void t.act("Read", { file_path: "a.ts" }, { ok: "x" }), (k) => k + 1);

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("read_only_loop")).toEqual([3, 5, 8]);
  });

  it("reading six different files is progress, not repetition", () => {
    const t = new Trace();
    for (const f of ["a", "b", "c", "d", "e", "f"]) t.act("Read", { file_path: `${f}.ts` }, { ok: `content of ${f}` });
    expect(t.effects).toEqual([]);
  });

  it("read_only_loop counts re-reads only; a productive action starts a new stretch", () => {
    const t = new Trace();
    for (let i = 0; i < 20; i++) t.act("Read", { file_path: `f${i}.ts` }, { ok: i });
    t.act("Read", { file_path: "f1.ts" }, { ok: 1 });
    t.act("Grep", { pattern: "x" }, { ok: [] });
    t.act("Read", { file_path: "f2.ts" }, { ok: 2 });
    t.act("Read", { file_path: "f3.ts" }, { ok: 3 });
    expect(t.patternsOf("read_only_loop").map((p) => [p.severity, p.count])).toEqual([["minor", 3]]);
    t.act("Edit", { file_path: "f3.ts", old_string: "a", new_string: "b" }, { ok: "edited" });
    t.act("Read", { file_path: "f3.ts" }, { ok: 3 });
    t.act("Read", { file_path: "f3.ts" }, { ok: 3 });
    expect(t.patternsOf("read_only_loop")).toHaveLength(1);
  });
});
