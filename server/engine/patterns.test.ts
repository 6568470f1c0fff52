/**
 * SPEC 5 revision 2: the engine's own cases (ladders, conditions, runs, the stretch, one nudge per
 * event, state upgrade). Peer-suite translations live in tests/unit/peer-suites/.
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
import { PATTERN_TYPES, type Effect, type PatternSeverity, type PatternType } from "./types";
import { Trace } from "@/tests/unit/peer-suites/trace";

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

/** Steps making each pattern's count go from k-1 to k. */
const steps: Record<PatternType, (t: Trace, k: number) => void> = {
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
/** How many steps it takes to reach count k (read_only_loop counts re-reads: the first read is new). */
const stepsFor = (type: PatternType, k: number) => (type === "read_only_loop" ? k + 1 : k);

describe("each pattern's default ladder", () => {
  for (const type of PATTERN_TYPES) {
    const l = BUILTIN_PATTERN_CONFIG.thresholds[type];
    it(`${type}: minor at ${l.minor}, moderate at ${l.moderate}, severe at ${l.severe}; each reported once`, () => {
      const t = new Trace();
      const seen: { severity: PatternSeverity; count: number }[] = [];
      for (let i = 1; i <= stepsFor(type, l.severe) + 1; i++) steps[type](t, i);
      for (const p of t.patternsOf(type)) seen.push({ severity: p.severity, count: p.count });
      expect(seen).toEqual([
        { severity: "minor", count: l.minor },
        { severity: "moderate", count: l.moderate },
        { severity: "severe", count: l.severe },
      ]);
    });
  }

  it("the default ladders are SPEC 5 revision 2's table", () => {
    expect(Object.fromEntries(PATTERN_TYPES.map((p) => [p, Object.values(BUILTIN_PATTERN_CONFIG.thresholds[p])]))).toEqual({
      repetitive_calls: [3, 4, 5],
      error_retry_loop: [3, 4, 5],
      alternating_calls: [4, 6, 8],
      introspection_loop: [2, 4, 6],
      read_only_loop: [3, 5, 8],
      announce_no_action: [2, 3, 4],
      planning_loop: [3, 4, 6],
      empty_response: [1, 2, 3],
      tool_avoidance: [2, 3, 4],
    });
  });
});

describe("call identity and outcome identity", () => {
  it("volatile argument fields are left out of the identity; key order does not matter", () => {
    const v = BUILTIN_PATTERN_CONFIG.volatileArgFields;
    expect(callIdentityHash({ path: "a", task_progress: "1/5" }, v)).toBe(callIdentityHash({ task_progress: "2/5", path: "a" }, v));
    expect(callIdentityHash({ command: "ls", description: "list", timeout: 5, request_id: "r1" }, v)).toBe(callIdentityHash({ command: "ls" }, v));
    expect(callIdentityHash({ path: "a" }, v)).not.toBe(callIdentityHash({ path: "b" }, v));
  });

  it("reading six different files is progress, not repetition", () => {
    const t = new Trace();
    for (const f of ["a", "b", "c", "d", "e", "f"]) t.act("Read", { file_path: `${f}.ts` }, { ok: `content of ${f}` });
    expect(t.effects).toEqual([]);
  });

  it("the same successful command with the same output is a run (action–observation loop)", () => {
    const t = new Trace();
    for (let i = 0; i < 5; i++) t.act("bash", { command: "ls dist" }, { ok: "index.js" });
    expect(t.patternsOf("repetitive_calls").map((p) => p.severity)).toEqual(["minor", "moderate", "severe"]);
    expect(t.paused).toBe(true);
  });

  it("a different outcome ends the run: polling a changing status draws nothing", () => {
    const t = new Trace();
    for (const status of ["queued", "running", "running 40%", "running 80%", "done"]) t.act("bash", { command: "gh run view 42" }, { ok: { status } });
    expect(t.effects).toEqual([]);
  });

  it("error_retry_loop needs the same error; a different error starts over", () => {
    const t = new Trace();
    t.act("bash", { command: "make" }, { error: "E1" });
    t.act("bash", { command: "make" }, { error: "E1" });
    t.act("bash", { command: "make" }, { error: "E2" });
    t.act("bash", { command: "make" }, { error: "E2" });
    expect(t.patternsOf("error_retry_loop")).toEqual([]);
  });

  it("alternating needs unchanged outcomes on both sides", () => {
    const t = new Trace();
    for (let i = 0; i < 8; i++) t.act("bash", { command: i % 2 ? "npm test" : "git diff" }, { ok: `output ${i}` });
    expect(t.patternsOf("alternating_calls")).toEqual([]);
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
    // The next announcement continues the stretch: 3rd → moderate (minor was already reported in v1).
    const r = observeSessionEvent(v1 as unknown as SessionBehaviour, text("Proceeding now."), { patterns: BUILTIN_PATTERN_CONFIG, settings: { nudgeLevel: "interrupt", nudgeEnabled: true, patternDetectionEnabled: true } }, 6000);
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
