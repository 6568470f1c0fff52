import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { findGlobalToolPatterns, type ToolWorkspaceRow } from "./promotion";

const row = (workspaceId: string, toolName: string, worstState: ToolWorkspaceRow["worstState"], failureRate24h: number): ToolWorkspaceRow => ({
  workspaceId,
  toolName,
  worstState,
  failureRate24h,
});

describe("findGlobalToolPatterns", () => {
  it("promotes a tool escalated or blocked in 3 workspaces with average rate > 0.5", () => {
    const out = findGlobalToolPatterns([
      row("w3", "bash", "blocked", 0.9),
      row("w1", "bash", "escalated", 0.6),
      row("w2", "bash", "escalated", 0.6),
    ]);
    expect(out).toHaveLength(1);
    expect(out[0]!.toolName).toBe("bash");
    expect(out[0]!.workspaceIds).toEqual(["w1", "w2", "w3"]);
    expect(out[0]!.avgFailureRate).toBeCloseTo(0.7, 10);
  });

  it("not at 2 workspaces", () => {
    expect(findGlobalToolPatterns([row("w1", "bash", "blocked", 1), row("w2", "bash", "blocked", 1)])).toEqual([]);
  });

  it("not when the average rate is ≤ 0.5 (exactly 0.5 is not enough)", () => {
    expect(
      findGlobalToolPatterns([row("w1", "bash", "escalated", 0.5), row("w2", "bash", "escalated", 0.5), row("w3", "bash", "escalated", 0.5)]),
    ).toEqual([]);
    expect(
      findGlobalToolPatterns([row("w1", "bash", "escalated", 0.9), row("w2", "bash", "escalated", 0.3), row("w3", "bash", "escalated", 0.2)]),
    ).toEqual([]);
  });

  it("trusted and recovering workspaces do not count (nor does their rate)", () => {
    const rows = [
      row("w1", "grep", "escalated", 0.8),
      row("w2", "grep", "escalated", 0.8),
      row("w3", "grep", "recovering", 0.8),
      row("w4", "grep", "trusted", 0.0),
    ];
    expect(findGlobalToolPatterns(rows)).toEqual([]);
    expect(findGlobalToolPatterns([...rows, row("w5", "grep", "blocked", 0.8)])).toEqual([
      { toolName: "grep", workspaceIds: ["w1", "w2", "w5"], avgFailureRate: expect.closeTo(0.8, 10) },
    ]);
  });

  it("the same workspace twice counts once; tools are separate", () => {
    const out = findGlobalToolPatterns([
      row("w1", "bash", "escalated", 0.8),
      row("w1", "bash", "blocked", 0.9),
      row("w2", "bash", "blocked", 0.9),
      row("w1", "fetch", "blocked", 0.9),
      row("w2", "fetch", "blocked", 0.9),
      row("w3", "fetch", "blocked", 0.9),
    ]);
    expect(out.map((p) => [p.toolName, p.workspaceIds])).toEqual([["fetch", ["w1", "w2", "w3"]]]);
  });

  it("property: every promoted tool has ≥ 3 bad workspaces and average > 0.5", () => {
    const arbRow = fc.record({
      workspaceId: fc.constantFrom("w1", "w2", "w3", "w4", "w5"),
      toolName: fc.constantFrom("a", "b"),
      worstState: fc.constantFrom("trusted", "escalated", "recovering", "blocked" as const),
      failureRate24h: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(arbRow, { maxLength: 30 }), (rows) => {
        for (const p of findGlobalToolPatterns(rows)) {
          expect(p.workspaceIds.length).toBeGreaterThanOrEqual(3);
          expect(p.avgFailureRate).toBeGreaterThan(0.5);
          for (const w of p.workspaceIds) {
            expect(rows.some((r) => r.workspaceId === w && r.toolName === p.toolName && (r.worstState === "escalated" || r.worstState === "blocked"))).toBe(true);
          }
        }
      }),
    );
  });
});
