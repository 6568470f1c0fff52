/**
 * OTLP ingest revision 2 (SPEC 7.4) with REAL instrumentations and exporters: the spans are made
 * by the Vercel AI SDK (`ai` + `@ai-sdk/otel`, mock model from `ai/test`), OpenInference's
 * `traceAgent`/`traceTool`, and a hand-instrumented GenAI agent on the OpenTelemetry API; they are
 * exported by `@opentelemetry/exporter-trace-otlp-http` (JSON) and `-proto` (protobuf, gzip) to
 * the OTLP handler served over a real HTTP server, on PGlite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq, like } from "drizzle-orm";
import { SpanStatusCode, context, trace, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
// AI SDK 6 (installed as ai-v6): telemetry via experimental_telemetry with a tracer and metadata.
import { generateText as generateTextV6, stepCountIs as stepCountIsV6, tool as toolV6 } from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { LegacyOpenTelemetry, OpenTelemetry } from "@ai-sdk/otel";
import { setSession, traceAgent, traceTool } from "@arizeai/openinference-core";
import { z } from "zod";
import { DATABASE_KINDS, createTestDatabase } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { agentSession, event, otlpSpan } from "@/db/schema";
import { handleOtlpTraces } from "@/server/agent-api/otlp";
import { applyDueTraces, endIdleSessions, runOtlpApplier, type OtlpTiming } from "@/server/otlp/applier";
import { acceptSpans } from "@/server/otlp/store";
import { pruneWorkspace } from "@/server/services/retention";
import { openDatabase } from "@/db/client";
import type { Runtime } from "@/server/runtime";

// Long settle and idle times: the tests move time forward by passing `now` to the applier.
const TIMING: OtlpTiming = { settleMs: 60_000, idleMs: 30 * 60_000 };

/** The OTLP route's handler behind a real HTTP server (what `next start` serves at /api/otlp/v1/traces). */
async function serveOtlp(runtime: Runtime) {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    const response = await handleOtlpTraces(new Request(`http://localhost${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined }), runtime, TIMING);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/otlp/v1/traces`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

type Processing = "simple" | { batchSize: number };

/** A tracer provider exporting to Vigil the way an instrumented app does. */
function tracing(exporter: SpanExporter, processing: Processing) {
  const processor =
    processing === "simple" ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter, maxExportBatchSize: processing.batchSize, scheduledDelayMillis: 60_000 });
  const provider = new TracerProvider({ spanProcessors: [processor] });
  return { tracer: provider.getTracer("vigil-test"), provider, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A two-step agent: the model asks for a tool that throws (404) and one returning `{status_code: 500}`, then answers. */
function mockAgentModel() {
  let step = 0;
  return new MockLanguageModelV4({
    modelId: "mock-model",
    doGenerate: async () => {
      step += 1;
      if (step === 1) {
        return {
          content: [
            { type: "tool-call", toolCallId: "call-fetch", toolName: "fetchPage", input: JSON.stringify({ url: "https://docs.example.com/v2/missing" }) },
            { type: "tool-call", toolCallId: "call-api", toolName: "callApi", input: JSON.stringify({ url: "https://api.example.com/v1/orders" }) },
          ],
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
          response: { id: "r1", modelId: "mock-model-step-1", timestamp: new Date() },
        } as never;
      }
      return {
        content: [{ type: "text", text: "The page is missing and the API is down." }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
        response: { id: "r2", modelId: "mock-model-step-2", timestamp: new Date() },
      } as never;
    },
  });
}

const agentTools = {
  fetchPage: tool({
    inputSchema: z.object({ url: z.string() }),
    execute: async (): Promise<string> => {
      throw new Error("HTTP 404: page not found");
    },
  }),
  callApi: tool({
    inputSchema: z.object({ url: z.string() }),
    execute: async () => ({ status_code: 500, error: "upstream unavailable" }),
  }),
};

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

describe.each(DATABASE_KINDS)("OTLP instrumentations on %s", (kind) => {
  let server: Awaited<ReturnType<typeof serveOtlp>>;
  const app = useTestApp(kind);
  beforeAll(async () => {
    server = await serveOtlp(app.runtime);
  });
  afterAll(async () => {
    await server.close();
  });

  const exporter = (format: "json" | "protobuf", key: string, gzip = false) => {
    // CompressionAlgorithm is a string enum ("gzip" | "none") of otlp-exporter-base, not re-exported.
    type Compression = NonNullable<NonNullable<ConstructorParameters<typeof JsonExporter>[0]>["compression"]>;
    const options = { url: server.url, headers: { Authorization: `Bearer ${key}` }, compression: (gzip ? "gzip" : "none") as Compression };
    return format === "json" ? new JsonExporter(options) : new ProtoExporter(options);
  };
  const sessions = (workspaceId: string) => app.db.select().from(agentSession).where(eq(agentSession.workspaceId, workspaceId));
  const events = (workspaceId: string) =>
    app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), like(event.id, "otel:%"))).orderBy(event.ts, event.seq);
  const spanRows = (workspaceId: string) => app.db.select().from(otlpSpan).where(eq(otlpSpan.workspaceId, workspaceId));

  async function expectAgentRun(workspaceId: string, agent: string) {
    const [session, ...more] = await sessions(workspaceId);
    expect(more).toEqual([]);
    expect(session).toMatchObject({ agent, callCount: 2, failureCount: 2 });
    const rows = await events(workspaceId);
    expect(rows.every((r) => r.sessionId === session.sessionId)).toBe(true);
    const results = rows.filter((r) => r.type === "tool.result");
    expect(results.map((r) => [r.toolName, r.model, r.failed, r.severity]).sort()).toEqual([
      ["callApi", "mock-model-step-1", true, "server_error"],
      ["fetchPage", "mock-model-step-1", true, "not_found"],
    ]);
    expect(rows.filter((r) => r.type === "tool.call").every((r) => r.model === "mock-model-step-1")).toBe(true);
    return { session, rows };
  }

  it("AI SDK + @ai-sdk/otel (GenAI spans), JSON exporter, SimpleSpanProcessor: one session, agent = functionId, model per call", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("json", key), "simple");
    const result = await generateText({
      model: mockAgentModel(),
      prompt: "Check the page and the orders API",
      tools: agentTools,
      stopWhen: stepCountIs(3),
      experimental_telemetry: { functionId: "support-agent", integrations: [new OpenTelemetry({ tracer: t.tracer, agentSpanName: "functionId" })] },
    });
    expect(result.text).toContain("missing");
    await t.shutdown();
    // Every span was exported on its own, the root last: applied once the root arrived.
    const { rows } = await expectAgentRun(workspaceId, "support-agent");
    expect(rows.filter((r) => r.type === "model.text").map((r) => r.model)).toEqual(["mock-model-step-1", "mock-model-step-2"]);
  });

  /** Two turns of an AI SDK 6 agent in one conversation: two traces, each with two failing tool calls requested by step 1. */
  async function twoTurnsV6(tracer: Tracer) {
    const v6Tools = {
      fetchPage: toolV6({
        inputSchema: z.object({ url: z.string() }),
        execute: async (): Promise<string> => {
          throw new Error("HTTP 404: page not found");
        },
      }),
      callApi: toolV6({ inputSchema: z.object({ url: z.string() }), execute: async () => ({ status_code: 500, error: "upstream unavailable" }) }),
    };
    for (let turn = 0; turn < 2; turn++) {
      const v4 = mockAgentModel();
      const model = new MockLanguageModelV3({ modelId: "mock-model", doGenerate: (options) => v4.doGenerate(options as never) as never });
      await generateTextV6({
        model,
        prompt: `turn ${turn}`,
        tools: v6Tools,
        stopWhen: stepCountIsV6(3),
        experimental_telemetry: { isEnabled: true, tracer, functionId: "helpdesk", metadata: { sessionId: "ai6-conversation" } },
      });
    }
  }

  async function expectTwoTurnsV6(workspaceId: string) {
    const [session, ...more] = await sessions(workspaceId);
    expect(more).toEqual([]);
    expect(session).toMatchObject({ sessionId: "ai6-conversation", agent: "helpdesk", callCount: 4, failureCount: 4 });
    const results = (await events(workspaceId)).filter((r) => r.type === "tool.result");
    expect(results.map((r) => [r.toolName, r.model, r.severity]).sort()).toEqual([
      ["callApi", "mock-model-step-1", "server_error"],
      ["callApi", "mock-model-step-1", "server_error"],
      ["fetchPage", "mock-model-step-1", "not_found"],
      ["fetchPage", "mock-model-step-1", "not_found"],
    ]);
  }

  it("AI SDK 6 experimental_telemetry with metadata.sessionId: two turns (two traces) are one session", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("protobuf", key), { batchSize: 5 });
    await twoTurnsV6(t.tracer);
    await t.flush();
    await t.shutdown();
    await expectTwoTurnsV6(workspaceId);
  });

  it("AI SDK 6, two turns: a tool call keeps the model of the step that requested it, whichever span of either trace arrives last", async () => {
    // A batch processor's exports race (forceFlush sends its batches in parallel with the one in
    // flight): the root of a trace, and its tool spans, may arrive before the step that requested them.
    const collect = new InMemorySpanExporter();
    const t = tracing(collect, "simple");
    await twoTurnsV6(t.tracer);
    const ended = [...collect.getFinishedSpans()];
    await t.shutdown();
    const traceIds = [...new Set(ended.map((s) => s.spanContext().traceId))];
    expect(traceIds).toHaveLength(2);
    for (const late of ended) {
      const { key, workspaceId } = await app.seedWorkspace();
      const real = exporter("protobuf", key);
      const send = (spans: ReadableSpan[]) =>
        new Promise<void>((resolve, reject) => real.export(spans, (r) => (r.code === 0 /* ExportResultCode.SUCCESS */ ? resolve() : reject(r.error))));
      // Each trace in end order (as a processor exports it), the late span held back until both were sent.
      for (const traceId of traceIds) await send(ended.filter((s) => s !== late && s.spanContext().traceId === traceId));
      await send([late]);
      await real.shutdown();
      try {
        await expectTwoTurnsV6(workspaceId);
        expect((await spanRows(workspaceId)).every((s) => s.appliedAt !== null)).toBe(true);
      } catch (err) {
        throw new Error(`late span ${late.name} of trace ${traceIds.indexOf(late.spanContext().traceId) + 1}: ${(err as Error).message}`);
      }
    }
  });

  it("AI SDK without functionId: the agent is 'default', never the model id of the span name", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("json", key), "simple");
    await generateText({ model: mockAgentModel(), prompt: "go", tools: agentTools, stopWhen: stepCountIs(3), experimental_telemetry: { integrations: [new OpenTelemetry({ tracer: t.tracer })] } });
    await t.shutdown();
    await expectAgentRun(workspaceId, "default");
  });

  it("AI SDK legacy ai.* spans, protobuf + gzip, exports split in two: applied when the root arrives, in start order", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("protobuf", key, true), { batchSize: 4 });
    await generateText({
      model: mockAgentModel(),
      prompt: "go",
      tools: agentTools,
      stopWhen: stepCountIs(3),
      experimental_telemetry: { functionId: "legacy-agent", integrations: [new LegacyOpenTelemetry({ tracer: t.tracer })] },
    });
    await t.flush();
    await t.shutdown();
    const { rows } = await expectAgentRun(workspaceId, "legacy-agent");
    expect(rows[0].type).toBe("session.start");
    expect((await spanRows(workspaceId)).every((s) => s.appliedAt !== null)).toBe(true);
  });

  it("OpenInference traceAgent/traceTool with setSession: tool spans of withSpan are mapped, one session", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("protobuf", key), "simple");
    const lookupOrder = traceTool(
      async (orderId: string) => {
        if (orderId === "missing") throw new Error("order does not exist");
        return { orderId, status: "shipped" };
      },
      { name: "lookup_order", tracer: t.tracer },
    );
    const agent = traceAgent(
      async (ids: string[]) => {
        const out = [];
        for (const id of ids) out.push(await lookupOrder(id).catch((e: Error) => e.message));
        return out;
      },
      { name: "order-agent", tracer: t.tracer, attributes: { "agent.name": "order-agent" } },
    );
    await context.with(setSession(context.active(), { sessionId: "oi-conversation-1" }), () => agent(["a1", "missing"]));
    await t.shutdown();
    const [session, ...more] = await sessions(workspaceId);
    expect(more).toEqual([]);
    expect(session).toMatchObject({ sessionId: "oi-conversation-1", agent: "order-agent", callCount: 2, failureCount: 1 });
    const results = (await events(workspaceId)).filter((r) => r.type === "tool.result");
    expect(results.map((r) => [r.toolName, r.failed, r.severity, r.payload]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      ["lookup_order", false, null, expect.objectContaining({ preview: '{"input":"a1"}' })],
      ["lookup_order", true, "not_found", expect.objectContaining({ preview: '{"input":"missing"}' })],
    ]);
  });

  /** A GenAI-conventions agent written by hand on the OTel API: the conversation id only on agent and chat spans. */
  async function handAgent(tracer: Tracer, conversationId: string, opts: { nested?: boolean; endRoot?: boolean } = {}) {
    const root = tracer.startSpan("invoke_agent travel", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel", "gen_ai.conversation.id": conversationId } });
    const rootCtx = trace.setSpan(context.active(), root);
    await context.with(rootCtx, async () => {
      const chat = tracer.startSpan("chat gpt-5", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-5", "gen_ai.response.model": "gpt-5-2026-01", "gen_ai.conversation.id": conversationId } });
      chat.setAttribute("gen_ai.output.messages", JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "book_flight" }] }]));
      chat.end();
      const book = tracer.startSpan("execute_tool book_flight", { attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "book_flight", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": '{"to":"OSL"}' } });
      book.setAttribute("error.type", "404");
      book.setStatus({ code: SpanStatusCode.ERROR });
      book.end();
      if (opts.nested) {
        const sub = tracer.startSpan("invoke_agent weather", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather" } });
        await context.with(trace.setSpan(context.active(), sub), async () => {
          const chat2 = tracer.startSpan("chat small", { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "small-model" } });
          chat2.end();
          const w = tracer.startSpan("execute_tool get_weather", { attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.result": '{"temp":3}' } });
          w.end();
        });
        sub.end();
      }
    });
    if (opts.endRoot !== false) root.end();
    return root;
  }

  it("hand-instrumented GenAI agent: conversation id only on agent and chat spans → one session per conversation, nested agent a child session", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("json", key, true), { batchSize: 3 });
    await handAgent(t.tracer, "trip-1", { nested: true });
    await handAgent(t.tracer, "trip-2");
    await t.flush();
    await t.shutdown();
    const all = await sessions(workspaceId);
    expect(all.map((s) => [s.sessionId, s.agent, s.model, s.callCount, s.failureCount]).sort()).toEqual([
      ["trip-1", "travel", "gpt-5-2026-01", 1, 1],
      ["trip-1/weather", "weather", "small-model", 1, 0],
      ["trip-2", "travel", "gpt-5-2026-01", 1, 1],
    ]);
    const failed = (await events(workspaceId)).filter((r) => r.type === "tool.result" && r.failed);
    // Sorted: exports running in parallel may apply one conversation's spans after the other's.
    expect(failed.map((r) => [r.sessionId, r.toolName, r.model, r.severity]).sort()).toEqual([
      ["trip-1", "book_flight", "gpt-5-2026-01", "not_found"],
      ["trip-2", "book_flight", "gpt-5-2026-01", "not_found"],
    ]);
  });

  it("a tool call whose requesting step never comes waits until the trace settles, then takes the agent's model", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("json", key), "simple");
    const agent = t.tracer.startSpan("invoke_agent travel", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "travel", "gen_ai.request.model": "gpt-5", "gen_ai.conversation.id": "lost-step" } });
    await context.with(trace.setSpan(context.active(), agent), async () => {
      // The chat span that asked for this call is lost (dropped by a full exporter queue, say).
      const tool = t.tracer.startSpan("execute_tool book_flight", { attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "book_flight", "gen_ai.tool.call.id": "call-lost" } });
      tool.setStatus({ code: SpanStatusCode.ERROR, message: "HTTP 404: no such flight" });
      tool.end();
    });
    agent.end();
    await t.shutdown();
    // The root arrived: the session starts, the call waits for its step (span stored, not applied).
    expect((await events(workspaceId)).map((r) => r.type)).toEqual(["session.start"]);
    expect((await spanRows(workspaceId)).filter((s) => s.appliedAt === null)).toHaveLength(1);
    const traceId = agent.spanContext().traceId;
    expect(await applyDueTraces(app.db, Date.now() + 1_000, 100, TIMING.settleMs)).not.toContain(traceId);
    expect(await applyDueTraces(app.db, Date.now() + TIMING.settleMs + 1_000, 100, TIMING.settleMs)).toContain(traceId);
    expect((await events(workspaceId)).filter((r) => r.type !== "session.start").map((r) => [r.type, r.model])).toEqual([
      ["tool.call", "gpt-5"],
      ["tool.result", "gpt-5"],
    ]);
    expect((await spanRows(workspaceId)).every((s) => s.appliedAt !== null)).toBe(true);
  });

  it("a trace whose root never comes is applied after the settle time; late spans become a follow-up batch; idle sessions end", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const t = tracing(exporter("json", key), "simple");
    const root = await handAgent(t.tracer, "settle-1", { endRoot: false });
    await t.flush();
    // Stored (the 200 never loses a span), not applied yet: no root and not settled.
    expect((await spanRows(workspaceId)).map((s) => s.appliedAt)).toEqual([null, null]);
    expect(await events(workspaceId)).toEqual([]);
    const traceId = root.spanContext().traceId;
    expect(await applyDueTraces(app.db, Date.now() + 1_000)).not.toContain(traceId);
    expect(await events(workspaceId)).toEqual([]);
    expect(await applyDueTraces(app.db, Date.now() + TIMING.settleMs + 1_000)).toContain(traceId);
    expect((await events(workspaceId)).map((r) => r.type)).toEqual(["model.text", "tool.call", "tool.result"]);
    expect((await events(workspaceId)).find((r) => r.type === "tool.result")).toMatchObject({ sessionId: "settle-1", model: "gpt-5-2026-01", failed: true });

    // The root arrives late: applied at once as a follow-up, the earlier events untouched.
    root.end();
    await t.shutdown();
    expect((await events(workspaceId)).map((r) => r.type).sort()).toEqual(["model.text", "session.start", "tool.call", "tool.result"]);
    expect((await sessions(workspaceId))[0]).toMatchObject({ sessionId: "settle-1", agent: "travel", callCount: 1 });

    // Idle for longer than VIGIL_OTLP_SESSION_IDLE_MINUTES: the session ends.
    await endIdleSessions(app.db, TIMING.idleMs, Date.now() + 1_000);
    expect((await sessions(workspaceId))[0].endedAt).toBeNull();
    expect(await endIdleSessions(app.db, TIMING.idleMs, Date.now() + TIMING.idleMs + 60_000)).toBeGreaterThanOrEqual(1);
    const [ended] = await sessions(workspaceId);
    expect(ended.endedAt).not.toBeNull();
    expect((await events(workspaceId)).at(-1)).toMatchObject({ type: "session.end", sessionId: "settle-1" });
  });
});

describe("OTLP applier: crashes and several instances", () => {
  const spanOf = (traceId: string, spanId: string, parentSpanId: string | null, name: string, startMs: number, attributes: Record<string, string>) => ({
    traceId,
    spanId,
    parentSpanId,
    name,
    startTimeUnixNano: BigInt(startMs) * 1_000_000n,
    endTimeUnixNano: BigInt(startMs + 100) * 1_000_000n,
    attributes,
    resource: {},
    scope: { name: "t", version: null },
    events: [],
    status: { code: 0, message: null },
  });
  /** A small finished trace, as the decoder hands it to acceptance (the exporter tests above cover decoding). */
  const traceSpans = (i: number) => {
    const traceId = (i + 1).toString(16).padStart(32, "a");
    const root = (i + 1).toString(16).padStart(16, "b");
    const base = Date.now() - 60_000;
    return [
      spanOf(traceId, (i + 1).toString(16).padStart(16, "c"), root, `execute_tool t${i}`, base + 10, { "gen_ai.tool.name": `t${i}` }),
      spanOf(traceId, root, null, "invoke_agent", base, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a", "gen_ai.conversation.id": `multi-${i}` }),
    ];
  };

  it.each(DATABASE_KINDS)("a crash between acceptance and application loses nothing (%s)", async (kind) => {
    const app = await TestApp.create(await createTestDatabase(kind));
    try {
      const { workspaceId, organizationId } = await app.seedWorkspace();
      // Acknowledged (stored) but the process died before applying.
      await acceptSpans(app.db, { workspaceId, organizationId }, traceSpans(0), Date.now(), TIMING.settleMs);
      expect(await app.db.select().from(event).where(eq(event.workspaceId, workspaceId))).toEqual([]);
      // The next process's applier picks it up.
      expect(await runOtlpApplier(app.db, TIMING)).toMatchObject({ traces: 1 });
      const [session] = await app.db.select().from(agentSession).where(eq(agentSession.workspaceId, workspaceId));
      expect(session).toMatchObject({ sessionId: "multi-0", agent: "a", callCount: 1 });
    } finally {
      await app.database.close();
    }
  });

  it.each(DATABASE_KINDS)("idle end applies to sessions fed only by OTLP (%s)", async (kind) => {
    const app = await TestApp.create(await createTestDatabase(kind));
    try {
      const { workspaceId, organizationId, key } = await app.seedWorkspace();
      await acceptSpans(app.db, { workspaceId, organizationId }, [...traceSpans(1), ...traceSpans(2)], Date.now(), TIMING.settleMs);
      await runOtlpApplier(app.db, TIMING);
      // multi-2 also gets an event through the agent API: it is the agent's session to end.
      const res = await app.mutation("ingest.events", { events: [{ type: "model.text", id: "agent-1", sessionId: "multi-2", text: "hi" }] }, { key });
      expect(res.status).toBe(200);
      expect(await endIdleSessions(app.db, TIMING.idleMs, Date.now() + TIMING.idleMs + 120_000)).toBe(1);
      const rows = await app.db.select().from(agentSession).where(eq(agentSession.workspaceId, workspaceId));
      expect(rows.map((r) => [r.sessionId, r.endedAt !== null]).sort()).toEqual([
        ["multi-1", true],
        ["multi-2", false],
      ]);
    } finally {
      await app.database.close();
    }
  });

  it("retention prunes stored spans and their trace rows", async () => {
    const app = await TestApp.create(await createTestDatabase("pglite"));
    try {
      const { workspaceId, organizationId } = await app.seedWorkspace();
      const day = 86_400_000;
      await acceptSpans(app.db, { workspaceId, organizationId }, traceSpans(3), Date.now() - 40 * day, TIMING.settleMs);
      await acceptSpans(app.db, { workspaceId, organizationId }, traceSpans(4), Date.now(), TIMING.settleMs);
      const deleted = await pruneWorkspace(app.db, workspaceId, 30);
      expect(deleted).toMatchObject({ otlpSpans: 2, otlpTraces: 1 });
      expect(await app.db.select().from(otlpSpan).where(eq(otlpSpan.workspaceId, workspaceId))).toHaveLength(2);
    } finally {
      await app.database.close();
    }
  });

  it("two appliers on one PostgreSQL apply each trace once", async () => {
    const first = await createTestDatabase("postgres");
    const second = await openDatabase({ url: first.url!, poolSize: 6 });
    try {
      const app = await TestApp.create(first);
      const { workspaceId, organizationId } = await app.seedWorkspace();
      const n = 30;
      for (let i = 0; i < n; i++) await acceptSpans(first.db, { workspaceId, organizationId }, traceSpans(i), Date.now(), TIMING.settleMs);
      const [a, b] = await Promise.all([applyDueTraces(first.db, Date.now(), 5), applyDueTraces(second.db, Date.now(), 5)]);
      expect(a.length + b.length).toBe(n);
      expect(new Set([...a, ...b]).size).toBe(n);
      const sessionRows = await first.db.select().from(agentSession).where(eq(agentSession.workspaceId, workspaceId));
      expect(sessionRows).toHaveLength(n);
      expect(sessionRows.every((s) => s.callCount === 1 && s.eventCount === 3)).toBe(true);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
