/**
 * `POST /api/mcp` (SPEC 7.7): Vigil's tools over MCP Streamable HTTP, stateless, JSON answers.
 * Through the one agent-request wrapper (server/agent-api/agent-request.ts) — capacity (503), method
 * (405), API key (401), rate limit (429 + Retry-After), `Origin` (403: a browser page of another
 * site must not drive the tools with a key it found), body size (413) — then the MCP SDK answers.
 */
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import type { Runtime } from "@/server/runtime";
import { MAX_BODY_BYTES } from "@/server/http/limited-body";
import { InputHygieneError, inputProblem } from "@/server/http/input-hygiene";
import { handleAgentRequest, type AgentRequestContext } from "./agent-request";
import { createVigilMcpServer, type McpCaller } from "@/server/mcp/tools";
import { publicOrigin } from "@/server/http/public-origin";

export const MCP_ENDPOINT = "/api/mcp";

/** A JSON-RPC error answer with an HTTP status, as MCP clients read a refused request. */
function refusal(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** Local MCP clients send no Origin; one that is sent must be Vigil's own. */
function originAllowed(req: Request, own: string): boolean {
  const origin = req.headers.get("origin");
  if (origin === null) return true;
  const allowed = new Set([own, new URL(req.url).origin]);
  if (process.env.VIGIL_BASE_URL) allowed.add(process.env.VIGIL_BASE_URL.replace(/\/+$/, ""));
  return allowed.has(origin);
}

const callerOf = (extra: Record<string, unknown> | undefined) => extra?.caller as McpCaller;

/** The 2026 revision's per-request serving; the caller rides in authInfo, which the SDK passes through as it is. */
const modernHandler = createMcpHandler((ctx) => createVigilMcpServer(callerOf(ctx.authInfo?.extra)), {
  legacy: "reject",
  responseMode: "json",
  maxRequestBodySize: MAX_BODY_BYTES,
  onerror: (error) => console.warn("[vigil] MCP request refused:", error.message),
});

/** 2025-era clients (most today): a fresh server and transport per request, answering in JSON. */
async function serveLegacy(req: Request, caller: McpCaller, parsedBody: unknown): Promise<Response> {
  const server = createVigilMcpServer(caller);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req, { parsedBody });
  } finally {
    void server.close().catch(() => {});
  }
}

export function handleMcpRequest(req: Request, runtime: Runtime): Promise<Response> {
  return handleAgentRequest(req, runtime, {
    refuse: (r) => refusal(r.status, r.message, r.headers),
    // Stateless: no SSE stream to open (GET) and no session to end (DELETE).
    methods: ["POST"],
    methodMessage: "Method not allowed: this MCP endpoint is stateless; use POST",
    // Not from the key cache: the tools read and write without a round trip that would re-check it.
    key: "fresh",
    check: (request) => (originAllowed(request, publicOrigin(request)) ? null : refusal(403, `Origin ${request.headers.get("origin")} may not call this endpoint`)),
    parse: (raw) => {
      let parsedBody: unknown;
      try {
        parsedBody = JSON.parse(new TextDecoder().decode(raw ?? new Uint8Array()));
      } catch {
        return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not JSON" }, id: null }), {
          status: 400,
          headers: { "content-type": "application/json" },
        });
      }
      const issue = inputProblem(parsedBody);
      return issue ? refusal(400, new InputHygieneError(issue).message) : { parsedBody };
    },
    run: ({ parsedBody }, request, ctx) => serveMcpRequest(request, ctx, parsedBody),
  });
}

async function serveMcpRequest(req: Request, { db, key }: AgentRequestContext, parsedBody: unknown): Promise<Response> {
  if (!key) throw new Error("MCP requests are served with a checked key");
  const caller: McpCaller = {
    db,
    workspaceId: key.workspaceId,
    organizationId: key.organizationId,
    workspaceSlug: key.workspaceSlug,
    actor: { type: "api_key", id: key.keyId, label: key.prefix },
    origin: publicOrigin(req),
  };
  // The body was read here; the SDK gets it parsed and a request it need not read again.
  const request = new Request(req.url, { method: "POST", headers: req.headers, signal: req.signal });
  try {
    if (await isLegacyRequest(request, parsedBody)) return await serveLegacy(request, caller, parsedBody);
    return await modernHandler.fetch(request, { parsedBody, authInfo: { token: key.prefix, clientId: key.keyId, scopes: [key.scope], extra: { caller } } });
  } catch (error) {
    console.error("[vigil] MCP request failed:", error);
    return refusal(500, "Internal server error");
  }
}
