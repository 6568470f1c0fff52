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
import { handleTrpcRequest, TRPC_ENDPOINT, trpcOverloadResponse } from "@/server/trpc/handler";
import { atCapacity } from "./capacity";
import { handleHookRequest, HOOK_CLIS } from "@/server/hooks/handler";
import type { CliName } from "@/server/hooks/shared";
import { handleOtlpTraces } from "@/server/otlp/handler";
import { handleHealth } from "./health";

export type AgentRoute = (req: Request) => Promise<Response>;

const hookRoutes = new Map<string, CliName>(HOOK_CLIS.map((cli) => [`/api/hooks/${cli}`, cli]));

/** The route serving `method pathname`, or null for anything Next must serve (pages, auth, unknown methods). */
export function agentRouteFor(method: string, pathname: string): AgentRoute | null {
  if (pathname.startsWith(`${TRPC_ENDPOINT}/`) && (method === "GET" || method === "POST")) {
    return async (req) => handleTrpcRequest(req, await getRuntime());
  }
  if (method === "POST") {
    const cli = hookRoutes.get(pathname);
    if (cli) return async (req) => handleHookRequest(req, await getRuntime(), cli);
    if (pathname === "/api/otlp/v1/traces") return async (req) => handleOtlpTraces(req, await getRuntime());
  }
  if (pathname === "/api/health" && method === "GET") return () => handleHealth(getRuntime);
  return null;
}

/**
 * The refusal for a tRPC request that arrives while every slot is taken, or null. The same answer
 * the handler would give (503 + Retry-After), decided before the request is read or turned into a
 * `Request`: under overload, refusing must cost next to nothing, or the refusals themselves eat the
 * CPU and requests time out instead of being refused.
 */
export function earlyRefusal(method: string, pathname: string): Response | null {
  if (!atCapacity() || !pathname.startsWith(`${TRPC_ENDPOINT}/`) || (method !== "GET" && method !== "POST")) return null;
  return trpcOverloadResponse();
}

export const AGENT_ROUTES_KEY = Symbol.for("vigil.agentRoutes");
export const EARLY_REFUSAL_KEY = Symbol.for("vigil.agentEarlyRefusal");

/** Makes the routes visible to scripts/serve.mjs, which loads Next and cannot import TypeScript itself. */
export function registerAgentRoutes(): void {
  (globalThis as { [AGENT_ROUTES_KEY]?: typeof agentRouteFor })[AGENT_ROUTES_KEY] = agentRouteFor;
  (globalThis as { [EARLY_REFUSAL_KEY]?: typeof earlyRefusal })[EARLY_REFUSAL_KEY] = earlyRefusal;
}
