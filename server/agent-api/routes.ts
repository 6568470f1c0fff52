/**
 * The agent API's routes as plain `Request → Response` functions, for the fast path of
 * scripts/serve.mjs: guard.check sits in front of every tool call of every agent, and Next's
 * request pipeline (routing, rendering machinery, header handling) costs more per request than
 * the decision itself — /api/health managed ~480/s through it where a bare node:http server
 * answers ~3,000/s on the same machine. These are the same handlers the app/api route files call,
 * so both paths answer alike; pages, auth and everything else stay with Next.
 *
 * The functions are compiled by Next with the rest of the server (instrumentation.ts registers
 * them on start), so the fast path and the route handlers share one runtime: one database pool,
 * one PGlite, one cache.
 */
import { getRuntime } from "@/server/runtime";
import { handleTrpcRequest, TRPC_ENDPOINT, trpcOverloadResponse } from "@/server/agent-api/trpc";
import { atCapacity } from "@/server/http/capacity";
import { handleTrpcCall, type DirectCall, type RawAnswer } from "@/server/agent-api/trpc-direct-call";
import { handleHookRequest, HOOK_CLIS } from "@/server/agent-api/hooks";
import type { CliName } from "@/server/hooks/shared";
import { handleOtlpTraces } from "@/server/agent-api/otlp";
import { handleMcpRequest, MCP_ENDPOINT } from "@/server/agent-api/mcp";
import { handleHealth } from "./health";

/**
 * A route answers a `Request`; a tRPC route also takes the request's parts (`answerParts`; not `call`, which every function has), so a plain
 * mutation is answered without building a `Request` at all (server/trpc/direct-call.ts).
 */
export type AgentRoute = ((req: Request) => Promise<Response>) & {
  answerParts?: (call: DirectCall, toRequest: () => Request) => Promise<RawAnswer | Response>;
};

const hookRoutes = new Map<string, CliName>(HOOK_CLIS.map((cli) => [`/api/hooks/${cli}`, cli]));

/** The route serving `method pathname`, or null for anything Next must serve (pages, auth, unknown methods). */
export function agentRouteFor(method: string, pathname: string): AgentRoute | null {
  if (pathname.startsWith(`${TRPC_ENDPOINT}/`) && method === "GET") return async (req) => handleTrpcRequest(req, await getRuntime());
  if (pathname.startsWith(`${TRPC_ENDPOINT}/`) && method === "POST") {
    return Object.assign(async (req: Request) => handleTrpcRequest(req, await getRuntime()), {
      answerParts: async (call: DirectCall, toRequest: () => Request) => handleTrpcCall(await getRuntime(), call, toRequest),
    });
  }
  if (method === "POST") {
    const cli = hookRoutes.get(pathname);
    if (cli) return async (req) => handleHookRequest(req, await getRuntime(), cli);
    if (pathname === "/api/otlp/v1/traces") return async (req) => handleOtlpTraces(req, await getRuntime());
    if (pathname === MCP_ENDPOINT) return async (req) => handleMcpRequest(req, await getRuntime());
  }
  if (pathname === "/api/health" && method === "GET") return () => handleHealth(getRuntime);
  return null;
}

/**
 * Whether a request must be refused at once because every slot is taken: decided before the
 * request is read or turned into a `Request`. Under overload, refusing must cost next to nothing,
 * or the refusals themselves eat the CPU and requests time out instead of being refused.
 */
export function refusesEarly(method: string, pathname: string): boolean {
  return atCapacity() && pathname.startsWith(`${TRPC_ENDPOINT}/`) && (method === "GET" || method === "POST");
}

/** The refusal for a tRPC request that arrives while every slot is taken (the handler's own answer: 503 + Retry-After), or null. */
export function earlyRefusal(method: string, pathname: string): Response | null {
  return refusesEarly(method, pathname) ? trpcOverloadResponse() : null;
}

/** What scripts/serve.mjs needs to refuse early: the decision, and the (constant) answer it turns into bytes once. */
export interface EarlyRefusal {
  refuses: typeof refusesEarly;
  answer: () => Response;
}

export const AGENT_ROUTES_KEY = Symbol.for("vigil.agentRoutes");
export const EARLY_REFUSAL_KEY = Symbol.for("vigil.agentEarlyRefusal");

/** Makes the routes visible to scripts/serve.mjs, which loads Next and cannot import TypeScript itself. */
export function registerAgentRoutes(): void {
  (globalThis as { [AGENT_ROUTES_KEY]?: typeof agentRouteFor })[AGENT_ROUTES_KEY] = agentRouteFor;
  (globalThis as { [EARLY_REFUSAL_KEY]?: EarlyRefusal })[EARLY_REFUSAL_KEY] = { refuses: refusesEarly, answer: () => trpcOverloadResponse() };
}
