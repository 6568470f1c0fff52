/**
 * `npm run demo` (scripts/demo.ts) against the real tRPC handler, in-process on PGlite:
 * the scenario must produce what it promises — escalations, a recovery, a security block,
 * stall patterns with a pause, and a model suggestion — through the public agent API only.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { useTestApp } from "../support/use-test-app";
import { handleTrpcRequest } from "@/server/agent-api/trpc";
import { agentSession, patternDetection } from "@/db/schema";
import { runDemo, type FetchLike } from "@/scripts/demo";

describe("demo simulator (scripts/demo.ts)", () => {
  const app = useTestApp("pglite");

  it("drives the whole scenario through the HTTP API", async () => {
    const { key, workspaceId, slug } = await app.seedWorkspace();
    const inProcess: FetchLike = (url, init) => handleTrpcRequest(new Request(url, init), app.runtime);
    const lines: string[] = [];
    const summary = await runDemo({ url: "http://vigil.test", apiKey: key, duration: 10, agents: 4, speed: "max", historyDays: 1, fetch: inProcess, log: (l) => lines.push(l) });

    expect(summary.dashboard).toBe(`http://vigil.test/w/${slug}/overview`);
    expect(summary.effects).toMatchObject({ escalated: expect.any(Number), blocked: expect.any(Number), recovery_pending: expect.any(Number), paused: expect.any(Number), model_suggestion: expect.any(Number) });

    const keys = (await app.query("reliability.status", {}, { key })).body.result!.data.keys as { failureKey: string; state: string; totalFailures: number }[];
    const byKey = new Map(keys.map((k) => [k.failureKey, k]));
    expect(byKey.get("@tool:Bash")?.state).toBe("blocked");
    expect(byKey.get("Bash|command=sudo")?.state).toBe("blocked");
    // The weather API degraded and escalated; the demo runs recovery in "ask" mode, so its recovery
    // waits for an approval in the dashboard instead of resuming unattended.
    const weather = byKey.get("http_request|domain=api.flaky-weather.example|path_prefix=v2");
    expect(weather?.totalFailures).toBeGreaterThanOrEqual(3);
    // On failure, the demo's own account of the weather key says what happened to it.
    expect(weather?.state, lines.filter((l) => /flaky-weather|recovery_mode/.test(l)).join("\n")).not.toBe("trusted");
    expect(lines.some((l) => l.includes('recovery_mode "ask"'))).toBe(true);
    expect(lines.some((l) => l.includes("recovery awaits approval: http_request|domain=api.flaky-weather.example"))).toBe(true);
    const pending = (await app.query("approvals.list", { status: "pending" }, { key })).body.result!.data as { approvals: { failureKey?: string }[] };
    expect(pending.approvals.some((a) => a.failureKey?.includes("api.flaky-weather.example"))).toBe(true);
    expect(lines.some((l) => l.includes("ESCALATED mcp__atlassian__"))).toBe(true);
    expect(lines.some((l) => /model suggestion glm-4\.6 → claude-sonnet-4\.5/.test(l))).toBe(true);

    // The glm agent stalled and was paused; its session waits for a human.
    expect(summary.paused).toHaveLength(1);
    const [pausedRow] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, summary.paused[0])));
    expect(pausedRow).toMatchObject({ agent: "refactor-bot", model: "glm-4.6", paused: true });
    const [patterns] = await app.db
      .select({ n: sql<number>`count(*)::int`, oldest: sql<string>`min(${patternDetection.ts})`, newest: sql<string>`max(${patternDetection.ts})` })
      .from(patternDetection)
      .where(eq(patternDetection.workspaceId, workspaceId));
    expect(patterns.n).toBeGreaterThan(3);
    // A detection in the backfilled history day and one in the replayed last hour (compared by age,
    // not calendar day: between 00:00 and 01:00 UTC the replayed hour starts on yesterday's date).
    expect(Date.now() - Date.parse(patterns.oldest)).toBeGreaterThan(12 * 3600_000);
    expect(Date.now() - Date.parse(patterns.newest)).toBeLessThan(2 * 3600_000);

    // Re-running the same day adds no duplicate history.
    const again = await runDemo({ url: "http://vigil.test", apiKey: key, duration: 10, agents: 1, speed: "max", historyDays: 1, fetch: inProcess, log: (l) => lines.push(l) });
    expect(again.accepted).toBeGreaterThan(0);
    expect(lines).toContain("history: already present for these days (duplicates skipped)");
  }, 60_000);

  it("explains a rejected key in one line", async () => {
    const inProcess: FetchLike = (url, init) => handleTrpcRequest(new Request(url, init), app.runtime);
    await expect(runDemo({ url: "http://vigil.test", apiKey: "vgl_nope", duration: 1, agents: 1, speed: "max", historyDays: 0, fetch: inProcess, log: () => {} })).rejects.toThrow(/Settings → API keys/);
  });
});
