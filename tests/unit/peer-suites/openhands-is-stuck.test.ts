/**
 * OpenHands (legacy controller) `tests/unit/controller/test_is_stuck.py`, case by case, replayed as
 * Vigil events with the built-in configuration. Mapping: CmdRunAction → `execute_bash` (action
 * tool), FileReadAction → `read_file` (read-only), IPythonRunCellAction → `execute_ipython_cell`
 * (no class), agent MessageAction → `model.text`, user MessageAction → `user.message`,
 * ErrorObservation → a failed result; NullObservation has no Vigil counterpart.
 * A Jupyter cell that raises reports `error` = "<ename>: <evalue>" and the traceback (with its
 * line numbers) as `result`, as an integration forwards a Jupyter error reply.
 *
 * OpenHands' headless mode ignores user messages; Vigil follows its interactive mode (SPEC 5: a
 * `user.message` ends every run and the stretch). Those cases say so.
 */
import { describe, expect, it } from "vitest";
import { activePatterns } from "@/server/engine/behaviour-state";
import { Trace } from "./trace";

const ls = (t: Trace, content = "file1.txt") => t.act("execute_bash", { command: "ls" }, { ok: { command: "ls", content } });
const read = (t: Trace, path = "file1.txt", content = "File content") => t.act("read_file", { path }, { ok: { path, content } });

const CODE = "edit_file_by_replace(\n    'book_store.py',\n    to_replace=\"\"\"def total(basket):\n    if not basket:\n        return 0\n";
/**
 * `_impl_syntax_error_events`: the same cell fails with the same error; random_line changes only the
 * traceback's line numbers (returned as the result next to the error).
 */
function syntaxErrors(t: Trace, message: string, randomLine: boolean, incidents = 4) {
  for (let i = 0; i < incidents; i++) {
    const id = t.call("execute_ipython_cell", { code: CODE });
    const line = randomLine ? (i + 1) * 10 : 42;
    t.feed({
      id: `tb${t.step}`, sessionId: t.sessionId, ts: t.now, type: "tool.result", callId: id, toolName: "execute_ipython_cell",
      success: false, error: message, result: `  Cell In[1], line ${line}\n${message}${randomLine ? "\n".repeat(i + 1) : ""}`,
      failureKey: "execute_ipython_cell", argsHash: "?", failed: true,
    });
  }
}
/** `_impl_unterminated_string_error_events`: the line number is part of the error message itself. */
function unterminated(t: Trace, randomLine: boolean, incidents = 4) {
  for (let i = 0; i < incidents; i++) {
    const line = randomLine ? (i + 1) * 10 : 1;
    t.act("execute_ipython_cell", { code: CODE }, { error: `SyntaxError: unterminated string literal (detected at line ${line})` });
  }
}

describe("OpenHands test_is_stuck.py — TestStuckDetector", () => {
  it("test_history_too_short: a user message and one command are not stuck", () => {
    const t = new Trace();
    t.user("Hello");
    ls(t, "file1.txt\nfile2.txt");
    expect(t.effects).toEqual([]);
  });

  it("test_interactive_mode_resets_after_user_message: stuck at 4, reset by the user, 2 more not stuck, 4 more stuck", () => {
    const t = new Trace();
    for (let i = 0; i < 4; i++) ls(t, "");
    expect(t.intervened).toBe(true);
    t.user("Hello");
    expect(activePatterns(t.state)).toEqual([]); // interactive mode: not stuck after the user message
    const before = t.log.length;
    for (let i = 0; i < 2; i++) ls(t, "");
    expect(t.log.length).toBe(before);
    for (let i = 0; i < 2; i++) ls(t, "");
    expect(t.patternsOf("repetitive_calls").slice(-2).map((p) => p.severity)).toEqual(["minor", "moderate"]);
  });

  it("test_is_stuck_repeating_action_observation: 4× ls is stuck (Vigil differs when a user spoke in between)", () => {
    // Deliberate: the peer's trace has a user message after the 2nd ls; headless OpenHands ignores it,
    // Vigil (like OpenHands' interactive mode) starts over, so 2 + 2 calls are not a run of 4.
    const t = new Trace();
    t.text("Hello");
    ls(t, "");
    ls(t, "");
    t.user("Done");
    ls(t, "");
    ls(t, "");
    expect(t.patternsOf("repetitive_calls")).toEqual([]);
    // Without the user message it is the peer's loop of 4: stuck.
    const u = new Trace();
    u.text("Hello");
    for (let i = 0; i < 4; i++) ls(u, "");
    expect(u.patternsOf("repetitive_calls").map((p) => p.severity)).toEqual(["minor", "moderate"]);
  });

  it("test_is_stuck_repeating_action_error: 4 failing calls with different errors (Vigil differs: a new error is new information)", () => {
    // Deliberate: OpenHands counts (action, error) pairs whatever the error says; Vigil's
    // error_retry_loop needs the same outcome, and the user message in between starts over.
    const t = new Trace();
    t.text("Hello");
    const fail = (error: string) => t.act("execute_bash", { command: "invalid_command" }, { error });
    fail("Command not found");
    fail("Command still not found or another error");
    t.user("Done");
    fail("Different error");
    fail("Command not found");
    expect(t.patternsOf("error_retry_loop")).toEqual([]);
    expect(t.intervened).toBe(false);
    // The same failure four times is stuck.
    const u = new Trace();
    for (let i = 0; i < 4; i++) u.act("execute_bash", { command: "invalid_command" }, { error: "Command not found" });
    expect(u.patternsOf("error_retry_loop").map((p) => p.severity)).toEqual(["minor", "moderate"]);
  });

  it("test_is_stuck_invalid_syntax_error: the same cell failing identically 4 times is stuck", () => {
    const t = new Trace();
    syntaxErrors(t, "SyntaxError: invalid syntax. Perhaps you forgot a comma?", false);
    expect(t.intervened).toBe(true);
    expect(t.patternsOf("error_retry_loop").map((p) => p.severity)).toEqual(["minor", "moderate"]);
  });

  it("test_is_not_stuck_invalid_syntax_error_random_lines (Vigil differs: flags it)", () => {
    // Deliberate: a byte-identical cell failing with the same SyntaxError is the same failure even if
    // the traceback's line numbers move; OpenHands' legacy detector calls it not stuck, Vigil flags it.
    const t = new Trace();
    syntaxErrors(t, "SyntaxError: invalid syntax. Perhaps you forgot a comma?", true);
    expect(t.patternsOf("error_retry_loop").map((p) => p.severity)).toEqual(["minor", "moderate"]);
  });

  it("test_is_not_stuck_invalid_syntax_error_only_three_incidents (Vigil differs: a gentle nudge at 3)", () => {
    const t = new Trace();
    syntaxErrors(t, "SyntaxError: invalid syntax. Perhaps you forgot a comma?", true, 3);
    expect(t.nudges().map((n) => n.nudgeType)).toEqual(["gentle"]);
    expect(t.paused).toBe(false);
  });

  it("test_is_stuck_incomplete_input_error: stuck", () => {
    const t = new Trace();
    syntaxErrors(t, "SyntaxError: incomplete input", false);
    expect(t.intervened).toBe(true);
  });

  it("test_is_not_stuck_incomplete_input_error (random lines; Vigil differs: flags it, see above)", () => {
    const t = new Trace();
    syntaxErrors(t, "SyntaxError: incomplete input", true);
    expect(t.patternsOf("error_retry_loop").length).toBeGreaterThan(0);
  });

  it("test_is_not_stuck_ipython_unterminated_string_error_random_lines: the error itself differs, not stuck", () => {
    const t = new Trace();
    unterminated(t, true);
    expect(t.effects).toEqual([]);
  });

  it("test_is_not_stuck_ipython_unterminated_string_error_only_two_incidents: not stuck", () => {
    const t = new Trace();
    unterminated(t, false, 2);
    expect(t.effects).toEqual([]);
  });

  it("test_is_stuck_ipython_unterminated_string_error: 4 identical errors are stuck", () => {
    const t = new Trace();
    unterminated(t, false);
    expect(t.intervened).toBe(true);
  });

  it("test_is_not_stuck_ipython_syntax_error_not_at_end: errors at lines 1, 1, 3, 2 (Vigil differs: one gentle hint, no stop)", () => {
    // Deliberate: Vigil judges a call when it is made (guard.check runs before the tool), so the 3rd
    // identical cell after two identical errors is a repetition and gets a gentle hint. Its different
    // error then ends the run: nothing more, never a stop. OpenHands judges the finished history.
    const t = new Trace();
    for (const line of [1, 1, 3, 2]) {
      t.act("execute_ipython_cell", { code: 'print("hello' }, { error: `SyntaxError: unterminated string literal (detected at line ${line})` });
    }
    expect(t.nudges().map((n) => [n.nudgeType, n.patternType])).toEqual([["gentle", "repetitive_calls"]]);
    expect(t.patternsOf("error_retry_loop")).toEqual([]);
    expect(t.paused).toBe(false);
  });

  it("test_is_stuck_repeating_action_observation_pattern: A B A B A B is stuck", () => {
    // Vigil flags A B A B (ladder 4/6/8) before the user message; the message then starts over, so the
    // 3rd pair adds nothing (headless OpenHands would count it; interactive OpenHands starts over too).
    const t = new Trace();
    t.user("Come on");
    ls(t, "file1.txt\nfile2.txt");
    read(t);
    ls(t, "file1.txt\nfile2.txt");
    read(t);
    t.user("Come on");
    ls(t, "file1.txt\nfile2.txt");
    read(t);
    expect(t.patternsOf("alternating_calls").map((p) => [p.severity, p.count])).toEqual([["minor", 4]]);
    expect(t.patternsOf("alternating_calls")[0]!.step).toBeLessThan(t.step - 4);
    // Without that message: stuck, by the 4th call of the alternation.
    const u = new Trace();
    for (let i = 0; i < 3; i++) {
      ls(u, "file1.txt\nfile2.txt");
      read(u);
    }
    expect(u.patternsOf("alternating_calls").map((p) => [p.severity, p.count])).toEqual([["minor", 4], ["moderate", 6]]);
  });

  it("test_is_stuck_not_stuck: ls, read file1, pwd, read file2, user, pwd, read file2 is not stuck", () => {
    const t = new Trace();
    t.text("Hello");
    ls(t, "file1.txt\nfile2.txt");
    read(t);
    t.act("execute_bash", { command: "pwd" }, { ok: { command: "pwd", content: "/home/user" } });
    read(t, "file2.txt", "Another file content");
    t.user("Done");
    t.act("execute_bash", { command: "pwd" }, { ok: { command: "pwd", content: "/home/user" } });
    read(t, "file2.txt", "Another file content");
    expect(t.effects).toEqual([]);
  });

  it("test_is_stuck_monologue: 3 identical agent messages are stuck; after an observation, 2 more (Vigil differs: gentle)", () => {
    const t = new Trace();
    t.user("Hi there!");
    t.text("Hi there!");
    t.user("How are you?");
    const echo = t.call("execute_bash", { command: "echo 42" });
    for (let i = 0; i < 3; i++) t.text("I'm doing well, thanks for asking.");
    expect(t.patternsOf("planning_loop").length).toBeGreaterThan(0);
    expect(t.intervened).toBe(true);
    const before = t.log.length;
    t.result(echo, "execute_bash", { ok: { content: "OK, I was stuck, but no more." } });
    t.text("I'm doing well, thanks for asking.");
    t.text("I'm doing well, thanks for asking.");
    // Deliberate: SPEC 5 counts an identical text double, so the same message twice in a row is a
    // planning_loop minor: a gentle hint, never a stop. The peer says not stuck.
    const after = t.log.slice(before).map((l) => l.effect);
    expect(after.filter((e) => e.type === "nudge").map((e) => e.type === "nudge" && e.nudgeType)).toEqual(["gentle"]);
    expect(t.paused).toBe(false);
  });

  it("test_is_not_stuck_context_window_error_with_other_events: distinct commands and reads between condensations are not stuck", () => {
    // Condensation events are internal to OpenHands and have no Vigil event; the rest of the trace is replayed.
    const t = new Trace();
    t.user("Hello");
    for (let i = 0; i < 9; i++) {
      t.act("execute_bash", { command: `ls ${i}` }, { ok: { content: "file1.txt\nfile2.txt" } });
      if (i % 2 === 0) read(t, `file${i}.txt`, `File content ${i}`);
    }
    expect(t.effects).toEqual([]);
  });

  it("context-window condensation loops (test_is_stuck_context_window_error_*): no Vigil counterpart", () => {
    // Deliberate gap: condensation is an OpenHands-internal event, never sent to Vigil. What reaches
    // Vigil from such a loop is the agent producing nothing: empty responses, which Vigil stops at 3.
    const t = new Trace();
    t.user("Hello");
    for (let i = 0; i < 3; i++) t.text("", true);
    expect(t.paused).toBe(true);
  });
});

describe("OpenHands test_is_stuck.py — _is_stuck_action_observation_pattern (MC/DC)", () => {
  it("test_fail_guard_five_actions: A B A B A (Vigil differs: gentle at the 4th alternating call, no stop)", () => {
    // Deliberate: SPEC 5's alternating ladder is 4/6/8 — a hint early, the pause only at 8.
    const t = new Trace();
    read(t); ls(t); read(t); ls(t); read(t);
    expect(t.patternsOf("alternating_calls").map((p) => p.severity)).toEqual(["minor"]);
    expect(t.paused).toBe(false);
  });

  it("test_fail_guard_five_obs: A B A B A B-without-result (Vigil differs: direct at 6, no stop)", () => {
    const t = new Trace();
    read(t); ls(t); read(t); ls(t); read(t);
    t.call("execute_bash", { command: "ls" });
    expect(t.patternsOf("alternating_calls").map((p) => p.severity)).toEqual(["minor", "moderate"]);
    expect(t.paused).toBe(false);
  });

  it("test_fail_actions_break_A6_A4: a different 4th action breaks it", () => {
    const t = new Trace();
    read(t); ls(t); read(t);
    t.act("execute_bash", { command: "pwd" }, { ok: { command: "ls", content: "file1.txt" } });
    read(t); ls(t);
    expect(t.effects).toEqual([]);
  });

  it("test_fail_actions_break_A5_A3: a different 3rd action breaks it", () => {
    const t = new Trace();
    read(t); ls(t);
    t.act("read_file", { path: "file2.txt" }, { ok: { path: "file1.txt", content: "File content" } });
    ls(t); read(t); ls(t);
    expect(t.effects).toEqual([]);
  });

  it("test_fail_obs_break_O6_O4: a different 4th observation breaks it (Vigil differs: one gentle hint at the 4th call)", () => {
    // Deliberate: judged when the 4th call is made, A B A B had unchanged results so far → minor; the
    // different 4th observation then ends the alternation: no further report, never a stop.
    const t = new Trace();
    read(t); ls(t); read(t);
    t.act("execute_bash", { command: "ls" }, { ok: { command: "ls_DIFFERENT", content: "file1.txt" } });
    read(t); ls(t);
    expect(t.patternsOf("alternating_calls").map((p) => [p.severity, p.count])).toEqual([["minor", 4]]);
    expect(t.paused).toBe(false);
  });

  it("test_fail_obs_break_O5_O3: a different 3rd observation breaks it", () => {
    const t = new Trace();
    read(t); ls(t);
    t.act("read_file", { path: "file1.txt" }, { ok: { path: "file2.txt", content: "File content" } });
    ls(t); read(t); ls(t);
    expect(t.patternsOf("alternating_calls")).toEqual([]);
    expect(t.intervened).toBe(false);
  });

  it("test_loop_ignores_other_events: A B A B A B with other events in between is stuck", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) {
      t.turn(i); // events that are neither calls nor results
      read(t);
      ls(t);
    }
    expect(t.patternsOf("alternating_calls").map((p) => p.count)).toEqual([4, 6]);
  });

  it("test_loop_ignores_extra_actions: an extra call before the loop is ignored, stuck", () => {
    const t = new Trace();
    t.call("execute_bash", { command: "ls" });
    for (let i = 0; i < 3; i++) {
      read(t);
      ls(t);
    }
    expect(t.intervened).toBe(true);
    expect(t.patternsOf("alternating_calls").length).toBeGreaterThan(0);
  });

  it("test_loop_ignores_extra_observations: an observation without action before the loop is ignored, stuck", () => {
    const t = new Trace();
    t.result("orphan", "read_file", { ok: { path: "file1.txt", content: "File content" } });
    for (let i = 0; i < 3; i++) {
      read(t);
      ls(t);
    }
    expect(t.patternsOf("alternating_calls").length).toBeGreaterThan(0);
  });
});

describe("OpenHands test_is_stuck.py — empty responses", () => {
  it("test_is_stuck_empty_response_loop_with_nudges: 3 empty responses are stuck", () => {
    // The peer's corrective nudges are the detector's own messages, not a person: no user.message.
    const t = new Trace();
    t.user("Build me an app");
    for (let i = 0; i < 3; i++) t.text("");
    expect(t.patternsOf("empty_response").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]);
    expect(t.paused).toBe(true);
  });

  it("test_is_stuck_empty_response_loop_non_headless: the same in interactive mode", () => {
    const t = new Trace();
    t.user("Build me an app");
    for (let i = 0; i < 3; i++) t.text("   ", false);
    expect(t.paused).toBe(true);
  });

  it("test_is_not_stuck_only_two_empty_responses (Vigil differs: corrective nudges, no stop)", () => {
    // Deliberate: SPEC 5's empty_response ladder is 1/2/3 — an empty reply gets a corrective reply at
    // once (what OpenHands itself sends as its corrective nudge); only the 3rd stops the session.
    const t = new Trace();
    t.user("Hello");
    t.text("");
    t.text("");
    expect(t.nudges().map((n) => n.nudgeType)).toEqual(["gentle", "direct"]);
    expect(t.paused).toBe(false);
  });

  it("test_is_not_stuck_non_empty_response_breaks_loop: a real response starts over; never stopped", () => {
    const t = new Trace();
    t.user("Hello");
    t.text("");
    t.text("");
    t.text("Let me help you with that.");
    t.text("");
    t.text("");
    expect(t.patternsOf("empty_response").map((p) => p.severity)).toEqual(["minor", "moderate", "minor", "moderate"]);
    expect(t.paused).toBe(false);
  });

  it("test_is_stuck_whitespace_only_responses: '', '  ', '\\n', '\\t  \\n' are stuck", () => {
    const t = new Trace();
    t.user("Hello");
    for (const c of ["", "  ", "\n", "\t  \n"]) t.text(c);
    expect(t.paused).toBe(true);
    expect(t.patternsOf("empty_response").at(-1)).toMatchObject({ severity: "severe", count: 3 });
  });

  it("test_is_stuck_empty_response_with_varying_content: ' ', '  ', '   ' are stuck", () => {
    const t = new Trace();
    t.user("Hello");
    for (const c of [" ", "  ", "   "]) t.text(c);
    expect(t.paused).toBe(true);
  });

  it("reasoning-only responses count as empty (model.text reasoningOnly)", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) t.text("Let me think about the user's request…", true);
    expect(t.paused).toBe(true);
  });
});
