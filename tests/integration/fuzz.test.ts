/**
 * Fuzzing the agent-facing endpoints (issue 13, deliverable 4): generated and mutated requests
 * across every agent procedure of the tRPC API, OTLP trace export (JSON and protobuf, gzip) and the
 * coding-agent hook endpoints, all through the real HTTP handlers against a real database.
 *  - No answer is a 5xx, and nothing is logged as an internal error (the hook endpoints answer an
 *    empty 200 when they cannot apply a payload, so a crash there shows only in the log).
 *  - A rejected request (4xx) writes nothing: the row count of every table is unchanged.
 * Valid starting points come from the real producers: OTLP bodies from the serializers the
 * OpenTelemetry exporters use, hook bodies from the captured CLI requests (tests/fixtures/agent-hooks).
 * fast-check drives it with a fixed seed (VIGIL_FUZZ_SEED overrides it); a failure prints the seed
 * and the shrunk request. Prints requests, a status histogram and violations per endpoint family.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import fs from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { DATABASE_KINDS, createTestDatabase, type DatabaseKind } from "../support/databases";
import { TestApp, directCallOf } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { appRouter } from "@/server/trpc/root";
import type { ProcedureMeta } from "@/server/trpc/init";
import { handleTrpcRequest } from "@/server/agent-api/trpc";
import { handleTrpcCall } from "@/server/agent-api/trpc-direct-call";
import { handleOtlpTraces } from "@/server/agent-api/otlp";
import { handleHookRequest, HOOK_CLIS } from "@/server/agent-api/hooks";
import type { CliName } from "@/server/hooks/shared";

const SEED = Number(process.env.VIGIL_FUZZ_SEED ?? 20261113);
/** Requests per endpoint family: the full run on PGlite, a sample on PostgreSQL. */
const FULL_RUNS: Record<DatabaseKind, { agent: number; otlp: number; hooks: number }> = {
  pglite: { agent: 4000, otlp: 3000, hooks: 3000 },
  postgres: { agent: 600, otlp: 450, hooks: 450 },
  citus: { agent: 300, otlp: 200, hooks: 200 },
};
/** VIGIL_FUZZ_SCALE (default 1) multiplies every count, e.g. 0.1 while developing. */
const SCALE = Number(process.env.VIGIL_FUZZ_SCALE ?? 1);
const RUNS = Object.fromEntries(
  Object.entries(FULL_RUNS).map(([k, r]) => [k, { agent: Math.ceil(r.agent * SCALE), otlp: Math.ceil(r.otlp * SCALE), hooks: Math.ceil(r.hooks * SCALE) }]),
) as typeof FULL_RUNS;
const FUZZ_TIMEOUT_MS = 600_000;

// --- Generic JSON mutation ----------------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];

/** Every node's path (root included), at most `limit`. */
function nodePaths(v: unknown, limit = 300): Path[] {
  const out: Path[] = [];
  const walk = (x: unknown, p: Path) => {
    if (out.length >= limit) return;
    out.push(p);
    if (Array.isArray(x)) x.forEach((y, i) => walk(y, [...p, i]));
    else if (x && typeof x === "object") for (const [k, y] of Object.entries(x)) walk(y, [...p, k]);
  };
  walk(v, []);
  return out;
}

interface Mutation {
  op: "replace" | "delete" | "add" | "wrap" | "duplicate" | "whole";
  pick: number;
  key: string;
  value: unknown;
}

/** Values that break assumptions: NUL, lone surrogates, huge and tiny numbers, deep and long things. */
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "", " ", "\u0000", "a\u0000b", "\ud800", "x\udfffy", "\u202e", "💥".repeat(40), "a".repeat(300), "x".repeat(70_000),
    "1e309", "-1", "NaN", "Infinity", "__proto__", "constructor", "<script>window.__pwned=1</script>", "../../etc/passwd",
    "'; drop table event; --", "%00", "vgl_", "2026-13-45T99:99:99Z", "2026-11-23T10:00:00Z", "0001-01-01T00:00:00Z",
  ),
  fc.constantFrom(0, -1, -0, 0.5, 1.5, 2 ** 31, 2 ** 53 + 1, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 1e-320, 599, 600, 99, 121, 120),
  fc.constantFrom(null, true, false, [], {}, [[[]]], { "": null }, JSON.parse('{"__proto__": {"polluted": 1}}')),
  fc.integer({ min: -8.64e15, max: 8.64e15 }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 6 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 5 }),
);

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom("replace", "replace", "replace", "delete", "delete", "add", "wrap", "duplicate", "whole"),
  pick: fc.nat(),
  key: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("type", "id", "sessionId", "args", "__proto__", "constructor", "settings", "extra")),
  value: nasty,
});

function clone<T>(v: T): T {
  return v === undefined ? v : JSON.parse(JSON.stringify(v));
}

function setAt(root: any, p: Path, fn: (parent: any, key: string | number) => void): any {
  if (p.length === 0) return root;
  let parent = root;
  for (const k of p.slice(0, -1)) parent = parent[k];
  fn(parent, p[p.length - 1]);
  return root;
}

/** Applies one mutation to a copy of `base` (a JSON value). */
function mutate(base: unknown, m: Mutation): unknown {
  const v = clone(base) as any;
  const paths = nodePaths(v);
  const p = paths[m.pick % paths.length];
  if (m.op === "whole") return m.value;
  if (p.length === 0) {
    if (m.op === "wrap") return [v];
    if (m.op === "add" && v && typeof v === "object" && !Array.isArray(v)) return { ...v, [m.key]: m.value };
    return m.op === "delete" ? undefined : m.value;
  }
  return setAt(v, p, (parent, k) => {
    if (m.op === "replace") parent[k] = m.value;
    else if (m.op === "delete") Array.isArray(parent) ? parent.splice(Number(k), 1) : delete parent[k];
    else if (m.op === "wrap") parent[k] = [parent[k]];
    else if (m.op === "duplicate") {
      if (Array.isArray(parent)) parent.push(clone(parent[k as number]));
      else parent[`${String(k)}_`] = clone(parent[k]);
    }
    else if (m.op === "add") {
      const target = parent[k];
      if (target && typeof target === "object" && !Array.isArray(target)) target[m.key] = m.value;
      else if (Array.isArray(target)) target.push(m.value);
      else parent[m.key] = m.value;
    }
  });
}

/** Byte-level damage to a serialized body: truncation, flipped and inserted bytes, garbage. */
interface ByteDamage {
  kind: "truncate" | "flip" | "insert" | "garbage" | "empty" | "repeat";
  at: number;
  byte: number;
  garbage: Uint8Array;
}
const byteDamageArb: fc.Arbitrary<ByteDamage> = fc.record({
  kind: fc.constantFrom("truncate", "flip", "flip", "insert", "garbage", "empty", "repeat"),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
  garbage: fc.uint8Array({ maxLength: 64 }),
});

function damage(bytes: Uint8Array, d: ByteDamage): Uint8Array {
  const at = bytes.length ? d.at % bytes.length : 0;
  switch (d.kind) {
    case "truncate":
      return bytes.slice(0, at);
    case "flip": {
      const out = bytes.slice();
      if (out.length) out[at] ^= d.byte || 0x80;
      return out;
    }
    case "insert":
      return new Uint8Array([...bytes.slice(0, at), d.byte, ...d.garbage.slice(0, 4), ...bytes.slice(at)]);
    case "garbage":
      return d.garbage;
    case "empty":
      return new Uint8Array();
    case "repeat":
      return new Uint8Array([...bytes, ...bytes]);
  }
}

const utf8 = (s: string) => new TextEncoder().encode(s);

// --- Row counts (every table) ---------------------------------------------------------------------

const rowsOf = (res: unknown): Record<string, unknown>[] => (Array.isArray(res) ? res : (res as { rows: Record<string, unknown>[] }).rows);

async function rowCounter(app: TestApp): Promise<() => Promise<Record<string, number>>> {
  const tables = rowsOf(
    await app.db.execute(sql`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`),
  ).map((r) => String(r.name));
  const query = sql.join(tables.map((t) => sql`select ${t} as name, count(*)::int as n from ${sql.identifier(t)}`), sql` union all `);
  return async () => Object.fromEntries(rowsOf(await app.db.execute(query)).map((r) => [String(r.name), Number(r.n)]));
}

/**
 * The next transaction id. Only a transaction that writes is given one, so while it stands still
 * nothing was inserted, updated or deleted: the row counts need no recount (a cheap check first).
 */
async function nextTransactionId(app: TestApp): Promise<string> {
  return String(rowsOf(await app.db.execute(sql`select pg_snapshot_xmax(pg_current_snapshot())::text as x`))[0].x);
}

// --- The run: one request at a time, checked and tallied -------------------------------------------

interface Tally {
  requests: number;
  /** Time spent in the handlers and in counting rows, ms. */
  sendMs: number;
  countMs: number;
  statuses: Record<number, number>;
  violations: string[];
}

interface Sent {
  status: number;
  body: string;
}

class FuzzRun {
  readonly tally: Tally = { requests: 0, sendMs: 0, countMs: 0, statuses: {}, violations: [] };
  private counts: Record<string, number> | null = null;
  private xid: string | null = null;
  constructor(
    private readonly count: () => Promise<Record<string, number>>,
    private readonly nextXid: () => Promise<string>,
    private readonly internalErrors: () => number,
  ) {}

  /** Sends one request, records its status; throws (so fast-check reports seed and case) on a violation. */
  async check(describeRequest: () => string, send: () => Promise<Sent>) {
    const c0 = performance.now();
    const xidBefore = await this.nextXid();
    // Counts are taken again only after something was written (see nextTransactionId).
    if (this.counts === null || this.xid !== xidBefore) this.counts = await this.count();
    this.xid = xidBefore;
    const errorsBefore = this.internalErrors();
    const t0 = performance.now();
    const res = await send();
    const t1 = performance.now();
    const xidAfter = await this.nextXid();
    const wroteNothing = xidAfter === xidBefore;
    const rejected = res.status >= 400 && res.status < 500;
    const after = wroteNothing ? this.counts : rejected ? await this.count() : null;
    this.tally.sendMs += t1 - t0;
    this.tally.countMs += t0 - c0 + (performance.now() - t1);
    this.tally.requests++;
    this.tally.statuses[res.status] = (this.tally.statuses[res.status] ?? 0) + 1;
    const problems: string[] = [];
    if (res.status >= 500) problems.push(`status ${res.status}: ${res.body.slice(0, 300)}`);
    if (this.internalErrors() > errorsBefore) problems.push(`internal error logged (answered ${res.status})`);
    if (rejected && after) {
      const written = Object.keys(after).filter((t) => after[t] !== this.counts![t]);
      if (written.length) problems.push(`rejected with ${res.status} but wrote ${written.map((t) => `${t} ${this.counts![t]}→${after[t]}`).join(", ")}`);
    }
    this.counts = after;
    this.xid = xidAfter;
    if (problems.length) {
      const v = `${describeRequest().slice(0, 600)} → ${problems.join("; ")}`;
      this.tally.violations.push(v);
      throw new Error(v);
    }
  }

  print(label: string) {
    const hist = Object.entries(this.tally.statuses).sort(([a], [b]) => Number(a) - Number(b)).map(([s, n]) => `${s}:${n}`).join(" ");
    console.log(`[fuzz] ${label}: ${this.tally.requests} requests, statuses {${hist}}, ${this.tally.violations.length} violations (seed ${SEED}; ${Math.round(this.tally.sendMs / 1000)}s in handlers, ${Math.round(this.tally.countMs / 1000)}s counting rows)`);
  }
}

// --- Agent API ----------------------------------------------------------------------------------

type Auth = "admin" | "agent" | "none" | "unknown" | "malformed";
const authArb: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 40, arbitrary: fc.constant("admin" as const) },
  { weight: 2, arbitrary: fc.constantFrom("agent" as const, "none" as const, "unknown" as const, "malformed" as const) },
);

const SESSIONS = ["fz-s1", "fz-s2", "fz-s3", "fz-s4"];
const TOOLS = ["bash", "http_request", "read_file", "mcp__github__create_issue", "write_file"];
const toolArgs = (tool: string) =>
  tool === "bash"
    ? fc.record({ command: fc.constantFrom("ls", "ls -la /tmp", "rm -rf /", "curl https://x.example/api", "sudo reboot") })
    : tool === "http_request"
      ? fc.record({ url: fc.constantFrom("https://api.example.com/v1/users", "https://api.example.com/v2/x", "http://10.0.0.1/", "not a url"), method: fc.constantFrom("GET", "POST") })
      : tool.endsWith("_file")
        ? fc.record({ path: fc.constantFrom("/etc/passwd", "src/index.ts", "../x", "") })
        : fc.record({ title: fc.string({ maxLength: 20 }), token: fc.constant("ghp_abcdefghijklmnopqrstuvwxyz0123456789") });

const toolCallArb = fc.constantFrom(...TOOLS).chain((toolName) => fc.record({ toolName: fc.constant(toolName), args: toolArgs(toolName) }));

const eventArb: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    sessionId: fc.constantFrom(...SESSIONS),
    kind: fc.constantFrom("session.start", "session.end", "turn.start", "tool.call", "tool.result", "tool.result", "model.text", "user.message", "permission.resolved"),
    tool: toolCallArb,
    success: fc.boolean(),
    httpStatus: fc.constantFrom(200, 404, 429, 500, 503),
    text: fc.constantFrom("Let me try that again.", "I will now run the tests.", "", "Done."),
    turnIndex: fc.nat({ max: 50 }),
    model: fc.constantFrom("gpt-4o", "claude-sonnet-4", "gemini-2.5-pro"),
    minutesAgo: fc.nat({ max: 120 }),
  })
  .map((r) => {
    const base = { id: uid("fz"), sessionId: r.sessionId, ts: new Date(Date.now() - r.minutesAgo * 60_000).toISOString(), model: r.model };
    switch (r.kind) {
      case "session.start":
        return { ...base, type: r.kind, agent: "fuzzer", settings: { nudgeLevel: "gentle" } };
      case "session.end":
        return { ...base, type: r.kind };
      case "turn.start":
        return { ...base, type: r.kind, turnIndex: r.turnIndex };
      case "tool.call":
        return { ...base, type: r.kind, callId: uid("c"), ...r.tool, turnIndex: r.turnIndex };
      case "tool.result":
        return { ...base, type: r.kind, callId: uid("c"), ...r.tool, success: r.success, ...(r.success ? { result: { ok: true } } : { error: "upstream failed", httpStatus: r.httpStatus }) };
      case "model.text":
        return { ...base, type: r.kind, text: r.text, turnIndex: r.turnIndex };
      case "user.message":
        return { ...base, type: r.kind, text: "please continue, my password is hunter2" };
      default:
        return { ...base, type: r.kind, callId: uid("c"), toolName: r.tool.toolName, granted: r.success, method: "user" };
    }
  });

const configDocArb = fc.record({
  default_rule: fc.record({ count_threshold: fc.integer({ min: 1, max: 10 }), window_seconds: fc.integer({ min: 60, max: 7200 }), success_count_to_recover: fc.integer({ min: 1, max: 5 }) }),
  settings: fc.record({ nudge_level: fc.constantFrom("off", "gentle", "direct", "aggressive"), recovery_mode: fc.constantFrom("auto", "ask"), blocked_decision: fc.constantFrom("deny", "ask") }),
  tool_rules: fc.constant({ bash: { block_threshold: 5 } }),
  retention_days: fc.integer({ min: 1, max: 90 }),
});

/** A valid input for each agent procedure (the pools name real approvals, keys and sessions). */
function agentInputArb(procedure: string, pools: { approvals: string[]; failureKeys: string[] }): fc.Arbitrary<unknown> {
  const session = fc.constantFrom(...SESSIONS);
  switch (procedure) {
    case "ingest.events":
      return fc.array(eventArb, { minLength: 1, maxLength: 5 }).map((events) => ({ events }));
    case "guard.check":
      return fc.record({ sessionId: session, tool: toolCallArb, turnIndex: fc.nat({ max: 50 }) }).map((r) => ({ id: uid("g"), sessionId: r.sessionId, callId: uid("c"), ...r.tool, turnIndex: r.turnIndex, waitForApprovalSeconds: 0 }));
    case "reliability.status":
      return fc.record({ toolName: fc.constantFrom(...TOOLS), includeHistory: fc.boolean() }, { requiredKeys: [] });
    case "config.get":
    case "account.whoami":
      return fc.constant(undefined);
    case "config.put":
      return configDocArb;
    case "approvals.get":
      return fc.record({ approvalId: fc.constantFrom(...pools.approvals) });
    case "approvals.list":
      return fc.record({ status: fc.constantFrom("pending", "approved", "denied") }, { requiredKeys: [] });
    case "approvals.resolve":
      return fc.record({ approvalId: fc.constantFrom(...pools.approvals), decision: fc.constantFrom("approve", "deny"), comment: fc.constantFrom("ok", "use v2"), scope: fc.constantFrom("once", "session") }, { requiredKeys: ["approvalId", "decision"] });
    case "keys.reset":
      return fc.oneof(fc.record({ failureKey: fc.constantFrom(...pools.failureKeys) }), fc.constant({ all: true }));
    case "sessions.get":
      return fc.record({ sessionId: session });
    case "sessions.setSettings":
      return fc.record({ sessionId: session, settings: fc.record({ nudgeLevel: fc.constantFrom("off", "gentle", null), recoveryMode: fc.constantFrom("auto", "ask") }, { requiredKeys: [] }) });
    case "sessions.resume":
      return fc.record({ sessionId: session, guidance: fc.constantFrom("try the v2 endpoint", "") }, { requiredKeys: ["sessionId"] });
    case "sessions.pause":
      return fc.record({ sessionId: session, reason: fc.constantFrom("stop now", "deploy freeze") });
    case "sessions.message":
      return fc.record({ sessionId: session, text: fc.constantFrom("use the v2 endpoint", "stop and summarize") });
    case "agents.pause":
      return fc.record({ agent: fc.constantFrom("fuzzer", "crawler"), reason: fc.constantFrom("stop now", "deploy freeze") });
    case "agents.resume":
      return fc.record({ agent: fc.constantFrom("fuzzer", "crawler"), guidance: fc.constantFrom("carry on", "") }, { requiredKeys: ["agent"] });
    case "workspace.holds":
    case "models.list":
      return fc.constant(undefined);
    case "workspace.pause":
      return fc.record({ reason: fc.constantFrom("incident", "deploy freeze") });
    case "workspace.resume":
      return fc.record({ guidance: fc.constantFrom("carry on", "") }, { requiredKeys: [] });
    case "keys.setState":
      return fc.record({ failureKey: fc.constantFrom(...pools.failureKeys), state: fc.constantFrom("escalated", "blocked"), reason: fc.constantFrom("by hand", "incident") });
    case "keys.requestReset":
      return fc.record({ failureKey: fc.constantFrom(...pools.failureKeys), reason: fc.constantFrom("fixed upstream", "please") });
    case "policies.test":
      return fc.record({ toolName: fc.constantFrom(...TOOLS, "Bash"), args: fc.constantFrom({ command: "rm -rf ~" }, { command: "ls" }, { file_path: "/p/.env" }) });
    case "patterns.summary":
      return fc.record({ range: fc.constantFrom("1h", "24h", "7d", "all"), model: fc.constantFrom("gpt-4o", "unknown") }, { requiredKeys: [] });
    case "failures.groups":
      return fc.record({ range: fc.constantFrom("1h", "24h", "7d", "all"), toolName: fc.constantFrom(...TOOLS) }, { requiredKeys: [] });
    default:
      throw new Error(`no fuzz input generator for agent procedure ${procedure}: add one to agentInputArb`);
  }
}

/** Agent procedures: those an API key calls (SPEC 7), i.e. every routed procedure outside the dashboard routers. */
const procedureTypes = (appRouter._def as unknown as { procedures: Record<string, { _def: { type: string; meta?: ProcedureMeta } }> }).procedures;
/** Agent procedures: those whose declared access is an API key (server/trpc/init.ts). */
const AGENT_PROCEDURES = Object.keys(procedureTypes).filter((p) => procedureTypes[p]._def.meta?.access.kind === "key");

/** guard.check may hold a request for a person's decision: waits are shortened so the run stays bounded. */
function boundWaits(input: unknown): unknown {
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const w = (input as Record<string, unknown>).waitForApprovalSeconds;
    if (typeof w === "number" && w > 0.02 && w <= 120) return { ...input, waitForApprovalSeconds: 0.02 };
  }
  return input;
}

// --- OTLP -----------------------------------------------------------------------------------------

const hex = (n: number, seed: number) => {
  let s = "";
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n * 2; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += (x >>> 16).toString(16).slice(-1);
  }
  return s;
};
const hr = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];

type Attr = string | number | boolean | string[];
interface SpanSeed {
  name: string;
  attributes: Record<string, Attr>;
  error: boolean;
  msAgo: number;
  durationMs: number;
}

const attrValue: fc.Arbitrary<Attr> = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.boolean(), fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }));
const spanSeedArb: fc.Arbitrary<SpanSeed> = fc
  .record({
    op: fc.constantFrom("execute_tool", "chat", "invoke_agent", "ai.toolCall", "other"),
    tool: toolCallArb,
    conversation: fc.constantFrom("fz-conv-1", "fz-conv-2", "fz-conv-3"),
    extra: fc.dictionary(fc.constantFrom("gen_ai.usage.input_tokens", "gen_ai.response.model", "http.status_code", "error.type", "session.id", "gen_ai.agent.name"), attrValue, { maxKeys: 3 }),
    error: fc.boolean(),
    msAgo: fc.integer({ min: 0, max: 3_600_000 }),
    durationMs: fc.integer({ min: 0, max: 60_000 }),
  })
  .map((r): SpanSeed => {
    const conv = { "gen_ai.conversation.id": r.conversation };
    const attributes: Record<string, Attr> =
      r.op === "execute_tool"
        ? { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": r.tool.toolName, "gen_ai.tool.call.id": `call_${r.msAgo}`, "gen_ai.tool.call.arguments": JSON.stringify(r.tool.args), ...conv }
        : r.op === "chat"
          ? { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "Trying again." }] }]), ...conv }
          : r.op === "invoke_agent"
            ? { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "fuzzer", ...conv }
            : r.op === "ai.toolCall"
              ? { "ai.toolCall.name": r.tool.toolName, "ai.toolCall.id": `toolu_${r.msAgo}`, "ai.toolCall.args": JSON.stringify(r.tool.args), "session.id": r.conversation }
              : { "http.method": "GET" };
    const name = r.op === "execute_tool" ? `execute_tool ${r.tool.toolName}` : r.op === "chat" ? "chat gpt-4o" : r.op === "invoke_agent" ? "invoke_agent fuzzer" : r.op;
    return { name, attributes: { ...attributes, ...r.extra }, error: r.error, msAgo: r.msAgo, durationMs: r.durationMs };
  });

/** ReadableSpans (what the SDK hands an exporter) for one trace, the last one its root. */
function readableSpans(seeds: SpanSeed[], traceSeed: number) {
  const traceId = hex(16, traceSeed);
  const rootId = hex(8, traceSeed + 1);
  const now = Date.now();
  return seeds.map((s, i) => {
    const isRoot = i === seeds.length - 1;
    const spanId = isRoot ? rootId : hex(8, traceSeed * 31 + i + 2);
    const start = now - s.msAgo;
    return {
      name: s.name,
      kind: s.name.startsWith("chat") ? 2 : 0,
      spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
      parentSpanContext: isRoot ? undefined : { traceId, spanId: rootId, traceFlags: 1, isRemote: false },
      startTime: hr(start),
      endTime: hr(start + s.durationMs),
      duration: hr(s.durationMs),
      ended: true,
      status: s.error ? { code: 2, message: "503 Service Unavailable" } : { code: 0 },
      attributes: s.attributes,
      links: [],
      events: s.error ? [{ name: "exception", time: hr(start + s.durationMs), attributes: { "exception.message": "boom" }, droppedAttributesCount: 0 }] : [],
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
      resource: { attributes: { "service.name": "fuzz-agent" }, schemaUrl: undefined },
      instrumentationScope: { name: "fuzz", version: "1.0.0" },
    };
  });
}

interface OtlpCase {
  format: "json" | "protobuf";
  seeds: SpanSeed[];
  traceSeed: number;
  change: { kind: "none" } | { kind: "json"; mutation: Mutation } | { kind: "bytes"; damage: ByteDamage };
  encoding: "identity" | "gzip" | "gzip-damaged" | "claims-gzip" | "deflate" | "br";
  contentType: "declared" | "charset" | "swapped" | "text/plain" | "missing";
  auth: Auth;
}

const otlpCaseArb: fc.Arbitrary<OtlpCase> = fc.record({
  format: fc.constantFrom("json", "protobuf"),
  seeds: fc.array(spanSeedArb, { minLength: 1, maxLength: 5 }),
  traceSeed: fc.nat(),
  change: fc.oneof(
    { weight: 2, arbitrary: fc.constant({ kind: "none" as const }) },
    { weight: 5, arbitrary: mutationArb.map((mutation) => ({ kind: "json" as const, mutation })) },
    { weight: 3, arbitrary: byteDamageArb.map((damage) => ({ kind: "bytes" as const, damage })) },
  ),
  encoding: fc.oneof({ weight: 8, arbitrary: fc.constantFrom("identity" as const, "gzip" as const) }, { weight: 1, arbitrary: fc.constantFrom("gzip-damaged" as const, "claims-gzip" as const, "deflate" as const, "br" as const) }),
  contentType: fc.oneof({ weight: 12, arbitrary: fc.constant("declared" as const) }, { weight: 1, arbitrary: fc.constantFrom("charset" as const, "swapped" as const, "text/plain" as const, "missing" as const) }),
  auth: authArb,
});

function otlpBody(c: OtlpCase): Uint8Array {
  const spans = readableSpans(c.seeds, c.traceSeed) as never;
  if (c.format === "protobuf") {
    if (c.change.kind === "json") {
      // Protobuf is typed: the mutation goes into a span's name and attributes before encoding
      // (what the serializer cannot encode falls back to the unmutated body).
      const mutated = readableSpans(c.seeds, c.traceSeed);
      const target = mutated[c.change.mutation.pick % mutated.length] as { name: unknown; attributes: unknown };
      const changed = mutate({ name: target.name, attributes: target.attributes }, c.change.mutation) as { name?: unknown; attributes?: unknown } | null;
      if (changed && typeof changed === "object") Object.assign(target, changed);
      try {
        return ProtobufTraceSerializer.serializeRequest(mutated as never)!;
      } catch {
        return ProtobufTraceSerializer.serializeRequest(spans)!;
      }
    }
    const bytes = ProtobufTraceSerializer.serializeRequest(spans)!;
    return c.change.kind === "bytes" ? damage(bytes, c.change.damage) : bytes;
  }
  const bytes = JsonTraceSerializer.serializeRequest(spans)!;
  if (c.change.kind === "bytes") return damage(bytes, c.change.damage);
  if (c.change.kind === "json") return utf8(JSON.stringify(mutate(JSON.parse(new TextDecoder().decode(bytes)), c.change.mutation)) ?? "");
  return bytes;
}

// --- Hooks ----------------------------------------------------------------------------------------

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-hooks");
const CAPTURES = fs
  .readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".json"))
  .map((f) => {
    const name = f.replace(/\.json$/, "");
    const cli: CliName = name.startsWith("codex.") ? "codex" : name.startsWith("gemini.") ? "gemini" : "claude-code";
    return { name, cli, body: JSON.parse(fs.readFileSync(path.join(FIXTURES, f), "utf8")).body as Record<string, unknown> };
  });

interface HookCase {
  capture: number;
  session: string;
  toolUseId: string;
  cli: CliName | "own";
  change: { kind: "none" } | { kind: "json"; mutations: Mutation[] } | { kind: "bytes"; damage: ByteDamage };
  agent: string | null;
  auth: Auth;
}

const hookCaseArb: fc.Arbitrary<HookCase> = fc.record({
  capture: fc.nat(),
  session: fc.constantFrom("fz-hook-1", "fz-hook-2", "fz-hook-3"),
  toolUseId: fc.string({ minLength: 1, maxLength: 12 }),
  cli: fc.oneof({ weight: 10, arbitrary: fc.constant("own" as const) }, { weight: 1, arbitrary: fc.constantFrom(...HOOK_CLIS) }),
  change: fc.oneof(
    { weight: 2, arbitrary: fc.constant({ kind: "none" as const }) },
    { weight: 6, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }).map((mutations) => ({ kind: "json" as const, mutations })) },
    { weight: 2, arbitrary: byteDamageArb.map((damage) => ({ kind: "bytes" as const, damage })) },
  ),
  agent: fc.option(fc.string({ maxLength: 300 }), { freq: 5 }),
  auth: authArb,
});

function hookRequest(c: HookCase, keys: Record<Auth, string | null>, malformed: string): { cli: CliName; capture: string; req: Request } {
  const capture = CAPTURES[c.capture % CAPTURES.length];
  const cli = c.cli === "own" ? capture.cli : c.cli;
  let body: unknown = { ...capture.body, session_id: c.session, ...("tool_use_id" in capture.body ? { tool_use_id: c.toolUseId } : {}) };
  let bytes: Uint8Array;
  if (c.change.kind === "json") {
    for (const m of c.change.mutations) body = mutate(body, m);
    bytes = utf8(JSON.stringify(body) ?? "");
  } else {
    bytes = utf8(JSON.stringify(body));
    if (c.change.kind === "bytes") bytes = damage(bytes, c.change.damage);
  }
  const headers = new Headers({ "content-type": "application/json" });
  if (c.auth === "malformed") headers.set("authorization", malformed);
  else if (keys[c.auth]) headers.set("authorization", `Bearer ${keys[c.auth]}`);
  const query = c.agent === null ? "" : `?agent=${encodeURIComponent(c.agent)}`;
  return { cli, capture: capture.name, req: new Request(`http://vigil.test/api/hooks/${cli}${query}`, { method: "POST", headers, body: bytes as BodyInit }) };
}

// --- The suites -----------------------------------------------------------------------------------

describe.each(DATABASE_KINDS)("fuzzing the agent endpoints on %s", (kind) => {
  let app: TestApp;
  let countRows: () => Promise<Record<string, number>>;
  const nextXid = () => nextTransactionId(app);
  let keys: Record<Auth, string | null>;
  const pools = { approvals: ["no-such-approval"], failureKeys: ["bash|command=ls"] };
  const runs = RUNS[kind];
  const totals: Tally[] = [];
  const previousRateLimit = process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
  let internalErrors = 0;

  beforeAll(async () => {
    // Thousands of requests a minute from one key: the rate limit (429) would hide the handlers.
    process.env.VIGIL_RATE_LIMIT_PER_MINUTE = "0";
    app = await TestApp.create(await createTestDatabase(kind));
    const admin = await app.seedWorkspace({ slug: "fuzz", scope: "admin" });
    const { createApiKey } = await import("@/server/services/api-keys");
    const { SYSTEM_ACTOR } = await import("@/server/services/audit");
    const agent = await createApiKey(app.db, { workspaceId: admin.workspaceId, organizationId: admin.organizationId, name: "fuzz-agent", scope: "agent", actor: SYSTEM_ACTOR });
    keys = { admin: admin.key, agent: agent.value, none: null, unknown: `vgl_${"A".repeat(43)}`, malformed: null };

    // Real objects for the inputs to name: an escalated key with pending tool-call approvals.
    const url = "https://api.example.com/v1/users";
    const failures = [1, 2, 3].map(() => result(SESSIONS[0], "http_request", { url }, { success: false, httpStatus: 503, error: "Service Unavailable" }));
    const out = await app.mutation("ingest.events", { events: failures }, { key: admin.key });
    const escalated = out.body.result!.data.effects.find((e: any) => e.type === "escalated");
    pools.failureKeys.push(escalated.failureKey);
    for (let i = 0; i < 3; i++) {
      const g = await app.mutation("guard.check", { id: uid(), sessionId: SESSIONS[0], callId: uid("c"), toolName: "http_request", args: { url }, waitForApprovalSeconds: 0.01 }, { key: admin.key });
      pools.approvals.push(g.body.result!.data.approvalId);
    }

    // Internal errors are logged with console.error (the hook endpoints answer 200 even then).
    const original = console.error;
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      internalErrors++;
      original(...args);
    });
    countRows = await rowCounter(app);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    if (previousRateLimit === undefined) delete process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
    else process.env.VIGIL_RATE_LIMIT_PER_MINUTE = previousRateLimit;
    await app?.database.close();
    const all = totals.reduce((n, t) => n + t.requests, 0);
    console.log(`[fuzz] ${kind} total: ${all} requests, ${totals.reduce((n, t) => n + t.violations.length, 0)} violations`);
  });

  const fresh = () => new FuzzRun(countRows, nextXid, () => internalErrors);

  const malformedHeaders = ["Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "bearer vgl_x y", `Bearer ${"x".repeat(5000)}`, "Bearer vgl_\u00ff"];

  it(`agent API: ${runs.agent} generated and mutated requests to every agent procedure, through the tRPC handler`, async () => {
    const r = fresh();
    expect(AGENT_PROCEDURES.length).toBeGreaterThanOrEqual(13);
    const requestArb = fc.constantFrom(...AGENT_PROCEDURES).chain((procedure) =>
      fc.record({
        procedure: fc.constant(procedure),
        input: agentInputArb(procedure, pools),
        change: fc.oneof(
          { weight: 3, arbitrary: fc.constant({ kind: "none" as const }) },
          { weight: 6, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }).map((mutations) => ({ kind: "json" as const, mutations })) },
          { weight: 1, arbitrary: byteDamageArb.map((damage) => ({ kind: "bytes" as const, damage })) },
        ),
        method: fc.oneof({ weight: 20, arbitrary: fc.constant("right" as const) }, { weight: 1, arbitrary: fc.constant("wrong" as const) }),
        contentType: fc.oneof({ weight: 20, arbitrary: fc.constant("application/json") }, { weight: 1, arbitrary: fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "") }),
        auth: authArb,
        malformed: fc.constantFrom(...malformedHeaders),
      }),
    );
    await fc.assert(
      fc.asyncProperty(requestArb, async (q) => {
        let input = q.input;
        if (q.change.kind === "json") for (const m of q.change.mutations) input = mutate(input, m);
        input = boundWaits(input);
        const isQuery = procedureTypes[q.procedure]._def.type === "query";
        const method = (q.method === "right") === isQuery ? "GET" : "POST";
        const headers = new Headers();
        if (q.auth === "malformed") headers.set("authorization", q.malformed);
        else if (keys[q.auth]) headers.set("authorization", `Bearer ${keys[q.auth]}`);
        let url = `http://localhost/api/trpc/${q.procedure}`;
        let body: Uint8Array | undefined;
        const json = input === undefined ? undefined : JSON.stringify(input);
        if (method === "GET") {
          if (json !== undefined) url += `?input=${encodeURIComponent(q.change.kind === "bytes" ? new TextDecoder().decode(damage(utf8(json), q.change.damage)) : json)}`;
        } else {
          if (q.contentType) headers.set("content-type", q.contentType);
          body = utf8(json ?? "");
          if (q.change.kind === "bytes") body = damage(body, q.change.damage);
        }
        await r.check(
          () => `${method} ${q.procedure} auth=${q.auth} ${body ? new TextDecoder().decode(body).slice(0, 400) : url.slice(0, 400)}`,
          async () => {
            // POSTs through the fast path's entry, as scripts/serve.mjs serves them (plain mutations answered directly).
            const toRequest = () => new Request(url, { method, headers, body: body as BodyInit | undefined });
            const res = method === "POST" ? await handleTrpcCall(app.runtime, directCallOf(url, headers, body ?? new Uint8Array()), toRequest) : await handleTrpcRequest(toRequest(), app.runtime);
            return res instanceof Response ? { status: res.status, body: await res.text() } : { status: res.status, body: res.body };
          },
        );
      }),
      { seed: SEED, numRuns: runs.agent, endOnFailure: true },
    );
    r.print(`${kind} agent API (${AGENT_PROCEDURES.length} procedures)`);
    totals.push(r.tally);
    expect(r.tally.violations).toEqual([]);
    expect(r.tally.statuses[200]).toBeGreaterThan(runs.agent / 10);
 }, FUZZ_TIMEOUT_MS);

  it(`OTLP: ${runs.otlp} generated and mutated trace exports (JSON and protobuf, gzip) to /api/otlp/v1/traces`, async () => {
    const r = fresh();
    const timing = { settleMs: 0, idleMs: 30 * 60_000 };
    await fc.assert(
      fc.asyncProperty(otlpCaseArb, fc.constantFrom(...malformedHeaders), async (c, malformed) => {
        let bytes = otlpBody(c);
        const headers = new Headers();
        const declared = c.format === "json" ? "application/json" : "application/x-protobuf";
        const swapped = c.format === "json" ? "application/x-protobuf" : "application/json";
        const contentType = { declared, charset: `${declared}; charset=utf-8`, swapped, "text/plain": "text/plain", missing: null }[c.contentType];
        if (contentType) headers.set("content-type", contentType);
        if (c.encoding === "gzip" || c.encoding === "gzip-damaged") {
          bytes = new Uint8Array(gzipSync(bytes));
          if (c.encoding === "gzip-damaged") bytes = damage(bytes, { kind: "truncate", at: Math.max(1, bytes.length - 5), byte: 0, garbage: new Uint8Array() });
          headers.set("content-encoding", "gzip");
        } else if (c.encoding !== "identity") headers.set("content-encoding", c.encoding === "claims-gzip" ? "gzip" : c.encoding);
        if (c.auth === "malformed") headers.set("authorization", malformed);
        else if (keys[c.auth]) headers.set("authorization", `Bearer ${keys[c.auth]}`);
        await r.check(
          () => `OTLP ${c.format} ${contentType} ${c.encoding} auth=${c.auth} change=${JSON.stringify(c.change).slice(0, 300)} spans=${JSON.stringify(c.seeds).slice(0, 300)}`,
          async () => {
            const res = await handleOtlpTraces(new Request("http://localhost/api/otlp/v1/traces", { method: "POST", headers, body: bytes as BodyInit }), app.runtime, timing);
            return { status: res.status, body: new TextDecoder().decode(await res.arrayBuffer()) };
          },
        );
      }),
      { seed: SEED, numRuns: runs.otlp, endOnFailure: true },
    );
    r.print(`${kind} OTLP`);
    totals.push(r.tally);
    expect(r.tally.violations).toEqual([]);
    expect(r.tally.statuses[200]).toBeGreaterThan(runs.otlp / 10);
 }, FUZZ_TIMEOUT_MS);

  it(`hooks: ${runs.hooks} mutated captures of Claude Code, Codex and Gemini CLI requests to /api/hooks/*`, async () => {
    const r = fresh();
    await fc.assert(
      fc.asyncProperty(hookCaseArb, fc.constantFrom(...malformedHeaders), async (c, malformed) => {
        const { cli, capture, req } = hookRequest(c, keys, malformed);
        const sent = req.clone();
        await r.check(
          () => `hook ${cli} from ${capture} auth=${c.auth} agent=${JSON.stringify(c.agent)} change=${JSON.stringify(c.change).slice(0, 300)}`,
          async () => {
            const res = await handleHookRequest(sent, app.runtime, cli);
            return { status: res.status, body: await res.text() };
          },
        );
      }),
      { seed: SEED, numRuns: runs.hooks, endOnFailure: true },
    );
    r.print(`${kind} hooks`);
    totals.push(r.tally);
    expect(r.tally.violations).toEqual([]);
    expect(r.tally.statuses[200]).toBeGreaterThan(runs.hooks / 2);
 }, FUZZ_TIMEOUT_MS);
});

// --- Cases the fuzzer found, kept as regular tests ---------------------------------------------------

describe.each(DATABASE_KINDS)("inputs the fuzzer found, on %s", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  const app = useTestApp(kind);
  beforeAll(async () => {
    ws = await app.seedWorkspace({ slug: "found" });
  });

  const storedPayloads = async (sessionId: string) =>
    rowsOf(await app.db.execute(sql`select type, payload::text as payload from event where workspace_id = ${ws.workspaceId} and session_id = ${sessionId} order by seq`));

  // PostgreSQL jsonb rejects an unpaired surrogate ("Unicode low surrogate must follow a high
  // surrogate"): a Gemini prompt holding one made the hook fail (logged, answered with an empty 200).
  it("an unpaired UTF-16 surrogate in a hook payload is stored as U+FFFD, not a failed insert", async () => {
    const errors = vi.spyOn(console, "error");
    try {
      const body = { ...CAPTURES.find((c) => c.name === "gemini.BeforeAgent")!.body, session_id: "found-hook", prompt: "\ud800" };
      const res = await handleHookRequest(
        new Request("http://vigil.test/api/hooks/gemini", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${ws.key}` }, body: JSON.stringify(body) }),
        app.runtime,
        "gemini",
      );
      expect(res.status).toBe(200);
      expect(errors).not.toHaveBeenCalled();
      const rows = await storedPayloads("found-hook");
      expect(rows.find((r) => r.type === "user.message")?.payload).toContain("\uFFFD");
    } finally {
      errors.mockRestore();
    }
  });

  it("unpaired surrogates in agent API events (args, text, error) are a 400 naming the field, nothing stored", async () => {
    const events = [
      { type: "tool.call", id: uid(), sessionId: "found-api", callId: "c1", toolName: "read_file", args: { path: "a\udfffb" } },
      { type: "tool.result", id: uid(), sessionId: "found-api", callId: "c1", toolName: "read_file", success: false, error: "cut \ud83d" },
      { type: "model.text", id: uid(), sessionId: "found-api", text: "x\ud800y" },
    ];
    const res = await app.mutation("ingest.events", { events }, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error!.data.issues![0].path).toEqual(["events", "0", "args", "path"]);
    expect(await storedPayloads("found-api")).toHaveLength(0);
  });

  // A span attribute holding U+0000 made the otlp_span insert fail ("\u0000 cannot be converted to
  // text"): the whole export was answered 500 and the exporter retried it forever.
  it("U+0000 and unpaired surrogates in OTLP span attributes are stored as U+FFFD (JSON and protobuf)", async () => {
    for (const format of ["json", "protobuf"] as const) {
      const spans = readableSpans(
        [{ name: "chat gpt-4o", attributes: { "gen_ai.operation.name": "chat", "gen_ai.conversation.id": `found-otlp-${format}`, "0": "\u0000", odd: "a\ud800b" }, error: false, msAgo: 1000, durationMs: 10 }],
        format === "json" ? 7 : 8,
      ) as never;
      const body = format === "json" ? JsonTraceSerializer.serializeRequest(spans)! : ProtobufTraceSerializer.serializeRequest(spans)!;
      const res = await handleOtlpTraces(
        new Request("http://localhost/api/otlp/v1/traces", {
          method: "POST",
          headers: { "content-type": format === "json" ? "application/json" : "application/x-protobuf", authorization: `Bearer ${ws.key}` },
          body: body as BodyInit,
        }),
        app.runtime,
        { settleMs: 0, idleMs: 60_000 },
      );
      expect(res.status, format).toBe(200);
      const [row] = rowsOf(await app.db.execute(sql`select span::text as span from otlp_span where workspace_id = ${ws.workspaceId} and span->'attributes'->>'gen_ai.conversation.id' = ${`found-otlp-${format}`}`));
      expect(String(row.span)).toContain('"0": "\uFFFD"');
      expect(String(row.span)).toContain("a\uFFFDb");
    }
  });
});
