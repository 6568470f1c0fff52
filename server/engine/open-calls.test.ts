import { describe, expect, it } from "vitest";
import { openCallsAt, raiseHungCall } from "./open-calls";

const T0 = Date.UTC(2026, 11, 6, 12, 0, 0);
const on = { patternDetectionEnabled: true, nudgeEnabled: true, nudgeLevel: "interrupt" as const };

describe("open calls (SPEC 5.1)", () => {
  const calls = [
    { callId: "late", toolName: "search", since: T0 + 5_000 },
    { callId: "early", toolName: "deploy", since: T0 },
  ];

  it("a call is open once open_call_seconds have passed without a result, not a millisecond before", () => {
    expect(openCallsAt(calls, 600, T0 + 600_000 - 1)).toEqual([]);
    expect(openCallsAt(calls, 600, T0 + 600_000).map((c) => c.callId)).toEqual(["early"]);
    expect(openCallsAt(calls, 600, T0 + 605_000).map((c) => c.callId)).toEqual(["early", "late"]);
  });

  it("the setting decides: the same calls are open after 10 s with open_call_seconds 10", () => {
    expect(openCallsAt(calls, 10, T0 + 15_000).map((c) => c.callId)).toEqual(["early", "late"]);
    expect(openCallsAt(calls, 10, T0 + 14_999).map((c) => c.callId)).toEqual(["early"]);
  });

  it("raising one is a minor hung_call pattern naming the call's tool, with a gentle nudge", () => {
    const r = raiseHungCall("s1", calls[1], on)!;
    expect(r.pattern).toEqual({ type: "pattern", patternType: "hung_call", severity: "minor", count: 1, sessionId: "s1", toolSequence: ["deploy"] });
    expect(r.nudge).toMatchObject({ type: "nudge", nudgeType: "gentle", patternType: "hung_call", sessionId: "s1" });
    expect(r.nudge!.message).toContain("deploy");
  });

  it("nudges off: the pattern is still raised, no nudge; detection off: nothing is raised", () => {
    expect(raiseHungCall("s1", calls[1], { ...on, nudgeLevel: "off" })).toMatchObject({ pattern: { patternType: "hung_call" }, nudge: null });
    expect(raiseHungCall("s1", calls[1], { ...on, nudgeEnabled: false })?.nudge).toBeNull();
    expect(raiseHungCall("s1", calls[1], { ...on, patternDetectionEnabled: false })).toBeNull();
  });
});
