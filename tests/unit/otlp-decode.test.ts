import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import {
  OtlpRequestError,
  anyValue,
  decodeContentEncoding,
  decodeExportResponse,
  decodeStatus,
  decodeTraceRequest,
  encodeExportResponse,
  encodeStatus,
  formatOf,
  parseId,
  parseNanos,
  responseContentType,
} from "@/server/otlp/decode";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { SpanStatusCode, context, trace } from "@opentelemetry/api";

const TRACE_HEX = "0af7651916cd43dd8448eb211c80319c";
const SPAN_HEX = "b7ad6b7169203331";
const b64 = (hex: string) => Buffer.from(hex, "hex").toString("base64");
const utf8 = (s: string) => new TextEncoder().encode(s);

function jsonBody(span: Record<string, unknown>) {
  return utf8(JSON.stringify({ resourceSpans: [{ resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] }, scopeSpans: [{ scope: { name: "ai" }, spans: [span] }] }] }));
}

describe("ids, times and values", () => {
  it("ids: hex (any case) or base64; wrong length or all zeros → null", () => {
    expect(parseId(TRACE_HEX.toUpperCase(), 16)).toBe(TRACE_HEX);
    expect(parseId(b64(TRACE_HEX), 16)).toBe(TRACE_HEX);
    expect(parseId(b64(SPAN_HEX), 8)).toBe(SPAN_HEX);
    expect(parseId(SPAN_HEX, 16)).toBeNull();
    expect(parseId("0".repeat(16), 8)).toBeNull();
    expect(parseId("", 8)).toBeNull();
    expect(parseId(undefined, 8)).toBeNull();
  });

  it("nanos: decimal string, number or long bits", () => {
    expect(parseNanos("1700000000123456789")).toBe(1700000000123456789n);
    expect(parseNanos(1700000000000)).toBe(1700000000000n);
    expect(parseNanos({ low: 1, high: 1 })).toBe(4294967297n);
    expect(parseNanos("-1")).toBeNull();
    expect(parseNanos(null)).toBeNull();
  });

  it("AnyValue: intValue as number or string, arrays, kvlists", () => {
    expect(anyValue({ intValue: 42 })).toBe(42);
    expect(anyValue({ intValue: "42" })).toBe(42);
    expect(anyValue({ intValue: "9223372036854775807" })).toBe("9223372036854775807");
    expect(anyValue({ doubleValue: 1.5 })).toBe(1.5);
    expect(anyValue({ boolValue: false })).toBe(false);
    expect(anyValue({ arrayValue: { values: [{ stringValue: "a" }, { intValue: "1" }] } })).toEqual(["a", 1]);
    expect(anyValue({ kvlistValue: { values: [{ key: "k", value: { stringValue: "v" } }] } })).toEqual({ k: "v" });
    expect(anyValue({})).toBeNull();
  });
});

describe("decodeTraceRequest (JSON)", () => {
  it("reads the exporter's shape, resource and span attributes, status and events", () => {
    const { spans, malformed } = decodeTraceRequest(
      jsonBody({
        traceId: TRACE_HEX,
        spanId: SPAN_HEX,
        name: "execute_tool x",
        startTimeUnixNano: "1700000000000000000",
        endTimeUnixNano: 1700000001000000000,
        attributes: [{ key: "n", value: { intValue: 3 } }],
        status: { code: 2, message: "boom" },
        events: [{ name: "exception", timeUnixNano: "1700000000500000000", attributes: [{ key: "exception.type", value: { stringValue: "E" } }] }],
      }),
      "json",
    );
    expect(malformed).toEqual([]);
    expect(spans[0]).toMatchObject({
      traceId: TRACE_HEX,
      spanId: SPAN_HEX,
      parentSpanId: null,
      startTimeUnixNano: 1700000000000000000n,
      attributes: { n: 3 },
      resource: { "service.name": "svc" },
      scope: { name: "ai", version: null },
      status: { code: 2, message: "boom" },
      events: [{ name: "exception", timeUnixNano: 1700000000500000000n, attributes: { "exception.type": "E" } }],
    });
  });

  it("accepts snake_case field names and enum names", () => {
    const body = utf8(JSON.stringify({ resource_spans: [{ scope_spans: [{ spans: [{ trace_id: TRACE_HEX, span_id: SPAN_HEX, name: "x", start_time_unix_nano: "1", status: { code: "STATUS_CODE_ERROR" } }] }] }] }));
    expect(decodeTraceRequest(body, "json").spans[0]).toMatchObject({ spanId: SPAN_HEX, startTimeUnixNano: 1n, status: { code: 2 } });
  });

  it("an empty export is fine", () => {
    expect(decodeTraceRequest(utf8("{}"), "json")).toEqual({ spans: [], malformed: [] });
    expect(decodeTraceRequest(utf8('{"resourceSpans":[]}'), "json")).toEqual({ spans: [], malformed: [] });
  });

  it("a span with bad ids is malformed (rejected), not a 400", () => {
    const out = decodeTraceRequest(jsonBody({ traceId: "xyz", spanId: SPAN_HEX, name: "a" }), "json");
    expect(out).toEqual({ spans: [], malformed: [{ spanId: SPAN_HEX, reason: "span has no valid traceId" }] });
  });

  it.each([
    ["not JSON", "nope"],
    ["an array", "[]"],
    ["no resourceSpans", '{"foo":1}'],
    ["resourceSpans not an array", '{"resourceSpans":{}}'],
    ["spans not an array", '{"resourceSpans":[{"scopeSpans":[{"spans":"x"}]}]}'],
    ["a span that is not an object", '{"resourceSpans":[{"scopeSpans":[{"spans":[1]}]}]}'],
  ])("400 for %s", (_l, text) => {
    expect(() => decodeTraceRequest(utf8(text), "json")).toThrow(OtlpRequestError);
    try {
      decodeTraceRequest(utf8(text), "json");
    } catch (e) {
      expect((e as OtlpRequestError).status).toBe(400);
    }
  });
});

describe("decodeTraceRequest (protobuf)", () => {
  it("decodes what the OpenTelemetry SDK's own protobuf serializer (exporter-trace-otlp-proto) writes", () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    const tracer = provider.getTracer("ai", "7.0.0");
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const root = tracer.startSpan("invoke_agent", { startTime: start, attributes: { "gen_ai.agent.name": "weather" } });
    {
      const tool = tracer.startSpan(
        "execute_tool get_weather",
        { startTime: start + 5, attributes: { i: 7, big: 2 ** 40, d: 1.5, b: true, arr: ["x", "y"], "gen_ai.tool.name": "get_weather" } },
        trace.setSpan(context.active(), root),
      );
      tool.addEvent("exception", { "exception.type": "Error", "exception.message": "boom" }, start + 6);
      tool.setStatus({ code: SpanStatusCode.ERROR, message: "x" });
      tool.end(start + 7);
      root.end(start + 10);
    }
    const bytes = ProtobufTraceSerializer.serializeRequest(exporter.getFinishedSpans())!;
    const { spans, malformed } = decodeTraceRequest(bytes, "protobuf");
    expect(malformed).toEqual([]);
    const [tool, rootSpan] = spans;
    expect(rootSpan).toMatchObject({ name: "invoke_agent", parentSpanId: null, attributes: { "gen_ai.agent.name": "weather" }, scope: { name: "ai", version: "7.0.0" } });
    expect(tool).toMatchObject({
      traceId: rootSpan.traceId,
      parentSpanId: rootSpan.spanId,
      name: "execute_tool get_weather",
      startTimeUnixNano: BigInt(start + 5) * 1_000_000n,
      endTimeUnixNano: BigInt(start + 7) * 1_000_000n,
      attributes: { i: 7, big: 2 ** 40, d: 1.5, b: true, arr: ["x", "y"] },
      status: { code: 2, message: "x" },
      events: [{ name: "exception", attributes: { "exception.message": "boom" } }],
    });
    expect(tool.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("400 for bytes that are not a protobuf message", () => {
    expect(() => decodeTraceRequest(utf8('{"resourceSpans":[]}'), "protobuf")).toThrow(OtlpRequestError);
  });
});

describe("content type, encoding and answers", () => {
  it("formats", () => {
    expect(formatOf("application/json; charset=utf-8")).toBe("json");
    expect(formatOf("application/x-protobuf")).toBe("protobuf");
    expect(formatOf("application/protobuf")).toBe("protobuf");
    expect(formatOf("text/plain")).toBeNull();
    expect(formatOf(null)).toBeNull();
    expect(responseContentType("application/protobuf")).toBe("application/protobuf");
    expect(responseContentType("text/plain")).toBe("application/json");
  });

  it("gzip is undone; a zip bomb stops at the cap (413); bad gzip is a 400; unknown encodings 415", async () => {
    expect(new TextDecoder().decode(await decodeContentEncoding(gzipSync(utf8("{}")), "gzip"))).toBe("{}");
    expect(await decodeContentEncoding(utf8("{}"), null)).toEqual(utf8("{}"));
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024));
    await expect(decodeContentEncoding(bomb, "gzip")).rejects.toMatchObject({ status: 413 });
    await expect(decodeContentEncoding(utf8("not gzip"), "gzip")).rejects.toMatchObject({ status: 400 });
    await expect(decodeContentEncoding(utf8("{}"), "br")).rejects.toMatchObject({ status: 415 });
  });

  it("responses: {} or partialSuccess with rejectedSpans as a string; protobuf round-trips", () => {
    expect(encodeExportResponse("json", null)).toBe("{}");
    expect(JSON.parse(encodeExportResponse("json", { rejectedSpans: 2, errorMessage: "m" }) as string)).toEqual({ partialSuccess: { rejectedSpans: "2", errorMessage: "m" } });
    expect((encodeExportResponse("protobuf", null) as Uint8Array).length).toBe(0);
    expect(decodeExportResponse(encodeExportResponse("protobuf", { rejectedSpans: 3, errorMessage: "why" }) as Uint8Array)).toEqual({ partialSuccess: { rejectedSpans: "3", errorMessage: "why" } });
    expect(JSON.parse(encodeStatus("json", 3, "bad") as string)).toEqual({ code: 3, message: "bad" });
    expect(decodeStatus(encodeStatus("protobuf", 16, "no key") as Uint8Array)).toEqual({ code: 16, message: "no key" });
  });
});
