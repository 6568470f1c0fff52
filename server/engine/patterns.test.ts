/**
 * SPEC 5 revision 2: the fold's own cases (identities, runs, the stretch, one nudge per event,
 * state upgrade). Each pattern's ladder and conditions are tested beside it in
 * stall-patterns/<pattern>.test.ts; peer-suite translations live in tests/unit/peer-suites/.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  BUILTIN_PATTERN_CONFIG,
  callIdentityHash,
  createSessionBehaviour,
  observeSessionEvent,
  upgradeSessionBehaviour,
  type BehaviourEvent,
  type SessionBehaviour,
} from "./patterns";
import { activePatterns, copySessionBehaviour, RECENT_CALLS_KEPT, storedSessionBehaviour } from "./behaviour-state";
import type { Effect } from "./types";
import { Trace } from "@/tests/unit/peer-suites/trace";
import { SID, Session, base, call, text, turn } from "./stall-patterns/raw-session";


/** A mix of moves that make each pattern's count grow (each pattern's own ladder test is in stall-patterns/). */
const steps: Record<string, (t: Trace, k: number) => void> = {
  repetitive_calls: (t) => void t.act("bash", { command: "ls dist" }, { ok: "a.js" }),
  error_retry_loop: (t) => void t.act("bash", { command: "make" }, { error: "make: *** No rule to make target" }),
  alternating_calls: (t, k) => void t.act("bash", { command: k % 2 ? "git status" : "git diff" }, { ok: k % 2 ? "clean" : "" }),
  introspection_loop: (t, k) => void t.call(k % 2 ? "list_tools" : "askPermission", { k }),
  read_only_loop: (t) => void t.act("Read", { file_path: "a.ts" }, { ok: "x" }),
  announce_no_action: () => undefined,
  planning_loop: (t, k) => void t.text(`Thinking about step ${k}.`),
  empty_response: (t) => void t.text("   "),
  tool_avoidance: (t) => void t.text("I could use writeFile for that."),
};
steps.announce_no_action = (t) => void t.text("Got it. Proceeding now.");

describe("call identity and outcome identity", () => {
  it("volatile argument fields are left out of the identity; key order does not matter", () => {
    const v = BUILTIN_PATTERN_CONFIG.volatileArgFields;
    expect(callIdentityHash({ path: "a", task_progress: "1/5" }, v)).toBe(callIdentityHash({ task_progress: "2/5", path: "a" }, v));
    expect(callIdentityHash({ command: "ls", description: "list", timeout: 5, request_id: "r1" }, v)).toBe(callIdentityHash({ command: "ls" }, v));
    expect(callIdentityHash({ path: "a" }, v)).not.toBe(callIdentityHash({ path: "b" }, v));
  });
});

describe("one nudge per event", () => {
  it("the same failing call is repetitive_calls and error_retry_loop, but each loop step is nudged once", () => {
    const t = new Trace();
    for (let i = 0; i < 5; i++) t.act("bash", { command: "npm run build" }, { error: "tsc: error TS2304" });
    expect(t.patternsOf("repetitive_calls").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]);
    expect(t.patternsOf("error_retry_loop").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]); // recorded, never a second nudge
    expect(t.nudges().map((n) => [n.nudgeType, n.patternType])).toEqual([
      ["gentle", "repetitive_calls"],
      ["direct", "repetitive_calls"],
      ["interrupt", "repetitive_calls"],
    ]);
    for (const step of new Set(t.nudges().map((n) => n.step))) expect(t.nudges().filter((n) => n.step === step)).toHaveLength(1);
  });

  it("several patterns rising on one event: highest severity wins", () => {
    const t = new Trace();
    t.text("");
    t.text(""); // empty_response moderate
    const e = t.text(""); // empty_response severe → interrupt
    expect(e.filter((x) => x.type === "nudge")).toHaveLength(1);
    expect(t.paused).toBe(true);
  });
});

describe("the stretch and resets", () => {
  it("user.message ends every run and the stretch", () => {
    const t = new Trace();
    for (let i = 0; i < 4; i++) t.act("bash", { command: "ls" }, { ok: "x" });
    expect(t.patternsOf("repetitive_calls")).toHaveLength(2);
    t.user("Try something else");
    t.act("bash", { command: "ls" }, { ok: "x" });
    t.act("bash", { command: "ls" }, { ok: "x" });
    expect(t.patternsOf("repetitive_calls")).toHaveLength(2);
    t.act("bash", { command: "ls" }, { ok: "x" });
    expect(t.patternsOf("repetitive_calls").map((p) => p.severity)).toEqual(["minor", "moderate", "minor"]); // a new run starts clean
  });

  it("turn.start does not reset anything", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) {
      t.turn(i);
      t.act("bash", { command: "ls" }, { ok: "x" });
    }
    expect(t.patternsOf("repetitive_calls")).toHaveLength(1);
  });

  it("a nudge is effective when a productive action comes before the same pattern again; the verdict is given once", () => {
    const t = new Trace();
    for (let i = 0; i < 3; i++) t.act("bash", { command: "ls" }, { ok: "x" });
    expect(t.nudges()).toHaveLength(1);
    t.act("Edit", { file_path: "a.ts" }, { ok: "done" });
    expect(t.verdicts).toEqual([{ patternType: "repetitive_calls", sentAt: expect.any(Number), effective: true }]);
    expect(t.state.openNudges).toEqual([]);
  });

  it("repeating the productive command with the same output is not productive again", () => {
    const t = new Trace();
    t.act("bash", { command: "ls" }, { ok: "x" });
    t.act("bash", { command: "ls" }, { ok: "x" });
    const stretch = t.state.stretch.id;
    t.act("bash", { command: "ls" }, { ok: "x" });
    expect(t.state.stretch.id).toBe(stretch);
  });
});

describe("stored state upgrade", () => {
  const v1 = {
    version: 1,
    sessionId: SID,
    stretch: {
      id: 7, startedAt: 5000, calls: [{ toolName: "Read", argsHash: "h", failureKey: "Read|h" }], callCount: 9,
      sameToolRun: 5, introspectionRun: 0, alternatingRun: 1, readOnlyCalls: 9, actionCalls: 0, textRun: 0,
      announcements: 2, mentions: { bash: { toolName: "bash", count: 1 } }, failureRuns: {},
      reported: { announce_no_action: { severity: "minor", count: 2, at: 4000 }, repetitive_calls: { severity: "moderate", count: 5, at: 4000 } },
    },
    paused: false, pauseReason: null, pausedAt: null, pendingGuidance: "use the backup",
    openNudges: [{ patternType: "announce_no_action", severity: "minor", sentAt: 4000 }],
    currentTurn: 3, turnHadPattern: true, modelSuggestions: ['["k","m"]'], lastEventAt: 5000,
  };

  it("a version-1 state continues: pause, guidance, open nudges, turns and the stretch's announcements carry over", () => {
    const s = upgradeSessionBehaviour(v1, SID);
    expect(s.version).toBe(2);
    expect(s).toMatchObject({ pendingGuidance: "use the backup", currentTurn: 3, modelSuggestions: ['["k","m"]'] });
    expect(s.stretch).toMatchObject({ id: 7, announcements: 2, mentions: { bash: { toolName: "bash", count: 1 } } });
    expect(upgradeSessionBehaviour(s, SID)).toBe(s); // idempotent
    // The next announcement continues the stretch: followed by no call before the next text, it is the
    // 3rd → moderate (minor was already reported in v1).
    const cfg = { patterns: BUILTIN_PATTERN_CONFIG, settings: { nudgeLevel: "interrupt" as const, nudgeEnabled: true, patternDetectionEnabled: true } };
    const announced = observeSessionEvent(v1 as unknown as SessionBehaviour, text("Proceeding now."), cfg, 6000);
    expect(announced.effects).toEqual([]);
    const r = observeSessionEvent(announced.state, text("Still working on it."), cfg, 6500);
    expect(r.effects.filter((e) => e.type === "pattern")).toMatchObject([{ patternType: "announce_no_action", severity: "moderate", count: 3 }]);
    expect(r.verdicts).toEqual([{ patternType: "announce_no_action", sentAt: 4000, effective: false }]);
    expect(activePatterns(r.state).map((p) => p.patternType)).toEqual(["announce_no_action"]);
  });

  it("null or garbage → a fresh state", () => {
    expect(upgradeSessionBehaviour(null, SID)).toEqual(createSessionBehaviour(SID));
    expect(upgradeSessionBehaviour("x", SID)).toEqual(createSessionBehaviour(SID));
  });
});

describe("properties", () => {
  const ops = fc.array(
    fc.oneof(
      fc.record({ k: fc.constant("act" as const), tool: fc.constantFrom("bash", "Read", "Edit", "list_tools"), arg: fc.integer({ min: 0, max: 2 }), out: fc.integer({ min: 0, max: 2 }), fail: fc.boolean() }),
      fc.record({ k: fc.constant("text" as const), t: fc.constantFrom("", "Proceeding now", "Let me use bash", "plan") }),
      fc.record({ k: fc.constant("user" as const) }),
    ),
    { maxLength: 60 },
  );
  const replay = (list: fc.Arbitrary<unknown> extends never ? never : Array<{ k: string; tool?: string; arg?: number; out?: number; fail?: boolean; t?: string }>) => {
    const t = new Trace();
    for (const o of list) {
      if (o.k === "act") t.act(o.tool!, { a: o.arg }, o.fail ? { error: `e${o.out}` } : { ok: o.out });
      else if (o.k === "text") t.text(o.t!);
      else t.user();
    }
    return t;
  };

  it("deterministic, JSON round-trippable, at most one pattern nudge per event", () => {
    fc.assert(
      fc.property(ops, (list) => {
        const a = replay(list);
        const b = replay(list);
        expect(b.effects).toEqual(a.effects);
        expect(JSON.parse(JSON.stringify(a.state))).toEqual(a.state);
        const perStep = new Map<number, number>();
        for (const n of a.nudges()) perStep.set(n.step, (perStep.get(n.step) ?? 0) + 1);
        for (const v of perStep.values()) expect(v).toBe(1);
      }),
      { numRuns: 150 },
    );
  });

  it("never changes the state it is given (each event's updates land on its own copy)", () => {
    const deepFreeze = <T>(v: T): T => {
      if (v && typeof v === "object" && !Object.isFrozen(v)) {
        Object.freeze(v);
        for (const x of Object.values(v)) deepFreeze(x);
      }
      return v;
    };
    // Frozen stored states: an in-place change throws (modules are strict); the same effects and states as unfrozen.
    class FrozenTrace extends Trace {
      override feed(event: BehaviourEvent): Effect[] {
        deepFreeze(this.state);
        return super.feed(event);
      }
    }
    fc.assert(
      fc.property(ops, (list) => {
        const plain = replay(list);
        const frozen = new FrozenTrace();
        for (const o of list) {
          if (o.k === "act") frozen.act(o.tool!, { a: o.arg }, o.fail ? { error: `e${o.out}` } : { ok: o.out });
          else if (o.k === "text") frozen.text(o.t!);
          else frozen.user();
        }
        expect(frozen.log).toEqual(plain.log);
        expect(frozen.state).toEqual(plain.state);
      }),
      { numRuns: 150 },
    );
  });
});

describe("copySessionBehaviour", () => {
  it("copies every field of a state (a field it left out would be lost on the next event)", () => {
    const t = new Trace();
    t.act("bash", { command: "ls" }, { error: "boom" });
    t.act("bash", { command: "ls" }, { error: "boom" });
    t.text("Let me use bash");
    t.user();
    t.act("Read", { file_path: "a.ts" }, { ok: 1 });
    const copy = copySessionBehaviour(t.state);
    expect(copy).not.toBe(t.state);
    expect(copy).toStrictEqual(t.state);
    expect(Object.keys(copy).sort()).toEqual(Object.keys(createSessionBehaviour(SID)).sort());
  });
});

describe("recent calls kept in the state", () => {
  it("keeps the last RECENT_CALLS_KEPT calls, without failure keys; a result a dozen calls late still gets its outcome", () => {
    const s = new Session();
    const calls = Array.from({ length: 40 }, (_, i) => call(i % 2 ? "Read" : "Edit", { file_path: `f${i}.ts` }));
    s.feed(...calls);
    expect(s.state.calls).toHaveLength(RECENT_CALLS_KEPT);
    expect(s.state.calls.map((c) => c.callId)).toEqual(calls.slice(-RECENT_CALLS_KEPT).map((c) => (c as { callId: string }).callId));
    expect(Object.keys(s.state.calls[0]).sort()).toEqual(["argsHash", "callId", "toolName"]);
    const late = calls[40 - 12] as Extract<BehaviourEvent, { type: "tool.call" }>;
    s.feed({ ...base(), type: "tool.result", callId: late.callId, toolName: late.toolName, failureKey: late.toolName, argsHash: "h", failed: false, result: { ok: 1 } });
    expect(s.state.calls.find((c) => c.callId === late.callId)?.outcome).toMatch(/^S:/);
  });
});

describe("the stored form of a session's state (storedSessionBehaviour)", () => {
  const roundTrip = (s: SessionBehaviour) => upgradeSessionBehaviour(JSON.parse(JSON.stringify(storedSessionBehaviour(s))), s.sessionId);
  const asJson = (s: SessionBehaviour) => JSON.parse(JSON.stringify(s));

  it("reads back as the state it was made from, at every step of any mix of events", () => {
    const moves = Object.values(steps).map((step) => (t: Trace, k: number) => step(t, k));
    moves.push((t, k) => void t.user(`again ${k}`), (t, k) => void t.turn(k), (t, k) => void t.call("Edit", { file_path: `/f${k}.ts` }));
    fc.assert(
      fc.property(fc.array(fc.nat(moves.length - 1), { maxLength: 60 }), (picks) => {
        const t = new Trace();
        picks.forEach((m, k) => {
          moves[m](t, k + 1);
          expect(roundTrip(t.state)).toEqual(asJson(t.state));
        });
      }),
      { numRuns: 60 },
    );
  });

  it("leaves out what a fresh state has, keeps calls as tuples, and is much smaller", () => {
    const fresh = createSessionBehaviour(SID);
    expect(storedSessionBehaviour(fresh)).toEqual({ v: 3 });
    expect(upgradeSessionBehaviour({ v: 3 }, SID)).toEqual(fresh);
    const t = new Trace();
    for (let i = 0; i < 40; i++) t.call("Read", { file_path: `/repo/pkg${i % 8}/src/file${i}.ts` });
    t.result(t.state.calls.at(-1)!.callId, "Read", { error: "ENOENT" });
    const stored = storedSessionBehaviour(t.state);
    expect((stored.calls as unknown[][]).at(-1)).toEqual([t.state.calls.at(-1)!.callId, "Read", t.state.calls.at(-1)!.argsHash, t.state.calls.at(-1)!.outcome]);
    expect(JSON.stringify(stored).length).toBeLessThan(0.75 * JSON.stringify(t.state).length);
    expect(roundTrip(t.state)).toEqual(asJson(t.state));
  });

  it("a state stored in the full form (version 2) is still read as it is", () => {
    const t = new Trace();
    t.act("bash", { command: "ls" }, { ok: "a" });
    expect(upgradeSessionBehaviour(asJson(t.state), SID)).toEqual(asJson(t.state));
  });
});
