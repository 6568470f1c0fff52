import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  BUILTIN_PATTERN_CONFIG,
  createSessionBehaviour,
  detectPatterns,
  observeSessionEvent,
  type BehaviourEvent,
  type BehaviourSettings,
  type ObserveConfig,
  type SessionBehaviour,
} from "./patterns";
import { activePatterns } from "./behaviour-state";
import { resolveSettings } from "./settings";
import {
  PATTERN_SEVERITIES,
  PATTERN_TYPES,
  type Effect,
  type PatternConfig,
  type PatternSeverity,
  type PatternType,
} from "./types";

// ---------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------

let seq = 0;
const SID = "s1";
const base = () => ({ id: `e${++seq}`, sessionId: SID, ts: 0 });
const call = (toolName: string, argsHash = "h"): BehaviourEvent => ({
  ...base(),
  type: "tool.call",
  callId: `c${seq}`,
  toolName,
  args: {},
  failureKey: `${toolName}|${argsHash}`,
  argsHash,
});
const result = (toolName: string, failed: boolean, argsHash = "h"): BehaviourEvent => ({
  ...base(),
  type: "tool.result",
  callId: `c${seq}`,
  toolName,
  failureKey: `${toolName}|${argsHash}`,
  argsHash,
  failed,
});
const text = (t: string): BehaviourEvent => ({ ...base(), type: "model.text", text: t });
const turn = (i: number): BehaviourEvent => ({ ...base(), type: "turn.start", turnIndex: i });

const SETTINGS: BehaviourSettings = { nudgeLevel: "interrupt", nudgeEnabled: true, patternDetectionEnabled: true };
const CONFIG: ObserveConfig = { patterns: BUILTIN_PATTERN_CONFIG, settings: SETTINGS };

class Session {
  state: SessionBehaviour = createSessionBehaviour(SID);
  now = 1_000;
  all: Effect[] = [];
  constructor(public config: ObserveConfig = CONFIG) {}
  /** Feeds events; returns the effects of just these events. */
  feed(...events: BehaviourEvent[]): Effect[] {
    const out: Effect[] = [];
    for (const e of events) {
      const r = observeSessionEvent(this.state, e, this.config, (this.now += 1000));
      this.state = r.state;
      out.push(...r.effects);
    }
    this.all.push(...out);
    return out;
  }
}

const reports = (effects: Effect[], type: PatternType) =>
  effects.flatMap((e) => (e.type === "pattern" && e.patternType === type ? [{ severity: e.severity, count: e.count }] : []));

// ---------------------------------------------------------------------------
// every pattern at each severity step
// ---------------------------------------------------------------------------

/** Events making the pattern's count go from k-1 to k (k = 1, 2, ...). */
const steps: Record<PatternType, (k: number) => BehaviourEvent[]> = {
  repetitive_calls: (k) => [call("search_web", `q${k}`)],
  introspection_loop: (k) => [call(k % 2 ? "askPermission" : "list_tools", `i${k}`)],
  read_only_loop: (k) => [call(["readFile", "glob", "grep"][k % 3]!, `r${k}`)],
  announce_no_action: () => [text("Got it. Proceeding now.")],
  error_retry_loop: () => [call("bash", "same"), result("bash", true, "same")],
  planning_loop: () => [text("Thinking about the approach.")],
  alternating_calls: (k) => [call(k % 2 ? "readFile" : "grep", k % 2 ? "a" : "b")],
  tool_avoidance: () => [text("I could use writeFile for that.")],
};

describe("each pattern's default ladder", () => {
  for (const type of PATTERN_TYPES) {
    const t = BUILTIN_PATTERN_CONFIG.thresholds[type];
    it(`${type}: nothing below ${t.minor}, minor at ${t.minor}, moderate at ${t.moderate}, severe at ${t.severe}`, () => {
      const s = new Session();
      const seen: { k: number; severity: PatternSeverity; count: number }[] = [];
      for (let k = 1; k <= t.severe + 1; k++) {
        for (const r of reports(s.feed(...steps[type](k)), type)) seen.push({ k, ...r });
      }
      expect(seen).toEqual([
        { k: t.minor, severity: "minor", count: t.minor },
        { k: t.moderate, severity: "moderate", count: t.moderate },
        { k: t.severe, severity: "severe", count: t.severe },
      ]);
    });
  }

  it("the default ladders are SPEC 5's table", () => {
    const ladders = Object.fromEntries(
      PATTERN_TYPES.map((p) => {
        const t = BUILTIN_PATTERN_CONFIG.thresholds[p];
        return [p, [t.minor, t.moderate, t.severe]];
      }),
    );
    expect(ladders).toEqual({
      repetitive_calls: [3, 4, 6],
      introspection_loop: [2, 4, 6],
      read_only_loop: [5, 8, 12],
      announce_no_action: [2, 3, 4],
      error_retry_loop: [3, 4, 6],
      planning_loop: [3, 4, 6],
      alternating_calls: [6, 8, 10],
      tool_avoidance: [2, 3, 4],
    });
  });
});

// ---------------------------------------------------------------------------
// conditions
// ---------------------------------------------------------------------------

describe("detection conditions", () => {
  it("repetitive_calls: same tool name regardless of args; another tool breaks the run", () => {
    const s = new Session();
    s.feed(call("search_web", "a"), call("search_web", "b"), call("fetch", "x"), call("search_web", "c"), call("search_web", "d"));
    expect(reports(s.all, "repetitive_calls")).toEqual([]);
    const e = s.feed(call("search_web", "e"));
    expect(reports(e, "repetitive_calls")).toEqual([{ severity: "minor", count: 3 }]);
    const p = e.find((x) => x.type === "pattern");
    expect(p && p.type === "pattern" && p.toolSequence.slice(-3)).toEqual(["search_web", "search_web", "search_web"]);
  });

  it("repetitive_calls: model text between the calls does not break the run", () => {
    const s = new Session();
    s.feed(call("search_web", "a"), text("hmm"), call("search_web", "b"), text("ok"));
    expect(reports(s.feed(call("search_web", "c")), "repetitive_calls")).toEqual([{ severity: "minor", count: 3 }]);
  });

  it("introspection_loop: a non-introspection call breaks the run", () => {
    const s = new Session();
    s.feed(call("list_tools", "1"), call("search_web"), call("askPermission", "2"));
    expect(reports(s.all, "introspection_loop")).toEqual([]);
    expect(reports(s.feed(call("get_tool_schemas")), "introspection_loop")).toEqual([{ severity: "minor", count: 2 }]);
  });

  it("read_only_loop: counts read-only calls in the stretch, not only consecutive ones; none with an action call", () => {
    const s = new Session();
    s.feed(call("readFile", "1"), call("search_web"), call("Read", "2"), call("Grep", "3"), call("LS", "4"));
    expect(reports(s.all, "read_only_loop")).toEqual([]);
    expect(reports(s.feed(call("Glob", "5")), "read_only_loop")).toEqual([{ severity: "minor", count: 5 }]);

    const t = new Session();
    t.feed(call("bash", "x"), result("bash", true, "x")); // failed action call: stretch continues, but an action call happened
    for (let i = 0; i < 6; i++) t.feed(call("readFile", `f${i}`));
    expect(reports(t.all, "read_only_loop")).toEqual([]);
  });

  it("announce_no_action: not while an action tool is among the last 3 calls", () => {
    const s = new Session();
    s.feed(text("Let me fix it"), call("bash", "x"), result("bash", true, "x"), text("Running it again"));
    expect(reports(s.all, "announce_no_action")).toEqual([]);
    s.feed(call("readFile", "1"), call("grep", "2"));
    expect(reports(s.all, "announce_no_action")).toEqual([]);
    // the third non-action call pushes bash out of the last 3
    expect(reports(s.feed(call("glob", "3")), "announce_no_action")).toEqual([{ severity: "minor", count: 2 }]);
  });

  it("announce_no_action: phrases match case-insensitively as substrings; other text is not an announcement", () => {
    const s = new Session();
    s.feed(text("The weather is nice."), text("I'LL NOW restore the file"));
    expect(reports(s.all, "announce_no_action")).toEqual([]);
    expect(reports(s.feed(text("Executing the plan")), "announce_no_action")).toEqual([{ severity: "minor", count: 2 }]);
  });

  it("error_retry_loop: a different args hash restarts the run; a success of the key resets it", () => {
    const s = new Session();
    s.feed(call("bash", "a"), result("bash", true, "a"), call("bash", "a"), result("bash", true, "a"));
    s.feed(call("bash", "b"), result("bash", true, "b")); // different args hash
    s.feed(call("bash", "b"), result("bash", true, "b"));
    expect(reports(s.all, "error_retry_loop")).toEqual([]);
    expect(reports(s.feed(call("bash", "b"), result("bash", true, "b")), "error_retry_loop")).toEqual([
      { severity: "minor", count: 3 },
    ]);

    const t = new Session();
    t.feed(call("fetch", "u"), result("fetch", true, "u"), call("fetch", "u"), result("fetch", true, "u"));
    t.feed(call("fetch", "u"), result("fetch", false, "u")); // success of the key (not an action tool)
    t.feed(call("fetch", "u"), result("fetch", true, "u"), call("fetch", "u"), result("fetch", true, "u"));
    expect(reports(t.all, "error_retry_loop")).toEqual([]);
    expect(reports(t.feed(call("fetch", "u"), result("fetch", true, "u")), "error_retry_loop")).toEqual([
      { severity: "minor", count: 3 },
    ]);
  });

  it("error_retry_loop: results of other keys in between do not break the run", () => {
    const s = new Session();
    s.feed(call("fetch", "u"), result("fetch", true, "u"), call("readFile", "r"), result("readFile", false, "r"));
    s.feed(call("fetch", "u"), result("fetch", true, "u"), call("grep", "g"), result("grep", true, "g"));
    expect(reports(s.feed(call("fetch", "u"), result("fetch", true, "u")), "error_retry_loop")).toEqual([
      { severity: "minor", count: 3 },
    ]);
  });

  it("planning_loop: a tool call between texts breaks the run; a tool result does not", () => {
    const s = new Session();
    s.feed(text("a"), text("b"), call("search_web"), text("c"), text("d"));
    expect(reports(s.all, "planning_loop")).toEqual([]);
    s.feed(result("search_web", false));
    expect(reports(s.feed(text("e")), "planning_loop")).toEqual([{ severity: "minor", count: 3 }]);
  });

  it("alternating_calls: needs exactly two (tool, args) pairs; a third pair or a repeat breaks it", () => {
    const A = () => call("readFile", "a");
    const B = () => call("readFile", "b");
    const C = () => call("grep", "c");
    const s = new Session();
    s.feed(A(), B(), C(), A(), B(), C(), A(), B());
    expect(reports(s.all, "alternating_calls")).toEqual([]);

    const t = new Session();
    t.feed(A(), A(), B(), A(), B(), A()); // run is 5 (A B A B A after the repeat)
    expect(reports(t.all, "alternating_calls")).toEqual([]);
    expect(reports(t.feed(B()), "alternating_calls")).toEqual([{ severity: "minor", count: 6 }]);
  });

  it("alternating_calls: the same tool with two alternating args counts; names both in the nudge", () => {
    const s = new Session();
    const e = s.feed(...[0, 1, 2, 3, 4, 5].map((i) => call(i % 2 ? "fetch" : "search_web", i % 2 ? "x" : "y")));
    expect(reports(e, "alternating_calls")).toEqual([{ severity: "minor", count: 6 }]);
    const n = e.find((x) => x.type === "nudge" && x.patternType === "alternating_calls");
    expect(n && n.type === "nudge" && n.message).toContain("search_web and fetch");
  });

  it("tool_avoidance: whole-word, case-insensitive mention; calling the tool clears its mentions", () => {
    const s = new Session();
    s.feed(text("I'll run BASH to check"), call("bash", "ls"), text("Now bash again"));
    expect(reports(s.all, "tool_avoidance")).toEqual([]);
    s.feed(text("bashful is not a mention"));
    expect(reports(s.all, "tool_avoidance")).toEqual([]);
    const e = s.feed(text("Using Bash next"));
    expect(reports(e, "tool_avoidance")).toEqual([{ severity: "minor", count: 2 }]);
    const n = e.find((x) => x.type === "nudge" && x.patternType === "tool_avoidance");
    expect(n && n.type === "nudge" && n.message).toBe(
      "You've mentioned bash 2 times without calling it. If you intend to use it, call it.",
    );
  });

  it("tool_avoidance: a text naming a tool several times counts once", () => {
    const s = new Session();
    s.feed(text("writeFile, writeFile, writeFile"));
    expect(reports(s.all, "tool_avoidance")).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// stretch semantics
// ---------------------------------------------------------------------------

describe("the stretch", () => {
  it("a pattern already reported is reported again only when its severity rises", () => {
    const s = new Session();
    s.feed(call("search_web", "1"), call("search_web", "2"), call("search_web", "3")); // minor
    s.feed(call("fetch"), call("search_web", "4"), call("search_web", "5"), call("search_web", "6")); // minor again: silent
    expect(reports(s.all, "repetitive_calls")).toEqual([{ severity: "minor", count: 3 }]);
    expect(reports(s.feed(call("search_web", "7")), "repetitive_calls")).toEqual([{ severity: "moderate", count: 4 }]);
  });

  it("a successful action-tool result starts a new, clean stretch", () => {
    const s = new Session();
    s.feed(call("search_web", "1"), call("search_web", "2"), call("search_web", "3"));
    expect(activePatterns(s.state).map((p) => p.patternType)).toContain("repetitive_calls");
    s.feed(call("writeFile", "w"), result("writeFile", false, "w"));
    expect(s.state.stretch.callCount).toBe(0);
    expect(activePatterns(s.state)).toEqual([]);
    s.feed(call("search_web", "4"), call("search_web", "5"));
    expect(reports(s.all, "repetitive_calls")).toHaveLength(1);
    expect(reports(s.feed(call("search_web", "6")), "repetitive_calls")).toEqual([{ severity: "minor", count: 3 }]);
  });

  it("turn.start does not reset the stretch", () => {
    const s = new Session();
    s.feed(turn(0), call("search_web", "1"), turn(1), call("search_web", "2"), turn(2));
    expect(reports(s.feed(call("search_web", "3")), "repetitive_calls")).toEqual([{ severity: "minor", count: 3 }]);
  });

  it("a failed action-tool result does not reset the stretch", () => {
    const s = new Session();
    for (let i = 0; i < 4; i++) s.feed(text(`Proceeding with step ${i}`));
    s.feed(call("Write", "w"), result("Write", true, "w"));
    expect(s.state.stretch.announcements).toBe(4);
    // the planning loop (4 texts: moderate) stays reported in this stretch
    s.feed(text("x"), text("y"), text("z"), text("w"));
    expect(reports(s.all, "planning_loop").map((r) => r.severity)).toEqual(["minor", "moderate"]);
  });

  it("a successful non-action result does not reset the stretch", () => {
    const s = new Session();
    s.feed(call("search_web", "1"), result("search_web", false, "1"), call("search_web", "2"), result("search_web", false, "2"));
    expect(reports(s.feed(call("search_web", "3")), "repetitive_calls")).toEqual([{ severity: "minor", count: 3 }]);
  });

  it("keeps only a bounded tail of calls however long the stretch", () => {
    const s = new Session();
    for (let i = 0; i < 200; i++) s.feed(call("readFile", `f${i}`));
    expect(s.state.stretch.calls.length).toBeLessThanOrEqual(20);
    expect(s.state.stretch.readOnlyCalls).toBe(200);
  });
});

// ---------------------------------------------------------------------------
// the seed's example scenario
// ---------------------------------------------------------------------------

describe("seed example: announce without action", () => {
  it("2nd announcement → gentle, 3rd → direct, 4th → interrupt and pause", () => {
    const s = new Session();
    const announce = (e: Effect[]) => e.filter((x) => "patternType" in x && x.patternType === "announce_no_action");

    const t1 = s.feed(turn(1), text("I'll restore the file from backup. Proceeding now."), call("list_tools", "fs"));
    expect(announce(t1)).toEqual([]);

    const t2 = s.feed(turn(2), text("I'm going to restore and apply the fix. Proceeding immediately."), call("list_tools", "fs"));
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

    const t3 = s.feed(turn(3), text("You're right - I need to actually execute. Proceeding with the real steps now."), call("list_tools", "fs"));
    expect(announce(t3).map((e) => (e.type === "nudge" ? [e.nudgeType, e.message] : [e.type]))).toEqual([
      ["pattern"],
      ["direct", "NOTICE: You've announced action 3 times without executing. Call the appropriate tool NOW."],
    ]);
    expect(s.state.paused).toBe(false);

    const t4 = s.feed(turn(4), text("Proceeding."), call("list_tools", "fs"));
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

// ---------------------------------------------------------------------------
// configuration and settings
// ---------------------------------------------------------------------------

describe("configuration", () => {
  const custom: PatternConfig = {
    ...BUILTIN_PATTERN_CONFIG,
    readOnlyTools: ["peek"],
    actionTools: ["deploy"],
    introspectionTools: ["whoami"],
    announcePhrases: ["ON IT"],
    thresholds: { ...BUILTIN_PATTERN_CONFIG.thresholds, read_only_loop: { minor: 2, moderate: 3, severe: 5 } },
  };
  const cfg: ObserveConfig = { patterns: custom, settings: SETTINGS };

  it("uses configured tool classes and ladders", () => {
    const s = new Session(cfg);
    s.feed(call("peek", "1"));
    expect(reports(s.all, "read_only_loop")).toEqual([]);
    expect(reports(s.feed(call("peek", "2")), "read_only_loop")).toEqual([{ severity: "minor", count: 2 }]);
    expect(reports(s.feed(call("readFile", "3")), "read_only_loop")).toEqual([]); // not read-only any more
    s.feed(call("whoami", "a"));
    expect(reports(s.feed(call("whoami", "b")), "introspection_loop")).toEqual([{ severity: "minor", count: 2 }]);
    // only the configured action tool ends the stretch
    s.feed(call("bash", "x"), result("bash", false, "x"));
    expect(s.state.stretch.callCount).toBeGreaterThan(0);
    s.feed(call("deploy", "x"), result("deploy", false, "x"));
    expect(s.state.stretch.callCount).toBe(0);
  });

  it("uses configured announce phrases (case-insensitive)", () => {
    const s = new Session(cfg);
    s.feed(text("Proceeding now"), text("proceeding"));
    expect(reports(s.all, "announce_no_action")).toEqual([]);
    s.feed(text("on it!"));
    expect(reports(s.feed(text("On it, boss")), "announce_no_action")).toEqual([{ severity: "minor", count: 2 }]);
  });

  it("a raised minor threshold delays detection", () => {
    const c: ObserveConfig = {
      patterns: { ...BUILTIN_PATTERN_CONFIG, thresholds: { ...BUILTIN_PATTERN_CONFIG.thresholds, repetitive_calls: { minor: 5, moderate: 7, severe: 9 } } },
      settings: SETTINGS,
    };
    const s = new Session(c);
    for (let i = 0; i < 4; i++) s.feed(call("search_web", `${i}`));
    expect(reports(s.all, "repetitive_calls")).toEqual([]);
    expect(reports(s.feed(call("search_web", "x")), "repetitive_calls")).toEqual([{ severity: "minor", count: 5 }]);
  });

  it("patternDetectionEnabled: false detects nothing", () => {
    const s = new Session({ patterns: BUILTIN_PATTERN_CONFIG, settings: { ...SETTINGS, patternDetectionEnabled: false } });
    for (let i = 0; i < 12; i++) s.feed(text("Proceeding now"), call("list_tools", "x"));
    expect(s.all).toEqual([]);
    expect(s.state.paused).toBe(false);
  });

  it("accepts resolved EffectiveSettings (value + source)", () => {
    const settings = resolveSettings({ nudgeLevel: "gentle" }, null, null);
    const s = new Session({ patterns: BUILTIN_PATTERN_CONFIG, settings });
    for (let i = 0; i < 6; i++) s.feed(call("search_web", `${i}`));
    const nudges = s.all.filter((e) => e.type === "nudge");
    expect(nudges.map((n) => n.type === "nudge" && n.nudgeType)).toEqual(["gentle", "gentle", "gentle"]);
    expect(s.state.paused).toBe(false);
  });
});

// ---------------------------------------------------------------------------
// stats, turns, persistence
// ---------------------------------------------------------------------------

describe("stats", () => {
  it("counts turns, stalled turns, pattern reports and nudges", () => {
    let state = createSessionBehaviour(SID);
    const totals = { turns: 0, stalled: 0, sent: 0, patterns: 0 };
    const feed = (e: BehaviourEvent, now: number) => {
      const r = observeSessionEvent(state, e, CONFIG, now);
      state = r.state;
      totals.turns += r.stats.turns;
      totals.stalled += r.stats.stalledTurns;
      totals.sent += r.stats.nudgesSent;
      totals.patterns += Object.values(r.stats.patterns).reduce((a, b) => a + (b ?? 0), 0);
      return r;
    };
    feed(turn(0), 1);
    feed(call("search_web", "1"), 2);
    feed(turn(1), 3);
    feed(call("search_web", "2"), 4);
    const r = feed(call("search_web", "3"), 5); // repetitive minor in turn 1
    expect(r.stats).toEqual({ patterns: { repetitive_calls: 1 }, nudgesSent: 1, nudgesEffective: 0, turns: 0, stalledTurns: 1 });
    feed(call("search_web", "4"), 6); // moderate, same turn: not another stalled turn
    feed(turn(2), 7);
    feed(call("writeFile", "w"), 8);
    feed(result("writeFile", false, "w"), 9);
    expect(totals).toEqual({ turns: 3, stalled: 1, sent: 2, patterns: 2 });
  });

  it("a turnIndex on a call starts a turn too; a pattern with no known turn opens an implicit one", () => {
    const s0 = createSessionBehaviour(SID);
    const r = observeSessionEvent(s0, { ...call("x"), turnIndex: 7 } as BehaviourEvent, CONFIG, 1);
    expect(r.stats.turns).toBe(1);
    expect(r.state.currentTurn).toBe(7);

    let s = createSessionBehaviour(SID);
    let turns = 0;
    let stalled = 0;
    for (let i = 0; i < 3; i++) {
      const o = observeSessionEvent(s, call("search_web", `${i}`), CONFIG, i);
      s = o.state;
      turns += o.stats.turns;
      stalled += o.stats.stalledTurns;
    }
    expect({ turns, stalled }).toEqual({ turns: 1, stalled: 1 });
  });
});

describe("state", () => {
  it("is plain JSON: a round trip through JSON mid-session changes nothing", () => {
    const events = [text("Proceeding now"), call("list_tools", "a"), text("Let me do it"), call("list_tools", "a"), call("bash", "x"), result("bash", true, "x"), text("Running")];
    let direct = createSessionBehaviour(SID);
    let viaJson = createSessionBehaviour(SID);
    const effA: Effect[] = [];
    const effB: Effect[] = [];
    events.forEach((e, i) => {
      const a = observeSessionEvent(direct, e, CONFIG, i);
      direct = a.state;
      effA.push(...a.effects);
      const b = observeSessionEvent(JSON.parse(JSON.stringify(viaJson)), e, CONFIG, i);
      viaJson = b.state;
      effB.push(...b.effects);
    });
    expect(viaJson).toEqual(direct);
    expect(effB).toEqual(effA);
    expect(JSON.parse(JSON.stringify(direct))).toEqual(direct);
  });

  it("does not mutate the input state", () => {
    const s = new Session();
    s.feed(call("search_web", "1"), call("search_web", "2"));
    const before = JSON.parse(JSON.stringify(s.state));
    const frozen = s.state;
    observeSessionEvent(frozen, call("search_web", "3"), CONFIG, 99);
    expect(frozen).toEqual(before);
  });

  it("detectPatterns is a pure function of the stretch", () => {
    const s = new Session();
    s.feed(call("readFile", "1"), call("readFile", "2"), call("readFile", "3"));
    expect(detectPatterns(s.state.stretch, BUILTIN_PATTERN_CONFIG)).toEqual(detectPatterns(s.state.stretch, BUILTIN_PATTERN_CONFIG));
    expect(detectPatterns(s.state.stretch, BUILTIN_PATTERN_CONFIG).map((d) => [d.patternType, d.severity, d.count])).toEqual([
      ["repetitive_calls", "minor", 3],
    ]);
  });
});

// ---------------------------------------------------------------------------
// properties
// ---------------------------------------------------------------------------

const TOOLS = ["readFile", "grep", "list_tools", "askPermission", "bash", "writeFile", "search_web"];
const arbEvent: fc.Arbitrary<BehaviourEvent> = fc.oneof(
  fc.record({ tool: fc.constantFrom(...TOOLS), h: fc.constantFrom("a", "b") }).map(({ tool, h }) => call(tool, h)),
  fc.record({ tool: fc.constantFrom(...TOOLS), h: fc.constantFrom("a", "b"), failed: fc.boolean() }).map(({ tool, h, failed }) => result(tool, failed, h)),
  fc.constantFrom("Proceeding now", "thinking", "I will use bash", "Let me writeFile it", "ok").map((t) => text(t)),
  fc.nat({ max: 5 }).map((i) => turn(i)),
);
const arbSettings = fc.record({
  nudgeLevel: fc.constantFrom("off", "gentle", "direct", "interrupt" as const),
  nudgeEnabled: fc.boolean(),
  patternDetectionEnabled: fc.constant(true),
});

function runAll(events: BehaviourEvent[], settings: BehaviourSettings) {
  let state = createSessionBehaviour(SID);
  const trace: { stretchId: number; effects: Effect[] }[] = [];
  let turns = 0;
  let stalled = 0;
  events.forEach((e, i) => {
    const r = observeSessionEvent(state, e, { patterns: BUILTIN_PATTERN_CONFIG, settings }, i * 10);
    state = r.state;
    turns += r.stats.turns;
    stalled += r.stats.stalledTurns;
    trace.push({ stretchId: state.stretch.id, effects: r.effects });
  });
  return { state, trace, turns, stalled };
}

describe("properties", () => {
  it("detection is deterministic", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 60 }), arbSettings, (events, settings) => {
        expect(runAll(events, settings)).toEqual(runAll(events, settings));
      }),
    );
  });

  it("within a stretch, a pattern's reports strictly rise in severity; stalled turns never exceed turns", () => {
    const rank = (s: PatternSeverity) => PATTERN_SEVERITIES.indexOf(s);
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 80 }), arbSettings, (events, settings) => {
        const { trace, turns, stalled } = runAll(events, settings);
        const last = new Map<string, number>();
        for (const { stretchId, effects } of trace) {
          for (const e of effects) {
            if (e.type !== "pattern") continue;
            const k = `${stretchId}:${e.patternType}`;
            const prev = last.get(k);
            if (prev !== undefined) expect(rank(e.severity)).toBeGreaterThan(prev);
            last.set(k, rank(e.severity));
          }
        }
        expect(stalled).toBeLessThanOrEqual(turns);
      }),
    );
  });

  it("every nudge follows its pattern report, and interrupts only at level interrupt", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 80 }), arbSettings, (events, settings) => {
        const { trace } = runAll(events, settings);
        for (const { effects } of trace) {
          effects.forEach((e, i) => {
            if (e.type !== "nudge" || e.nudgeType === "guidance") return;
            expect(settings.nudgeEnabled && settings.nudgeLevel !== "off").toBe(true);
            expect(effects[i - 1]).toMatchObject({ type: "pattern", patternType: e.patternType });
            if (e.nudgeType === "interrupt") expect(settings.nudgeLevel).toBe("interrupt");
          });
        }
      }),
    );
  });
});
