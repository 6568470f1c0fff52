/**
 * OpenHands software-agent-sdk `tests/sdk/conversation/local/test_stuck_detector_nudge.py`, replayed
 * as Vigil events: a tool that always fails the same way (`always_error_tool`, not in any tool class).
 */
import { describe, expect, it } from "vitest";
import { Trace } from "./trace";

// The peer's assistant messages carry empty text next to their tool call: a response with a tool
// call is not an empty response, so the translation sends no model.text for it.
const badCall = (t: Trace) => {
  return t.act("always_error_tool", { command: "create" }, { error: "`file_text` is required for command: create." });
};

describe("OpenHands SDK test_stuck_detector_nudge.py", () => {
  it("test_run_nudges_before_going_stuck_on_repeating_action_error: nudged by the 3rd failure, stopped by the 4th", () => {
    const t = new Trace();
    t.user("Create /tmp/foo.py");
    const stepsOfFailure: number[] = [];
    for (let i = 0; i < 4; i++) {
      badCall(t);
      stepsOfFailure.push(t.step);
    }
    expect(t.nudges().every((n) => n.patternType === "repetitive_calls" || n.patternType === "error_retry_loop")).toBe(true);
    const loopNudges = t.nudges();
    // The first nudge comes before the 3rd failure is reported, and names the tool and the repeated arguments.
    expect(loopNudges[0]!.step).toBeLessThanOrEqual(stepsOfFailure[2]!);
    expect(loopNudges[0]!.message).toContain("always_error_tool");
    expect(loopNudges[0]!.message).toContain('{"command":"create"}');
    // By the 4th failure Vigil escalates to a direct instruction. Deliberate difference: OpenHands stops
    // the conversation at the 4th; Vigil's ladder (SPEC 5: 3/4/5) pauses at the 5th identical call.
    expect(loopNudges.filter((n) => n.step <= stepsOfFailure[3]!).map((n) => n.nudgeType)).toEqual(["gentle", "direct"]);
    badCall(t);
    expect(t.paused).toBe(true);
  });

  it("test_run_recovers_after_nudge_when_model_self_corrects: 3 failures then a real answer, one nudge and no stop", () => {
    const t = new Trace();
    t.user("Create /tmp/foo.py");
    for (let i = 0; i < 3; i++) t.act("always_error_tool", { command: "create" }, { error: "`file_text` is required for command: create." });
    t.text("I see the issue, stopping here.");
    expect(t.nudges()).toHaveLength(1);
    expect(t.paused).toBe(false);
  });
});
