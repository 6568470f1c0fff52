/**
 * MCP (SPEC 7.7) with real parts: the official MCP client (@modelcontextprotocol/client 2.x) over
 * Streamable HTTP against /api/mcp behind a real HTTP server; and `vigil mcp-proxy` from the packed
 * @vigil/sdk, run as a process in front of a real stdio MCP server (tests/fixtures/mcp-echo-server.mjs,
 * on the official server SDK), driven by the official client over stdio.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { installPackedSdk, ROOT } from "../support/packed-sdk";
import { approval, event } from "@/db/schema";
import { serveMcpApp as serveApp } from "../support/mcp-app";

const URL_V1 = "https://api.example.com/v1/users";
const KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1";
const FIXTURE = path.join(ROOT, "tests/fixtures/mcp-echo-server.mjs");

const failures = (sessionId: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    type: "tool.result",
    id: `${sessionId}-fail-${i}`,
    sessionId,
    callId: `${sessionId}-c${i}`,
    toolName: "http_request",
    args: { url: URL_V1 },
    success: false,
    error: "Service Unavailable",
    httpStatus: 503,
  }));

const textOf = (result: any) => (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

describe("/api/mcp with the official MCP client", () => {
  const app = useTestApp("pglite");
  let api: Awaited<ReturnType<typeof serveApp>>;
  beforeAll(async () => {
    api = await serveApp(app.runtime);
  });
  afterAll(async () => api?.close());

  async function connect(key: string) {
    const client = new Client({ name: "mcp-test-agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    return client;
  }

  it("lists the three tools with input schemas and read-only hints", async () => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    const client = await connect(ws.key);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(["reliability_request_reset", "reliability_session", "reliability_status"]);
    expect(Object.keys(byName.reliability_status.inputSchema.properties ?? {}).sort()).toEqual(["include_history", "tool_name"]);
    expect(byName.reliability_session.inputSchema.properties).toHaveProperty("session_id");
    expect(byName.reliability_request_reset.inputSchema.required).toEqual(["failure_key", "reason"]);
    expect(byName.reliability_status.annotations?.readOnlyHint).toBe(true);
    expect(byName.reliability_session.annotations?.readOnlyHint).toBe(true);
    expect(byName.reliability_request_reset.annotations?.readOnlyHint).toBe(false);
    await client.close();
  });

  it("status and session answer text and structuredContent; a reset request waits for a person, approving resets the key, denying tells the model why", async () => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    await ingestAccepted(app, ws.key, [{ type: "session.start", id: "s1-start", sessionId: "s1", agent: "crawler" }, ...failures("s1", 3)]);
    const client = await connect(ws.key);

    const status = await client.callTool({ name: "reliability_status", arguments: {} });
    expect(status.isError).toBeFalsy();
    expect(textOf(status)).toContain(`${KEY_V1}: escalated`);
    expect((status.structuredContent as any).keys).toEqual(expect.arrayContaining([expect.objectContaining({ failureKey: KEY_V1, effectiveState: "escalated" })]));

    const session = await client.callTool({ name: "reliability_session", arguments: { session_id: "s1" } });
    expect(textOf(session)).toContain("Session s1 (agent crawler)");
    expect(session.structuredContent).toMatchObject({ sessionId: "s1", agent: "crawler", paused: false, pendingNudges: [] });
    const fromMeta = await client.callTool({ name: "reliability_session", arguments: {}, _meta: { "io.vigil/sessionId": "s1" } });
    expect(fromMeta.structuredContent).toMatchObject({ sessionId: "s1" });
    const unknown = await client.callTool({ name: "reliability_session", arguments: { session_id: "nope" } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("Session nope not found");

    const requested = await client.callTool({ name: "reliability_request_reset", arguments: { failure_key: KEY_V1, reason: "The upstream outage is over" } });
    expect(requested.isError).toBeFalsy();
    const { approvalId } = requested.structuredContent as { approvalId: string };
    expect(textOf(requested)).toContain("A person must approve");
    expect(textOf(requested)).toContain(`/w/${ws.slug}/approvals`);
    // An agent-scope key cannot list approvals; the row is what a person sees in the queue.
    const [row] = await app.db.select().from(approval).where(and(eq(approval.workspaceId, ws.workspaceId), eq(approval.id, approvalId)));
    expect(row).toMatchObject({ kind: "reset", status: "pending", failureKey: KEY_V1, reason: "The upstream outage is over" });
    // Asking again while one is pending is the same request.
    const again = await client.callTool({ name: "reliability_request_reset", arguments: { failure_key: KEY_V1, reason: "still over" } });
    expect((again.structuredContent as any).approvalId).toBe(approvalId);

    const agentResolve = await app.mutation("approvals.resolve", { approvalId, decision: "approve" }, { key: ws.key });
    expect(agentResolve.status).toBe(403);
    await client.close();
  });

  it("keys.requestReset → approval pending → approved by an admin → the key is trusted; a denied request's comment reaches the model", async () => {
    const ws = await app.seedWorkspace({ scope: "admin" });
    await ingestAccepted(app, ws.key, failures("s2", 3));
    const client = await connect(ws.key);
    const requested = await app.mutation("keys.requestReset", { failureKey: KEY_V1, reason: "Fixed the credentials" }, { key: ws.key });
    expect(requested.status).toBe(200);
    const { approvalId } = requested.body.result!.data as { approvalId: string };
    const listed = await app.query("approvals.list", { status: "pending" }, { key: ws.key });
    expect((listed.body.result!.data as any).approvals).toEqual([expect.objectContaining({ id: approvalId, kind: "reset", failureKey: KEY_V1, reason: "Fixed the credentials" })]);
    // A deny needs the comment the model reads.
    const bare = await app.mutation("approvals.resolve", { approvalId, decision: "deny" }, { key: ws.key });
    expect(bare.status).toBe(400);
    expect(await app.mutation("approvals.resolve", { approvalId, decision: "approve" }, { key: ws.key })).toMatchObject({ status: 200 });
    const after = await client.callTool({ name: "reliability_status", arguments: {} });
    expect((after.structuredContent as any).keys).toEqual([expect.objectContaining({ failureKey: KEY_V1, state: "trusted", effectiveState: "trusted" })]);
    expect(textOf(after)).toContain(`Reset of ${KEY_V1} was approved`);

    await ingestAccepted(app, ws.key, failures("s3", 3));
    const second = await client.callTool({ name: "reliability_request_reset", arguments: { failure_key: KEY_V1, reason: "Try again" } });
    const secondId = (second.structuredContent as any).approvalId;
    expect(secondId).not.toBe(approvalId);
    expect(await app.mutation("approvals.resolve", { approvalId: secondId, decision: "deny", comment: "The v1 API is being retired; use v2" }, { key: ws.key })).toMatchObject({ status: 200 });
    const denied = await client.callTool({ name: "reliability_status", arguments: {} });
    expect(textOf(denied)).toContain(`Reset of ${KEY_V1} was denied`);
    expect(textOf(denied)).toContain("The v1 API is being retired; use v2");
    expect((denied.structuredContent as any).keys[0]).toMatchObject({ failureKey: KEY_V1, effectiveState: "escalated" });

    const missing = await client.callTool({ name: "reliability_request_reset", arguments: { failure_key: "no|such|key", reason: "x" } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("Failure key no|such|key not found");
    const bad = await client.callTool({ name: "reliability_request_reset", arguments: { failure_key: KEY_V1 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("reason");
    await client.close();
  });

  it("refuses a wrong key (401), another site's Origin (403) and a body over 1 MiB (413)", async () => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    const post = (headers: Record<string, string>, body = init) =>
      fetch(`${api.url}/api/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body });
    expect((await post({ authorization: "Bearer vgl_wrong" })).status).toBe(401);
    expect((await post({})).status).toBe(401);
    const foreign = await post({ authorization: `Bearer ${ws.key}`, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await post({ authorization: `Bearer ${ws.key}`, origin: api.url })).status).toBe(200);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "reliability_status", arguments: { tool_name: "x".repeat(1024 * 1024 + 10) } } });
    expect((await post({ authorization: `Bearer ${ws.key}` }, big)).status).toBe(413);
    const wrongClient = new Client({ name: "t", version: "1" });
    await expect(wrongClient.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/api/mcp`), { requestInit: { headers: { authorization: "Bearer vgl_nope" } } }))).rejects.toThrow();
  });
});

describe("vigil mcp-proxy in front of a real stdio MCP server", () => {
  const app = useTestApp("pglite");
  let api: Awaited<ReturnType<typeof serveApp>>;
  let sdk: Awaited<ReturnType<typeof installPackedSdk>>;
  beforeAll(async () => {
    [api, sdk] = await Promise.all([serveApp(app.runtime), installPackedSdk({ peers: [], entries: { core: "@vigil/sdk" } })]);
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (sdk) await rm(sdk.dir, { recursive: true, force: true });
  });

  async function proxied(key: string, sessionId: string, options: { elicitation?: (params: any) => { action: string; content?: Record<string, unknown> }; extraArgs?: string[] } = {}) {
    const serverLog = path.join(sdk.dir, `server-${sessionId}.log`);
    await writeFile(serverLog, "");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [sdk.bin, "mcp-proxy", "--agent", "fixture-agent", "--session", sessionId, "--wait", "1", ...(options.extraArgs ?? []), "--", process.execPath, FIXTURE],
      env: { ...(process.env as Record<string, string>), VIGIL_URL: api.url, VIGIL_API_KEY: key, MCP_FIXTURE_LOG: serverLog },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d) => (stderr += String(d)));
    const client = new Client({ name: "proxy-test-client", version: "1.0.0" }, options.elicitation ? { capabilities: { elicitation: { form: {} } } } : {});
    const asked: any[] = [];
    if (options.elicitation) {
      client.setRequestHandler("elicitation/create", async (request: any) => {
        asked.push(request.params);
        return options.elicitation!(request.params) as never;
      });
    }
    await client.connect(transport);
    const serverSaw = async () =>
      (await readFile(serverLog, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { name: string; args: unknown });
    return { client, serverSaw, asked, stderr: () => stderr };
  }

  const events = (workspaceId: string, sessionId: string) =>
    app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, sessionId))).orderBy(event.ts, event.seq);

  async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
    let value = await read();
    for (let i = 0; i < 100 && !ok(value); i++) {
      await new Promise((r) => setTimeout(r, 50));
      value = await read();
    }
    return value;
  }

  it("passes tools and resources through unchanged, runs an allowed call, refuses a policy's deny before the server sees it, reports results to Vigil", async () => {
    const ws = await app.seedWorkspace();
    const put = await app.mutation(
      "config.put",
      { policies: [{ name: "no-etc-writes", tool: "write_file", args: { path: "/etc/**" }, decision: "deny", reason: "System files are managed by configuration management" }] },
      { key: ws.key },
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const sessionId = `proxy-${randomUUID()}`;
    const { client, serverSaw, stderr } = await proxied(ws.key, sessionId);
    expect(client.getServerVersion()).toMatchObject({ name: "fixture-files", version: "1.2.3" });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["echo", "fail", "write_file"]);
    expect(tools.find((t) => t.name === "echo")?.annotations?.readOnlyHint).toBe(true);
    const { resources } = await client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: "file:///readme.txt", name: "readme" })]);
    expect((await client.readResource({ uri: "file:///readme.txt" })).contents).toEqual([{ uri: "file:///readme.txt", text: "fixture readme" }]);

    const echoed = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(echoed).toEqual({ content: [{ type: "text", text: "echo: hello" }], structuredContent: { echoed: "hello" } });

    const denied = await client.callTool({ name: "write_file", arguments: { path: "/etc/hosts", content: "x" } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain("System files are managed by configuration management");
    const written = await client.callTool({ name: "write_file", arguments: { path: "/tmp/notes.txt", content: "ok" } });
    expect(textOf(written)).toBe("wrote 2 bytes to /tmp/notes.txt");

    const failed = await client.callTool({ name: "fail", arguments: {} });
    expect(failed).toMatchObject({ isError: true, content: [{ type: "text", text: "disk quota exceeded" }] });
    expect((await serverSaw()).map((c) => c.name)).toEqual(["echo", "write_file", "fail"]);
    await client.close();

    const rows = await eventually(
      () => events(ws.workspaceId, sessionId),
      (r) => r.some((e) => e.type === "session.end"),
    );
    expect(rows[0]).toMatchObject({ type: "session.start" });
    const results = rows.filter((r) => r.type === "tool.result");
    expect(results.map((r) => [r.toolName, r.failed])).toEqual([
      ["echo", false],
      ["write_file", false],
      ["fail", true],
    ]);
    expect((results[2].payload as any).error).toBe("disk quota exceeded");
    expect(rows.filter((r) => r.type === "tool.call").map((r) => r.toolName)).toEqual(["echo", "write_file", "write_file", "fail"]);
    expect(rows.map((r) => r.type)).toContain("session.end");
    expect(stderr()).not.toContain("guard.check failed");
  }, 60_000);

  it("a paused session refuses with why and the resume link; an escalated key asks by elicitation, or waits for the dashboard and answers the approval link", async () => {
    const ws = await app.seedWorkspace();
    const sessionId = `proxy-${randomUUID()}`;
    const asking = await proxied(ws.key, sessionId, { elicitation: () => ({ action: "accept", content: { approve: true } }) });
    const first = await asking.client.callTool({ name: "fail", arguments: {} });
    expect(first.isError).toBe(true);
    // A person escalates the tool's key: the next call asks the person in the client.
    // The proxy reports results in batches (within a second).
    const keys = await eventually(
      async () => ((await app.query("reliability.status", { toolName: "fail" }, { key: ws.key })).body.result!.data as { keys: { failureKey: string; totalFailures: number }[] }).keys,
      (k) => k.length > 0 && k[0].totalFailures > 0,
    );
    const [{ failureKey }] = keys;
    expect((await app.mutation("keys.setState", { failureKey, state: "escalated", reason: "Watching the disk" }, { key: ws.key })).status).toBe(200);
    const second = await asking.client.callTool({ name: "fail", arguments: {} });
    expect(asking.asked).toHaveLength(1);
    expect(asking.asked[0].message).toContain("fail");
    expect(textOf(second)).toBe("disk quota exceeded");
    expect((await asking.serverSaw()).length).toBe(2);
    const permissions = await eventually(
      async () => (await events(ws.workspaceId, sessionId)).filter((r) => r.type === "permission.resolved"),
      (r) => r.length > 0,
    );
    expect(permissions[0]).toMatchObject({ toolName: "fail", payload: { granted: true, method: "mcp_elicitation" } });

    expect((await app.mutation("sessions.pause", { sessionId, reason: "Investigating the disk" }, { key: ws.key })).status).toBe(200);
    const paused = await asking.client.callTool({ name: "echo", arguments: { text: "x" } });
    expect(paused.isError).toBe(true);
    expect(textOf(paused)).toContain("Investigating the disk");
    expect(textOf(paused)).toContain(`/w/${ws.slug}/sessions/${sessionId}`);
    expect((await asking.serverSaw()).map((c) => c.name)).not.toContain("echo");
    await asking.client.close();

    // A client without elicitation: the proxy waits (--wait 1) for a person, then answers the approval link.
    const otherSession = `proxy-${randomUUID()}`;
    const waiting = await proxied(ws.key, otherSession);
    const held = await waiting.client.callTool({ name: "fail", arguments: {} });
    expect(held.isError).toBe(true);
    expect(textOf(held)).toContain(`/w/${ws.slug}/approvals`);
    expect(await waiting.serverSaw()).toEqual([]);
    const [pending] = await app.db.select().from(approval).where(and(eq(approval.workspaceId, ws.workspaceId), eq(approval.sessionId, otherSession)));
    expect(pending).toMatchObject({ kind: "tool_call", status: "pending", toolName: "fail" });
    expect((await app.mutation("approvals.resolve", { approvalId: pending.id, decision: "approve" }, { key: ws.key })).status).toBe(200);
    // The same call again reuses its call id and gets the person's approval.
    const retried = await waiting.client.callTool({ name: "fail", arguments: {} });
    expect(textOf(retried)).toBe("disk quota exceeded");
    expect((await waiting.serverSaw()).length).toBe(1);
    await waiting.client.close();
  }, 60_000);

  it("fails open when Vigil cannot be reached (logged on stderr), refuses with --fail closed", async () => {
    const ws = await app.seedWorkspace();
    const down = "http://127.0.0.1:9";
    const open = await proxied(ws.key, `proxy-${randomUUID()}`, { extraArgs: ["--url", down] });
    expect(textOf(await open.client.callTool({ name: "echo", arguments: { text: "still here" } }))).toBe("echo: still here");
    await open.client.close();
    expect(open.stderr()).toContain("Vigil");
    const closed = await proxied(ws.key, `proxy-${randomUUID()}`, { extraArgs: ["--url", down, "--fail", "closed"] });
    const refused = await closed.client.callTool({ name: "echo", arguments: { text: "no" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("--fail closed");
    expect(await closed.serverSaw()).toEqual([]);
    await closed.client.close();
  }, 60_000);
});
