/**
 * Drives the real HTTP handler (the same one Next.js serves at /api/trpc) with Request objects,
 * against a real database. No mocks: what a test sees is what an agent would see.
 */
import type { Database } from "@/db/client";
import type { Role } from "@/db/schema";
import { member } from "@/db/schema";
import { createRuntime, type Runtime } from "@/server/runtime";
import { handleTrpcRequest } from "@/server/agent-api/trpc";
import { handleTrpcCall, type DirectCall } from "@/server/agent-api/trpc-direct-call";
import { createApiKey } from "@/server/services/api-keys";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { createOrganization, createWorkspace } from "@/server/services/tenancy";

export interface TrpcResponse<T = any> {
  status: number;
  headers: Headers;
  body: { result?: { data: T }; error?: { message: string; code: number; data: { code: string; httpStatus: number; issues?: { path: string[]; message: string; code: string }[] } } };
}

/** A request's parts as scripts/serve.mjs hands them to the fast path. */
export function directCallOf(url: string, headers: Headers, body: string | Uint8Array, signal = new AbortController().signal): DirectCall {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return { pathname: new URL(url).pathname, headers, body: bytes, url, signal };
}

export class TestApp {
  private constructor(
    public readonly runtime: Runtime,
    public readonly database: Database,
  ) {}

  static async create(database: Database): Promise<TestApp> {
    return new TestApp(await createRuntime(database), database);
  }

  get db() {
    return this.database.db;
  }

  async request(method: "GET" | "POST", path: string, opts: { input?: unknown; key?: string; cookie?: string; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<TrpcResponse> {
    const headers = new Headers(opts.headers);
    if (opts.key) headers.set("authorization", `Bearer ${opts.key}`);
    if (opts.cookie) headers.set("cookie", opts.cookie);
    let url = `http://localhost/api/trpc/${path}`;
    let body: BodyInit | undefined;
    if (method === "GET") {
      if (opts.input !== undefined) url += `?input=${encodeURIComponent(JSON.stringify(opts.input))}`;
    } else {
      headers.set("content-type", "application/json");
      body = (opts.rawBody ?? JSON.stringify(opts.input ?? {})) as BodyInit;
    }
    // POSTs take the agent fast path's entry (scripts/serve.mjs): plain mutations answered directly,
    // anything else by the fetch adapter; tests/integration/direct-call.test.ts holds both to one answer.
    const res =
      method === "POST"
        ? await handleTrpcCall(this.runtime, directCallOf(url, headers, body as string | Uint8Array), () => new Request(url, { method, headers, body }))
        : await handleTrpcRequest(new Request(url, { method, headers, body }), this.runtime);
    if (!(res instanceof Response)) return { status: res.status, headers: new Headers(res.headers), body: res.body ? JSON.parse(res.body) : {} };
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : {} };
  }

  mutation(path: string, input: unknown, auth: { key?: string; cookie?: string } = {}) {
    return this.request("POST", path, { input, ...auth });
  }

  query(path: string, input: unknown, auth: { key?: string; cookie?: string } = {}) {
    return this.request("GET", path, { input, ...auth });
  }

  /** Signs a user up through better-auth and returns the session cookie. */
  async signUp(email: string, password = "correct-horse-battery"): Promise<{ userId: string; cookie: string }> {
    const { headers, response } = await this.runtime.auth.api.signUpEmail({
      body: { email, password, name: email.split("@")[0] },
      returnHeaders: true,
    });
    const cookie = headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    return { userId: response.user.id, cookie };
  }

  /** An organization with one workspace and an API key of the given scope. */
  async seedWorkspace(opts: { slug?: string; scope?: "agent" | "admin"; ownerUserId?: string } = {}) {
    const owner = opts.ownerUserId ?? (await this.signUp(`owner-${Math.random().toString(36).slice(2)}@example.com`)).userId;
    const org = await createOrganization(this.db, { name: "Acme", ownerUserId: owner, actor: SYSTEM_ACTOR });
    const ws = await createWorkspace(this.db, { organizationId: org.id, slug: opts.slug ?? `ws-${Math.random().toString(36).slice(2, 10)}`, actor: SYSTEM_ACTOR });
    const { value } = await createApiKey(this.db, { workspaceId: ws.id, organizationId: org.id, name: "test", scope: opts.scope ?? "admin", actor: SYSTEM_ACTOR });
    return { organizationId: org.id, workspaceId: ws.id, slug: ws.slug, key: value, ownerUserId: owner };
  }

  async addMember(organizationId: string, userId: string, role: Role) {
    await this.db.insert(member).values({ organizationId, userId, role });
  }
}
