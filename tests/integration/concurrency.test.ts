/**
 * Concurrency on a real PostgreSQL server (SPEC 9: "never lose an update, never deadlock").
 * Parallel writers go through the real HTTP handler with a connection pool; totals must be exact.
 */
import { describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import type { TrpcResponse } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { agentSession, event, failure, keyState, modelToolProfile, patternDetection, stateTransition } from "@/db/schema";
import { upgradeSessionBehaviour } from "@/server/engine/behaviour-state";

const WRITERS = 8;

describe("concurrency on postgres", () => {
  const app = useTestApp("postgres");

  const post = (key: string, events: unknown[]) => app.mutation("ingest.events", { events }, { key });
  const ok = (r: TrpcResponse) => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.result!.data;
  };
  const keyRow = async (workspaceId: string, failureKey: string) =>
    (await app.db.select().from(keyState).where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, failureKey))))[0];
  const count = async (table: typeof event | typeof failure, workspaceId: string, extra?: ReturnType<typeof sql>) =>
    Number(
      (
        await app.db
          .select({ n: sql<number>`count(*)` })
          .from(table)
          .where(extra ? and(eq(table.workspaceId, workspaceId), extra) : eq(table.workspaceId, workspaceId))
      )[0].n,
    );

  it("8 parallel writers on the same failure key (shared and own sessions, keys in opposite orders): exact totals, one escalation", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    // A domain rule: every batch also touches the shared @domain state.
    expect((await app.mutation("config.put", { domain_rules: { "api.c.com": { count_threshold: 3 } } }, { key })).status).toBe(200);
    const A = { url: "https://api.c.com/v1/a" };
    const B = { url: "https://api.c.com/v2/b" };
    const BATCHES = 6;
    const PER = 8;
    let expectedA = 0;
    let expectedAFailures = 0;
    let expectedB = 0;
    let expectedEvents = 0;
    const sharedSessionEvents = new Map<string, number>();
    const plans: unknown[][][] = [];
    for (let w = 0; w < WRITERS; w++) {
      const batches: unknown[][] = [];
      for (let b = 0; b < BATCHES; b++) {
        // Writers share two sessions, listed in opposite orders, plus one own session each.
        const sessions = w % 2 === 0 ? ["shared-1", "shared-2", `own-${w}`] : [`own-${w}`, "shared-2", "shared-1"];
        const events: unknown[] = [];
        for (let i = 0; i < PER; i++) {
          const sessionId = sessions[i % sessions.length];
          const failed = (w + b + i) % 3 === 0;
          // Odd writers post key B before key A within each pair.
          const pair = w % 2 === 0 ? [A, B] : [B, A];
          for (const args of pair) {
            events.push({ type: "tool.result", id: uid(`w${w}`), sessionId, callId: uid("c"), toolName: "http_request", args, model: `m-${w % 3}`, ...(failed ? { success: false, httpStatus: 503 } : { success: true }) });
            if (args === A) {
              expectedA++;
              if (failed) expectedAFailures++;
            } else expectedB++;
            sharedSessionEvents.set(sessionId, (sharedSessionEvents.get(sessionId) ?? 0) + 1);
          }
        }
        expectedEvents += events.length;
        batches.push(events);
      }
      plans.push(batches);
    }
    const responses = await Promise.all(
      plans.map(async (batches) => {
        const out: TrpcResponse[] = [];
        for (const b of batches) out.push(await post(key, b));
        return out;
      }),
    );
    const all = responses.flat();
    for (const r of all) expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(all.reduce((n, r) => n + r.body.result!.data.accepted, 0)).toBe(expectedEvents);

    const a = await keyRow(workspaceId, "http_request|domain=api.c.com|path_prefix=v1");
    expect({ totalCalls: a.totalCalls, totalFailures: a.totalFailures }).toEqual({ totalCalls: expectedA, totalFailures: expectedAFailures });
    expect(a.trust.totalCalls).toBe(expectedA);
    const b = await keyRow(workspaceId, "http_request|domain=api.c.com|path_prefix=v2");
    expect(b.totalCalls).toBe(expectedB);
    const dom = await keyRow(workspaceId, "@domain:api.c.com");
    expect(dom.totalCalls).toBe(expectedA + expectedB);
    expect(dom.state).toBe("escalated");
    expect(await count(event, workspaceId)).toBe(expectedEvents);
    expect(await count(failure, workspaceId, sql`${failure.failureKey} = 'http_request|domain=api.c.com|path_prefix=v1'`)).toBe(expectedAFailures);
    // Escalated exactly once (no two writers both saw `trusted` and escalated).
    const transitions = await app.db.select().from(stateTransition).where(and(eq(stateTransition.workspaceId, workspaceId), eq(stateTransition.failureKey, a.failureKey)));
    expect(transitions.map((t) => `${t.fromState}->${t.toState}`)).toEqual(["trusted->escalated"]);
    const domTransitions = await app.db.select().from(stateTransition).where(and(eq(stateTransition.workspaceId, workspaceId), eq(stateTransition.failureKey, "@domain:api.c.com")));
    expect(domTransitions.map((t) => `${t.fromState}->${t.toState}`)).toEqual(["trusted->escalated"]);
    expect(a.state).toBe("escalated");
    // Sessions: counters of the shared sessions are exact.
    const sessions = await app.db.select().from(agentSession).where(eq(agentSession.workspaceId, workspaceId));
    for (const s of sessions) expect({ s: s.sessionId, n: s.eventCount }).toEqual({ s: s.sessionId, n: sharedSessionEvents.get(s.sessionId) });
    // Model profiles: attempts add up.
    const profiles = await app.db.select().from(modelToolProfile).where(and(eq(modelToolProfile.workspaceId, workspaceId), eq(modelToolProfile.failureKey, a.failureKey)));
    expect(profiles.reduce((n, p) => n + p.attempts, 0)).toBe(expectedA);
    expect(profiles.reduce((n, p) => n + p.failures, 0)).toBe(expectedAFailures);
  });

  it("concurrent re-sends of one batch are accepted exactly once", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    for (let round = 0; round < 3; round++) {
      const s1 = uid("s");
      const s2 = uid("s");
      const batch = Array.from({ length: 20 }, (_, i) => ({
        type: "tool.result",
        id: uid("dup"),
        sessionId: i % 2 ? s1 : s2,
        callId: uid("c"),
        toolName: "bash",
        args: { command: `make t${round}` },
        success: i % 4 !== 0,
        ...(i % 4 === 0 ? { error: "boom" } : {}),
      }));
      const results = (await Promise.all(Array.from({ length: WRITERS }, () => post(key, batch)))).map(ok);
      expect(results.map((r) => r.accepted).sort((x: number, y: number) => y - x)).toEqual([20, ...Array(WRITERS - 1).fill(0)]);
      expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(20 * (WRITERS - 1));
      const k = await keyRow(workspaceId, `bash|command=make`);
      expect({ totalCalls: k.totalCalls, totalFailures: k.totalFailures }).toEqual({ totalCalls: 20 * (round + 1), totalFailures: 5 * (round + 1) });
    }
    expect(await count(event, workspaceId)).toBe(60);
    expect(await count(failure, workspaceId)).toBe(15);
  });

  it("parallel guard.check and ingest.events on one session: exact counters, each pattern severity reported once", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    ok(await post(key, [{ type: "session.start", id: uid(), sessionId: s, model: "m-par" }]));
    // Every request re-reads the same file (SPEC 5 rev. 2 counts identical calls and re-reads).
    const N = 8;
    const read = { path: "/srv/app/config.json" };
    const guards = Array.from({ length: N }, () =>
      app.mutation("guard.check", { id: uid("g"), sessionId: s, callId: uid("c"), toolName: "Read", args: read }, { key }),
    );
    const ingests = Array.from({ length: N }, (_, i) =>
      post(key, [
        { type: "tool.call", id: uid("i"), sessionId: s, callId: `ic${i}`, toolName: "Read", args: read },
        { type: "tool.result", id: uid("i"), sessionId: s, callId: `ic${i}`, toolName: "Read", success: true },
        { type: "model.text", id: uid("i"), sessionId: s, text: "Reading more files." },
      ]),
    );
    const responses = await Promise.all([...guards, ...ingests]);
    for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [row] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, s)));
    expect({ events: row.eventCount, calls: row.callCount }).toEqual({ events: 1 + N + 3 * N, calls: 2 * N });
    const behaviour = upgradeSessionBehaviour(row.behaviour, s);
    expect({ calls: behaviour.stretch.callCount, rereads: behaviour.stretch.rereads, run: behaviour.run?.length }).toEqual({ calls: 2 * N, rereads: 2 * N - 1, run: 2 * N });
    expect(await count(event, workspaceId)).toBe(1 + N + 3 * N);
    // 16 identical reads however the requests interleave: each severity of each pattern reported once.
    const detections = await app.db.select().from(patternDetection).where(eq(patternDetection.workspaceId, workspaceId));
    const of = (t: string) => detections.filter((d) => d.patternType === t).map((d) => `${d.severity}:${d.count}`).sort();
    expect(of("repetitive_calls")).toEqual(["minor:3", "moderate:4", "severe:5"]);
    expect(of("read_only_loop")).toEqual(["minor:3", "moderate:5", "severe:8"]);
    expect(row.paused).toBe(true);
    // From now on every guard.check of the session answers pause.
    const after = await Promise.all(Array.from({ length: 4 }, () => app.mutation("guard.check", { id: uid("g"), sessionId: s, callId: uid("c"), toolName: "writeFile", args: { path: "/srv/x" } }, { key })));
    expect(after.map((r) => ok(r).decision)).toEqual(["pause", "pause", "pause", "pause"]);
  });

  it("a security block racing with results on other keys of the tool: every key of the tool ends effectively blocked", async () => {
    for (let round = 0; round < 4; round++) {
      const { key, workspaceId } = await app.seedWorkspace();
      const jobs = Array.from({ length: WRITERS }, (_, w) =>
        w === 0
          ? post(key, [{ type: "tool.result", id: uid(), sessionId: `s-${w}`, callId: uid("c"), toolName: "bash", args: { command: "sudo rm -rf /" }, success: false, error: "denied" }])
          : post(key, Array.from({ length: 3 }, () => ({ type: "tool.result", id: uid(), sessionId: `s-${w}`, callId: uid("c"), toolName: "bash", args: { command: `cmd${w} --x` }, success: true }))),
      );
      for (const r of await Promise.all(jobs)) expect(r.status, JSON.stringify(r.body)).toBe(200);
      const rows = await app.db.select().from(keyState).where(eq(keyState.workspaceId, workspaceId));
      expect(rows.find((r) => r.failureKey === "@tool:bash")?.state).toBe("blocked");
      const notBlocked = rows.filter((r) => r.level === "key" && r.effectiveState !== "blocked").map((r) => r.failureKey);
      expect({ round, notBlocked }).toEqual({ round, notBlocked: [] });
      // reliability.status agrees.
      const st = (await app.query("reliability.status", { toolName: "bash" }, { key })).body.result!.data.keys;
      expect(st.filter((k: any) => k.effectiveState !== "blocked")).toEqual([]);
    }
  });
});
