/**
 * OpenHands software-agent-sdk `tests/cross/test_stuck_detector.py`, case by case, replayed as
 * Vigil events with the built-in configuration (`terminal` is a default action tool).
 * Peer "stuck" → Vigil nudges or pauses at or before the peer's step; peer "not stuck" → nothing,
 * unless the test says why Vigil deliberately differs.
 */
import { describe, expect, it } from "vitest";
import { activePatterns } from "@/server/engine/behaviour-state";
import { Trace } from "./trace";

const ls = (t: Trace) => t.act("terminal", { command: "ls" }, { ok: { output: "file1.txt\nfile2.txt", exit_code: 0 } });

describe("OpenHands SDK test_stuck_detector.py", () => {
  it("test_history_too_short: one action-observation pair after a user message is not stuck", () => {
    const t = new Trace();
    t.user("Hello");
    ls(t);
    expect(t.effects).toEqual([]);
  });

  it("test_is_stuck_uses_only_recent_event_window: a 4× ls loop after old history is stuck", () => {
    const t = new Trace();
    for (let i = 0; i < 50; i++) t.user(`old-${i}`);
    t.user("start");
    for (let i = 0; i < 3; i++) t.text("ok");
    for (let i = 0; i < 4; i++) ls(t);
    expect(t.patternsOf("repetitive_calls").map((p) => p.severity)).toEqual(["minor", "moderate"]);
    expect(t.intervened).toBe(true);
  });

  it("test_repeating_action_observation_not_stuck_less_than_4_repeats: 3 identical pairs (Vigil differs: a gentle nudge, no stop)", () => {
    // Deliberate: Vigil's repetitive_calls ladder is 3/4/5 (Cline also warns at 3). The 3rd identical
    // call with the same output gets a gentle hint; nothing stops the agent, as OpenHands says.
    const t = new Trace();
    t.user("Please run ls");
    for (let i = 0; i < 3; i++) ls(t);
    expect(t.nudges().map((n) => n.nudgeType)).toEqual(["gentle"]);
    expect(t.paused).toBe(false);
  });

  it("test_repeating_action_observation_stuck: 4 identical action-observation pairs are stuck", () => {
    const t = new Trace();
    t.user("Please run ls");
    for (let i = 0; i < 4; i++) ls(t);
    expect(t.nudges().map((n) => [n.nudgeType, n.patternType])).toEqual([
      ["gentle", "repetitive_calls"],
      ["direct", "repetitive_calls"],
    ]);
    expect(t.nudges()[1]!.message).toContain('terminal {"command":"ls"}');
  });

  it("test_repeating_action_error_stuck: 2 identical failures not stuck, the 3rd is", () => {
    const t = new Trace();
    t.user("Please run the invalid command");
    const fail = () => t.act("terminal", { command: "invalid_command" }, { error: "Command 'invalid_command' not found" });
    fail();
    fail();
    expect(t.effects).toEqual([]);
    fail();
    expect(t.intervened).toBe(true);
    expect(t.patternsOf("error_retry_loop").map((p) => p.severity)).toEqual(["minor"]);
    // One nudge for that loop step, not two (repetitive_calls already nudged on the call).
    expect(t.nudges()).toHaveLength(1);
  });

  it("test_agent_monologue_stuck: 3 agent messages in a row are stuck", () => {
    const t = new Trace();
    t.user("Hello");
    for (let i = 0; i < 3; i++) t.text(`I'm thinking... ${i}`);
    expect(t.patternsOf("planning_loop").map((p) => p.severity)).toEqual(["minor"]);
    expect(t.intervened).toBe(true);
  });

  it("test_not_stuck_with_different_actions: ls, pwd, whoami, date are not stuck", () => {
    const t = new Trace();
    t.user("Please run different commands");
    for (const cmd of ["ls", "pwd", "whoami", "date"]) t.act("terminal", { command: cmd }, { ok: { output: `output from ${cmd}` } });
    expect(t.effects).toEqual([]);
  });

  it("test_reset_after_user_message: stuck, then a user message resets, one new action is not stuck", () => {
    const t = new Trace();
    t.user("Please run ls");
    for (let i = 0; i < 4; i++) ls(t);
    expect(activePatterns(t.state).map((p) => p.patternType)).toContain("repetitive_calls");
    const before = t.effects.length;
    t.user("Try something else");
    expect(activePatterns(t.state)).toEqual([]);
    t.act("terminal", { command: "pwd" }, { ok: { output: "/home/user" } });
    expect(t.effects.slice(before)).toEqual([]);
  });
});
