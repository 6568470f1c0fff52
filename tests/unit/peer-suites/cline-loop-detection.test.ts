/**
 * Cline `src/core/task/__tests__/loop-detection.test.ts`, case by case, replayed as Vigil events with
 * the built-in configuration (`read_file`, `list_files`, `search_files` are default read-only tools).
 * Cline's soft warning ↔ a Vigil nudge; its hard escalation ↔ a Vigil pause.
 */
import { describe, expect, it } from "vitest";
import { BUILTIN_PATTERN_CONFIG, callIdentityHash } from "@/server/engine/patterns";
import { Trace } from "./trace";

const read = (t: Trace, args: Record<string, unknown>) => t.act("read_file", args, { ok: `contents of ${String(args.path)}` });

describe("Cline loop-detection.test.ts", () => {
  it("toolCallSignature: produces identical output regardless of key order", () => {
    const v = BUILTIN_PATTERN_CONFIG.volatileArgFields;
    expect(callIdentityHash({ b: "2", a: "1" }, v)).toBe(callIdentityHash({ a: "1", b: "2" }, v));
  });

  it("should warn at 3 identical calls and escalate at 5", () => {
    const t = new Trace();
    const nudgeAt: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const before = t.nudges().length;
      read(t, { path: "src/main.ts" });
      nudgeAt.push(t.nudges().length > before ? t.nudges().at(-1)!.nudgeType : null);
    }
    // Warn at 3 and stop at 5, as Cline. Deliberate difference: at 4 Vigil sends a direct instruction
    // (SPEC 5 ladder 3/4/5) where Cline stays silent after its one warning.
    expect(nudgeAt).toEqual([null, null, "gentle", "direct", "interrupt"]);
    expect(t.paused).toBe(true);
  });

  it("should reset when tool or params change", () => {
    const t = new Trace();
    read(t, { path: "a.ts" });
    read(t, { path: "a.ts" });
    read(t, { path: "b.ts" });
    expect(t.state.run?.length).toBe(1);
    read(t, { path: "b.ts" });
    t.act("list_files", { path: "b.ts" }, { ok: ["b.ts"] });
    expect(t.state.run?.length).toBe(1);
    expect(t.effects).toEqual([]);
  });

  it("should NOT count different tools with same params as identical", () => {
    const t = new Trace();
    read(t, { path: "src/main.ts" });
    t.act("search_files", { path: "src/main.ts" }, { ok: [] });
    t.act("list_files", { path: "src/main.ts" }, { ok: ["src/main.ts"] });
    expect(t.state.run?.length).toBe(1);
    expect(t.effects).toEqual([]);
  });

  it("should strip task_progress from comparison", () => {
    const t = new Trace();
    for (let i = 0; i < 5; i++) read(t, { path: "src/index.ts", task_progress: `step ${i} of 5` });
    expect(t.nudges().map((n) => n.nudgeType)).toEqual(["gentle", "direct", "interrupt"]);
    expect(t.nudges()[0]!.step).toBe(5); // the 3rd call (call, result, call, result, call)
    expect(t.paused).toBe(true);
  });
});
