/**
 * `vigil mcp` (SPEC 7.7, 7.9): Vigil's own tools (`/api/mcp`) for MCP clients that only start stdio
 * servers. Each newline-delimited JSON-RPC message from stdin is posted to /api/mcp and its answer
 * written to stdout, in order; what the command has to say goes to stderr.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { SDK_VERSION } from "./transport.js";

export interface McpStdioOptions {
  url: string;
  apiKey: string;
  stdin?: Readable;
  stdout?: Writable;
  log?: (line: string) => void;
  fetch?: typeof fetch;
}

/** The JSON-RPC messages of an answer: a JSON body, or the `data:` events of an SSE stream. */
function messagesOf(contentType: string, body: string): string[] {
  if (!body.trim()) return [];
  if (contentType.includes("text/event-stream")) {
    return body
      .split(/\r?\n\r?\n/)
      .map((event) =>
        event
          .split(/\r?\n/)
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart())
          .join("\n"),
      )
      .filter(Boolean)
      .map((data) => JSON.stringify(JSON.parse(data)));
  }
  return [JSON.stringify(JSON.parse(body))];
}

export async function runMcpStdio(options: McpStdioOptions): Promise<number> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const log = options.log ?? ((line: string) => process.stderr.write(`[vigil mcp] ${line}\n`));
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const endpoint = `${options.url.replace(/\/+$/, "")}/api/mcp`;
  let protocolVersion: string | undefined;

  const post = async (raw: string) => {
    let message: { id?: unknown; method?: string };
    try {
      message = JSON.parse(raw);
    } catch {
      stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })}\n`);
      return;
    }
    const id = message && typeof message === "object" && "id" in message ? message.id : undefined;
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.apiKey}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "user-agent": `vigil-sdk/${SDK_VERSION}`,
    };
    if (protocolVersion) headers["mcp-protocol-version"] = protocolVersion;
    let lines: string[];
    try {
      const res = await fetchImpl(endpoint, { method: "POST", headers, body: raw, signal: AbortSignal.timeout(60_000) });
      const body = await res.text();
      try {
        lines = messagesOf(res.headers.get("content-type") ?? "", body);
      } catch {
        lines = [];
      }
      if (!res.ok) log(`${endpoint} answered ${res.status}: ${body.slice(0, 300)}`);
      // A refusal (401, 413, 429…) carries no id of the request: the client gets one with it.
      if (!res.ok && id !== undefined && id !== null) {
        const error = lines.length ? JSON.parse(lines[0]).error : undefined;
        lines = [JSON.stringify({ jsonrpc: "2.0", id, error: { code: error?.code ?? -32603, message: error?.message ?? `Vigil answered HTTP ${res.status}` } })];
      }
    } catch (error) {
      log(`${endpoint} could not be reached: ${(error as Error).message}`);
      if (id === undefined || id === null) return;
      lines = [JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: `Vigil could not be reached at ${endpoint}` } })];
    }
    for (const line of lines) {
      if (message.method === "initialize") {
        const version = JSON.parse(line).result?.protocolVersion;
        if (typeof version === "string") protocolVersion = version;
      }
      stdout.write(`${line}\n`);
    }
  };

  // One message at a time: answers keep the order of their requests.
  let queue = Promise.resolve();
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  lines.on("line", (raw) => {
    if (raw.trim()) queue = queue.then(() => post(raw));
  });
  await new Promise<void>((resolve) => lines.on("close", () => resolve()));
  await queue;
  return 0;
}
