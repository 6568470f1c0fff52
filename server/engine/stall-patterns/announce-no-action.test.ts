import { describe, expect, it } from "vitest";
import { BUILTIN_PATTERN_CONFIG, createSessionBehaviour, observeSessionEvent, type BehaviourEvent, type SessionBehaviour } from "../patterns";
import type { Effect } from "../types";
import { climbsItsLadder, ladderOf } from "./ladder-check";

const SID = "s1";
let seq = 0;
const base = () => ({ id: `e${++seq}`, sessionId: SID, ts: 0 });
/** Raw events for the seed example (calls without results). */
const call = (toolName: string, args: Record<string, unknown> = {}): BehaviourEvent => ({
  ...base(), type: "tool.call", callId: `c${seq}`, toolName, args, failureKey: toolName, argsHash: "h",
});
const text = (t: string): BehaviourEvent => ({ ...base(), type: "model.text", text: t });
const turn = (i: number): BehaviourEvent => ({ ...base(), type: "turn.start", turnIndex: i });

class Session {
  state: SessionBehaviour = createSessionBehaviour(SID);
  now = 1_000;
  feed(...events: BehaviourEvent[]): Effect[] {
    const out: Effect[] = [];
    for (const e of events) {
      const r = observeSessionEvent(this.state, e, { patterns: BUILTIN_PATTERN_CONFIG, settings: { nudgeLevel: "interrupt", nudgeEnabled: true, patternDetectionEnabled: true } }, (this.now += 1000));
      this.state = r.state;
      out.push(...r.effects);
    }
    return out;
  }
}

describe("announce_no_action", () => {
  climbsItsLadder("announce_no_action", (t) => void t.text("Got it. Proceeding now."));

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
    expect(announce(t2)).toEqual([
      { type: "pattern", patternType: "announce_no_action", severity: "minor", count: 2, sessionId: SID, toolSequence: ["list_tools"] },
      {
        type: "nudge",
        nudgeType: "gentle",
        message: "You mentioned proceeding but haven't called an action tool yet. Please execute the planned action.",
        patternType: "announce_no_action",
        sessionId: SID,
      },
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
