/**
 * tRPC foundation: context, error shape and the procedure kinds every router builds on.
 *  - `publicProcedure`
 *  - `authedProcedure`: a signed-in dashboard user
 *  - `protectedWorkspaceProcedure(minRole)`: a member of the workspace's organization with at least that role
 *  - `protectedOrgProcedure(minRole)`: same, for organization pages
 *  - `apiKeyProcedure` / `adminApiKeyProcedure`: agents and provisioning scripts (Bearer API key)
 * Each kind states its access as the procedure's `meta.access` (`ProcedureAccess`), so the access of
 * every procedure can be read from `appRouter._def.procedures[path]._def.meta`.
 * No transformer: any HTTP client can call the agent API (SPEC 7).
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";
import { z, ZodError } from "zod";
import type { Role } from "@/db/schema";
import { isDatabaseUnavailable } from "@/server/http/database-unavailable";
import { InputHygieneError, inputProblem } from "@/server/http/input-hygiene";
import type { Runtime } from "@/server/runtime";
import type { CapacitySlot } from "@/server/http/capacity";
import { forgetCachedApiKey } from "@/server/services/api-keys";
import { checkAgentKey, INVALID_KEY_MESSAGE } from "@/server/services/agent-key";
import { ApiKeyRevokedError } from "@/server/ingest/api-key-revoked";
import type { Actor } from "@/server/services/audit";
import { ServiceError } from "@/server/services/errors";
import { hasRole, permissionsFor } from "@/server/services/roles";
import { getMembership, getWorkspaceAccess } from "@/server/services/tenancy";
import { describeApiIssues, issuesOfCause } from "@/server/http/error-issues";
import { limitDashboardCalls } from "@/server/services/rate-limit";
import { refuseCrossOriginMutation } from "./same-origin";
import { InputIssuesError } from "@/server/ingest/schema";

export interface SessionUser {
  id: string;
  email: string;
  name: string;
}

export async function createContext(runtime: Runtime, opts: FetchCreateContextFnOptions, capacitySlot: CapacitySlot | null = null) {
  let userPromise: Promise<SessionUser | null> | undefined;
  return {
    runtime,
    db: runtime.database.db,
    req: opts.req,
    resHeaders: opts.resHeaders,
    /** The request's place among the instance's concurrent requests (given back while waiting for a person). */
    capacitySlot,
    /** The signed-in user from the session cookie (memoised per request). */
    getUser: () =>
      (userPromise ??= runtime.auth.api
        .getSession({ headers: opts.req.headers })
        .then((s) => (s ? { id: s.user.id, email: s.user.email, name: s.user.name } : null))
        // A session that cannot be read while the database is down is not a signed-out user: 503, not 401.
        .catch((err) => {
          if (isDatabaseUnavailable(err)) throw err;
          return null;
        })),
  };
}
export type Context = Awaited<ReturnType<typeof createContext>>;

/** Who may call a procedure: anyone, a signed-in user, a member with at least `role`, or an API key of at least `scope`. */
export type ProcedureAccess =
  | { kind: "public" }
  | { kind: "user" }
  | { kind: "workspace"; role: Role }
  | { kind: "org"; role: Role }
  | { kind: "key"; scope: "agent" | "admin" };
export interface ProcedureMeta {
  access: ProcedureAccess;
}

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({
  errorFormatter({ shape, error }) {
    // One shape for every field problem: data.issues[] = { path: string[], message, code }.
    // (Never for internal errors: a failed output check must not show its internals.)
    const issues = error.code === "INTERNAL_SERVER_ERROR" ? undefined : issuesOfCause(error.cause);
    let message = shape.message;
    // zod input errors: tRPC's message is zod's JSON dump; say which fields instead. Other causes
    // (ingest, configuration document, services) already have a message naming their fields.
    if (issues && (error.cause instanceof ZodError || error.cause?.name === "ZodError")) message = "Invalid input: " + describeApiIssues(issues);
    let httpStatus = shape.data.httpStatus;
    if (error.code === "INTERNAL_SERVER_ERROR" && isDatabaseUnavailable(error)) {
      // The handler turns this into 503 + Retry-After (server/agent-api/trpc.ts).
      console.warn("[vigil] database unavailable:", (error.cause as Error | undefined)?.message ?? error.message);
      message = "Database unavailable; retry shortly";
      httpStatus = 503;
    } else if (error.code === "INTERNAL_SERVER_ERROR") {
      // Never leak internals to clients; the server log has the stack.
      console.error("[vigil] internal error:", error.cause ?? error);
      message = "Internal server error";
    }
    return { ...shape, message, data: { ...shape.data, httpStatus, stack: undefined, ...(issues ? { issues } : {}) } };
  },
});

const SERVICE_TO_TRPC = {
  NOT_FOUND: "NOT_FOUND",
  FORBIDDEN: "FORBIDDEN",
  CONFLICT: "CONFLICT",
  BAD_REQUEST: "BAD_REQUEST",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
} as const;

/** Maps service-layer errors to tRPC codes (and thus HTTP statuses). */
const serviceErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof InputIssuesError) {
    throw new TRPCError({ code: "BAD_REQUEST", message: result.error.cause.message, cause: result.error.cause });
  }
  if (!result.ok && result.error.cause instanceof ServiceError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: SERVICE_TO_TRPC[cause.code], message: cause.message, cause });
  }
  return result;
});

/**
 * Every procedure's raw input, before its parser or anything else walks it: a string with a NUL
 * byte or a lone surrogate, or nesting beyond MAX_JSON_DEPTH, is a 400 naming the field.
 */
const inputHygiene = t.middleware(async ({ getRawInput, next }) => {
  let raw: unknown;
  try {
    raw = await getRawInput();
  } catch {
    // Input that is not JSON: the procedure's own parser answers it as before (one without an input ignores it).
    return next();
  }
  const issue = inputProblem(raw);
  if (issue) {
    const cause = new InputHygieneError(issue);
    throw new TRPCError({ code: "BAD_REQUEST", message: cause.message, cause });
  }
  return next();
});

export const router = t.router;
const publicProcedure = t.procedure.meta({ access: { kind: "public" } }).use(inputHygiene).use(serviceErrors);

export const authedProcedure = publicProcedure.meta({ access: { kind: "user" } }).use(async ({ ctx, type, next }) => {
  refuseCrossOriginMutation(ctx.req, type);
  const user = await ctx.getUser();
  if (!user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first" });
  await limitDashboardCalls(user.id, ctx.resHeaders);
  const actor: Actor = { type: "user", id: user.id, label: user.email };
  return next({ ctx: { user, actor } });
});

const roleError = (minRole: Role) =>
  new TRPCError({ code: "FORBIDDEN", message: `This needs the ${minRole} role or higher` });

/** Membership and role are checked once here; a workspace of another organization is a 404. */
export function protectedWorkspaceProcedure(minRole: Role = "viewer") {
  return authedProcedure.meta({ access: { kind: "workspace", role: minRole } }).input(z.object({ workspaceSlug: z.string().min(1).max(63) })).use(async ({ ctx, input, next }) => {
    const access = await getWorkspaceAccess(ctx.db, ctx.user.id, input.workspaceSlug);
    if (!access) throw new TRPCError({ code: "NOT_FOUND", message: "Workspace not found" });
    if (!hasRole(access.role, minRole)) throw roleError(minRole);
    return next({ ctx: { access, workspaceId: access.workspace.id, organizationId: access.organization.id, permissions: permissionsFor(access.role) } });
  });
}

export function protectedOrgProcedure(minRole: Role = "viewer") {
  return authedProcedure.meta({ access: { kind: "org", role: minRole } }).input(z.object({ organizationId: z.string().min(1).max(64) })).use(async ({ ctx, input, next }) => {
    const membership = await getMembership(ctx.db, ctx.user.id, input.organizationId);
    if (!membership) throw new TRPCError({ code: "NOT_FOUND", message: "Organization not found" });
    if (!hasRole(membership.role, minRole)) throw roleError(minRole);
    return next({ ctx: { role: membership.role, organizationId: input.organizationId } });
  });
}

/** The agent's key (fresh or from memory) and rate limit, as every agent route checks them (server/services/agent-key.ts). */
async function agentKey(ctx: Context, cached: boolean) {
  const checked = await checkAgentKey(ctx.db, ctx.req, { cached });
  if (checked.ok) return checked;
  if (checked.status === 401) throw new TRPCError({ code: "UNAUTHORIZED", message: checked.message });
  ctx.resHeaders.set("Retry-After", String(checked.retryAfterSeconds));
  throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: checked.message });
}

/** Agents: `Authorization: Bearer vgl_…`. Missing/unknown/revoked → 401; over the limit → 429 + Retry-After. */
export const apiKeyProcedure = publicProcedure.meta({ access: { kind: "key", scope: "agent" } }).use(async ({ ctx, next }) => {
  const { key } = await agentKey(ctx, false);
  const actor: Actor = { type: "api_key", id: key.keyId, label: key.prefix };
  return next({ ctx: { apiKey: key, actor, workspaceId: key.workspaceId, organizationId: key.organizationId } });
});

/**
 * `apiKeyProcedure` for the hot path: the key may come from the in-memory cache, and then
 * `ctx.recheckApiKeyId` is set — the procedure MUST re-check it in its own round trip (the lean
 * guard.check does; see authenticateApiKeyCached). Use only where that holds.
 */
export const cachedApiKeyProcedure = publicProcedure.meta({ access: { kind: "key", scope: "agent" } }).use(async ({ ctx, next }) => {
  const { key, cached } = await agentKey(ctx, true);
  const actor: Actor = { type: "api_key", id: key.keyId, label: key.prefix };
  const result = await next({
    ctx: { apiKey: key, actor, workspaceId: key.workspaceId, organizationId: key.organizationId, recheckApiKeyId: cached ? key.keyId : null },
  });
  if (!result.ok && result.error.cause instanceof ApiKeyRevokedError) {
    forgetCachedApiKey(ctx.db, key.keyId);
    throw new TRPCError({ code: "UNAUTHORIZED", message: INVALID_KEY_MESSAGE });
  }
  return result;
});

export const adminApiKeyProcedure = apiKeyProcedure.meta({ access: { kind: "key", scope: "admin" } }).use(async ({ ctx, next }) => {
  if (ctx.apiKey.scope !== "admin") throw new TRPCError({ code: "FORBIDDEN", message: "This needs an API key with admin scope" });
  return next();
});
