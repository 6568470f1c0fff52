/**
 * The Tools list: a blocked tool level's row says how far it reaches (keys, calls stopped, agents),
 * a trusted key's row carries no reach; under a time range every row carries its failures in it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { listKeys } from "@/server/dashboard/tools";
import { countingNote, getKeyCounting } from "@/server/dashboard/key-counting";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";

describe.each(DATABASE_KINDS)("Tools list on %s", (kind) => {
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

  it("a security block's row shows its reach; its failures in range count every key of the tool", async () => {
    const s = uid("s");
    await ok("ingest.events", { events: [{ type: "session.start", id: uid(), sessionId: s, agent: "ops-bot" }] });
    await ok("ingest.events", { events: [result(s, "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" })] });
    for (const command of ["ls -la", "cat x", "pwd"]) {
      const answer = await ok("guard.check", { id: uid(), sessionId: s, callId: uid("c"), toolName: "bash", args: { command } });
      expect(answer.decision).toBe("ask");
    }
    await ok("ingest.events", { events: [result(s, "read_file", { path: "/a" }, { success: true })] });

    const { rows } = await listKeys(app.db, ws.workspaceId, { pageSize: 200 });
    const tool = rows.find((r) => r.failureKey === "@tool:bash")!;
    expect(tool).toMatchObject({ level: "tool", state: "blocked" });
    expect(tool.reach).toMatchObject({ stoppedCalls: 3, stoppedAgents: 1 });
    expect(tool.reach!.keys).toBeGreaterThanOrEqual(1);
    expect(rows.find((r) => r.failureKey.startsWith("read_file"))!.reach).toBeUndefined();

    const hourAgo = new Date(Date.now() - 3600_000);
    const windowed = await listKeys(app.db, ws.workspaceId, { pageSize: 200, window: { from: hourAgo } });
    expect(windowed.rows.find((r) => r.failureKey === "@tool:bash")!.windowFailures).toBe(1);
  });

  it("a key's page says which of its failures the rule leaves out (not_found is outside the default severity filter)", async () => {
    const s = uid("s");
    const args = { url: "https://api.example.com/v1/items/7" };
    const notFound = { success: false, httpStatus: 404, error: "404 Not Found" };
    const serverError = { success: false, httpStatus: 503, error: "503 Service Unavailable" };
    await ok("ingest.events", { events: [result(s, "http_get", args, notFound), result(s, "http_get", args, notFound), result(s, "http_get", args, serverError)] });
    const { rows } = await listKeys(app.db, ws.workspaceId, { q: "http_get", pageSize: 10 });
    const key = rows.find((r) => r.level === "key")!.failureKey;
    const counting = (await getKeyCounting(app.db, ws.workspaceId, key))!;
    expect(counting).toMatchObject({ total: 3, notCounted: 2 });
    expect(counting.bySeverity).toEqual([
      { severity: "not_found", failures: 2, counted: false },
      { severity: "server_error", failures: 1, counted: true },
    ]);
    expect(countingNote(counting)).toBe("1 of 3 failures counted: not_found (2) is not in this rule's severity filter");
    // Once the rule counts not_found, nothing is left out.
    await ok("config.put", { tool_rules: { http_get: { severity_filter: ["server_error", "not_found"] } } });
    expect(countingNote(await getKeyCounting(app.db, ws.workspaceId, key))).toBeNull();
    // Level rows have no counting of their own.
    expect(await getKeyCounting(app.db, ws.workspaceId, "@tool:bash")).toBeNull();
  });
});
