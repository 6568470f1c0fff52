import { describe, expect, it } from "vitest";
import {
  capNudgeType,
  NUDGE_TEMPLATES,
  nudgeMessage,
  nudgeTypeFor,
  renderTemplate,
  resumeSession,
  severityToNudgeType,
  takePendingGuidance,
} from "./nudges";
import {
  BUILTIN_PATTERN_CONFIG,
  createSessionBehaviour,
  observeSessionEvent,
  type BehaviourEvent,
  type BehaviourSettings,
  type BehaviourStats,
  type SessionBehaviour,
} from "./patterns";
import { NUDGE_LEVELS, PATTERN_SEVERITIES, PATTERN_TYPES, type Effect, type NudgeLevel } from "./types";

let seq = 0;
const SID = "sess-n";
const base = () => ({ id: `n${++seq}`, sessionId: SID, ts: 0 });
const call = (toolName: string, argsHash = "h"): BehaviourEvent => ({
  ...base(),
  type: "tool.call",
  callId: `c${seq}`,
  toolName,
  args: {},
  failureKey: `${toolName}|${argsHash}`,
  // The shell's hash of `args` ({} for every call here): the calls are identical, whatever the label.
  argsHash: "h",
});
const result = (toolName: string, failed: boolean, argsHash = "h"): BehaviourEvent => ({
  ...base(),
  type: "tool.result",
  callId: `c${seq}`,
  toolName,
  failureKey: `${toolName}|${argsHash}`,
  argsHash: "h",
  failed,
});
const text = (t: string): BehaviourEvent => ({ ...base(), type: "model.text", text: t });

class Session {
  state: SessionBehaviour = createSessionBehaviour(SID);
  now = 0;
  all: Effect[] = [];
  stats: BehaviourStats = { patterns: {}, nudgesSent: 0, nudgesEffective: 0, turns: 0, stalledTurns: 0 };
  constructor(public settings: BehaviourSettings = { nudgeLevel: "interrupt", nudgeEnabled: true, patternDetectionEnabled: true }) {}
  feed(...events: BehaviourEvent[]): Effect[] {
    const out: Effect[] = [];
    for (const e of events) {
      const r = observeSessionEvent(this.state, e, { patterns: BUILTIN_PATTERN_CONFIG, settings: this.settings }, (this.now += 1000));
      this.state = r.state;
      out.push(...r.effects);
      this.stats.nudgesSent += r.stats.nudgesSent;
      this.stats.nudgesEffective += r.stats.nudgesEffective;
    }
    this.all.push(...out);
    return out;
  }
}

const nudgeTypes = (effects: Effect[]) => effects.flatMap((e) => (e.type === "nudge" ? [e.nudgeType] : []));
/** Five identical calls: repetitive_calls minor (3), moderate (4), severe (5). */
const sixCalls = () => [1, 2, 3, 4, 5].map((i) => call("search_web", `q${i}`));

describe("severity → nudge type, capped by the nudge level", () => {
  it("maps minor → gentle, moderate → direct, severe → interrupt", () => {
    expect(PATTERN_SEVERITIES.map(severityToNudgeType)).toEqual(["gentle", "direct", "interrupt"]);
  });

  it("caps by level", () => {
    const table = Object.fromEntries(
      NUDGE_LEVELS.map((level) => [level, PATTERN_SEVERITIES.map((s) => nudgeTypeFor(s, level))]),
    );
    expect(table).toEqual({
      off: [null, null, null],
      gentle: ["gentle", "gentle", "gentle"],
      direct: ["gentle", "direct", "direct"],
      interrupt: ["gentle", "direct", "interrupt"],
    });
  });

  it("nudgeEnabled: false behaves like off", () => {
    for (const level of NUDGE_LEVELS) expect(capNudgeType("interrupt", level, false)).toBeNull();
  });
});

describe("templates", () => {
  it("has a text for every pattern type and severity, with placeholders filled", () => {
    for (const p of PATTERN_TYPES) {
      for (const s of PATTERN_SEVERITIES) {
        const msg = renderTemplate(NUDGE_TEMPLATES[p][s], { toolName: "grep", count: 7 });
        expect(msg.length).toBeGreaterThan(20);
        expect(msg).not.toMatch(/[{}]/);
      }
    }
  });

  it("uses the seed's texts where the seed has one", () => {
    expect(NUDGE_TEMPLATES.introspection_loop.moderate).toBe(
      "NOTICE: Stop querying tool metadata. You have sufficient information. Execute the task.",
    );
    expect(NUDGE_TEMPLATES.announce_no_action.minor).toBe(
      "You mentioned proceeding but haven't called an action tool yet. Please execute the planned action.",
    );
  });

  it("identical-call nudges preview the repeated arguments and say what to do differently", () => {
    const m = renderTemplate(NUDGE_TEMPLATES.repetitive_calls.minor, { toolName: "bash", count: 3, args: '{"command":"ls dist"}' });
    expect(m).toBe(
      'You\'ve called bash {"command":"ls dist"} 3 times with the same result. Use what it returned, or change the arguments, before calling it again.',
    );
    const e = renderTemplate(NUDGE_TEMPLATES.error_retry_loop.moderate, { toolName: "Edit", count: 4, args: '{"path":"a.ts"}' });
    expect(e).toContain('Edit {"path":"a.ts"}');
    expect(e).toMatch(/fix what the error says|another tool/);
    // Without a preview the placeholder disappears cleanly.
    expect(renderTemplate(NUDGE_TEMPLATES.repetitive_calls.severe, { toolName: "grep", count: 5 })).toBe(
      "BLOCKED: grep was called 5 times with the same result. The system is pausing for user intervention.",
    );
  });

  it("a capped severe nudge does not claim the session is pausing", () => {
    const m = nudgeMessage("repetitive_calls", "severe", "direct", { toolName: "grep", count: 5 });
    expect(m).toMatch(/^NOTICE: You are in a loop: grep called 5 times/);
    expect(m).not.toMatch(/paus/);
    expect(nudgeMessage("repetitive_calls", "moderate", "gentle", { toolName: "grep", count: 4 })).toMatch(/^You've called grep 4 times/);
  });
});

describe("nudge levels in the engine", () => {
  const run = (nudgeLevel: NudgeLevel, nudgeEnabled = true) => {
    const s = new Session({ nudgeLevel, nudgeEnabled, patternDetectionEnabled: true });
    s.feed(...sixCalls());
    return s;
  };

  it("interrupt: gentle, direct, then interrupt that pauses the session", () => {
    const s = run("interrupt");
    expect(nudgeTypes(s.all)).toEqual(["gentle", "direct", "interrupt"]);
    expect(s.state.paused).toBe(true);
    expect(s.all.filter((e) => e.type === "paused")).toEqual([
      {
        type: "paused",
        sessionId: SID,
        reason: "BLOCKED: search_web {} was called 5 times with the same result. The system is pausing for user intervention.",
      },
    ]);
    expect(s.stats.nudgesSent).toBe(3);
  });

  it("direct: the interrupt becomes a direct instruction; no pause", () => {
    const s = run("direct");
    expect(nudgeTypes(s.all)).toEqual(["gentle", "direct", "direct"]);
    expect(s.state.paused).toBe(false);
    expect(s.all.some((e) => e.type === "paused")).toBe(false);
  });

  it("gentle: every nudge gentle", () => {
    const s = run("gentle");
    expect(nudgeTypes(s.all)).toEqual(["gentle", "gentle", "gentle"]);
    expect(s.state.paused).toBe(false);
  });

  it("off: patterns recorded, no nudge, no pause", () => {
    const s = run("off");
    expect(s.all.filter((e) => e.type === "pattern").map((e) => e.type === "pattern" && e.severity)).toEqual([
      "minor",
      "moderate",
      "severe",
    ]);
    expect(nudgeTypes(s.all)).toEqual([]);
    expect(s.state.paused).toBe(false);
    expect(s.stats.nudgesSent).toBe(0);
  });

  it("nudgeEnabled: false behaves like off", () => {
    const s = run("interrupt", false);
    expect(s.all.filter((e) => e.type === "pattern")).toHaveLength(3);
    expect(nudgeTypes(s.all)).toEqual([]);
    expect(s.state.paused).toBe(false);
  });

  it("while paused, further patterns are recorded but no nudge is sent", () => {
    const s = run("interrupt");
    const e = s.feed(call("readFile", "1"), call("readFile", "2"), call("readFile", "3"), call("readFile", "4"), call("readFile", "5"));
    expect(e.some((x) => x.type === "pattern" && x.patternType === "read_only_loop")).toBe(true);
    expect(nudgeTypes(e)).toEqual([]);
  });
});

describe("resume and guidance", () => {
  const paused = () => {
    const s = new Session();
    s.feed(...sixCalls());
    expect(s.state.paused).toBe(true);
    return s;
  };

  it("resuming a session that is not paused is an error", () => {
    const r = resumeSession(createSessionBehaviour(SID), "go", 5);
    expect(r).toEqual({ ok: false, error: "not_paused", message: `session ${SID} is not paused` });
  });

  it("resume with guidance: the next call gets a guidance nudge, once", () => {
    const s = paused();
    const r = resumeSession(s.state, "  Write the file with writeFile now.  ", 99_000);
    if (!r.ok) throw new Error("expected ok");
    expect(r.state.paused).toBe(false);
    expect(r.state.pauseReason).toBeNull();
    expect(r.state.pendingGuidance).toBe("Write the file with writeFile now.");
    s.state = r.state;

    const first = s.feed(call("readFile", "g1"));
    expect(first).toEqual([
      { type: "nudge", nudgeType: "guidance", message: "Write the file with writeFile now.", patternType: null, sessionId: SID },
    ]);
    const second = s.feed(call("readFile", "g2"));
    expect(nudgeTypes(second)).toEqual([]);
    expect(s.state.pendingGuidance).toBeNull();
    // guidance is not a pattern nudge
    expect(s.stats.nudgesSent).toBe(3);
  });

  it("model text does not consume the guidance; the next call does", () => {
    const s = paused();
    const r = resumeSession(s.state, "try again", 1);
    if (!r.ok) throw new Error("expected ok");
    s.state = r.state;
    expect(nudgeTypes(s.feed(text("ok")))).toEqual([]);
    expect(nudgeTypes(s.feed(call("grep", "z")))).toEqual(["guidance"]);
  });

  it("resume without guidance sends no guidance nudge; the loop must build up again", () => {
    const s = paused();
    const r = resumeSession(s.state, undefined, 1);
    if (!r.ok) throw new Error("expected ok");
    s.state = r.state;
    expect(r.state.pendingGuidance).toBeNull();
    const e = s.feed(call("search_web", "again"));
    expect(e).toEqual([]);
    // a blank guidance is no guidance
    const p2 = paused();
    const r2 = resumeSession(p2.state, "   ", 1);
    expect(r2.ok && r2.state.pendingGuidance).toBeNull();
  });

  it("the loop can pause the session again after a resume", () => {
    const s = paused();
    const r = resumeSession(s.state, null, 1);
    if (!r.ok) throw new Error("expected ok");
    s.state = r.state;
    s.feed(...sixCalls());
    expect(s.state.paused).toBe(true);
  });

  it("takePendingGuidance returns null when there is none, and clears it once taken", () => {
    const st = createSessionBehaviour(SID);
    expect(takePendingGuidance(st)).toEqual({ state: st, effect: null });
    const withG = { ...st, pendingGuidance: "do X" };
    const t = takePendingGuidance(withG);
    expect(t.effect).toMatchObject({ type: "nudge", nudgeType: "guidance", message: "do X" });
    expect(takePendingGuidance(t.state).effect).toBeNull();
  });
});

describe("nudge effectiveness", () => {
  it("a nudge followed by a successful action-tool result is effective", () => {
    const s = new Session();
    // Two announcements followed by no call (each counts at the next text): announce minor → gentle nudge.
    s.feed(text("Proceeding now"), text("Let me do it"), text("Running it"));
    expect(s.stats.nudgesSent).toBe(1);
    s.feed(call("readFile", "x")); // same pattern, no new report: still open
    s.feed(call("writeFile", "w"));
    const r = observeSessionEvent(
      s.state,
      result("writeFile", false, "w"),
      { patterns: BUILTIN_PATTERN_CONFIG, settings: s.settings },
      10_000_000,
    );
    expect(r.stats.nudgesEffective).toBe(1);
    expect(r.state.openNudges).toEqual([]);
  });

  it("a nudge followed by a re-detection of the same pattern is not effective", () => {
    const s = new Session();
    s.feed(call("search_web", "1"), call("search_web", "2"), call("search_web", "3")); // minor nudge
    s.feed(call("search_web", "4")); // moderate: the minor nudge failed
    expect(s.state.openNudges.map((n) => n.severity)).toEqual(["moderate"]);
    s.feed(call("bash", "b"), result("bash", false, "b"));
    expect(s.stats).toMatchObject({ nudgesSent: 2, nudgesEffective: 1 });
  });

  it("a failed action result does not make a nudge effective", () => {
    const s = new Session();
    s.feed(call("search_web", "1"), call("search_web", "2"), call("search_web", "3"));
    s.feed(call("bash", "b"), result("bash", true, "b"));
    expect(s.stats.nudgesEffective).toBe(0);
    expect(s.state.openNudges).toHaveLength(1);
  });

  it("nudges of different patterns are judged separately", () => {
    const s = new Session();
    s.feed(call("list_tools", "1"), call("list_tools", "2")); // introspection minor
    s.feed(call("list_tools", "3")); // repetitive minor
    // introspection moderate + repetitive moderate on one event: both minor nudges failed, and ONE
    // nudge is sent (a tie in severity goes to repetitive_calls, first in the SPEC table).
    const fourth = s.feed(call("list_tools", "4"));
    // (list_tools is read-only too: the 3rd re-read also reports read_only_loop minor.)
    expect(fourth.filter((e) => e.type === "pattern").map((e) => e.type === "pattern" && e.patternType)).toEqual(["repetitive_calls", "introspection_loop", "read_only_loop"]);
    expect(fourth.filter((e) => e.type === "nudge").map((e) => e.type === "nudge" && e.patternType)).toEqual(["repetitive_calls"]);
    s.feed(call("Edit", "e"), result("Edit", false, "e"));
    expect(s.stats).toMatchObject({ nudgesSent: 3, nudgesEffective: 1 });
  });
});
