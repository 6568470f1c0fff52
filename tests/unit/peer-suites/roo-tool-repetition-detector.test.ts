/**
 * Roo Code `src/core/tools/__tests__/ToolRepetitionDetector.spec.ts`, case by case, replayed as Vigil
 * events. Roo's limit L blocks the (L+1)-th identical consecutive call and asks the user; in Vigil a
 * block is a pause (a person resumes), so limit L is translated into the workspace ladder
 * `repetitive_calls: {minor: L-1, moderate: L, severe: L+1}` (the defaults 3/4/5 when not given).
 * Roo "allowed" ↔ Vigil did not pause; Roo "blocked" ↔ Vigil nudged or paused at or before that call.
 * Every call gets a result (the same one each time: Roo's tests do not vary outputs).
 */
import { describe, expect, it } from "vitest";
import { mergeEffectiveConfig, parseConfigDocument } from "@/server/engine/config";
import { resumeSession } from "@/server/engine/nudges";
import { Trace } from "./trace";

function trace(limit?: number): Trace {
  if (limit === undefined) return new Trace();
  const ladder = limit <= 1 ? { minor: 1, moderate: 2, severe: 3 } : { minor: limit - 1, moderate: limit, severe: limit + 1 };
  return new Trace(mergeEffectiveConfig({ patterns: { thresholds: { repetitive_calls: ladder } } }, {}).patterns);
}

/** One tool use; returns whether Vigil let it through (not paused, and no nudge on this call when `strict`). */
function check(t: Trace, name: string, params: Record<string, unknown> = {}, result: unknown = "ok"): { allowed: boolean; nudged: boolean } {
  const before = t.log.length;
  const id = t.call(name, params);
  const onCall = t.log.slice(before).map((l) => l.effect);
  const allowed = !t.paused;
  t.result(id, name, { ok: result });
  return { allowed, nudged: onCall.some((e) => e.type === "nudge") };
}

function resume(t: Trace) {
  const r = resumeSession(t.state, null, (t.now += 1000));
  if (!r.ok) throw new Error(r.message);
  t.state = r.state;
}

describe("Roo ToolRepetitionDetector.spec.ts — initialization", () => {
  it("should default to a limit of 3 if no argument provided (Vigil defaults: intervenes by the 4th)", () => {
    const t = trace();
    const r = [1, 2, 3, 4].map(() => check(t, "test-tool"));
    expect(r.slice(0, 3).every((x) => x.allowed)).toBe(true);
    expect(r[3]!.nudged).toBe(true); // direct instruction on the 4th; the pause follows on the 5th
    expect(check(t, "test-tool").allowed).toBe(false);
  });

  it("should use the custom limit when provided (2 → the 3rd is stopped)", () => {
    const t = trace(2);
    expect(check(t, "test-tool").allowed).toBe(true);
    expect(check(t, "test-tool").allowed).toBe(true);
    expect(check(t, "test-tool").allowed).toBe(false);
  });
});

describe("Roo — no repetition", () => {
  it("should allow execution for different tool calls", () => {
    const t = trace();
    for (const n of ["first-tool", "second-tool", "third-tool"]) expect(check(t, n)).toEqual({ allowed: true, nudged: false });
    expect(t.effects).toEqual([]);
  });

  it("should reset the counter when different tool calls are made", () => {
    const t = trace(2);
    check(t, "same-tool");
    check(t, "different-tool");
    expect(check(t, "same-tool")).toEqual({ allowed: true, nudged: false });
  });
});

describe("Roo — repetition below and at the limit", () => {
  it("should allow execution when repetition is below limit and block when limit reached", () => {
    const t = trace(3);
    const r = [1, 2, 3, 4].map(() => check(t, "repeat-tool"));
    expect(r.map((x) => x.allowed)).toEqual([true, true, true, false]);
  });

  it("should block execution when repetition reaches the limit, naming the tool", () => {
    const t = trace(3);
    for (let i = 0; i < 4; i++) check(t, "repeat-tool");
    expect(t.paused).toBe(true);
    expect(t.state.pauseReason).toContain("repeat-tool");
  });

  it("should reset internal state after limit is reached (a person resumes; a new tool is allowed)", () => {
    const t = trace(2);
    for (let i = 0; i < 3; i++) check(t, "repeat-tool");
    expect(t.paused).toBe(true);
    resume(t);
    expect(check(t, "new-tool")).toEqual({ allowed: true, nudged: false });
  });
});

describe("Roo — repetition after the limit", () => {
  it("should allow execution of previously problematic tool after reset", () => {
    const t = trace(2);
    for (let i = 0; i < 3; i++) check(t, "problem-tool");
    resume(t);
    expect(check(t, "problem-tool")).toEqual({ allowed: true, nudged: false });
  });

  it("should require reaching the limit again after reset", () => {
    const t = trace(2);
    for (let i = 0; i < 3; i++) check(t, "repeat-tool");
    resume(t);
    expect(check(t, "repeat-tool").allowed).toBe(true);
    expect(check(t, "repeat-tool").allowed).toBe(true);
    expect(check(t, "repeat-tool").allowed).toBe(false);
  });
});

describe("Roo — tool name interpolation and edge cases", () => {
  it("should include tool name in the error message", () => {
    const t = trace(2);
    for (let i = 0; i < 3; i++) check(t, "special-tool-name");
    expect(t.state.pauseReason).toContain("special-tool-name");
  });

  it("should handle empty tool call", () => {
    const t = trace(2);
    expect([1, 2, 3].map(() => check(t, "empty-tool").allowed)).toEqual([true, true, false]);
  });

  it("should handle different tool names with identical serialized JSON (Vigil differs: the name is part of the identity)", () => {
    // Deliberate: Roo's test forces two tools to serialize alike through a mock. A Vigil call identity
    // always contains the tool name, so tool-name-1 then tool-name-2 twice is a run of 2: nothing.
    const t = trace(2);
    check(t, "tool-name-1", { param: "value" });
    check(t, "tool-name-2", { param: "value" });
    expect(check(t, "tool-name-2", { param: "value" }).allowed).toBe(true);
    expect(t.state.run?.length).toBe(2);
  });

  it("should treat tools with same parameters in different order as identical", () => {
    const t = trace(2);
    check(t, "same-tool", { a: "1", b: "2", c: "3" });
    check(t, "same-tool", { c: "3", a: "1", b: "2" });
    expect(check(t, "same-tool", { b: "2", c: "3", a: "1" }).allowed).toBe(false);
  });
});

describe("Roo — explicit Nth call blocking", () => {
  it("should allow the 1st call but block on the 2nd call for limit 1 (Vigil: direct instruction on the 2nd)", () => {
    // This translation keeps a nudge before the block; the exact "block on the 2nd, nothing before" is the ladder {2, 2, 2} (configured-peers.test.ts).
    const t = trace(1);
    expect(check(t, "tool-name")).toEqual({ allowed: true, nudged: false });
    const second = check(t, "tool-name");
    expect(second.nudged).toBe(true);
    expect(t.nudges().at(-1)!.nudgeType).toBe("direct");
  });

  it("should allow first 2 calls but block on the 3rd call for limit 2", () => {
    const t = trace(2);
    expect([1, 2, 3].map(() => check(t, "tool-name").allowed)).toEqual([true, true, false]);
  });

  it("should allow first 3 calls but block on the 4th call for limit 3 (default)", () => {
    const t = trace(3);
    expect([1, 2, 3, 4].map(() => check(t, "tool-name").allowed)).toEqual([true, true, true, false]);
  });

  it("should never block when limit is 0 (unlimited) — Vigil: nudge level off", () => {
    const t = new Trace(undefined, { nudgeLevel: "off", nudgeEnabled: true, patternDetectionEnabled: true });
    for (let i = 0; i < 10; i++) expect(check(t, "tool-name")).toEqual({ allowed: true, nudged: false });
    expect(t.patternsOf("repetitive_calls").length).toBe(3); // still recorded for the dashboard
  });

  it("should handle different limits correctly (5 → the 6th is stopped)", () => {
    const t = trace(5);
    const r = [1, 2, 3, 4, 5, 6].map(() => check(t, "tool-name"));
    expect(r.map((x) => x.allowed)).toEqual([true, true, true, true, true, false]);
  });

  it("should reset counter after blocking and allow new attempts", () => {
    const t = trace(2);
    for (let i = 0; i < 3; i++) check(t, "tool-name");
    resume(t);
    expect(check(t, "tool-name").allowed).toBe(true);
  });

  it("should handle negative limits as 0 (unlimited) — Vigil refuses a negative ladder, naming the field", () => {
    const r = parseConfigDocument({ patterns: { repetitive_calls: { minor: -1 } } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]!.path).toBe("patterns.repetitive_calls.minor");
  });
});

describe("Roo — browser scroll actions", () => {
  const scroll = (t: Trace, action: string, position: number) => check(t, "browser_action", { action }, { screenshot: `page at ${position}px` });

  // Scroll cases use Vigil's default ladder: Roo's limit 2 would translate into {1, 2, 3}, which nudges
  // any two identical calls; what these cases check is that scrolling through a page is not a loop.
  it("should not count browser scroll_down actions as repetitions (the page moves: each result differs)", () => {
    const t = trace();
    for (let i = 1; i <= 10; i++) expect(scroll(t, "scroll_down", i * 600).allowed).toBe(true);
    expect(t.effects).toEqual([]);
  });

  it("should not count browser scroll_up actions as repetitions", () => {
    const t = trace();
    for (let i = 10; i >= 1; i--) expect(scroll(t, "scroll_up", i * 600).allowed).toBe(true);
    expect(t.effects).toEqual([]);
  });

  it("should not count alternating scroll_down and scroll_up as repetitions (Vigil differs: unchanged alternation is flagged)", () => {
    // Deliberate: Roo exempts scrolling by name. Vigil judges results: down/up/down/up showing the same
    // two screens is the A B A B loop (alternating_calls, ladder 4/6/8) — never repetitive_calls.
    const t = trace(2);
    for (let i = 0; i < 5; i++) {
      scroll(t, "scroll_down", 600);
      scroll(t, "scroll_up", 0);
    }
    expect(t.patternsOf("repetitive_calls")).toEqual([]);
    expect(t.patternsOf("alternating_calls").map((p) => p.count)).toEqual([4, 6, 8]);
  });

  it("should still apply repetition detection to other browser_action types", () => {
    const t = trace(2);
    const click = () => check(t, "browser_action", { action: "click", coordinate: "[100, 200]" }, { screenshot: "same" });
    expect([click(), click(), click()].map((x) => x.allowed)).toEqual([true, true, false]);
  });

  it("should still apply repetition detection to non-browser tools", () => {
    const t = trace(2);
    expect([1, 2, 3].map(() => check(t, "read_file", { path: "test.txt" }).allowed)).toEqual([true, true, false]);
  });

  it("should not interfere … when scroll actions are interspersed (Vigil differs: a run is consecutive calls)", () => {
    // Deliberate: Roo skips scrolls when counting; for Vigil, ls – scroll – scroll – ls – scroll – ls are
    // different consecutive calls, and the page scrolls (new results), so nothing is a loop.
    const t = trace();
    let pos = 0;
    check(t, "execute_command", { command: "ls" }, "a b");
    scroll(t, "scroll_down", (pos += 600));
    scroll(t, "scroll_down", (pos += 600));
    check(t, "execute_command", { command: "ls" }, "a b");
    scroll(t, "scroll_down", (pos += 600));
    expect(check(t, "execute_command", { command: "ls" }, "a b").allowed).toBe(true);
    expect(t.patternsOf("repetitive_calls")).toEqual([]);
  });

  it("should handle browser_action with missing or invalid action parameter gracefully", () => {
    const t = trace(2);
    expect([1, 2, 3].map(() => check(t, "browser_action", {}).allowed)).toEqual([true, true, false]);
  });
});

describe("Roo — native protocol arguments", () => {
  it("should differentiate read_file calls with different files in nativeArgs", () => {
    const t = trace(2);
    check(t, "read_file", { files: [{ path: "file1.ts" }] });
    check(t, "read_file", { files: [{ path: "file2.ts" }] });
    expect(check(t, "read_file", { files: [{ path: "file1.ts" }] })).toEqual({ allowed: true, nudged: false });
  });

  it("should detect repetition when same files are read multiple times with nativeArgs", () => {
    const t = trace(2);
    const r = [1, 2, 3].map(() => check(t, "read_file", { files: [{ path: "same-file.ts" }] }));
    expect(r.map((x) => x.allowed)).toEqual([true, true, false]);
  });

  it("should differentiate read_file calls with multiple files in different orders", () => {
    const t = trace(2);
    check(t, "read_file", { files: [{ path: "a.ts" }, { path: "b.ts" }] });
    expect(check(t, "read_file", { files: [{ path: "b.ts" }, { path: "a.ts" }] })).toEqual({ allowed: true, nudged: false });
    expect(t.state.run?.length).toBe(1);
  });

  it("should handle tools with both params and nativeArgs (a different cwd is a different call)", () => {
    const t = trace(2);
    check(t, "execute_command", { command: "ls", cwd: "/home/user" });
    check(t, "execute_command", { command: "ls", cwd: "/home/admin" });
    expect(t.state.run?.length).toBe(1);
  });

  it("should handle tools with only params (no nativeArgs)", () => {
    const t = trace(2);
    expect([1, 2, 3].map(() => check(t, "read_file", { path: "test.txt" }).allowed)).toEqual([true, true, false]);
  });
});
