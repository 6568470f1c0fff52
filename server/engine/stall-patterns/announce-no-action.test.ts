import { describe, expect, it } from "vitest";
import { BUILTIN_PATTERN_CONFIG, createSessionBehaviour, observeSessionEvent, type BehaviourEvent, type SessionBehaviour } from "../patterns";
import type { Effect } from "../types";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { climbsItsLadder, ladderOf } from "./ladder-check";
import { SID, Session, call, text, turn } from "./raw-session";


describe("announce_no_action", () => {
  // An announcement counts once the next text shows no call followed it: the first text counts nothing yet.
  climbsItsLadder("announce_no_action", (t) => void t.text("Got it. Proceeding now."), (k) => k + 1);

  it("the default ladder is SPEC 5 revision 2's", () => {
    expect(ladderOf("announce_no_action")).toEqual([2, 3, 4]);
  });
});

describe("seed example: announce without action", () => {
  it("2nd announcement → gentle, 3rd → direct, 4th → interrupt and pause", () => {
    const s = new Session();
    const announce = (e: Effect[]) => e.filter((x) => "patternType" in x && x.patternType === "announce_no_action");

    const t1 = s.feed(turn(1), text("I'll restore the file from backup. Proceeding now."), call("list_tools", {}));
    expect(announce(t1)).toEqual([]);

    const t2 = s.feed(turn(2), text("I'm going to restore and apply the fix. Proceeding immediately."), call("list_tools", {}));
    // The 2nd announcement counts at the list_tools that follows it (nothing new, SPEC 5.1), the same
    // event on which introspection_loop rises to minor: one nudge, the earlier pattern's in table order.
    expect(announce(t2)).toEqual([
      { type: "pattern", patternType: "announce_no_action", severity: "minor", count: 2, sessionId: SID, toolSequence: ["list_tools", "list_tools"] },
    ]);
    expect(t2.filter((e) => e.type === "nudge")).toEqual([
      { type: "nudge", nudgeType: "gentle", message: "You have the tool list. Proceed with the actual task instead of re-querying tools.", patternType: "introspection_loop", sessionId: SID },
    ]);

    const t3 = s.feed(turn(3), text("You're right - I need to actually execute. Proceeding with the real steps now."), call("list_tools", {}));
    expect(announce(t3).map((e) => (e.type === "nudge" ? [e.nudgeType, e.message] : [e.type]))).toEqual([
      ["pattern"],
      ["direct", "NOTICE: You've announced action 3 times without executing. Call the appropriate tool NOW."],
    ]);
    expect(s.state.paused).toBe(false);

    const t4 = s.feed(turn(4), text("Proceeding."), call("list_tools", {}));
    const a4 = announce(t4);
    expect(a4.map((e) => e.type)).toEqual(["pattern", "nudge"]);
    expect(a4[1]).toMatchObject({ nudgeType: "interrupt", message: "BLOCKED: Repeated announcements without action. System pausing for user input." });
    expect(t4).toContainEqual({
      type: "paused",
      sessionId: SID,
      reason: "BLOCKED: Repeated announcements without action. System pausing for user input.",
    });
    expect(s.state.paused).toBe(true);
    expect(s.state.pauseReason).toBe("BLOCKED: Repeated announcements without action. System pausing for user input.");
  });
});

describe("announce_no_action counts only announcements that bring nothing new (SPEC 5.1)", () => {
  const investigation = (t: Trace) => {
    t.text("Let me look at the failing test.");
    t.act("Read", { file_path: "src/parser.test.ts" }, { ok: "test source" });
    t.text("Let me check where parse is defined.");
    t.act("Grep", { pattern: "function parse", path: "src" }, { ok: ["src/parser.ts:12"] });
    t.text("Let me look at the parser.");
    t.act("Read", { file_path: "src/parser.ts" }, { ok: "parser source" });
    t.text("Let me check the tokenizer it calls.");
    t.act("Read", { file_path: "src/tokenizer.ts" }, { ok: "tokenizer source" });
    t.text("Let me also look at the fixtures.");
    t.act("Glob", { pattern: "fixtures/*.json" }, { ok: ["fixtures/a.json"] });
  };

  it("an investigation — announcements each followed by a new read, then an edit — gets no nudge", () => {
    const t = new Trace();
    investigation(t);
    t.text("I'll now fix the off-by-one in the parser.");
    t.act("Edit", { file_path: "src/parser.ts", old_string: "i <= n", new_string: "i < n" }, { ok: "edited" });
    expect(t.effects).toEqual([]);
    expect(t.paused).toBe(false);
  });

  it("a new read after an introspection call takes the announcement back", () => {
    const t = new Trace();
    for (let i = 0; i < 5; i++) {
      t.text(`Let me look at part ${i}.`);
      t.call("list_tools", {});
      t.act("Read", { file_path: `part${i}.ts` }, { ok: i });
    }
    expect(t.patternsOf("announce_no_action")).toEqual([]);
    expect(t.state.stretch.announcements).toBe(0);
  });

  it("announcements followed by re-reads of what was already read count", () => {
    const t = new Trace();
    t.act("Read", { file_path: "a.ts" }, { ok: "a" });
    for (let i = 0; i < 4; i++) {
      t.text("Let me look at a.ts again.");
      t.act("Read", { file_path: "a.ts" }, { ok: "a" });
    }
    expect(t.patternsOf("announce_no_action").map((p) => [p.severity, p.count])).toEqual([
      ["minor", 2],
      ["moderate", 3],
      ["severe", 4],
    ]);
  });

  it("an announcement followed by an action call is progress even before its result", () => {
    const t = new Trace();
    for (let i = 0; i < 4; i++) {
      t.text("Proceeding now.");
      t.call("bash", { command: "make" });
      t.call("list_tools", {});
    }
    expect(t.patternsOf("announce_no_action")).toEqual([]);
  });
});
