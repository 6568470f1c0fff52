import { describe, expect, it } from "vitest";
import type { Attributes, OtlpSpan } from "@/server/otlp/decode";
import { argsOf, assistantTextOf, classifySpan, describeRejections, failureOf, mapSpans, modelOf, sessionIdOf, toolNameOf } from "@/server/otlp/map";

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
  });

  it("model: gen_ai.response.model > gen_ai.request.model > ai.model.id > llm.model_name", () => {
    const all = { "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.request.model": "gpt-4o", "ai.model.id": "m3", "llm.model_name": "m4" };
    expect(modelOf(span({ attrs: all }))).toBe("gpt-4o-2024-08-06");
    expect(modelOf(span({ attrs: { ...all, "gen_ai.response.model": null } }))).toBe("gpt-4o");
    expect(modelOf(span({ attrs: { "ai.model.id": "m3", "llm.model_name": "m4" } }))).toBe("m3");
    expect(modelOf(span({ attrs: { "llm.model_name": "m4" } }))).toBe("m4");
    expect(modelOf(span())).toBeUndefined();
  });

  it("session id: gen_ai.conversation.id > session.id > trace id; span attributes over resource attributes", () => {
    expect(sessionIdOf(span({ attrs: { "gen_ai.conversation.id": "conv-1", "session.id": "sess-1" } }))).toBe("conv-1");
    expect(sessionIdOf(span({ attrs: { "session.id": "sess-1" } }))).toBe("sess-1");
    expect(sessionIdOf(span())).toBe(TRACE);
    expect(sessionIdOf(span({ resource: { "session.id": "from-resource" } }))).toBe("from-resource");
    expect(sessionIdOf(span({ attrs: { "session.id": "span" }, resource: { "session.id": "resource" } }))).toBe("span");
  });

  it("assistant text: text parts of assistant messages in gen_ai.output.messages, else ai.response.text", () => {
    const messages = JSON.stringify([
      { role: "assistant", parts: [{ type: "text", content: "Checking the weather." }, { type: "tool_call", id: "c1", name: "get_weather", arguments: {} }, { type: "text", content: "One moment." }], finish_reason: "tool_call" },
    ]);
    expect(assistantTextOf(span({ attrs: { "gen_ai.output.messages": messages, "ai.response.text": "ignored" } }))).toBe("Checking the weather.\nOne moment.");
    expect(assistantTextOf(span({ attrs: { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", content: "legacy shape" }]) } }))).toBe("legacy shape");
    expect(assistantTextOf(span({ attrs: { "ai.response.text": "Hello" } }))).toBe("Hello");
    expect(assistantTextOf(span({ attrs: { "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", name: "x" }] }]) } }))).toBeUndefined();
    expect(assistantTextOf(span({ attrs: { "gen_ai.output.messages": "not json", "ai.response.text": "fallback" } }))).toBe("fallback");
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

describe("mapSpans", () => {
  it("a tool span → tool.call at the start and tool.result at the end, ids from the span id", () => {
    const s = span({
      name: "execute_tool get_weather",
      startMs: NOW - 5_000,
      endMs: NOW - 3_750,
      attrs: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city":"Paris"}', "gen_ai.conversation.id": "conv-1" },
    });
    const out = mapSpans([s], NOW);
    expect(out).toMatchObject({ mappedSpans: 1, ignoredSpans: 0, rejected: [] });
    expect(out.events).toEqual([
      { type: "tool.call", id: `otel:${s.spanId}:call`, sessionId: "conv-1", callId: "call_1", toolName: "get_weather", args: { city: "Paris" }, ts: NOW - 5_000 },
      { type: "tool.result", id: `otel:${s.spanId}:result`, sessionId: "conv-1", callId: "call_1", toolName: "get_weather", args: { city: "Paris" }, success: true, durationMs: 1250, ts: NOW - 3_750 },
    ]);
  });

  it("a failed Vercel ai.toolCall: call id defaults to ai.toolCall.id, error from the exception event", () => {
    const s = span({
      name: "ai.toolCall",
      attrs: { "ai.toolCall.name": "fetch", "ai.toolCall.id": "tc-9", "ai.toolCall.args": '{"url":"https://api.example.com/v1/x"}' },
      status: { code: 2, message: null },
      events: [{ name: "exception", timeUnixNano: ns(NOW - 9_100), attributes: { "exception.type": "Error", "exception.message": "HTTP 503" } }],
    });
    const [call, result] = mapSpans([s], NOW).events;
    expect(call).toMatchObject({ type: "tool.call", callId: "tc-9", toolName: "fetch", sessionId: TRACE });
    expect(result).toMatchObject({ type: "tool.result", callId: "tc-9", success: false, error: "Error: HTTP 503", args: { url: "https://api.example.com/v1/x" } });
  });

  it("the call id falls back to the span id", () => {
    const s = span({ name: "search", attrs: { "openinference.span.kind": "TOOL", "tool.name": "search", "input.value": '{"q":"x"}' } });
    expect(mapSpans([s], NOW).events[0]).toMatchObject({ callId: s.spanId, toolName: "search", args: { q: "x" } });
  });

  it("an inference span → model.text with the model, at the span end", () => {
    const s = span({ name: "chat gpt-4o", endMs: NOW - 2_000, attrs: { "gen_ai.request.model": "gpt-4o", "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "Done." }] }]), "session.id": "s-1" } });
    expect(mapSpans([s], NOW).events).toEqual([{ type: "model.text", id: `otel:${s.spanId}:text`, sessionId: "s-1", text: "Done.", model: "gpt-4o", ts: NOW - 2_000 }]);
  });

  it("an inference span without text gives its model to the session's later events of the export", () => {
    const llm = span({ name: "ai.generateText.doGenerate", startMs: NOW - 10_000, endMs: NOW - 9_000, attrs: { "ai.model.id": "claude-x", "session.id": "s" } });
    const tool = span({ name: "ai.toolCall", startMs: NOW - 8_000, endMs: NOW - 7_000, attrs: { "ai.toolCall.name": "bash", "session.id": "s" } });
    const otherSession = span({ name: "ai.toolCall", startMs: NOW - 8_000, endMs: NOW - 7_000, attrs: { "ai.toolCall.name": "bash", "session.id": "t" } });
    const earlier = span({ name: "ai.toolCall", startMs: NOW - 12_000, endMs: NOW - 11_000, attrs: { "ai.toolCall.name": "ls", "session.id": "s" } });
    const out = mapSpans([tool, otherSession, earlier, llm], NOW);
    expect(out.mappedSpans).toBe(4);
    expect(out.events.filter((e) => e.sessionId === "s").map((e) => [e.type, "toolName" in e ? e.toolName : null, e.model])).toEqual([
      ["tool.call", "ls", undefined],
      ["tool.result", "ls", undefined],
      ["tool.call", "bash", "claude-x"],
      ["tool.result", "bash", "claude-x"],
    ]);
    expect(out.events.filter((e) => e.sessionId === "t").every((e) => e.model === undefined)).toBe(true);
  });

  it("an inference span with neither text nor model maps to nothing (and is not rejected)", () => {
    expect(mapSpans([span({ name: "chat x" })], NOW)).toMatchObject({ events: [], mappedSpans: 1, rejected: [] });
  });

  it("invoke_agent → session.start with gen_ai.agent.name (or the name in the span name)", () => {
    const a = span({ name: "invoke_agent Planner", startMs: NOW - 20_000, attrs: { "gen_ai.agent.name": "planner", "gen_ai.conversation.id": "c", "gen_ai.request.model": "gpt-4o" } });
    const b = span({ name: "invoke_agent Researcher" });
    const out = mapSpans([a, b], NOW);
    expect(out.events[0]).toEqual({ type: "session.start", id: `otel:${a.spanId}:start`, sessionId: "c", agent: "planner", model: "gpt-4o", ts: NOW - 20_000 });
    expect(out.events[1]).toMatchObject({ type: "session.start", agent: "Researcher", sessionId: TRACE });
  });

  it("events are ordered by time across spans (children are exported before their parents)", () => {
    const agent = span({ name: "invoke_agent a", startMs: NOW - 30_000, endMs: NOW - 1_000 });
    const t1 = span({ name: "execute_tool one", startMs: NOW - 20_000, endMs: NOW - 10_000 });
    const t2 = span({ name: "execute_tool two", startMs: NOW - 15_000, endMs: NOW - 12_000 });
    const out = mapSpans([t1, t2, agent], NOW);
    expect(out.events.map((e) => `${e.type}:${"toolName" in e ? e.toolName : ""}`)).toEqual([
      "session.start:",
      "tool.call:one",
      "tool.call:two",
      "tool.result:two",
      "tool.result:one",
    ]);
  });

  it("other spans are ignored, not rejected — even when they are too old", () => {
    const out = mapSpans([span({ name: "GET /", startMs: NOW - 40 * 86_400_000, endMs: NOW - 40 * 86_400_000 })], NOW);
    expect(out).toEqual({ events: [], mappedSpans: 0, ignoredSpans: 1, rejected: [] });
  });

  it("spans older than 30 days or ending over 5 minutes in the future are rejected; the rest still map", () => {
    const old = span({ name: "execute_tool a", startMs: NOW - 31 * 86_400_000, endMs: NOW - 31 * 86_400_000 + 10 });
    const future = span({ name: "execute_tool b", startMs: NOW, endMs: NOW + 6 * 60_000 });
    const ok = span({ name: "execute_tool c", startMs: NOW - 1_000, endMs: NOW + 60_000 });
    const out = mapSpans([old, future, ok], NOW);
    expect(out.rejected).toEqual([
      { spanId: old.spanId, name: "execute_tool a", reason: "span started more than 30 days ago" },
      { spanId: future.spanId, name: "execute_tool b", reason: "span ends more than 5 minutes in the future" },
    ]);
    expect(out.mappedSpans).toBe(1);
    expect(out.events.map((e) => e.id)).toEqual([`otel:${ok.spanId}:call`, `otel:${ok.spanId}:result`]);
  });

  it("rejects a tool span without a tool name, with oversized args or ids, or without a start time", () => {
    const noName = span({ name: "ai.toolCall" });
    const bigArgs = span({ name: "execute_tool write", attrs: { "gen_ai.tool.call.arguments": JSON.stringify({ content: "x".repeat(70_000) }) } });
    const longCall = span({ name: "execute_tool w", attrs: { "gen_ai.tool.call.id": "c".repeat(129) } });
    const noStart = span({ name: "execute_tool w", startTimeUnixNano: null });
    const out = mapSpans([noName, bigArgs, longCall, noStart], NOW);
    expect(out.events).toEqual([]);
    expect(out.rejected.map((r) => r.reason)).toEqual([
      expect.stringContaining("no tool name"),
      "tool arguments exceed 64 KiB of JSON",
      "tool call id is longer than 128 characters",
      "span has no start time",
    ]);
  });

  it("the same span twice in one export maps once", () => {
    const s = span({ name: "execute_tool x" });
    const out = mapSpans([s, { ...s }], NOW);
    expect(out.events).toHaveLength(2);
    expect(out.mappedSpans).toBe(1);
  });

  it("an end before the start is treated as the start; duration 0", () => {
    const s = span({ name: "execute_tool x", startMs: NOW - 5_000, endMs: NOW - 6_000 });
    const [call, result] = mapSpans([s], NOW).events;
    expect(call.ts).toBe(NOW - 5_000);
    expect(result).toMatchObject({ ts: NOW - 5_000, durationMs: 0 });
  });

  it("is deterministic: the same spans map to the same events (a re-sent export has the same ids)", () => {
    const spans = [span({ name: "execute_tool a" }), span({ name: "chat m", attrs: { "ai.response.text": "hi", "gen_ai.request.model": "m" } })];
    expect(mapSpans(spans, NOW)).toEqual(mapSpans(spans, NOW + 1_000));
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
