/**
 * MCP (SPEC 7.7) with the real parts users run: `vigil mcp-proxy` and `vigil mcp` from the packed
 * @vigil/sdk, in front of the reference servers from npm (@modelcontextprotocol/server-filesystem and
 * server-everything, exact versions in package.json), driven by the official clients v1
 * (@modelcontextprotocol/sdk) and v2 (@modelcontextprotocol/client); and /api/mcp over Streamable HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { useTestApp } from "../support/use-test-app";
import { installPackedSdk, ROOT } from "../support/packed-sdk";
import { FLAVORS, eventually, httpClient, serveMcpApp, stdioClient, textOf, type Flavor } from "../support/mcp-app";
import { approval, event, member } from "@/db/schema";

const FILESYSTEM = path.join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const EVERYTHING = path.join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

describe("vigil mcp-proxy and vigil mcp with the reference servers and the official clients", () => {
  const app = useTestApp("pglite");
  let api: Awaited<ReturnType<typeof serveMcpApp>>;
  let sdk: Awaited<ReturnType<typeof installPackedSdk>>;
  let files: string;
  beforeAll(async () => {
    [api, sdk] = await Promise.all([serveMcpApp(app.runtime), installPackedSdk({ peers: [], entries: { core: "@vigil/sdk" } })]);
    files = await realpath(await mkdtemp(path.join(tmpdir(), "vigil-mcp-files-")));
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    if (sdk) await rm(sdk.dir, { recursive: true, force: true });
    if (files) await rm(files, { recursive: true, force: true });
  });

  /** The proxy from the packed SDK in front of `server`, as a client's configuration starts it. */
  function proxied(
    flavor: Flavor,
    key: string,
    server: string[],
    o: { sessionId?: string; agent?: string; wait?: number; extraArgs?: string[]; elicit?: (p: any) => { action: string; content?: Record<string, unknown> } } = {},
  ) {
    const sessionId = o.sessionId ?? `proxy-${flavor}-${randomUUID()}`;
    const args = [sdk.bin, "mcp-proxy", "--agent", o.agent ?? `agent-${flavor}`, "--session", sessionId, "--wait", String(o.wait ?? 1), ...(o.extraArgs ?? []), "--", process.execPath, ...server];
    return stdioClient(flavor, { command: process.execPath, args, env: { VIGIL_URL: api.url, VIGIL_API_KEY: key }, elicit: o.elicit }).then((c) => ({ ...c, sessionId }));
  }

  const events = (workspaceId: string, sessionId: string) =>
    app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, sessionId))).orderBy(event.ts, event.seq);

  const ended = (workspaceId: string, sessionId: string) =>
    eventually(
      () => events(workspaceId, sessionId),
      (rows) => rows.some((r) => r.type === "session.end"),
    );

  /** write_file keyed by its directory (an extractor rule, SPEC 2), so a person can escalate that key. */
  async function keyWritesByDirectory(key: string) {
    const put = await app.mutation("config.put", { extractors: [{ tool: "write_file", kind: "path", field: "path" }] }, { key });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
  }

  async function addPerson(organizationId: string, role: "member" | "viewer") {
    const user = await app.signUp(`${role}-${randomUUID()}@example.com`);
    await app.db.insert(member).values({ organizationId, userId: user.userId, role });
    return user;
  }

  it.each(FLAVORS)("filesystem server, %s client: tools pass through unchanged, an allowed write lands on disk, a denied one never reaches the server, results and failures land in Vigil", async (flavor) => {
    const ws = await app.seedWorkspace();
    const dir = path.join(files, flavor);
    await mkdir(path.join(dir, "secret"), { recursive: true });
    const put = await app.mutation(
      "config.put",
      { policies: [{ name: "no-secret-writes", tool: "write_file", args: { path: `${dir}/secret/**` }, decision: "deny", reason: "Secrets are written by the vault, not by agents" }] },
      { key: ws.key },
    );
    expect(put.status, JSON.stringify(put.body)).toBe(200);

    const direct = await stdioClient(flavor, { command: process.execPath, args: [FILESYSTEM, dir] });
    const proxy = await proxied(flavor, ws.key, [FILESYSTEM, dir]);
    const { client } = proxy;
    expect(client.getServerVersion()).toEqual(direct.client.getServerVersion());
    const tools = await client.listTools();
    expect(tools.tools.length).toBeGreaterThan(5);
    expect(tools).toEqual(await direct.client.listTools());
    await direct.client.close();

    const allowed = await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "notes.txt"), content: "written through the proxy" } });
    expect(allowed.isError).toBeFalsy();
    expect(await readFile(path.join(dir, "notes.txt"), "utf8")).toBe("written through the proxy");

    const denied = await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "secret/token.txt"), content: "leak" } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain("Secrets are written by the vault, not by agents");
    expect(existsSync(path.join(dir, "secret/token.txt"))).toBe(false);

    const missing = await client.callTool({ name: "read_text_file", arguments: { path: path.join(dir, "nope.txt") } });
    expect(missing.isError).toBe(true);
    await client.close();

    const rows = await ended(ws.workspaceId, proxy.sessionId);
    expect(rows[0]).toMatchObject({ type: "session.start" });
    expect(rows.filter((r) => r.type === "tool.call").map((r) => r.toolName)).toEqual(["write_file", "write_file", "read_text_file"]);
    const results = rows.filter((r) => r.type === "tool.result");
    expect(results.map((r) => [r.toolName, r.failed])).toEqual([
      ["write_file", false],
      ["read_text_file", true],
    ]);
    expect((results[1].payload as any).error).toMatch(/ENOENT|no such file/i);
    expect(proxy.stderr()).not.toContain("guard.check failed");
  }, 60_000);

  it.each(FLAVORS)("everything server, %s client: tools, resources, templates and prompts pass through unchanged; an allowed call runs and is reported", async (flavor) => {
    const ws = await app.seedWorkspace();
    const direct = await stdioClient(flavor, { command: process.execPath, args: [EVERYTHING, "stdio"] });
    const proxy = await proxied(flavor, ws.key, [EVERYTHING, "stdio"]);
    const { client } = proxy;
    for (const list of ["listTools", "listResources", "listResourceTemplates", "listPrompts"] as const) {
      expect(await client[list](), list).toEqual(await direct.client[list]());
    }
    const [first] = (await client.listResources()).resources;
    expect(await client.readResource({ uri: first.uri })).toEqual(await direct.client.readResource({ uri: first.uri }));
    await direct.client.close();

    const echoed = await client.callTool({ name: "echo", arguments: { message: "through Vigil" } });
    expect(textOf(echoed)).toContain("through Vigil");
    const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    expect(textOf(sum)).toContain("5");
    await client.close();
    const rows = await ended(ws.workspaceId, proxy.sessionId);
    expect(rows.find((r) => r.type === "session.start")).toMatchObject({ payload: expect.objectContaining({ agent: `agent-${flavor}` }) });
    expect(rows.filter((r) => r.type === "tool.result").map((r) => [r.toolName, r.failed])).toEqual([
      ["echo", false],
      ["get-sum", false],
    ]);
  }, 60_000);

  it("a paused workspace refuses calls before they reach the server", async () => {
    const ws = await app.seedWorkspace();
    const dir = path.join(files, "paused");
    await mkdir(dir, { recursive: true });
    const { client, sessionId } = await proxied("v2", ws.key, [FILESYSTEM, dir]);
    expect((await app.mutation("workspace.pause", { reason: "Incident 42: agents stand still" }, { key: ws.key })).status).toBe(200);
    const refused = await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "a.txt"), content: "x" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("Incident 42: agents stand still");
    expect(textOf(refused)).toContain(`/w/${ws.slug}/`);
    expect(existsSync(path.join(dir, "a.txt"))).toBe(false);
    expect((await app.mutation("workspace.resume", {}, { key: ws.key })).status).toBe(200);
    const runs = await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "a.txt"), content: "x" } });
    expect(runs.isError).toBeFalsy();
    expect(existsSync(path.join(dir, "a.txt"))).toBe(true);
    await client.close();
    await ended(ws.workspaceId, sessionId);
  }, 60_000);

  it("an escalated key asks the person by form elicitation (v1 client): declined never runs, approved runs, both recorded", async () => {
    const ws = await app.seedWorkspace();
    const dir = path.join(files, "elicit");
    await mkdir(dir, { recursive: true });
    const failureKey = `write_file|path_prefix=${dir}`;
    await keyWritesByDirectory(ws.key);
    let answer = { action: "accept", content: { approve: false } as Record<string, unknown> };
    const proxy = await proxied("v1", ws.key, [FILESYSTEM, dir], { elicit: () => answer });
    const { client, asked } = proxy;
    // A first call makes the key known; a person then escalates it.
    expect((await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "one.txt"), content: "1" } })).isError).toBeFalsy();
    await eventually(
      async () => (await events(ws.workspaceId, proxy.sessionId)).filter((r) => r.type === "tool.result"),
      (r) => r.length > 0,
    );
    const set = await app.mutation("keys.setState", { failureKey, state: "escalated", reason: "Watching writes here" }, { key: ws.key });
    expect(set.status, JSON.stringify(set.body)).toBe(200);

    const declined = await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "two.txt"), content: "2" } });
    expect(asked).toHaveLength(1);
    expect(asked[0].message).toContain("write_file");
    expect(asked[0].message).toContain(failureKey);
    expect(declined.isError).toBe(true);
    expect(textOf(declined)).toContain("declined");
    expect(existsSync(path.join(dir, "two.txt"))).toBe(false);

    answer = { action: "accept", content: { approve: true } };
    const approved = await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "three.txt"), content: "3" } });
    expect(asked).toHaveLength(2);
    expect(approved.isError).toBeFalsy();
    expect(await readFile(path.join(dir, "three.txt"), "utf8")).toBe("3");
    await client.close();
    const rows = await ended(ws.workspaceId, proxy.sessionId);
    expect(rows.filter((r) => r.type === "permission.resolved").map((r) => (r.payload as any).granted)).toEqual([false, true]);
  }, 60_000);

  it("an escalated key without elicitation waits for the dashboard: a member approves in Approvals while the call waits, and it runs (v2 client)", async () => {
    const ws = await app.seedWorkspace();
    const person = await addPerson(ws.organizationId, "member");
    const dir = path.join(files, "dashboard");
    await mkdir(dir, { recursive: true });
    const failureKey = `write_file|path_prefix=${dir}`;
    await keyWritesByDirectory(ws.key);
    const proxy = await proxied("v2", ws.key, [FILESYSTEM, dir], { wait: 30 });
    const { client } = proxy;
    expect((await client.callTool({ name: "write_file", arguments: { path: path.join(dir, "one.txt"), content: "1" } })).isError).toBeFalsy();
    await eventually(
      async () => (await events(ws.workspaceId, proxy.sessionId)).filter((r) => r.type === "tool.result"),
      (r) => r.length > 0,
    );
    expect((await app.mutation("keys.setState", { failureKey, state: "escalated", reason: "Watching writes here" }, { key: ws.key })).status).toBe(200);

    const started = Date.now();
    const call = client.callTool({ name: "write_file", arguments: { path: path.join(dir, "held.txt"), content: "approved" } });
    const pending = await eventually(
      () => app.db.select().from(approval).where(and(eq(approval.workspaceId, ws.workspaceId), eq(approval.sessionId, proxy.sessionId), eq(approval.status, "pending"))),
      (r) => r.length > 0,
    );
    expect(pending[0]).toMatchObject({ kind: "tool_call", toolName: "write_file" });
    expect(existsSync(path.join(dir, "held.txt"))).toBe(false);
    const resolved = await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId: pending[0].id, decision: "approve" }, { cookie: person.cookie });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(await readFile(path.join(dir, "held.txt"), "utf8")).toBe("approved");
    await client.close();
    await ended(ws.workspaceId, proxy.sessionId);
  }, 60_000);

  it("survives the server crashing: the call in flight gets a JSON-RPC error, the crash is reported, the proxy exits", async () => {
    const ws = await app.seedWorkspace();
    const proxy = await proxied("v1", ws.key, [EVERYTHING, "stdio"]);
    const { client, pid } = proxy;
    const call = client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 30, steps: 30 } });
    const outcome = call.then(
      () => null,
      (error: Error) => error,
    );
    await eventually(
      async () => (await events(ws.workspaceId, proxy.sessionId)).filter((r) => r.type === "tool.call"),
      (r) => r.length > 0,
    );
    await new Promise((r) => setTimeout(r, 300));
    const serverPid = Number(execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).trim().split("\n")[0]);
    expect(serverPid).toBeGreaterThan(0);
    process.kill(serverPid, "SIGKILL");

    const error = await outcome;
    expect(error?.message).toContain("The MCP server exited");
    await eventually(async () => proxy.closed(), (c) => c);
    expect(() => process.kill(pid!, 0)).toThrow();
    expect(proxy.stderr()).toMatch(/exited \(status \d+\) before the client disconnected/);
    const rows = await ended(ws.workspaceId, proxy.sessionId);
    const [result] = rows.filter((r) => r.type === "tool.result");
    expect(result).toMatchObject({ toolName: "trigger-long-running-operation", failed: true });
    expect((result.payload as any).error).toContain("The MCP server exited");
  }, 60_000);

  it("Vigil down: calls fail open, the proxy logs on stderr, and stdout carries only JSON-RPC", async () => {
    const ws = await app.seedWorkspace();
    const child = spawn(process.execPath, [sdk.bin, "mcp-proxy", "--url", "http://127.0.0.1:9", "--", process.execPath, EVERYTHING, "stdio"], {
      env: { ...process.env, VIGIL_API_KEY: ws.key },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += String(d)));
    child.stderr.on("data", (d) => (stderr += String(d)));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    const answered = (id: number) => eventually(async () => stdout, (s) => s.split("\n").some((l) => l.includes(`"id":${id}`)));
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    await answered(1);
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { message: "unchecked" } } });
    await answered(2);
    child.stdin.end();
    expect(await exited).toBe(0);

    const lines = stdout.split("\n").filter(Boolean);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    const echo = lines.map((l) => JSON.parse(l)).find((m) => m.id === 2);
    expect(echo.result.isError).toBeFalsy();
    expect(JSON.stringify(echo.result.content)).toContain("unchecked");
    expect(stderr).toContain("[vigil mcp-proxy]");
    expect(stderr).toMatch(/echo runs unchecked|guard\.check failed/);
  }, 60_000);

  it.each(FLAVORS)("vigil mcp over stdio, %s client: Vigil's three tools, answers, a bad argument as a tool error; a wrong key is a JSON-RPC error", async (flavor) => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    const { client } = await stdioClient(flavor, { command: process.execPath, args: [sdk.bin, "mcp"], env: { VIGIL_URL: api.url, VIGIL_API_KEY: ws.key } });
    expect(client.getServerVersion()?.name).toBe("vigil");
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["reliability_request_reset", "reliability_session", "reliability_status"]);
    const status = await client.callTool({ name: "reliability_status", arguments: {} });
    expect(status.isError).toBeFalsy();
    expect(textOf(status)).toContain("every tool is trusted");
    expect(status.structuredContent).toMatchObject({ keys: [] });
    const bad = await client.callTool({ name: "reliability_status", arguments: { include_history: "yes" } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("include_history");
    await client.close();

    const wrong = stdioClient(flavor, { command: process.execPath, args: [sdk.bin, "mcp"], env: { VIGIL_URL: api.url, VIGIL_API_KEY: "vgl_wrong" } });
    await expect(wrong).rejects.toThrow(/key/i);
  }, 60_000);
});

describe("/api/mcp with the official v1 client over Streamable HTTP", () => {
  const app = useTestApp("pglite");
  let api: Awaited<ReturnType<typeof serveMcpApp>>;
  beforeAll(async () => {
    api = await serveMcpApp(app.runtime);
  });
  afterAll(async () => api?.close());

  it("answers the tools; a wrong key is refused (401); a bad argument is a tool error naming it, never a 500", async () => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    const client = await httpClient("v1", api.url, ws.key);
    expect((await client.listTools()).tools).toHaveLength(3);
    const bad = await client.callTool({ name: "reliability_session", arguments: { session_id: 42 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("session_id");
    await client.close();
    await expect(httpClient("v1", api.url, "vgl_wrong")).rejects.toThrow(/401|key/i);

    // The same bad argument on the wire: a 200 with a tool error, as a 2025-era client sends it.
    const raw = await fetch(`${api.url}/api/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "reliability_request_reset", arguments: { failure_key: ["x"], reason: "r" } } }),
    });
    expect(raw.status).toBe(200);
    const body = await raw.json();
    expect(body).toMatchObject({ id: 7, result: { isError: true } });
    expect(JSON.stringify(body.result.content)).toContain("failure_key");
  });

  it("a reset the model requests waits for a person: a viewer cannot approve it (403), a member can and the key is trusted again", async () => {
    const ws = await app.seedWorkspace({ scope: "agent" });
    const failureKey = "http_request|domain=api.example.com|path_prefix=v1";
    const res = await app.mutation(
      "ingest.events",
      {
        events: Array.from({ length: 3 }, (_, i) => ({ type: "tool.result", id: `f-${i}`, sessionId: "s", callId: `c${i}`, toolName: "http_request", args: { url: "https://api.example.com/v1/x" }, success: false, error: "Service Unavailable", httpStatus: 503 })),
      },
      { key: ws.key },
    );
    expect(res.status).toBe(200);
    const client = await httpClient("v1", api.url, ws.key);
    const requested = await client.callTool({ name: "reliability_request_reset", arguments: { failure_key: failureKey, reason: "The outage is over" } });
    const { approvalId } = requested.structuredContent as { approvalId: string };

    const viewer = await app.signUp(`viewer-${randomUUID()}@example.com`);
    await app.db.insert(member).values({ organizationId: ws.organizationId, userId: viewer.userId, role: "viewer" });
    const refused = await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId, decision: "approve" }, { cookie: viewer.cookie });
    expect(refused.status).toBe(403);
    const stillPending = await client.callTool({ name: "reliability_status", arguments: {} });
    expect(textOf(stillPending)).toContain(`Reset of ${failureKey} requested, waiting for a person`);

    const person = await app.signUp(`member-${randomUUID()}@example.com`);
    await app.db.insert(member).values({ organizationId: ws.organizationId, userId: person.userId, role: "member" });
    expect((await app.mutation("ws.approvals.resolve", { workspaceSlug: ws.slug, approvalId, decision: "approve" }, { cookie: person.cookie })).status).toBe(200);
    const after = await client.callTool({ name: "reliability_status", arguments: {} });
    expect((after.structuredContent as any).keys).toEqual([expect.objectContaining({ failureKey, effectiveState: "trusted" })]);
    expect(textOf(after)).toContain(`Reset of ${failureKey} was approved`);
    await client.close();
  });
});
