/**
 * Input hygiene (one check before every procedure's parser, and in the hook and OTLP handlers): a
 * string with a NUL byte or a lone surrogate, anywhere in an input, and JSON nested deeper than
 * MAX_JSON_DEPTH are a 400 naming the field — never a 500 from PostgreSQL (text refuses 0x00, jsonb
 * refuses \u0000 and unpaired surrogates) or from a walk of a 3,000-deep body. Every procedure is
 * read from the router, so a new one is covered without editing this file.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "@/server/trpc/root";
import { MAX_JSON_DEPTH } from "@/server/http/input-hygiene";
import { handleHookRequest, HOOK_CLIS } from "@/server/agent-api/hooks";
import { handleOtlpTraces } from "@/server/agent-api/otlp";
import { useTestApp } from "../support/use-test-app";
import { DATABASE_KINDS } from "../support/databases";

type Def = { type: "query" | "mutation"; inputs?: { _zod?: { def: ZodDef } }[] };
type ZodDef = { type: string; shape?: Record<string, { _zod: { def: ZodDef } }>; innerType?: { _zod: { def: ZodDef } } };
const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: Def }> }).procedures;

const unwrap = (def: ZodDef): ZodDef => (def.innerType && ["optional", "nullable", "default", "readonly"].includes(def.type) ? unwrap(def.innerType._zod.def) : def);

/**
 * Where a string goes in the procedure's input: a string field of its schema (an id where it has one),
 * or for the agent procedures parsed without a zod object, the id the contract names.
 */
function stringField(path: string): string[] {
  if (path === "ingest.events") return ["events", "0", "id"];
  if (path === "guard.check") return ["sessionId"];
  const fields: string[] = [];
  for (const input of procedures[path]._def.inputs ?? []) {
    const def = input._zod ? unwrap(input._zod.def) : null;
    for (const [name, schema] of Object.entries(def?.shape ?? {})) if (unwrap(schema._zod.def).type === "string") fields.push(name);
  }
  const preferred = fields.find((f) => /id$/i.test(f) && f !== "workspaceSlug" && f !== "organizationId") ?? fields.find((f) => f !== "workspaceSlug" && f !== "organizationId") ?? fields[0];
  return [preferred ?? "id"];
}

function inputWith(path: string[], value: unknown, scope: Record<string, string>): Record<string, unknown> {
  const root: Record<string, unknown> = { ...scope };
  if (path[0] === "events") {
    root.events = [{ type: "tool.call", id: value, sessionId: "s", callId: "c", toolName: "bash", args: {}, ts: new Date().toISOString() }];
    return root;
  }
  root[path[0]] = value;
  return root;
}

const nested = (depth: number): unknown => JSON.parse("[".repeat(depth) + "]".repeat(depth));

describe.each(DATABASE_KINDS)("input hygiene (%s)", (kind) => {
  const app = useTestApp(kind);
  let key: string;
  let cookie: string;
  let scope: Record<string, string>;
  beforeAll(async () => {
    const user = await app.signUp(`hygiene-${Math.random().toString(36).slice(2)}@example.com`);
    cookie = user.cookie;
    const seeded = await app.seedWorkspace({ ownerUserId: user.userId });
    key = seeded.key;
    scope = { workspaceSlug: seeded.slug, organizationId: seeded.organizationId };
  });

  const send = (path: string, input: unknown) =>
    procedures[path]._def.type === "query" ? app.request("GET", path, { input, key, cookie }) : app.request("POST", path, { input, key, cookie });

  const cases = [
    { name: "a NUL byte", value: "bad\u0000id", message: /NUL/ },
    { name: "a lone surrogate", value: "bad\ud800id", message: /surrogate/ },
  ];

  it.each(Object.keys(procedures))("%s: a NUL byte or a lone surrogate in a string is a 400 naming the field", async (path) => {
    const field = stringField(path);
    for (const c of cases) {
      const res = await send(path, inputWith(field, c.value, scope));
      expect(res.status, `${path} with ${c.name} in ${field.join(".")}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error!.data.issues).toEqual([{ path: field, message: expect.stringMatching(c.message), code: "custom" }]);
      expect(res.body.error!.message).toContain(field.join("."));
    }
  });

  it.each(Object.keys(procedures))("%s: a 3,000-deep input is a 400 naming the field", async (path) => {
    const field = stringField(path);
    const res = await send(path, inputWith(field, nested(3_000), scope));
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    const issue = res.body.error!.data.issues![0];
    expect(issue.path.slice(0, field.length)).toEqual(field);
    expect(issue.message).toContain(`more than ${MAX_JSON_DEPTH} levels`);
  });

  it("nesting up to the limit passes the check; one level more is refused", async () => {
    const within = await app.mutation("guard.check", { id: "g-depth", sessionId: "s-depth", callId: "c", toolName: "bash", args: { a: nested(MAX_JSON_DEPTH - 2) } }, { key });
    expect(within.status, JSON.stringify(within.body).slice(0, 300)).toBe(200);
    const beyond = await app.mutation("guard.check", { id: "g-depth2", sessionId: "s-depth", callId: "c", toolName: "bash", args: { a: nested(MAX_JSON_DEPTH - 1) } }, { key });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error!.data.issues![0].path.slice(0, 2)).toEqual(["args", "a"]);
  });

  it("a NUL byte in an object key is refused too, and a batch names each call's field", async () => {
    const res = await app.mutation("guard.check", { id: "g-key", sessionId: "s", callId: "c", toolName: "bash", args: { "k\u0000": 1 } }, { key });
    expect(res.status).toBe(400);
    expect(res.body.error!.data.issues![0].path).toEqual(["args", "k\u0000"]);
    const raw = await app.request("POST", "sessions.get,sessions.get?batch=1", { key, rawBody: JSON.stringify({ 0: { sessionId: "ok" }, 1: { sessionId: "x\u0000" } }) });
    expect(raw.status).toBeGreaterThanOrEqual(400);
    expect(raw.status).toBeLessThan(500);
  });

  // Clients send `?input=undefined` to procedures that take none (JSON.stringify(undefined)): the
  // check leaves input that is not JSON to the procedure, which ignores it, as before the check.
  it("a procedure without input still ignores a query input that is not JSON", async () => {
    const res = await app.request("GET", "account.whoami?input=undefined", { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });

  const hook = (cli: string, body: string) =>
    handleHookRequest(new Request(`http://localhost/api/hooks/${cli}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body }), app.runtime, cli as never);

  // A coding agent lets its tool call through when the hook is refused, so a hook never refuses a
  // payload for a character the agent sent: unstorable ones are stored as U+FFFD (fuzz.test.ts).
  it.each(HOOK_CLIS)("hooks (%s): a 3,000-deep payload is a 400 naming the field; NUL and lone surrogates are answered", async (cli) => {
    const base = { hook_event_name: "PreToolUse", session_id: "hyg-s", tool_name: "Bash", tool_input: { command: "ls" }, cwd: "/tmp" };
    const deep = await hook(cli, JSON.stringify({ ...base, tool_input: nested(3_000) }));
    expect(deep.status).toBe(400);
    const answer = (await deep.json()) as { error: string; issues: { path: string[] }[] };
    expect(answer.issues[0].path.slice(0, 1)).toEqual(["tool_input"]);
    expect(answer.error).toContain("tool_input");
    for (const body of [JSON.stringify({ ...base, session_id: "s\u0000" }), JSON.stringify({ ...base, tool_input: { command: "ls \ud83d" } })]) {
      expect((await hook(cli, body)).status).toBe(200);
    }
  });

  const otlpSpan = (name: string, attributes: unknown[] = []) => ({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "hygiene" } }] },
        scopeSpans: [{ scope: { name: "t" }, spans: [{ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", name, kind: 1, startTimeUnixNano: "1700000000000000000", endTimeUnixNano: "1700000000100000000", attributes }] }],
      },
    ],
  });
  const otlp = (body: BodyInit, contentType: string) =>
    handleOtlpTraces(new Request("http://localhost/api/otlp/v1/traces", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": contentType }, body }), app.runtime);

  // An exporter does not retry a 400, so one unstorable character would drop its whole batch: OTLP
  // stores it as U+FFFD (fuzz.test.ts) and refuses only input nested beyond the limit.
  it("OTLP (JSON): a 3,000-deep export is a 400 naming the field", async () => {
    const spanPath = "resourceSpans.0.scopeSpans.0.spans.0";
    const res = await otlp(JSON.stringify(otlpSpan("ok", [{ key: "deep", value: { arrayValue: { values: nested(3_000) } } }])), "application/json");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain(`${spanPath}.attributes.0.value.arrayValue.values`);
    expect((await otlp(JSON.stringify(otlpSpan("a\u0000b")), "application/json")).status).toBe(200);
  });
});
