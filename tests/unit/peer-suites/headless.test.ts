/**
 * Headless runs (SPEC 5.1): a framework's own messages ("Please continue", auto-replies) are
 * `user.message` with `automated: true` and reset nothing, so a loop across them is still caught —
 * OpenHands' headless assertions of test_is_stuck.py. A person's message still starts over.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Trace } from "./trace";

const ls = (t: Trace) => t.act("execute_bash", { command: "ls" }, { ok: { command: "ls", content: "" } });
const read = (t: Trace) => t.act("read_file", { path: "file1.txt" }, { ok: { path: "file1.txt", content: "File content" } });

describe("OpenHands headless: automated messages do not reset the runs", () => {
  it("test_is_stuck_repeating_action_observation (headless): 2× ls, 'Please continue', 2× ls is a run of 4", () => {
    const t = new Trace();
    t.text("Hello");
    ls(t);
    ls(t);
    t.automated();
    ls(t);
    ls(t);
    expect(t.patternsOf("repetitive_calls").map((p) => [p.severity, p.count])).toEqual([
      ["minor", 3],
      ["moderate", 4],
    ]);
    // The same trace with a person's message starts over.
    const u = new Trace();
    u.text("Hello");
    ls(u);
    ls(u);
    u.user("Done");
    ls(u);
    ls(u);
    expect(u.patternsOf("repetitive_calls")).toEqual([]);
  });

  it("test_is_stuck_repeating_action_observation_pattern (headless): A B A B, continue, A B counts on to 6", () => {
    const t = new Trace();
    t.user("Come on");
    ls(t);
    read(t);
    ls(t);
    read(t);
    t.automated("Come on");
    ls(t);
    read(t);
    expect(t.patternsOf("alternating_calls").map((p) => [p.severity, p.count])).toEqual([
      ["minor", 4],
      ["moderate", 6],
    ]);
  });

  it("empty responses answered by automated 'Please continue' still pause at the 3rd", () => {
    const t = new Trace();
    t.user("Build me an app");
    for (let i = 0; i < 3; i++) {
      t.text("");
      if (i < 2) t.automated();
    }
    expect(t.patternsOf("empty_response").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]);
    expect(t.paused).toBe(true);
  });

  it("an announcement stretch runs on across automated messages", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) {
      t.text("Proceeding now.");
      t.automated();
    }
    t.text("Proceeding now.");
    expect(t.patternsOf("announce_no_action").map((p) => p.count)).toEqual([2, 3]);
  });
});

type Op =
  | { kind: "act"; tool: string; arg: number; fail: boolean; out: number }
  | { kind: "call"; tool: string; arg: number }
  | { kind: "text"; text: string }
  | { kind: "user" };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("act" as const), tool: fc.constantFrom("bash", "Read", "list_tools", "search_docs", "Edit"), arg: fc.integer({ min: 0, max: 2 }), fail: fc.boolean(), out: fc.integer({ min: 0, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("call" as const), tool: fc.constantFrom("bash", "Read", "list_tools"), arg: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("text" as const), text: fc.constantFrom("Let me check.", "Proceeding now.", "I could use bash.", "", "Thinking.") }) },
  { weight: 1, arbitrary: fc.constant({ kind: "user" as const }) },
);

function replay(ops: Op[], automatedAt: Set<number>) {
  const t = new Trace();
  ops.forEach((o, i) => {
    if (automatedAt.has(i)) t.automated();
    if (o.kind === "act") t.act(o.tool, { a: o.arg }, o.fail ? { error: `E${o.out}` } : { ok: o.out });
    else if (o.kind === "call") t.call(o.tool, { a: o.arg });
    else if (o.kind === "text") t.text(o.text);
    else t.user("A person speaks.");
  });
  return t.effects.map((e) => (e.type === "pattern" ? `${e.patternType}:${e.severity}:${e.count}` : e.type === "nudge" ? `nudge:${e.nudgeType}:${e.message}` : e.type));
}

describe("property: an automated message never changes a detection", () => {
  it("the same trace with automated messages inserted anywhere reports the same patterns, nudges and pauses", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 8 }), (ops, at) => {
        expect(replay(ops, new Set(at))).toEqual(replay(ops, new Set()));
      }),
      { numRuns: 300 },
    );
  });
});
