/** Every registered pattern is a whole unit: a well-formed entry and its own test beside it. */
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PATTERN_SEVERITIES, PATTERN_TYPES, STALL_PATTERNS, STALL_PATTERN_BY_NAME } from ".";

const fileOf = (name: string) => name.replaceAll("_", "-");

describe("the stall-pattern registry", () => {
  it("names are unique snake_case, listed once each, and the name list is the registry's order", () => {
    expect(new Set(PATTERN_TYPES).size).toBe(STALL_PATTERNS.length);
    for (const p of STALL_PATTERNS) expect(p.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect([...PATTERN_TYPES]).toEqual(STALL_PATTERNS.map((p) => p.name));
    for (const p of STALL_PATTERNS) expect(STALL_PATTERN_BY_NAME[p.name]).toBe(p);
  });

  for (const p of STALL_PATTERNS) {
    it(`${p.name}: its file and its test, a strictly increasing ladder above its floor, a description and a text per severity`, () => {
      expect(existsSync(path.join(import.meta.dirname, `${fileOf(p.name)}.ts`))).toBe(true);
      expect(existsSync(path.join(import.meta.dirname, `${fileOf(p.name)}.test.ts`))).toBe(true);
      expect(p.minCount).toBeGreaterThanOrEqual(1);
      expect(p.ladder.minor).toBeGreaterThanOrEqual(p.minCount);
      expect(p.ladder.moderate).toBeGreaterThan(p.ladder.minor);
      expect(p.ladder.severe).toBeGreaterThan(p.ladder.moderate);
      expect(p.counts.trim()).not.toBe("");
      expect(p.counts).not.toContain("|"); // it is a cell of the docs table
      expect(Object.keys(p.nudges).sort()).toEqual([...PATTERN_SEVERITIES].sort());
      for (const s of PATTERN_SEVERITIES) expect(p.nudges[s].trim()).not.toBe("");
    });
  }

  it("every pattern file in the folder is registered", () => {
    const support = new Set(["index.ts", "pattern.ts", "severity.ts", "tracks.ts", "ladder-check.ts", "raw-session.ts"]);
    const files = readdirSync(import.meta.dirname).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !support.has(f));
    expect(files.sort()).toEqual(STALL_PATTERNS.map((p) => `${fileOf(p.name)}.ts`).sort());
  });
});
