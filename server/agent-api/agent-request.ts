/**
 * The one wrapper of every agent route: the steps every agent request takes, in this order, before
 * the route's own work —
 *
 *   capacity (503) → method (405) → API key (401) → rate limit (429) → the route's own check
 *   (415, 403, 400) → body limit (413) → parse → run
 *
 * Each route words a refusal in its own protocol (`refuse`: tRPC error shape, OTLP status, hook
 * JSON, JSON-RPC) and says which key check it takes (`key`). A tRPC request checks its key in the
 * procedure (`key: "in-procedure"`: server/trpc/init.ts's agent procedures call the same
 * checkAgentKey), since one endpoint serves the agent's procedures and the dashboard's.
 *
 *   handleAgentRequest(req, runtime, { refuse, key: "fresh", parse, run })
 */
import type { Runtime } from "@/server/runtime";
import type { Db } from "@/db/client";
import { withQueryPriority, type QueryPriority } from "@/db/query-priority";
import type { AuthenticatedKey } from "@/server/services/api-keys";
import { checkAgentKey } from "@/server/services/agent-key";
import { readLimitedBody } from "@/server/http/limited-body";
import { OVERLOAD_MESSAGE, withCapacity, type CapacitySlot } from "@/server/http/capacity";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "@/server/http/database-unavailable";

export type AgentRefusal =
  | { reason: "overloaded"; status: 503; message: string; headers: Record<string, string> }
  | { reason: "method_not_allowed"; status: 405; message: string; headers: Record<string, string> }
  | { reason: "unauthenticated"; status: 401; message: string; headers: Record<string, string> }
  | { reason: "rate_limited"; status: 429; message: string; headers: Record<string, string> }
  | { reason: "too_large"; status: 413; message: string; headers: Record<string, string> }
  /** The key could not be read because the database is down; `cause` is the error. */
  | { reason: "database_unavailable"; status: 503; message: string; headers: Record<string, string>; cause: unknown };

const BODY_TOO_LARGE_MESSAGE = "Request body exceeds 1 MiB";
const DATABASE_UNAVAILABLE_MESSAGE = "Database unavailable; retry shortly";

/** What a route's `check`, `parse` and `run` see. */
export interface AgentRequestContext {
  runtime: Runtime;
  db: Db;
  /** The authenticated key; null with `key: "in-procedure"`. */
  key: AuthenticatedKey | null;
  /** Whether `key` came from the in-memory cache (to be checked again before anything is written or shown). */
  keyFromCache: boolean;
  /** The request's place among the instance's concurrent requests; null when the caller runs it without one. */
  slot: CapacitySlot | null;
}

export interface AgentRequestSteps<Parsed> {
  /** The route's answer to a refusal, in its protocol. */
  refuse: (refusal: AgentRefusal) => Response;
  /**
   * The key check: "fresh" reads the key from the database; "cached" may take it from memory (the
   * route then re-checks it in its own round trip); "in-procedure" leaves it to the tRPC procedure.
   */
  key: "fresh" | "cached" | "in-procedure";
  /** Methods answered; any other is a 405 with `Allow`. Omitted: every method (the route decides). */
  methods?: readonly string[];
  /** The 405's message (default "Use POST"). */
  methodMessage?: string;
  /** The route's own check of the request before its body is read (content type, origin, batch size); a Response refuses. */
  check?: (req: Request, ctx: AgentRequestContext) => Response | null;
  /** The body read (at most 1 MiB; none for GET and HEAD) into what `run` takes; a Response answers at once. */
  parse: (body: Uint8Array | null, req: Request, ctx: AgentRequestContext) => Parsed | Response | Promise<Parsed | Response>;
  run: (parsed: Parsed, req: Request, ctx: AgentRequestContext) => Promise<Response>;
}

/**
 * On the embedded database an agent's statements go before the dashboard's (db/pglite-priority.ts).
 * The dashboard's own tRPC calls share the tRPC entry, with a session cookie and no key.
 */
export function agentRequestPriority(headers: Headers, key: AgentRequestSteps<unknown>["key"]): QueryPriority {
  return key !== "in-procedure" || headers.has("authorization") ? "agent" : "dashboard";
}

/**
 * Runs an agent request through the steps. `heldSlot`: the capacity slot when the caller already
 * holds one (or null to run without one); omitted, a slot is taken here.
 */
export function handleAgentRequest<Parsed>(req: Request, runtime: Runtime, steps: AgentRequestSteps<Parsed>, heldSlot?: CapacitySlot | null): Promise<Response> {
  return withQueryPriority(agentRequestPriority(req.headers, steps.key), () => {
    if (heldSlot !== undefined) return serveAgentRequest(req, runtime, steps, heldSlot);
    return withCapacity(
      (slot) => serveAgentRequest(req, runtime, steps, slot),
      (retryAfter) => steps.refuse({ reason: "overloaded", status: 503, message: OVERLOAD_MESSAGE, headers: { "retry-after": String(retryAfter) } }),
    );
  });
}

async function serveAgentRequest<Parsed>(req: Request, runtime: Runtime, steps: AgentRequestSteps<Parsed>, slot: CapacitySlot | null): Promise<Response> {
  if (steps.methods && !steps.methods.includes(req.method)) {
    return steps.refuse({ reason: "method_not_allowed", status: 405, message: steps.methodMessage ?? "Use POST", headers: { allow: steps.methods.join(", ") } });
  }
  const db = runtime.database.db;
  const ctx: AgentRequestContext = { runtime, db, key: null, keyFromCache: false, slot };
  if (steps.key !== "in-procedure") {
    let checked;
    try {
      checked = await checkAgentKey(db, req, { cached: steps.key === "cached" });
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      return steps.refuse({
        reason: "database_unavailable",
        status: 503,
        message: DATABASE_UNAVAILABLE_MESSAGE,
        headers: { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) },
        cause: err,
      });
    }
    if (!checked.ok && checked.status === 401) return steps.refuse({ reason: "unauthenticated", status: 401, message: checked.message, headers: {} });
    if (!checked.ok) {
      return steps.refuse({ reason: "rate_limited", status: 429, message: checked.message, headers: { "retry-after": String(checked.retryAfterSeconds) } });
    }
    ctx.key = checked.key;
    ctx.keyFromCache = checked.cached;
  }
  const refused = steps.check?.(req, ctx);
  if (refused) return refused;
  let body: Uint8Array | null = null;
  if (req.method !== "GET" && req.method !== "HEAD") {
    const raw = await readLimitedBody(req);
    if (raw === "too_large") return steps.refuse({ reason: "too_large", status: 413, message: BODY_TOO_LARGE_MESSAGE, headers: {} });
    body = raw;
  }
  const parsed = await steps.parse(body, req, ctx);
  if (parsed instanceof Response) return parsed;
  return steps.run(parsed, req, ctx);
}
