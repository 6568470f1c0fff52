/**
 * The `vigil` CLI's read commands (SPEC 7.9: history, patterns, stalls, models, failures), run as a
 * process from the packed tarball against the real agent API, over sessions the SDK reported, with
 * an agent-scope key (these are agent-scope procedures).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { useTestApp } from "../support/use-test-app";
import { closedPort, usePackedSdk } from "../support/packed-sdk";

const run = promisify(execFile);
type Sdk = typeof import("../../packages/sdk/src/index");

const URL_V1 = "https://api.example.com/v1/users";
const KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1";

describe("vigil history, patterns, stalls, models, failures", () => {
  const app = useTestApp("pglite");
  const packed = usePackedSdk<{ core: Sdk }>(app, { peers: [], entries: { core: "@vigil/sdk" } });
  let env: Record<string, string>;
  let loopSession: string;
  let emptySession: string;

  const vigilCli = async (args: string[], extraEnv: Record<string, string> = {}) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [packed.sdk.bin, ...args], { env: { PATH: process.env.PATH ?? "", HOME: tmpdir(), ...env, ...extraEnv } as unknown as NodeJS.ProcessEnv });
      return { code: 0, stdout, stderr };
    } catch (e: any) {
      return { code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string };
    }
  };
  const json = async (args: string[]) => {
    const out = await vigilCli([...args, "--json"]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    return JSON.parse(out.stdout);
  };

  beforeAll(async () => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    env = { VIGIL_URL: packed.api.url, VIGIL_API_KEY: ws.key };
    const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key, agent: "cli-reader" });
    // model-a: four identical failing calls (a loop: a pattern and a nudge; the key escalates).
    loopSession = vigil.startSession({ sessionId: "loop-session", model: "model-a" });
    for (let i = 1; i <= 4; i++) {
      vigil.report({ type: "tool.call", sessionId: loopSession, model: "model-a", callId: `a${i}`, toolName: "http_request", args: { url: URL_V1 } });
      vigil.report({ type: "tool.result", sessionId: loopSession, model: "model-a", callId: `a${i}`, toolName: "http_request", success: false, error: "upstream timed out after 30 s", httpStatus: 504 });
      // Mid-loop: the harness's own "continue" (automated: the loop goes on) and a failed model call (not a tool failure).
      if (i === 2) {
        vigil.report({ type: "user.message", sessionId: loopSession, text: "Please continue", automated: true });
        vigil.report({ type: "model.error", sessionId: loopSession, error: "429 rate limited", model: "model-a" });
      }
    }
    // model-b: two successful reads and one failure of another tool, then three empty answers (a pause).
    emptySession = vigil.startSession({ sessionId: "empty-session", model: "model-b" });
    for (let i = 1; i <= 2; i++) {
      vigil.report({ type: "tool.call", sessionId: emptySession, model: "model-b", callId: `b${i}`, toolName: "readFile", args: { path: `/srv/data/${i}.json` } });
      vigil.report({ type: "tool.result", sessionId: emptySession, model: "model-b", callId: `b${i}`, toolName: "readFile", success: true, result: "{}" });
    }
    vigil.report({ type: "tool.call", sessionId: emptySession, model: "model-b", callId: "b3", toolName: "readFile", args: { path: "/srv/data/missing.json" } });
    vigil.report({ type: "tool.result", sessionId: emptySession, model: "model-b", callId: "b3", toolName: "readFile", success: false, error: "ENOENT: no such file or directory" });
    for (let i = 0; i < 3; i++) vigil.report({ type: "model.text", sessionId: emptySession, model: "model-b", text: "" });
    await vigil.flush();
    await vigil.close();
  });

  it("history: the latest failures, newest first, as many as --limit", async () => {
    const all = await json(["history"]);
    // Tool failures only: the model.error is not one.
    expect(all.history).toHaveLength(5);
    expect(all.history[0]).toMatchObject({ failureKey: "readFile|path_prefix=/srv/data", sessionId: emptySession, model: "model-b", severity: "not_found" });
    expect(all.history.filter((h: any) => h.failureKey === KEY_V1)).toHaveLength(4);
    const two = await json(["history", "--limit", "2"]);
    expect(two.history).toEqual(all.history.slice(0, 2));
    expect((await json(["history", "--tool", "readFile"])).history).toHaveLength(1);

    const people = await vigilCli(["history"]);
    expect(people.code).toBe(0);
    const lines = people.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^TIME\s+FAILURE KEY\s+SEVERITY\s+SESSION\s+MODEL\s+ERROR$/);
    expect(lines).toHaveLength(6);
    expect(lines[1]).toContain("ENOENT: no such file or directory");
    expect(people.stdout).toContain("upstream timed out after 30 s");

    for (const bad of [["history", "--limit", "0"], ["history", "--limit", "101"], ["history", "--limit", "ten"], ["history", "extra"]]) {
      const refused = await vigilCli(bad);
      expect(refused.code, bad.join(" ")).toBe(2);
      expect(refused.stderr).toContain("Usage: vigil history");
    }
  });

  it("patterns: detections per type and severity and the nudges' effect, for all models or one", async () => {
    const summary = await json(["patterns"]);
    expect(summary).toMatchObject({ range: "7d", model: null });
    expect(summary.totals.sessions).toBe(2);
    const types = summary.patterns.map((p: any) => p.patternType);
    expect(types).toEqual(expect.arrayContaining(["empty_response", "repetitive_calls"]));
    const total = summary.patterns.reduce((a: number, p: any) => a + p.total, 0);
    expect(total).toBe(summary.totals.detections);
    expect(summary.totals.detections).toBeGreaterThanOrEqual(2);
    expect(summary.nudges.sent).toBeGreaterThan(0);

    const modelB = await json(["patterns", "--model", "model-b"]);
    expect(modelB.model).toBe("model-b");
    expect(modelB.totals.sessions).toBe(1);
    expect(modelB.patterns.map((p: any) => p.patternType)).toContain("empty_response");
    expect((await json(["patterns", "--model", "model-z"])).totals.detections).toBe(0);

    const people = await vigilCli(["patterns"]);
    expect(people.code).toBe(0);
    expect(people.stdout).toContain(`Last 7 days: ${summary.totals.detections} detections in 2 sessions; ${summary.nudges.sent} nudges sent, ${summary.nudges.effective} effective`);
    expect(people.stdout).toMatch(/PATTERN\s+MINOR\s+MODERATE\s+SEVERE\s+TOTAL\s+NUDGES\s+EFFECTIVE/);
    const emptyRow = people.stdout.split("\n").find((l) => l.startsWith("empty_response"))!;
    const counted = summary.patterns.find((p: any) => p.patternType === "empty_response");
    expect(emptyRow.split(/\s+/).slice(1, 5)).toEqual([counted.minor, counted.moderate, counted.severe, counted.total].map(String));

    expect((await vigilCli(["patterns", "--range", "week"])).code).toBe(2);
    expect((await json(["patterns", "--range", "all"])).range).toBe("all");
    expect((await vigilCli(["patterns", "--model", "model-b", "--range", "all"])).stdout).toMatch(/^All time, model model-b: 3 detections in 1 session;/);
  });

  it("stalls: the sessions with detections, paused or open", async () => {
    const stalls = await json(["stalls"]);
    expect(stalls.totals.sessions).toBe(2);
    const bySession = Object.fromEntries(stalls.stalledSessions.map((s: any) => [s.sessionId, s]));
    expect(Object.keys(bySession).sort()).toEqual([emptySession, loopSession].sort());
    expect(bySession[emptySession]).toMatchObject({ agent: "cli-reader", model: "model-b", paused: true, worstSeverity: "severe" });
    expect(bySession[emptySession].patternTypes).toContain("empty_response");
    expect(bySession[loopSession]).toMatchObject({ model: "model-a", paused: false });
    expect(bySession[loopSession].patternTypes).toContain("repetitive_calls");

    const people = await vigilCli(["stalls"]);
    expect(people.code).toBe(0);
    expect(people.stdout).toContain(`Last 7 days: 2 sessions stalled (${stalls.totals.detections} detections`);
    const row = people.stdout.split("\n").find((l) => l.startsWith(emptySession))!;
    expect(row).toMatch(/cli-reader\s+model-b\s+\d+\s+severe\s+paused/);
    expect((await json(["stalls", "--model", "model-a"])).stalledSessions.map((s: any) => s.sessionId)).toEqual([loopSession]);
  });

  it("models: each model's tool calls, failures and success rate", async () => {
    const data = await json(["models"]);
    const byModel = Object.fromEntries(data.models.map((m: any) => [m.model, m]));
    expect(byModel["model-a"].tools).toMatchObject({ attempts: 4, failures: 4, successRate: 0 });
    expect(byModel["model-b"].tools).toMatchObject({ attempts: 3, failures: 1 });
    expect(byModel["model-b"].tools.successRate).toBeCloseTo(2 / 3);

    const people = await vigilCli(["models"]);
    expect(people.code).toBe(0);
    expect(people.stdout).toMatch(/MODEL\s+TURNS\s+STALL RATE\s+NUDGES\s+EFFECTIVE\s+TOOL CALLS\s+FAILURES\s+SUCCESS/);
    expect(people.stdout.split("\n").find((l) => l.startsWith("model-a"))).toMatch(/\s4\s+4\s+0%/);
    expect(people.stdout.split("\n").find((l) => l.startsWith("model-b"))).toMatch(/\s3\s+1\s+67%/);
  });

  it("failures: counts per key, and --groups by message", async () => {
    const perKey = await json(["failures"]);
    expect(perKey.keys.map((k: any) => [k.failureKey, k.totalFailures, k.totalCalls])).toEqual([
      [KEY_V1, 4, 4],
      ["readFile|path_prefix=/srv/data", 1, 3],
    ]);
    const people = await vigilCli(["failures"]);
    expect(people.stdout).toMatch(/FAILURE KEY\s+FAILURES\s+CALLS\s+FAILURE RATE\s+IN A ROW\s+STATE/);
    expect(people.stdout.split("\n").find((l) => l.startsWith("readFile"))).toMatch(/\s1\s+3\s+33%\s+1\s+trusted$/);

    const grouped = await json(["failures", "--groups"]);
    expect(grouped.range).toBe("7d");
    const timeouts = grouped.groups.find((g: any) => g.toolNames.includes("http_request"));
    expect(timeouts).toMatchObject({ count: 4, sessions: 1, failureKeys: [KEY_V1] });
    expect(grouped.groups.find((g: any) => g.toolNames.includes("readFile"))).toMatchObject({ count: 1 });
    const groupedForPeople = await vigilCli(["failures", "--groups"]);
    expect(groupedForPeople.stdout).toMatch(/COUNT\s+SESSIONS\s+TOOLS\s+LAST SEEN\s+MESSAGE/);
    expect(groupedForPeople.stdout.split("\n")[1]).toMatch(/^4\s+1\s+http_request\s/);
    expect((await json(["failures", "--groups", "--tool", "readFile"])).groups).toHaveLength(1);
    expect((await vigilCli(["failures", "--range", "7d"])).code).toBe(2);
  });

  it("a wrong key and an unreachable Vigil are errors (exit 1) that say which", async () => {
    const wrong = await vigilCli(["models"], { VIGIL_API_KEY: "vgl_wrong" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("401: the API key was not accepted (VIGIL_API_KEY)");
    const away = `http://127.0.0.1:${await closedPort()}`;
    const unreachable = await vigilCli(["history"], { VIGIL_URL: away });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(away);
  });
});
