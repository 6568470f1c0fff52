/**
 * The dashboard's read models behind the operator controls (SPEC 4.6, 8): the Sessions list's
 * status and holds, the agents row, a session's messages with their delivery, and a key page's
 * manual state and the reach of the tool level that blocks it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { getKeyDetail } from "@/server/dashboard/key-detail";
import { listAgentSummaries, listSessions, loadSessionControl, sessionMessages, sessionStatusCounts } from "@/server/dashboard/sessions-data";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";

describe.each(DATABASE_KINDS)("dashboard controls data on %s", (kind) => {
  const app = useTestApp(kind);
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;

  beforeAll(async () => {
    ws = await app.seedWorkspace();
  });

  const ok = async (procedure: string, input: unknown) => {
    const res = await app.mutation(procedure, input, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const guard = (sessionId: string, toolName = "read_file", args: Record<string, unknown> = { path: `/src/${uid("f")}.ts` }) =>
    ok("guard.check", { id: uid(), sessionId, callId: uid("c"), toolName, args });
  const list = async (status: "active" | "idle" | "paused" | "ended" | null = null) => {
    const control = await loadSessionControl(app.db, ws.workspaceId);
    return listSessions(app.db, { workspaceId: ws.workspaceId, status, page: 1, pageSize: 50, control });
  };

  it("tells active, idle, paused and ended apart, with what holds a paused session; agent holds and the kill switch count", async () => {
    const [active, idle, heldAgent, ended] = [uid("s"), uid("s"), uid("s"), uid("s")];
    const builder = `builder-${uid()}`;
    await ok("ingest.events", {
      events: [
        { type: "session.start", id: uid(), sessionId: active, agent: "coder" },
        { type: "session.start", id: uid(), sessionId: idle, agent: "coder", ts: new Date(Date.now() - 2 * 3600_000).toISOString() },
        { type: "session.start", id: uid(), sessionId: heldAgent, agent: builder },
        { type: "session.start", id: uid(), sessionId: ended, agent: builder },
        { type: "session.end", id: uid(), sessionId: ended },
      ],
    });
    await ok("agents.pause", { agent: builder, reason: "Deploy freeze" });

    const { rows } = await list();
    const by = new Map(rows.map((r) => [r.sessionId, r]));
    expect(by.get(active)).toMatchObject({ status: "active", held: null });
    expect(by.get(idle)).toMatchObject({ status: "idle", held: null });
    expect(by.get(heldAgent)).toMatchObject({ status: "paused", held: { scope: "agent", reason: "Deploy freeze" } });
    expect(by.get(ended)).toMatchObject({ status: "ended" });
    expect((await list("paused")).rows.map((r) => r.sessionId)).toEqual([heldAgent]);
    expect((await list("idle")).rows.map((r) => r.sessionId)).toEqual([idle]);
    const control = await loadSessionControl(app.db, ws.workspaceId);
    expect(await sessionStatusCounts(app.db, ws.workspaceId, {}, control)).toMatchObject({ all: 4, active: 1, idle: 1, paused: 1, ended: 1 });

    // The held agent comes first, with its running sessions counted.
    const agents = await listAgentSummaries(app.db, ws.workspaceId, control);
    expect(agents[0]).toMatchObject({ agent: builder, running: 1, hold: { reason: "Deploy freeze" } });
    expect(agents.find((a) => a.agent === "coder")).toMatchObject({ running: 2, hold: null });

    // A session's own pause, then the kill switch over everything still running.
    await ok("sessions.pause", { sessionId: active, reason: "Reviewing" });
    expect((await list()).rows.find((r) => r.sessionId === active)).toMatchObject({ status: "paused", held: { scope: "session", reason: "Reviewing" } });
    await ok("workspace.pause", { reason: "Incident" });
    const killed = await list("paused");
    expect(killed.rows.map((r) => r.sessionId).sort()).toEqual([active, idle, heldAgent].sort());
    expect(killed.rows.every((r) => r.held?.scope === "workspace" && r.held.reason === "Incident")).toBe(true);

    await ok("workspace.resume", {});
    await ok("agents.resume", { agent: builder });
    await ok("sessions.resume", { sessionId: active });
    expect((await list("paused")).rows).toEqual([]);
  });

  it("lists a person's messages to a session with when each reached the agent", async () => {
    const s = uid("s");
    await guard(s);
    await ok("sessions.message", { sessionId: s, text: "Open a PR instead of pushing" });
    const queued = await sessionMessages(app.db, ws.workspaceId, s);
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ text: "Open a PR instead of pushing", deliveredAt: null });
    expect(queued[0].by).toMatch(/^vgl_/);

    const answer = await guard(s);
    expect(answer.effects.some((e: { type: string; message?: string }) => e.type === "nudge" && e.message?.includes("Open a PR"))).toBe(true);
    const [delivered] = await sessionMessages(app.db, ws.workspaceId, s);
    expect(delivered.deliveredAt).not.toBeNull();
    expect(Date.parse(delivered.deliveredAt!)).toBeGreaterThanOrEqual(Date.parse(delivered.queuedAt));
  });

  it("a key under a blocked tool shows the level's reach (keys, calls stopped, agents); a manual block is marked with who and why", async () => {
    const s = uid("s");
    await ok("ingest.events", { events: [{ type: "session.start", id: uid(), sessionId: s, agent: "ops-bot" }] });
    await ok("ingest.events", { events: [result(s, "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" })] });
    expect((await guard(s, "bash", { command: "ls -la" })).decision).toBe("ask");
    expect((await guard(s, "bash", { command: "cat x" })).decision).toBe("ask");

    const detail = await getKeyDetail(app.db, ws.workspaceId, "bash|command=sudo");
    expect(detail!.manual).toBeNull();
    const tool = detail!.levels.find((l) => l.failureKey === "@tool:bash")!;
    expect(tool).toMatchObject({ state: "blocked", manual: null });
    expect(tool.reach).toMatchObject({ stoppedCalls: 2, stoppedAgents: 1 });
    expect(tool.reach.keys).toBeGreaterThanOrEqual(1);
    expect(tool.reach.since).not.toBeNull();
    // The level's own page carries the same reach.
    expect((await getKeyDetail(app.db, ws.workspaceId, "@tool:bash"))!.reach).toMatchObject({ stoppedCalls: 2, stoppedAgents: 1 });

    await ok("keys.setState", { failureKey: "bash|command=ls", state: "blocked", reason: "Listing the secrets dir" });
    const manual = await getKeyDetail(app.db, ws.workspaceId, "bash|command=ls");
    expect(manual!.manual).toMatchObject({ reason: "Listing the secrets dir" });
    expect(manual!.key).toMatchObject({ state: "blocked" });

    // Resetting the key and its level leaves nothing blocking: the reach of a trusted level stops nothing.
    await ok("keys.reset", { failureKey: "bash|command=ls" });
    await ok("keys.reset", { failureKey: "@tool:bash" });
    const after = await getKeyDetail(app.db, ws.workspaceId, "bash|command=ls");
    expect(after!.manual).toBeNull();
    expect(after!.levels.find((l) => l.failureKey === "@tool:bash")).toMatchObject({ state: "trusted", reach: { since: null, stoppedCalls: 0 } });
    expect((await guard(s, "bash", { command: "ls -la" })).decision).toBe("allow");
  });
});
