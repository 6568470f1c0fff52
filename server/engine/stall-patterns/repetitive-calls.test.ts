import { describe, expect, it } from "vitest";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { climbsItsLadder, ladderOf } from "./ladder-check";

describe("repetitive_calls", () => {
  climbsItsLadder("repetitive_calls", (t) => void t.act("bash", { command: "ls dist" }, { ok: "a.js" }));

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("repetitive_calls")).toEqual([3, 4, 5]);
  });

  it("the same successful command with the same output is a run (action–observation loop)", () => {
    const t = new Trace();
    for (let i = 0; i < 5; i++) t.act("bash", { command: "ls dist" }, { ok: "index.js" });
    expect(t.patternsOf("repetitive_calls").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]);
    expect(t.paused).toBe(true);
  });

  it("identical failing calls are told to read the error, not to use what the call returned (SPEC 5.1)", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) t.act("bash", { command: "npm run build" }, { error: "TS2304: Cannot find name 'x'" });
    const [first] = t.nudges();
    expect(first).toMatchObject({ nudgeType: "gentle", patternType: "repetitive_calls" });
    expect(first.message).toBe(
      'bash {"command":"npm run build"} failed 2 times with the same error. Read the error and change the arguments or the approach instead of retrying unchanged.',
    );
    // The same successful call keeps its own text.
    const ok = new Trace();
    for (let i = 0; i < 3; i++) ok.act("bash", { command: "ls dist" }, { ok: "index.js" });
    expect(ok.nudges()[0].message).toContain("Use what it returned");
  });

  it("a different outcome ends the run: polling a changing status draws nothing", () => {
    const t = new Trace();
    for (const status of ["queued", "running", "running 40%", "running 80%", "done"]) t.act("bash", { command: "gh run view 42" }, { ok: { status } });
    expect(t.effects).toEqual([]);
  });
});
