/**
 * POST /api/otlp/v1/traces transport (SPEC 7.4): gzip, chunked bodies, duplicates, partial success,
 * 400/401/413/415/429. Bodies are made by the serializers (tests/support/otlp-spans.ts) the OpenTelemetry JS exporters themselves use (`JsonTraceSerializer` is what
 * @opentelemetry/exporter-trace-otlp-http posts, `ProtobufTraceSerializer` what
 * exporter-trace-otlp-proto posts), sent through the real handler against a real database.
 */
import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { randomBytes } from "node:crypto";
import { and, eq, like } from "drizzle-orm";
import { STATUS_ERROR, hex, jsonBody, protobufBody, readableSpan, type Spans } from "../support/otlp-spans";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { agentSession, event } from "@/db/schema";
import { handleOtlpTraces } from "@/server/agent-api/otlp";
import { decodeExportResponse, decodeStatus } from "@/server/otlp/decode";

/** An agent run the way GenAI-instrumented code reports it: agent → chat → three failing HTTP tool calls. */
function agentRun(opts: { conversationId: string; base: number; url: string; failures?: number }) {
  const traceId = hex(16);
  const agentId = hex(8);
  const b = opts.base;
  const failures = opts.failures ?? 3;
  const tools = Array.from({ length: failures }, (_, i) =>
    readableSpan({
      traceId,
      parentSpanId: agentId,
      name: "execute_tool http_request",
      startMs: b + 2_000 + i * 1_000,
      endMs: b + 2_500 + i * 1_000,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "http_request",
        "gen_ai.tool.call.id": `call_${opts.conversationId}_${i}`,
        "gen_ai.tool.call.arguments": JSON.stringify({ url: opts.url, method: "GET" }),
        "gen_ai.conversation.id": opts.conversationId,
      },
      status: { code: STATUS_ERROR, message: "503 Service Unavailable" },
    }),
  );
  const chat = readableSpan({
    traceId,
    parentSpanId: agentId,
    name: "chat gpt-4o",
    startMs: b + 500,
    endMs: b + 1_500,
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o",
      "gen_ai.response.model": "gpt-4o-2024-08-06",
      "gen_ai.conversation.id": opts.conversationId,
      "gen_ai.usage.input_tokens": 812,
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "Let me fetch the users." }, ...tools.map((t) => ({ type: "tool_call", id: t.attributes["gen_ai.tool.call.id"], name: "http_request", arguments: { url: opts.url } }))], finish_reason: "tool_call" }]),
    },
  });
  const agent = readableSpan({
    traceId,
    spanId: agentId,
    name: "invoke_agent crawler",
    startMs: b,
    endMs: b + 6_000,
    attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "crawler", "gen_ai.conversation.id": opts.conversationId },
  });
  // A BatchSpanProcessor exports spans as they end: children first, the agent span last.
  return { traceId, spans: [chat, ...tools, agent] as Spans, tools, chat, agent };
}

const ESCALATED_KEY = "http_request|domain=api.example.com|path_prefix=v1";

describe.each(DATABASE_KINDS)("OTLP trace ingest on %s", (kind) => {
  const app = useTestApp(kind);

  async function post(body: BodyInit | Uint8Array, opts: { key?: string | null; contentType?: string; headers?: Record<string, string> } = {}) {
    const headers = new Headers(opts.headers);
    if (opts.contentType !== undefined) headers.set("content-type", opts.contentType);
    if (opts.key) headers.set("authorization", `Bearer ${opts.key}`);
    const init: RequestInit & { duplex?: "half" } = { method: "POST", headers, body: body as BodyInit };
    if (body instanceof ReadableStream) init.duplex = "half";
    const res = await handleOtlpTraces(new Request("http://localhost/api/otlp/v1/traces", init), app.runtime);
    return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
  }
  const postJson = (body: BodyInit | Uint8Array, key: string | null, headers?: Record<string, string>) => post(body, { key, contentType: "application/json", headers });
  const postProto = (body: Uint8Array, key: string | null, headers?: Record<string, string>) => post(body, { key, contentType: "application/x-protobuf", headers });
  const json = (r: { bytes: Uint8Array }) => JSON.parse(new TextDecoder().decode(r.bytes));

  const status = async (key: string, toolName?: string) =>
    (await app.query("reliability.status", toolName ? { toolName } : {}, { key })).body.result!.data.keys as any[];
  const otelEvents = (workspaceId: string) =>
    app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), like(event.id, "otel:%"))).orderBy(event.seq);

  it("a JSON export (exporter-trace-otlp-http's body): tool spans escalate the key, the agent and model land; 200 {}", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const run = agentRun({ conversationId: "conv-json", base: Date.now() - 10 * 60_000, url: "https://api.example.com/v1/users" });
    const res = await postJson(jsonBody(run.spans), key);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(json(res)).toEqual({});

    const keys = await status(key, "http_request");
    expect(keys.find((k) => k.failureKey === ESCALATED_KEY)).toMatchObject({ state: "escalated", totalCalls: 3, totalFailures: 3, escalationReason: "3 failures in 3600s" });

    const rows = await otelEvents(workspaceId);
    // 1 session.start + 1 model.text + 3 × (call + result), in time order.
    expect(rows.map((r) => r.type)).toEqual(["session.start", "model.text", "tool.call", "tool.result", "tool.call", "tool.result", "tool.call", "tool.result"]);
    expect(rows.every((r) => r.sessionId === "conv-json")).toBe(true);
    const firstTool = run.tools[0].spanContext().spanId;
    expect(rows.filter((r) => r.id.startsWith(`otel:${firstTool}:`)).map((r) => r.id).sort()).toEqual([`otel:${firstTool}:call`, `otel:${firstTool}:result`]);
    expect(rows.find((r) => r.type === "tool.result")).toMatchObject({ toolName: "http_request", callId: "call_conv-json_0", failed: true, failureKey: ESCALATED_KEY, model: "gpt-4o-2024-08-06" });
    expect(rows.find((r) => r.type === "model.text")!.payload).toMatchObject({ text: "Let me fetch the users." });

    const [session] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, "conv-json")));
    expect(session).toMatchObject({ agent: "crawler", model: "gpt-4o-2024-08-06", callCount: 3, failureCount: 3 });

    // guard.check sees the escalation made from traces.
    const guard = await app.mutation("guard.check", { id: "g-1", sessionId: "conv-json", callId: "c-g-1", toolName: "http_request", args: { url: "https://api.example.com/v1/orders" } }, { key });
    expect(guard.body.result!.data).toMatchObject({ decision: "ask", state: "escalated" });
  });

  it("a re-sent export is a duplicate: nothing is applied twice", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const run = agentRun({ conversationId: "conv-dup", base: Date.now() - 10 * 60_000, url: "https://api.example.com/v1/users", failures: 2 });
    const body = jsonBody(run.spans);
    expect((await postJson(body, key)).status).toBe(200);
    const before = await otelEvents(workspaceId);
    const again = await postJson(body, key);
    expect(again.status).toBe(200);
    expect(json(again)).toEqual({});
    expect(await otelEvents(workspaceId)).toHaveLength(before.length);
    // The same spans in protobuf are the same events too.
    expect((await postProto(protobufBody(run.spans), key)).status).toBe(200);
    expect(await otelEvents(workspaceId)).toHaveLength(before.length);
    expect((await status(key, "http_request")).find((k) => k.failureKey === ESCALATED_KEY)).toMatchObject({ state: "trusted", totalCalls: 2, totalFailures: 2 });
  });

  it("a protobuf export (exporter-trace-otlp-proto's body): Vercel AI SDK spans; the answer is protobuf", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const base = Date.now() - 5 * 60_000;
    const traceId = hex(16);
    const spans = [
      readableSpan({ traceId, name: "ai.generateText.doGenerate", startMs: base, endMs: base + 800, attributes: { "ai.model.id": "claude-sonnet-4", "ai.model.provider": "anthropic.messages", "ai.response.text": "" , "session.id": "vercel-1" } }),
      readableSpan({
        traceId,
        name: "ai.toolCall",
        startMs: base + 1_000,
        endMs: base + 1_200,
        attributes: { "ai.toolCall.name": "bash", "ai.toolCall.id": "toolu_01", "ai.toolCall.args": JSON.stringify({ command: "sudo rm -rf /" }), "session.id": "vercel-1", "operation.name": "ai.toolCall" },
        status: { code: STATUS_ERROR },
        events: [{ name: "exception", ms: base + 1_199, attributes: { "exception.type": "Error", "exception.message": "Permission denied" } }],
      }),
      readableSpan({ traceId, name: "ai.generateText", startMs: base, endMs: base + 2_000, attributes: { "session.id": "vercel-1" } }),
    ];
    const res = await postProto(protobufBody(spans), key);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    expect(decodeExportResponse(res.bytes)).toEqual({});

    const keys = await status(key, "bash");
    expect(keys.find((k) => k.failureKey === "bash|command=sudo")).toMatchObject({ state: "blocked" });
    const rows = await otelEvents(workspaceId);
    // The inference span with empty text is a model.text with empty text (SPEC 7.4).
    expect(rows.map((r) => [r.type, r.callId, r.model])).toEqual([
      ["model.text", null, "claude-sonnet-4"],
      ["tool.call", "toolu_01", "claude-sonnet-4"],
      ["tool.result", "toolu_01", "claude-sonnet-4"],
    ]);
    expect(rows[2].failed).toBe(true);
  });

  it("gzip, a chunked body and hand-written JSON with base64 ids and numeric intValue", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const run = agentRun({ conversationId: "conv-gzip", base: Date.now() - 3 * 60_000, url: "https://api.example.com/v1/users", failures: 1 });
    const gz = await postJson(gzipSync(jsonBody(run.spans)), key, { "content-encoding": "gzip" });
    expect(gz.status).toBe(200);
    expect(json(gz)).toEqual({});
    expect(await otelEvents(workspaceId)).toHaveLength(4);

    // Chunked: a stream without Content-Length, as Node's http exporter sends it.
    const run2 = agentRun({ conversationId: "conv-chunked", base: Date.now() - 2 * 60_000, url: "https://api.example.com/v1/users", failures: 1 });
    const bytes = gzipSync(jsonBody(run2.spans));
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 100) c.enqueue(bytes.subarray(i, i + 100));
        c.close();
      },
    });
    const chunked = await postJson(stream, key, { "content-encoding": "gzip" });
    expect(chunked.status).toBe(200);
    expect(await otelEvents(workspaceId)).toHaveLength(8);

    // Older exporters: base64 ids, numbers for intValue and times, snake-free camelCase.
    const spanIdB64 = randomBytes(8);
    const startNs = BigInt(Date.now() - 60_000) * 1_000_000n;
    const handWritten = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "session.id", value: { stringValue: "hand-1" } }] },
          scopeSpans: [
            {
              scope: { name: "manual" },
              spans: [
                {
                  traceId: randomBytes(16).toString("base64"),
                  spanId: spanIdB64.toString("base64"),
                  name: "execute_tool read_file",
                  kind: 1,
                  startTimeUnixNano: Number(startNs),
                  endTimeUnixNano: String(startNs + 5_000_000n),
                  attributes: [
                    { key: "gen_ai.tool.name", value: { stringValue: "read_file" } },
                    { key: "gen_ai.tool.call.arguments", value: { kvlistValue: { values: [{ key: "path", value: { stringValue: "/etc/hosts" } }, { key: "limit", value: { intValue: 10 } }] } } },
                    { key: "retries", value: { intValue: "2" } },
                  ],
                  status: {},
                },
              ],
            },
          ],
        },
      ],
    };
    const hand = await postJson(JSON.stringify(handWritten), key);
    expect(hand.status).toBe(200);
    expect(json(hand)).toEqual({});
    const rows = (await otelEvents(workspaceId)).filter((r) => r.sessionId === "hand-1");
    expect(rows.map((r) => [r.id, r.type, r.toolName, r.failed])).toEqual([
      [`otel:${spanIdB64.toString("hex")}:call`, "tool.call", "read_file", null],
      [`otel:${spanIdB64.toString("hex")}:result`, "tool.result", "read_file", false],
    ]);
  });

  it("partial success: unmappable spans are counted in rejectedSpans; the rest lands (JSON and protobuf)", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const traceId = hex(16);
    const now = Date.now();
    const old = now - 31 * 24 * 3600 * 1000;
    const spans = [
      readableSpan({ traceId, name: "execute_tool old", startMs: old, endMs: old + 10, attributes: { "gen_ai.tool.name": "old" } }),
      readableSpan({ traceId, name: "ai.toolCall", startMs: now - 1_000, endMs: now - 900, attributes: {} }),
      readableSpan({ traceId, name: "execute_tool fine", startMs: now - 1_000, endMs: now - 900, attributes: { "gen_ai.tool.name": "fine" } }),
      readableSpan({ traceId, name: "HTTP GET", startMs: old, endMs: old + 10 }),
    ];
    const res = await postJson(jsonBody(spans), key);
    expect(res.status).toBe(200);
    const body = json(res);
    expect(Object.keys(body)).toEqual(["partialSuccess"]);
    expect(body.partialSuccess.rejectedSpans).toBe("2");
    expect(body.partialSuccess.errorMessage).toMatch(/^2 spans could not be mapped: 'execute_tool old' .*more than 30 days ago.*'ai\.toolCall' .*no tool name/);
    expect((await otelEvents(workspaceId)).map((r) => r.toolName)).toEqual(["fine", "fine"]);

    const proto = await postProto(protobufBody(spans), key);
    expect(proto.status).toBe(200);
    expect(decodeExportResponse(proto.bytes)).toMatchObject({ partialSuccess: { rejectedSpans: "2" } });
    expect(await otelEvents(workspaceId)).toHaveLength(2);
  });

  it("400 for a body that is not OTLP, in the request's encoding", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    for (const text of ["not json", '{"hello":"world"}', '{"resourceSpans":"x"}']) {
      const res = await postJson(text, key);
      expect(res.status).toBe(400);
      expect(json(res)).toMatchObject({ code: 3, message: expect.any(String) });
    }
    const proto = await postProto(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), key);
    expect(proto.status).toBe(400);
    expect(proto.headers.get("content-type")).toBe("application/x-protobuf");
    expect(decodeStatus(proto.bytes)).toMatchObject({ code: 3 });
    const badGzip = await postJson("{}", key, { "content-encoding": "gzip" });
    expect(badGzip.status).toBe(400);
    expect((await post("{}", { key, contentType: "text/plain" })).status).toBe(415);
    expect(await otelEvents(workspaceId)).toHaveLength(0);
  });

  it("401 without a valid key; nothing is written", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const body = jsonBody(agentRun({ conversationId: "conv-401", base: Date.now() - 60_000, url: "https://x.example.com/a" }).spans);
    const none = await postJson(body, null);
    expect(none.status).toBe(401);
    expect(json(none)).toMatchObject({ code: 16 });
    expect((await postJson(body, "vgl_" + "x".repeat(40))).status).toBe(401);
    expect((await postJson(body, key.slice(0, -2) + "zz")).status).toBe(401);
    const proto = await postProto(protobufBody([]), null);
    expect(proto.status).toBe(401);
    expect(decodeStatus(proto.bytes)).toMatchObject({ code: 16 });
    expect(await otelEvents(workspaceId)).toHaveLength(0);
  });

  it("413 over 1 MiB, before and after gunzip (a zip bomb stops at the cap)", async () => {
    const { key } = await app.seedWorkspace();
    const big = JSON.stringify({ resourceSpans: [], pad: "x".repeat(1024 * 1024) });
    expect((await postJson(big, key)).status).toBe(413);
    const bomb = gzipSync(Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [], pad: "y".repeat(16 * 1024 * 1024) }] }] })));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const res = await postJson(bomb, key, { "content-encoding": "gzip" });
    expect(res.status).toBe(413);
    expect(json(res)).toMatchObject({ code: 8 });
  });

  it("429 with Retry-After over the key's rate limit", async () => {
    const { key } = await app.seedWorkspace();
    process.env.VIGIL_RATE_LIMIT_PER_MINUTE = "2";
    try {
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 3; i++) {
        last = await postJson("{}", key);
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      delete process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
    }
  });
});
