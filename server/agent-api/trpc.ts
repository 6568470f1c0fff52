/**
 * The HTTP entry of the tRPC API, independent of Next.js so integration tests can drive it with
 * plain Request objects. The agent-request steps (./agent-request.ts: capacity, batch size, the 1 MiB
 * body limit) before anything is parsed; each procedure checks its own key or session.
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { TRPCError } from "@trpc/server";
import type { Runtime } from "@/server/runtime";
import { appRouter } from "@/server/trpc/root";
import { createContext } from "@/server/trpc/init";
import { MAX_BODY_BYTES } from "@/server/http/limited-body";
import { handleAgentRequest, type AgentRefusal, type AgentRequestSteps } from "./agent-request";
import { OVERLOAD_MESSAGE, OVERLOAD_RETRY_AFTER_SECONDS, type CapacitySlot } from "@/server/http/capacity";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "@/server/http/database-unavailable";

export const TRPC_ENDPOINT = "/api/trpc";

/** Calls one batched request may carry (the dashboard's client batches at most this many). */
export const MAX_BATCH_CALLS = 50;

/** How many calls a `?batch=1` request names, or 1. */
function batchSize(url: string): number {
  const u = new URL(url);
  if (u.searchParams.get("batch") !== "1") return 1;
  let path = u.pathname.slice(TRPC_ENDPOINT.length + 1);
  try {
    path = decodeURIComponent(path);
  } catch {
    // tRPC answers a path it cannot decode
  }
  return path.split(",").length;
}

function errorResponse(status: number, code: string, message: string, headers?: Record<string, string>): Response {
  return Response.json({ error: { message, code: -32000, data: { code, httpStatus: status } } }, { status, headers });
}

/** The answer to a tRPC request when every slot is taken. */
export function trpcOverloadResponse(retryAfterSeconds = OVERLOAD_RETRY_AFTER_SECONDS): Response {
  return errorResponse(503, "SERVICE_UNAVAILABLE", OVERLOAD_MESSAGE, { "retry-after": String(retryAfterSeconds) });
}

/** Status and headers beyond tRPC's own: a database that is down is temporary, 503 + Retry-After, not a 500 (batches were not written). */
export function trpcResponseMeta(errors: readonly TRPCError[]): { status?: number; headers?: Headers } {
  return errors.length > 0 && errors.every((e) => e.code === "INTERNAL_SERVER_ERROR" && isDatabaseUnavailable(e))
    ? { status: 503, headers: new Headers({ "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) }) }
    : {};
}

export function handleTrpcRequest(req: Request, runtime: Runtime): Promise<Response> {
  return handleAgentRequest(req, runtime, trpcSteps);
}

/** The adapter's answer, without the capacity check (the caller holds `slot`). */
export function serveTrpcRequest(req: Request, runtime: Runtime, slot: CapacitySlot | null = null): Promise<Response> {
  return handleAgentRequest(req, runtime, trpcSteps, slot);
}

/** One endpoint serves the agent's procedures and the dashboard's: each procedure checks its own access. */
const trpcSteps: AgentRequestSteps<Request> = {
  refuse: (r) => errorResponse(r.status, REFUSAL_CODE[r.reason], r.message, r.headers),
  key: "in-procedure",
  check: (req) => {
    const calls = batchSize(req.url);
    return calls > MAX_BATCH_CALLS ? errorResponse(400, "BAD_REQUEST", `A batch may carry at most ${MAX_BATCH_CALLS} calls; this one has ${calls}`) : null;
  },
  parse: (body, req) => (body ? new Request(req.url, { method: req.method, headers: req.headers, body: body as BodyInit }) : req),
  run: (request, _req, ctx) =>
    fetchRequestHandler({
      endpoint: TRPC_ENDPOINT,
      req: request,
      router: appRouter,
      createContext: (opts) => createContext(ctx.runtime, opts, ctx.slot),
      maxBatchSize: MAX_BATCH_CALLS,
      responseMeta: ({ errors }) => trpcResponseMeta(errors),
    }),
};

const REFUSAL_CODE: Record<AgentRefusal["reason"], string> = {
  overloaded: "SERVICE_UNAVAILABLE",
  method_not_allowed: "METHOD_NOT_SUPPORTED",
  unauthenticated: "UNAUTHORIZED",
  rate_limited: "TOO_MANY_REQUESTS",
  too_large: "PAYLOAD_TOO_LARGE",
  database_unavailable: "SERVICE_UNAVAILABLE",
};
