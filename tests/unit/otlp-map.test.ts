import { describe, expect, it } from "vitest";
import type { Attributes, OtlpSpan } from "@/server/otlp/decode";
import { argsOf, assistantOutputOf, classifySpan, describeRejections, failureOf, httpStatusOf, mapTrace, modelOf, ownSessionId, requestedCallIdsOf, resultOf, toolNameOf } from "@/server/otlp/map";

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const TRACE = "0af7651916cd43dd8448eb211c80319c";
let n = 0;
const nextSpanId = () => (++n).toString(16).padStart(16, "a");
const ns = (ms: number) => BigInt(ms) * 1_000_000n;

function span(over: Partial<OtlpSpan> & { attrs?: Attributes; startMs?: number; endMs?: number } = {}): OtlpSpan {
  const { attrs, startMs = NOW - 10_000, endMs = NOW - 9_000, ...rest } = over;
  return {
    traceId: TRACE,
    spanId: nextSpanId(),
    parentSpanId: null,
    name: "span",
    startTimeUnixNano: ns(startMs),
    endTimeUnixNano: ns(endMs),
    attributes: attrs ?? {},
    resource: {},
    scope: { name: "test", version: null },
    events: [],
    status: { code: 0, message: null },
    ...rest,
  };
}

describe("classifySpan — every row of the SPEC 7.4 table", () => {
  it.each([
    ["gen_ai.operation.name = execute_tool", span({ name: "whatever", attrs: { "gen_ai.operation.name": "execute_tool" } }), "tool"],
    ["name execute_tool …", span({ name: "execute_tool get_weather" }), "tool"],
    ["Vercel ai.toolCall", span({ name: "ai.toolCall" }), "tool"],
    ["OpenInference TOOL", span({ name: "search", attrs: { "openinference.span.kind": "TOOL" } }), "tool"],
    ["Traceloop tool", span({ name: "search.tool", attrs: { "traceloop.span.kind": "tool" } }), "tool"],
    ["chat …", span({ name: "chat gpt-4o" }), "inference"],
    ["gen_ai.operation.name = chat", span({ name: "llm", attrs: { "gen_ai.operation.name": "chat" } }), "inference"],
    ["ai.generateText.doGenerate", span({ name: "ai.generateText.doGenerate" }), "inference"],
    ["ai.streamText.doStream", span({ name: "ai.streamText.doStream" }), "inference"],
    ["OpenInference LLM", span({ name: "ChatOpenAI", attrs: { "openinference.span.kind": "LLM" } }), "inference"],
    ["invoke_agent …", span({ name: "invoke_agent planner" }), "agent"],
    ["gen_ai.operation.name = invoke_agent", span({ name: "agent run", attrs: { "gen_ai.operation.name": "invoke_agent" } }), "agent"],
    ["an HTTP span", span({ name: "GET /v1/users", attrs: { "http.request.method": "GET" } }), null],
    ["the Vercel outer ai.generateText", span({ name: "ai.generateText" }), null],
    ["a name that only starts like chat", span({ name: "chatter" }), null],
    ["OpenInference CHAIN", span({ name: "chain", attrs: { "openinference.span.kind": "CHAIN" } }), null],
    ["ai.operationId = ai.toolCall", span({ name: "x", attrs: { "ai.operationId": "ai.toolCall" } }), "tool"],
    ["pydantic-ai tool span", span({ name: "running tool", attrs: { "gen_ai.tool.name": "f", tool_arguments: "{}" } }), "tool"],
    ["text_completion …", span({ name: "text_completion m" }), "inference"],
    ["generate_content …", span({ name: "generate_content gemini" }), "inference"],
    ["OpenLLMetry llm.request.type = chat", span({ name: "openai.chat", attrs: { "llm.request.type": "chat" } }), "inference"],
    ["OpenLLMetry llm.request.type = completion", span({ name: "openai.completion", attrs: { "llm.request.type": "completion" } }), "inference"],
    ["OpenInference AGENT", span({ name: "agent", attrs: { "openinference.span.kind": "AGENT" } }), "agent"],
    ["Traceloop agent", span({ name: "a.agent", attrs: { "traceloop.span.kind": "agent" } }), "agent"],
  ])("%s", (_label, s, kind) => {
    expect(classifySpan(s)).toBe(kind);
  });

  it("a tool span wins over its other markers", () => {
    expect(classifySpan(span({ name: "chat gpt", attrs: { "gen_ai.operation.name": "execute_tool" } }))).toBe("tool");
  });
});

describe("attribute precedence", () => {
  it("tool name: gen_ai.tool.name > ai.toolCall.name > tool.name > traceloop.entity.name > the execute_tool name", () => {
    const all = { "gen_ai.tool.name": "a", "ai.toolCall.name": "b", "tool.name": "c", "traceloop.entity.name": "d" };
    expect(toolNameOf(span({ name: "execute_tool z", attrs: all }))).toBe("a");
    expect(toolNameOf(span({ name: "execute_tool z", attrs: { ...all, "gen_ai.tool.name": "" } }))).toBe("b");
    expect(toolNameOf(span({ attrs: { "tool.name": "c", "traceloop.entity.name": "d" } }))).toBe("c");
    expect(toolNameOf(span({ attrs: { "traceloop.entity.name": "d" } }))).toBe("d");
    expect(toolNameOf(span({ name: "execute_tool get_weather" }))).toBe("get_weather");
    expect(toolNameOf(span({ name: "ai.toolCall" }))).toBeUndefined();
  });

  it("args: gen_ai.tool.call.arguments > ai.toolCall.args > input.value; JSON parsed; other values wrapped", () => {
    expect(argsOf(span({ attrs: { "gen_ai.tool.call.arguments": '{"city":"Paris"}', "ai.toolCall.args": '{"x":1}', "input.value": '{"y":2}' } }))).toEqual({ city: "Paris" });
    expect(argsOf(span({ attrs: { "ai.toolCall.args": '{"x":1}', "input.value": '{"y":2}' } }))).toEqual({ x: 1 });
    expect(argsOf(span({ attrs: { "input.value": '{"y":2}' } }))).toEqual({ y: 2 });
    expect(argsOf(span({ attrs: { "input.value": "ls -la" } }))).toEqual({ input: "ls -la" });
    expect(argsOf(span({ attrs: { "input.value": "[1,2]" } }))).toEqual({ input: [1, 2] });
    expect(argsOf(span({ attrs: { "gen_ai.tool.call.arguments": { path: "/tmp" } } }))).toEqual({ path: "/tmp" });
    expect(argsOf(span())).toEqual({});
    expect(argsOf(span({ attrs: { "traceloop.entity.input": JSON.stringify({ args: [], kwargs: { city: "Oslo" } }) } }))).toEqual({ city: "Oslo" });
    expect(argsOf(span({ attrs: { tool_arguments: '{"a":1}' } }))).toEqual({ a: 1 });
    expect(argsOf(span({ attrs: { "gcp.vertex.agent.tool_call_args": '{"b":2}' } }))).toEqual({ b: 2 });
    expect(argsOf(span({ attrs: { "input.value": '[{"q":"x"}]' } }))).toEqual({ q: "x" });
  });

  it("model: gen_ai.response.model > gen_ai.request.model > ai.model.id > llm.model_name", () => {
    const all = { "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.request.model": "gpt-4o", "ai.model.id": "m3", "llm.model_name": "m4" };
    expect(modelOf(span({ attrs: all }))).toBe("gpt-4o-2024-08-06");
    expect(modelOf(span({ attrs: { ...all, "gen_ai.response.model": null } }))).toBe("gpt-4o");
    expect(modelOf(span({ attrs: { "ai.model.id": "m3", "llm.model_name": "m4" } }))).toBe("m3");
    expect(modelOf(span({ attrs: { "llm.model_name": "m4" } }))).toBe("m4");
    expect(modelOf(span())).toBeUndefined();
  });

  it("session keys, in order; span attributes over resource attributes", () => {
    expect(ownSessionId(span({ attrs: { "gen_ai.conversation.id": "conv-1", "session.id": "sess-1" } }))).toBe("conv-1");
    expect(ownSessionId(span({ attrs: { "session.id": "sess-1", "ai.telemetry.metadata.sessionId": "x" } }))).toBe("sess-1");
    expect(ownSessionId(span({ attrs: { "ai.telemetry.metadata.sessionId": "m" } }))).toBe("m");
    expect(ownSessionId(span({ attrs: { "ai.telemetry.metadata.conversationId": "mc" } }))).toBe("mc");
    expect(ownSessionId(span({ attrs: { "traceloop.association.properties.session_id": "tl" } }))).toBe("tl");
    expect(ownSessionId(span({ attrs: { "gcp.vertex.agent.session_id": "adk" } }))).toBe("adk");
    expect(ownSessionId(span())).toBeUndefined();
    expect(ownSessionId(span({ attrs: { "session.id": "span" }, resource: { "session.id": "resource" } }))).toBe("span");
  });

  it("assistant output: text parts of gen_ai.output.messages, else ai.response.text / OpenLLMetry / gen_ai.choice; reasoning only flagged", () => {
    const messages = JSON.stringify([
      { role: "assistant", parts: [{ type: "text", content: "Checking the weather." }, { type: "tool_call", id: "c1", name: "get_weather", arguments: {} }, { type: "text", content: "One moment." }], finish_reason: "tool_call" },
    ]);
    expect(assistantOutputOf(span({ attrs: { "gen_ai.output.messages": messages, "ai.response.text": "ignored" } }))).toEqual({ text: "Checking the weather.\nOne moment.", reasoningOnly: false });
    expect(assistantOutputOf(span({ attrs: { "ai.response.text": "Hello" } }))?.text).toBe("Hello");
    expect(assistantOutputOf(span({ attrs: { "gen_ai.completion.0.content": "tl" } }))?.text).toBe("tl");
    expect(assistantOutputOf(span({ attrs: { "llm.output_messages.0.message.content": "oi" } }))?.text).toBe("oi");
    expect(assistantOutputOf(span({ attrs: { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", name: "x" }] }]) } }))).toEqual({ text: "", reasoningOnly: false });
    expect(assistantOutputOf(span({ attrs: { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "reasoning", content: "hmm" }] }]) } }))).toEqual({ text: "", reasoningOnly: true });
    expect(assistantOutputOf(span({ events: [{ name: "gen_ai.choice", timeUnixNano: null, attributes: { message: JSON.stringify({ content: "ev" }) } }] }))?.text).toBe("ev");
    expect(assistantOutputOf(span())).toBeUndefined();
  });

  it("results and HTTP status", () => {
    expect(resultOf(span({ attrs: { "gen_ai.tool.call.result": '{"status_code":500,"error":"boom"}' } }))).toEqual({ status_code: 500, error: "boom" });
    expect(resultOf(span({ attrs: { "ai.toolCall.result": '"ok"' } }))).toBe("ok");
    expect(resultOf(span({ attrs: { "output.value": "plain" } }))).toBe("plain");
    expect(resultOf(span({ attrs: { "traceloop.entity.output": "{}" } }))).toEqual({});
    expect(resultOf(span())).toBeUndefined();
    expect(httpStatusOf(span({ attrs: { "http.response.status_code": 404 } }))).toBe(404);
    expect(httpStatusOf(span({ attrs: { "error.type": "503" } }))).toBe(503);
    expect(httpStatusOf(span({ attrs: { "error.type": "TimeoutError" } }))).toBeUndefined();
  });
});

describe("failure detection", () => {
  const exception = (attributes: Attributes) => ({ name: "exception", timeUnixNano: ns(NOW - 9_500), attributes });

  it("only status code 2 (ERROR) fails", () => {
    expect(failureOf(span({ status: { code: 0, message: null } }))).toBeNull();
    expect(failureOf(span({ status: { code: 1, message: "fine" }, attrs: { "error.type": "Timeout" } }))).toBeNull();
  });

  it("the error: status message > exception event > error.type > a generic message", () => {
    const ev = exception({ "exception.type": "TimeoutError", "exception.message": "timed out after 30s" });
    expect(failureOf(span({ status: { code: 2, message: "503 Service Unavailable" }, events: [ev], attrs: { "error.type": "x" } }))).toBe("503 Service Unavailable");
    expect(failureOf(span({ status: { code: 2, message: null }, events: [ev], attrs: { "error.type": "x" } }))).toBe("TimeoutError: timed out after 30s");
    expect(failureOf(span({ status: { code: 2, message: null }, events: [exception({ "exception.message": "boom" })] }))).toBe("boom");
    expect(failureOf(span({ status: { code: 2, message: null }, attrs: { "error.type": "ConnectionRefused" } }))).toBe("ConnectionRefused");
    expect(failureOf(span({ status: { code: 2, message: null } }))).toBe("Span status ERROR");
  });
});

describe("mapTrace", () => {
  const types = (events: { event: { type: string; toolName?: string } }[]) => events.map((e) => `${e.event.type}${"toolName" in e.event && e.event.toolName ? ":" + e.event.toolName : ""}`);
  const child = (parent: OtlpSpan, over: Parameters<typeof span>[0]) => span({ parentSpanId: parent.spanId, ...over });

  it("a tool span → tool.call at the start and tool.result at the end, ids from the span id", () => {
    const s = span({
      name: "execute_tool get_weather",
      startMs: NOW - 5_000,
      endMs: NOW - 3_750,
      attrs: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city":"Paris"}', "gen_ai.conversation.id": "conv-1" },
    });
    const out = mapTrace([s], NOW);
    expect(out.rejected).toEqual([]);
    expect(out.events.map((e) => e.event)).toEqual([
      { type: "tool.call", id: `otel:${s.spanId}:call`, sessionId: "conv-1", callId: "call_1", toolName: "get_weather", args: { city: "Paris" }, ts: NOW - 5_000 },
      { type: "tool.result", id: `otel:${s.spanId}:result`, sessionId: "conv-1", callId: "call_1", toolName: "get_weather", args: { city: "Paris" }, durationMs: 1250, ts: NOW - 3_750 },
    ]);
    expect(out.sessions).toEqual(new Map([["conv-1", NOW - 3_750]]));
  });

  it("the conversation id on the agent and chat spans only: the tool spans join the same session", () => {
    const agent = span({ name: "invoke_agent", startMs: NOW - 30_000, endMs: NOW - 1_000, attrs: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather", "gen_ai.conversation.id": "conv-9" } });
    const chat = child(agent, { name: "chat gpt-4o", startMs: NOW - 29_000, endMs: NOW - 28_000, attrs: { "gen_ai.request.model": "gpt-4o", "gen_ai.conversation.id": "conv-9" } });
    const tool = child(agent, { name: "execute_tool get_weather", startMs: NOW - 27_000, endMs: NOW - 26_000, attrs: { "gen_ai.tool.name": "get_weather" } });
    const orphan = span({ name: "execute_tool x", parentSpanId: "ffffffffffffffff", startMs: NOW - 20_000, endMs: NOW - 19_000 });
    const out = mapTrace([tool, orphan, chat, agent], NOW);
    expect(new Set(out.events.map((e) => e.event.sessionId))).toEqual(new Set(["conv-9"]));
    expect(types(out.events)).toEqual(["session.start", "model.text", "tool.call:get_weather", "tool.result:get_weather", "tool.call:x", "tool.result:x"]);
    expect(out.events[0].event).toMatchObject({ agent: "weather" });
  });

  it("the model of a tool call is the requesting inference span's (sibling before it, or its parent)", () => {
    const agent = span({ name: "invoke_agent", startMs: NOW - 30_000, endMs: NOW - 1_000, attrs: { "gen_ai.operation.name": "invoke_agent" } });
    const chat1 = child(agent, { name: "chat a", startMs: NOW - 29_000, endMs: NOW - 28_000, attrs: { "gen_ai.response.model": "model-a" } });
    const tool1 = child(agent, { name: "execute_tool one", startMs: NOW - 27_500, endMs: NOW - 27_000 });
    const chat2 = child(agent, { name: "chat b", startMs: NOW - 26_000, endMs: NOW - 25_000, attrs: { "gen_ai.request.model": "model-b" } });
    const tool2 = child(agent, { name: "execute_tool two", startMs: NOW - 24_000, endMs: NOW - 23_000 });
    const vercelLlm = child(agent, { name: "ai.generateText.doGenerate", startMs: NOW - 22_000, endMs: NOW - 21_000, attrs: { "ai.model.id": "model-c" } });
    const vercelTool = child(vercelLlm, { name: "ai.toolCall", startMs: NOW - 21_500, endMs: NOW - 21_200, attrs: { "ai.toolCall.name": "three" } });
    const out = mapTrace([vercelTool, tool2, tool1, chat2, chat1, vercelLlm, agent], NOW);
    const calls = out.events.filter((e) => e.event.type === "tool.call").map((e) => [(e.event as { toolName: string }).toolName, e.event.model]);
    expect(calls).toEqual([
      ["one", "model-a"],
      ["two", "model-b"],
      ["three", "model-c"],
    ]);
  });

  it("agent name: never a model id from a span name; default without one; functionId for Vercel spans", () => {
    const a = span({ name: "invoke_agent gpt-4o-mini", attrs: { "gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "gpt-4o-mini" } });
    expect(mapTrace([a], NOW).events[0].event).toMatchObject({ type: "session.start", agent: "default", model: "gpt-4o-mini" });
    const root = span({ name: "ai.generateText", startMs: NOW - 9_000, endMs: NOW - 1_000, attrs: { "ai.telemetry.functionId": "support-bot", "ai.telemetry.metadata.sessionId": "s-7" } });
    const llm = child(root, { name: "ai.generateText.doGenerate", startMs: NOW - 8_000, endMs: NOW - 7_000, attrs: { "ai.model.id": "m", "ai.telemetry.functionId": "support-bot" } });
    const out = mapTrace([llm, root], NOW);
    expect(out.events.map((e) => e.event)).toEqual([
      { type: "session.start", id: `otel:${root.spanId}:start`, sessionId: "s-7", agent: "support-bot", ts: NOW - 9_000 },
      { type: "model.text", id: `otel:${llm.spanId}:text`, sessionId: "s-7", text: "", model: "m", ts: NOW - 7_000 },
    ]);
    const oi = span({ name: "agent", attrs: { "openinference.span.kind": "AGENT", "agent.name": "oi-agent" } });
    expect(mapTrace([oi], NOW).events[0].event).toMatchObject({ agent: "oi-agent" });
    const tl = span({ name: "x.agent", attrs: { "traceloop.span.kind": "agent", "traceloop.entity.name": "tl-agent" } });
    expect(mapTrace([tl], NOW).events[0].event).toMatchObject({ agent: "tl-agent" });
  });

  it("a nested agent is a child session <session>/<agent> with its own spans", () => {
    const outer = span({ name: "invoke_agent", startMs: NOW - 30_000, endMs: NOW - 1_000, attrs: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner", "gen_ai.conversation.id": "c1" } });
    const inner = child(outer, { name: "invoke_agent", startMs: NOW - 20_000, endMs: NOW - 10_000, attrs: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher" } });
    const innerTool = child(inner, { name: "execute_tool search", startMs: NOW - 19_000, endMs: NOW - 18_000 });
    const outerTool = child(outer, { name: "execute_tool write", startMs: NOW - 5_000, endMs: NOW - 4_000 });
    const out = mapTrace([innerTool, inner, outerTool, outer], NOW);
    const bySession = (sid: string) => out.events.filter((e) => e.event.sessionId === sid).map((e) => `${e.event.type}${"agent" in e.event ? ":" + e.event.agent : ""}${"toolName" in e.event ? ":" + e.event.toolName : ""}`);
    expect(bySession("c1")).toEqual(["session.start:planner", "tool.call:write", "tool.result:write"]);
    expect(bySession("c1/researcher")).toEqual(["session.start:researcher", "tool.call:search", "tool.result:search"]);
  });

  it("tool results: a 404 carries httpStatus; a returned {status_code: 500, error} is left to the engine as a result", () => {
    const notFound = span({ name: "execute_tool fetch", status: { code: 2, message: null }, attrs: { "error.type": "404" } });
    const returned = span({ name: "execute_tool api", attrs: { "gen_ai.tool.call.result": JSON.stringify({ status_code: 500, error: "upstream" }) } });
    const [, r1] = mapTrace([notFound], NOW).events.map((e) => e.event);
    expect(r1).toMatchObject({ type: "tool.result", success: false, error: "404", httpStatus: 404 });
    const [, r2] = mapTrace([returned], NOW).events.map((e) => e.event);
    expect(r2).toMatchObject({ type: "tool.result", result: { status_code: 500, error: "upstream" } });
    expect(r2).not.toHaveProperty("success");
  });

  it("an OpenInference TOOL span is named by its span name; reasoning-only output → reasoningOnly", () => {
    const t = span({ name: "lookup", attrs: { "openinference.span.kind": "TOOL", "input.value": '[{"id":3}]', "output.value": '{"ok":true}' } });
    expect(mapTrace([t], NOW).events[1].event).toMatchObject({ toolName: "lookup", args: { id: 3 }, result: { ok: true } });
    const r = span({ name: "chat m", attrs: { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "reasoning", content: "…" }] }]) } });
    expect(mapTrace([r], NOW).events[0].event).toMatchObject({ type: "model.text", text: "", reasoningOnly: true });
  });

  it("events are ordered by time across spans, whatever the arrival order", () => {
    const agent = span({ name: "invoke_agent a", startMs: NOW - 30_000, endMs: NOW - 1_000 });
    const t1 = child(agent, { name: "execute_tool one", startMs: NOW - 20_000, endMs: NOW - 10_000 });
    const t2 = child(agent, { name: "execute_tool two", startMs: NOW - 15_000, endMs: NOW - 12_000 });
    expect(types(mapTrace([t1, t2, agent], NOW).events)).toEqual(["session.start", "tool.call:one", "tool.call:two", "tool.result:two", "tool.result:one"]);
    expect(mapTrace([agent, t2, t1], NOW)).toEqual(mapTrace([t1, t2, agent], NOW));
  });

  it("other spans are ignored; unusable spans are rejected and the rest still map", () => {
    const old = span({ name: "execute_tool a", startMs: NOW - 31 * 86_400_000, endMs: NOW - 31 * 86_400_000 + 10 });
    const future = span({ name: "execute_tool b", startMs: NOW, endMs: NOW + 6 * 60_000 });
    const noName = span({ name: "ai.toolCall" });
    const bigArgs = span({ name: "execute_tool write", attrs: { "gen_ai.tool.call.arguments": JSON.stringify({ content: "x".repeat(70_000) }) } });
    const ok = span({ name: "execute_tool c", startMs: NOW - 1_000, endMs: NOW + 60_000 });
    const http = span({ name: "GET /" });
    const out = mapTrace([old, future, noName, bigArgs, ok, http], NOW);
    expect(out.rejected.map((r) => r.reason)).toEqual([
      "span started more than 30 days ago",
      expect.stringContaining("no tool name"),
      "tool arguments exceed 64 KiB of JSON",
      "span ends more than 5 minutes in the future",
    ]);
    expect(out.events.map((e) => e.event.id)).toEqual([`otel:${ok.spanId}:call`, `otel:${ok.spanId}:result`]);
  });

  it("the same span twice maps once; an end before the start is treated as the start", () => {
    const s = span({ name: "execute_tool x", startMs: NOW - 5_000, endMs: NOW - 6_000 });
    const out = mapTrace([s, { ...s }], NOW);
    expect(out.events).toHaveLength(2);
    expect(out.events[1].event).toMatchObject({ ts: NOW - 5_000, durationMs: 0 });
  });
});

describe("the model of a tool call when its trace arrives in parts", () => {
  const child = (parent: OtlpSpan, over: Parameters<typeof span>[0]) => span({ parentSpanId: parent.spanId, ...over });
  // A step that asked for tools, as GenAI instrumentations record it, and the tool span it requested.
  const step = (parent: OtlpSpan, startMs: number, model: string, callIds: string[]) =>
    child(parent, {
      name: `chat ${model}`,
      startMs,
      endMs: startMs + 500,
      attrs: {
        "gen_ai.response.model": model,
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: callIds.map((id) => ({ type: "tool_call", id, name: "lookup" })) }]),
      },
    });
  const toolFor = (parent: OtlpSpan, startMs: number, callId: string) =>
    child(parent, { name: "execute_tool lookup", startMs, endMs: startMs + 200, attrs: { "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": callId } });
  const toolModels = (out: ReturnType<typeof mapTrace>) =>
    out.events.filter((e) => e.event.type === "tool.result").map((e): [string, string | null] => [(e.event as { callId: string }).callId, e.event.model ?? null]);

  it("every subset of the trace: a tool call carries its step's model, or waits for it until the trace settles", () => {
    const agent = span({ name: "invoke_agent helper", startMs: NOW - 30_000, endMs: NOW - 1_000, attrs: { "gen_ai.agent.name": "helper" } });
    const step1 = step(agent, NOW - 29_000, "model-a", ["c1", "c2"]);
    const tool1 = toolFor(agent, NOW - 28_000, "c1");
    const tool2 = toolFor(agent, NOW - 27_000, "c2");
    const step2 = step(agent, NOW - 26_000, "model-b", ["c3"]);
    const tool3 = toolFor(agent, NOW - 25_000, "c3");
    const step3 = step(agent, NOW - 24_000, "model-c", []);
    const all = [agent, step1, tool1, tool2, step2, tool3, step3];
    const expected = new Map([
      ["c1", "model-a"],
      ["c2", "model-a"],
      ["c3", "model-b"],
    ]);
    for (let mask = 1; mask < 1 << all.length; mask++) {
      const arrived = all.filter((_, i) => mask & (1 << i));
      const out = mapTrace(arrived, NOW, { settled: false });
      for (const [callId, model] of toolModels(out)) expect({ mask, callId, model }).toEqual({ mask, callId, model: expected.get(callId) });
      // A tool span is held exactly when its step is missing.
      const held = arrived.filter((s) => [tool1, tool2].includes(s) ? !arrived.includes(step1) : s === tool3 && !arrived.includes(step2));
      expect({ mask, held: out.held }).toEqual({ mask, held: held.map((s) => s.spanId) });
    }
  });

  it("once the trace settles nothing is held: a call whose step never came has no model of its own", () => {
    const agent = span({ name: "invoke_agent helper", startMs: NOW - 30_000, endMs: NOW - 1_000 });
    const tool = toolFor(agent, NOW - 28_000, "c1");
    const out = mapTrace([agent, tool, step(agent, NOW - 26_000, "model-b", ["c9"])], NOW, { settled: true });
    expect(out.held).toEqual([]);
    expect(toolModels(out)).toEqual([["c1", null]]);
  });

  it("the call id finds the requesting step wherever it sits; a step listing other calls is never taken for it", () => {
    const agent = span({ name: "invoke_agent helper", startMs: NOW - 30_000, endMs: NOW - 1_000 });
    // Both steps ran before the tools (parallel tool execution after a planning step).
    const step1 = step(agent, NOW - 29_000, "model-a", ["c1"]);
    const step2 = step(agent, NOW - 28_000, "model-b", ["c2"]);
    const tool1 = toolFor(agent, NOW - 27_000, "c1");
    const tool2 = toolFor(agent, NOW - 27_000, "c2");
    expect(toolModels(mapTrace([agent, step1, step2, tool1, tool2], NOW))).toEqual([
      ["c1", "model-a"],
      ["c2", "model-b"],
    ]);
    expect(mapTrace([agent, step1, tool1, tool2], NOW, { settled: false }).held).toEqual([tool2.spanId]);
    // Settled: ids that never matched are not trusted over the tree (the nearest earlier step).
    expect(toolModels(mapTrace([agent, step1, tool1, tool2], NOW, { settled: true }))).toEqual([
      ["c1", "model-a"],
      ["c2", "model-a"],
    ]);
  });

  it("the agent's configured model is only the fallback of a call whose step is missing", () => {
    const agent = span({ name: "invoke_agent helper", startMs: NOW - 30_000, endMs: NOW - 1_000, attrs: { "gen_ai.request.model": "gpt-4o" } });
    const tool = toolFor(agent, NOW - 28_000, "c1");
    expect(mapTrace([agent, tool], NOW, { settled: false }).held).toEqual([tool.spanId]);
    expect(toolModels(mapTrace([agent, tool], NOW, { settled: true }))).toEqual([["c1", "gpt-4o"]]);
    expect(toolModels(mapTrace([agent, step(agent, NOW - 29_000, "gpt-4o-2024-08-06", ["c1"]), tool], NOW, { settled: false }))).toEqual([["c1", "gpt-4o-2024-08-06"]]);
  });

  it("Vercel: a step that only answered is never the requester, even when it started in the tool's millisecond", () => {
    // AI SDK timestamps are whole milliseconds: the tools and the answering step 2 start together.
    const root = span({ name: "ai.generateText", startMs: NOW - 10, endMs: NOW, attrs: { "ai.operationId": "ai.generateText", "ai.model.id": "mock-model" } });
    const vercelStep = (startMs: number, model: string, over: Record<string, unknown>) =>
      child(root, { name: "ai.generateText.doGenerate", startMs, endMs: startMs + 1, attrs: { "ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "mock-model", "gen_ai.response.model": model, ...over } });
    const step1 = vercelStep(NOW - 9, "model-step-1", { "ai.response.finishReason": "tool-calls", "ai.response.toolCalls": JSON.stringify([{ toolCallId: "call-1", toolName: "lookup" }]) });
    const tool = child(root, { name: "ai.toolCall", startMs: NOW - 8, endMs: NOW - 7, attrs: { "ai.operationId": "ai.toolCall", "ai.toolCall.name": "lookup", "ai.toolCall.id": "call-1" } });
    const step2 = vercelStep(NOW - 8, "model-step-2", { "ai.response.finishReason": "stop", "ai.response.text": "done" });
    // Step 1 not there yet: the call waits for it instead of taking step 2's model.
    expect(mapTrace([root, tool, step2], NOW, { settled: false }).held).toEqual([tool.spanId]);
    expect(toolModels(mapTrace([root, step1, tool, step2], NOW, { settled: false }))).toEqual([["call-1", "model-step-1"]]);
    // A step that ended for tool calls without listing them still may have requested it (outputs not recorded).
    const unlisted = vercelStep(NOW - 8, "model-step-x", { "ai.response.finishReason": "tool-calls" });
    expect(toolModels(mapTrace([root, tool, unlisted], NOW, { settled: false }))).toEqual([["call-1", "model-step-x"]]);
  });

  it("a tool span without a model-issued call id (OpenInference traceTool) never waits", () => {
    const agent = span({ name: "agent", startMs: NOW - 30_000, endMs: NOW - 1_000, attrs: { "openinference.span.kind": "AGENT", "agent.name": "a" } });
    const tool = child(agent, { name: "lookup_order", startMs: NOW - 28_000, endMs: NOW - 27_000, attrs: { "openinference.span.kind": "TOOL" } });
    expect(mapTrace([agent, tool], NOW, { settled: false }).held).toEqual([]);
  });

  it("reads the calls a step made from Vercel, GenAI, OpenLLMetry and OpenInference attributes", () => {
    expect(requestedCallIdsOf(span({ attrs: { "ai.response.toolCalls": JSON.stringify([{ toolCallId: "v1", toolName: "f" }]) } }))).toEqual(new Set(["v1"]));
    expect(requestedCallIdsOf(span({ attrs: { "gen_ai.completion.0.tool_calls.0.id": "o1", "gen_ai.completion.0.tool_calls.1.id": "o2" } }))).toEqual(new Set(["o1", "o2"]));
    expect(requestedCallIdsOf(span({ attrs: { "llm.output_messages.0.message.tool_calls.0.tool_call.id": "i1" } }))).toEqual(new Set(["i1"]));
    expect(requestedCallIdsOf(span({ attrs: { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "hi" }] }]) } }))).toEqual(new Set());
    // Not recorded, or a call without an id: the step does not say.
    expect(requestedCallIdsOf(span({ attrs: { "gen_ai.response.model": "m" } }))).toBeUndefined();
    expect(requestedCallIdsOf(span({ attrs: { "gen_ai.output.messages": JSON.stringify([{ parts: [{ type: "tool_call", name: "f" }] }]) } }))).toBeUndefined();
  });
});

describe("describeRejections", () => {
  it("counts and names the first few", () => {
    const r = Array.from({ length: 7 }, (_, i) => ({ spanId: `s${i}`, name: "execute_tool x", reason: "span started more than 30 days ago" }));
    const msg = describeRejections(r);
    expect(msg.startsWith("7 spans could not be mapped: 'execute_tool x' (span s0): span started more than 30 days ago")).toBe(true);
    expect(msg.endsWith("; and 2 more")).toBe(true);
    expect(describeRejections([{ spanId: null, reason: "span has no valid spanId" }])).toBe("1 span could not be mapped: (span ?): span has no valid spanId");
  });
});
