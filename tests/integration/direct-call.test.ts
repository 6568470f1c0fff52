/**
 * The agent fast path answers plain tRPC mutations without the fetch adapter
 * (server/trpc/direct-call.ts); its answers must be the adapter's. Each case runs twice, in two
 * workspaces with the same history: once through the fast path's entry (`handleTrpcCall`, as
 * scripts/serve.mjs calls it) and once through the adapter alone (`handleTrpcRequest`, as Next's
 * route serves it). Status, headers and body must be equal, and the fast path
 * must have answered directly exactly where it should, handing everything else to the adapter.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import { type TestApp, directCallOf } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { sql } from "drizzle-orm";
import { handleTrpcCall } from "@/server/agent-api/trpc-direct-call";
import { handleTrpcRequest } from "@/server/agent-api/trpc";

interface Case {
  name: string;
  /** Whether the fast path answers it itself (false: handed to the adapter). */
  direct: boolean;
  path: string;
  /** The raw body; `tag` keeps ids apart between cases (the two workspaces get the same ids). */
  body: (tag: string) => string;
  headers?: Record<string, string>;
  auth?: "key" | "none" | "bogus";
  query?: string;
}

/** One timestamp for both runs of a case, so their bodies are the same bytes. */
const NOW = Date.now() - 60_000;

/** Approval ids are random per workspace: compared by presence, not value. */
function normalised(text: string): unknown {
  return JSON.parse(text, (key, value) => (key === "approvalId" && typeof value === "string" ? "<approval id>" : value));
}

const guard = (tag: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: `${tag}-g`, sessionId: `${tag}-s`, callId: `${tag}-c`, toolName: "Read", args: { file_path: "/repo/a.ts" }, ...extra });

const CASES: Case[] = [
  { name: "guard.check: allow", direct: true, path: "guard.check", body: (t) => guard(`${t}-1`) },
  { name: "guard.check: the same id again (idempotent)", direct: true, path: "guard.check", body: (t) => guard(`${t}-1`) },
  {
    name: "ingest.events: a security failure blocks the tool",
    direct: true,
    path: "ingest.events",
    body: (t) => JSON.stringify({ events: [{ type: "tool.result", id: `${t}-b1`, sessionId: `${t}-bs`, callId: "cb", toolName: "bash", args: { command: "sudo rm -rf /" }, success: false, error: "Permission denied", ts: NOW }] }),
  },
  { name: "guard.check: the blocked tool → ask, with an approval", direct: true, path: "guard.check", body: (t) => guard(`${t}-2`, { sessionId: `${t}-bs`, toolName: "bash", args: { command: "ls -la" } }) },
  { name: "guard.check: missing field → 400 naming it", direct: true, path: "guard.check", body: (t) => JSON.stringify({ id: `${t}-3`, sessionId: "s" }) },
  { name: "guard.check: wrong types → 400", direct: true, path: "guard.check", body: () => JSON.stringify({ id: 7, sessionId: [], toolName: "", args: "x" }) },
  { name: "guard.check: unknown field → 400", direct: true, path: "guard.check", body: (t) => guard(`${t}-4`, { surprise: true }) },
  { name: "guard.check: JSON that is not an object → 400", direct: true, path: "guard.check", body: () => "[1,2,3]" },
  { name: "guard.check: no API key → 401", direct: true, path: "guard.check", auth: "none", body: (t) => guard(`${t}-5`) },
  { name: "guard.check: unknown API key → 401", direct: true, path: "guard.check", auth: "bogus", body: (t) => guard(`${t}-6`) },
  {
    name: "ingest.events: a batch",
    direct: true,
    path: "ingest.events",
    body: (t) =>
      JSON.stringify({
        events: [
          { type: "session.start", id: `${t}-i1`, sessionId: `${t}-is`, agent: "a", model: "m", ts: NOW },
          { type: "tool.result", id: `${t}-i2`, sessionId: `${t}-is`, callId: "c1", toolName: "http_request", args: { url: "https://x.example.com/a" }, success: false, error: "503", httpStatus: 503, ts: NOW + 1000 },
        ],
      }),
  },
  { name: "ingest.events: one bad event → 400, nothing written", direct: true, path: "ingest.events", body: (t) => JSON.stringify({ events: [{ type: "tool.result", id: `${t}-i3`, sessionId: "s", toolName: "x" }] }) },
  { name: "config.put: an agent-scope key → 403", direct: true, path: "config.put", body: () => JSON.stringify({ rules: [] }) },
  // Handed to the adapter:
  { name: "a batch (?batch=1)", direct: false, path: "guard.check", query: "?batch=1", body: (t) => JSON.stringify({ 0: JSON.parse(guard(`${t}-7`)) }) },
  { name: "a query procedure by POST → 405", direct: false, path: "reliability.status", body: () => "{}" },
  { name: "an unknown procedure → 404", direct: false, path: "guard.nope", body: () => "{}" },
  { name: "a prototype name → 404", direct: false, path: "constructor", body: () => "{}" },
  { name: "malformed JSON → 400", direct: false, path: "guard.check", body: () => "{not json" },
  { name: "an empty body", direct: false, path: "guard.check", body: () => "" },
  { name: "no JSON content type", direct: false, path: "guard.check", headers: { "content-type": "text/plain" }, body: (t) => guard(`${t}-8`) },
  { name: "a streaming trpc-accept", direct: false, path: "guard.check", headers: { "trpc-accept": "application/jsonl" }, body: (t) => guard(`${t}-9`) },
  { name: "a body over 1 MiB → 413", direct: false, path: "ingest.events", body: () => JSON.stringify({ events: [], pad: "x".repeat(1024 * 1024) }) },
];

describe.each(DATABASE_KINDS)("direct tRPC calls on %s", (kind) => {
  let viaFastPath: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let viaAdapter: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const previousRateLimit = process.env.VIGIL_RATE_LIMIT_PER_MINUTE;

  const app = useTestApp(kind);
  beforeAll(async () => {
    viaFastPath = await app.seedWorkspace({ scope: "agent" });
    viaAdapter = await app.seedWorkspace({ scope: "agent" });
  });
  afterEach(() => {
    if (previousRateLimit === undefined) delete process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
    else process.env.VIGIL_RATE_LIMIT_PER_MINUTE = previousRateLimit;
  });

  function parts(c: Case, key: string, tag: string) {
    const url = `http://localhost/api/trpc/${c.path}${c.query ?? ""}`;
    const headers = new Headers({ "content-type": "application/json", ...c.headers });
    if (c.auth === "bogus") headers.set("authorization", "Bearer vgl_not_a_key_0000000000000000");
    else if (c.auth !== "none") headers.set("authorization", `Bearer ${key}`);
    return { url, headers, body: c.body(tag) };
  }

  async function answerOf(res: Response | { status: number; headers: [string, string][]; body: string }) {
    if (res instanceof Response) return { status: res.status, headers: [...res.headers.entries()].sort(), text: await res.text() };
    return { status: res.status, headers: [...new Headers(res.headers).entries()].sort(), text: res.body };
  }

  async function both(c: Case, tag: string) {
    const a = parts(c, viaFastPath.key, tag);
    const fast = await handleTrpcCall(app.runtime, directCallOf(a.url, a.headers, a.body), () => new Request(a.url, { method: "POST", headers: a.headers, body: a.body }));
    const b = parts(c, viaAdapter.key, tag);
    const adapter = await handleTrpcRequest(new Request(b.url, { method: "POST", headers: b.headers, body: b.body }), app.runtime);
    return { answeredDirectly: !(fast instanceof Response), fast: await answerOf(fast), adapter: await answerOf(adapter) };
  }

  it.each(CASES)("$name: the adapter's answer", async (c) => {
    const { answeredDirectly, fast, adapter } = await both(c, "t");
    expect(answeredDirectly).toBe(c.direct);
    expect(fast.status).toBe(adapter.status);
    expect(fast.headers).toEqual(adapter.headers);
    expect(normalised(fast.text)).toEqual(normalised(adapter.text));
  });

  it("over the rate limit: 429 with Retry-After on both", async () => {
    process.env.VIGIL_RATE_LIMIT_PER_MINUTE = "2";
    const c: Case = { name: "rate", direct: true, path: "guard.check", body: (t) => guard(t) };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await both(c, `rate-${i}`));
    expect(answers.map((a) => a.fast.status)).toEqual([200, 200, 429]);
    const last = answers[2];
    expect(last.answeredDirectly).toBe(true);
    expect(last.fast.headers).toEqual(last.adapter.headers);
    expect(new Headers(last.fast.headers).get("retry-after")).toMatch(/^\d+$/);
    expect(JSON.parse(last.fast.text)).toEqual(JSON.parse(last.adapter.text));
  });

  it("both workspaces hold the same rows: the fast path wrote what the adapter wrote, and nothing for rejected calls", async () => {
    const count = async (table: string, workspaceId: string) => {
      const res = (await app.db.execute(sql`select count(*)::int as n from ${sql.identifier(table)} where workspace_id = ${workspaceId}`)) as unknown;
      const rows = (Array.isArray(res) ? res : (res as { rows: unknown[] }).rows) as { n: number }[];
      return Number(rows[0].n);
    };
    for (const table of ["event", "agent_session", "key_state", "failure"]) {
      expect(await count(table, viaFastPath.workspaceId), table).toBe(await count(table, viaAdapter.workspaceId));
    }
  });
});
