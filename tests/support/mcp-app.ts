/**
 * The MCP suites' shared parts: /api/mcp and /api/trpc behind a real HTTP server (as `next start`
 * serves them), and the official MCP clients, v1 (`@modelcontextprotocol/sdk`) and v2
 * (`@modelcontextprotocol/client`), behind one small shape so a test runs against either.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { handleTrpcRequest } from "@/server/agent-api/trpc";
import { handleMcpRequest } from "@/server/agent-api/mcp";
import type { Runtime } from "@/server/runtime";

export async function serveMcpApp(runtime: Runtime) {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const response = req.url?.startsWith("/api/mcp") ? await handleMcpRequest(request, runtime) : await handleTrpcRequest(request, runtime);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export type Flavor = "v1" | "v2";
export const FLAVORS: Flavor[] = ["v1", "v2"];

/** What the tests use of either client. */
export interface McpClient {
  listTools(): Promise<{ tools: any[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }): Promise<any>;
  listResources(): Promise<{ resources: any[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: any[] }>;
  readResource(params: { uri: string }): Promise<{ contents: any[] }>;
  listPrompts(): Promise<{ prompts: any[] }>;
  getServerVersion(): { name: string; version: string } | undefined;
  close(): Promise<void>;
}

type Elicit = (params: any) => { action: string; content?: Record<string, unknown> };

function newClient(flavor: Flavor, name: string, elicit?: Elicit): { client: McpClient; asked: any[] } {
  const asked: any[] = [];
  const options = elicit ? { capabilities: { elicitation: { form: {} } } } : {};
  if (flavor === "v1") {
    const client = new ClientV1({ name, version: "1.0.0" }, options);
    if (elicit)
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params);
        return elicit(request.params) as never;
      });
    return { client: client as unknown as McpClient, asked };
  }
  const client = new ClientV2({ name, version: "1.0.0" }, options);
  if (elicit)
    client.setRequestHandler("elicitation/create", async (request: any) => {
      asked.push(request.params);
      return elicit(request.params) as never;
    });
  return { client: client as unknown as McpClient, asked };
}

/** The official client over stdio to `command args…`; its stderr collected, its process id known. */
export async function stdioClient(flavor: Flavor, spec: { command: string; args: string[]; env?: Record<string, string>; elicit?: Elicit; name?: string }) {
  const params = { command: spec.command, args: spec.args, env: { ...(process.env as Record<string, string>), ...spec.env }, stderr: "pipe" as const };
  const transport = flavor === "v1" ? new StdioV1(params) : new StdioV2(params);
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += String(d)));
  let closed = false;
  const { client, asked } = newClient(flavor, spec.name ?? `stdio-test-${flavor}`, spec.elicit);
  await (client as any).connect(transport);
  const previous = transport.onclose;
  transport.onclose = () => {
    closed = true;
    previous?.();
  };
  return { client, asked, stderr: () => stderr, pid: transport.pid, closed: () => closed };
}

/** The official client over Streamable HTTP to /api/mcp with `key`. */
export async function httpClient(flavor: Flavor, url: string, key: string): Promise<McpClient> {
  const endpoint = new URL(`${url}/api/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${key}` } };
  const { client } = newClient(flavor, `http-test-${flavor}`);
  await (client as any).connect(flavor === "v1" ? new HttpV1(endpoint, { requestInit }) : new HttpV2(endpoint, { requestInit }));
  return client;
}

export const textOf = (result: any) => (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

export async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, tries = 200): Promise<T> {
  let value = await read();
  for (let i = 0; i < tries && !ok(value); i++) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}
