/**
 * Spans as the OpenTelemetry SDK hands them to an exporter (ReadableSpan), and the bodies the real
 * OTLP exporters post for them: `JsonTraceSerializer` is what @opentelemetry/exporter-trace-otlp-http
 * sends, `ProtobufTraceSerializer` what exporter-trace-otlp-proto sends.
 */
import { randomBytes } from "node:crypto";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";

export const SPAN_KIND_INTERNAL = 0;
export const SPAN_KIND_CLIENT = 2;
export const STATUS_UNSET = 0;
export const STATUS_ERROR = 2;

export type Attrs = Record<string, string | number | boolean | string[]>;

export interface SpanSpec {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes?: Attrs;
  status?: { code: number; message?: string };
  events?: { name: string; ms: number; attributes?: Attrs }[];
}

export const hex = (bytes: number) => randomBytes(bytes).toString("hex");
export const hr = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
export const resource = { attributes: { "service.name": "weather-agent", "telemetry.sdk.language": "nodejs" }, schemaUrl: undefined };
export const scope = { name: "ai", version: "5.0.0" };

export function readableSpan(s: SpanSpec) {
  const spanId = s.spanId ?? hex(8);
  return {
    name: s.name,
    kind: s.name.startsWith("chat") ? SPAN_KIND_CLIENT : SPAN_KIND_INTERNAL,
    spanContext: () => ({ traceId: s.traceId, spanId, traceFlags: 1 }),
    parentSpanContext: s.parentSpanId ? { traceId: s.traceId, spanId: s.parentSpanId, traceFlags: 1, isRemote: false } : undefined,
    startTime: hr(s.startMs),
    endTime: hr(s.endMs),
    duration: hr(s.endMs - s.startMs),
    ended: true,
    status: s.status ?? { code: STATUS_UNSET },
    attributes: s.attributes ?? {},
    links: [],
    events: (s.events ?? []).map((e) => ({ name: e.name, time: hr(e.ms), attributes: e.attributes ?? {}, droppedAttributesCount: 0 })),
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource,
    instrumentationScope: scope,
  };
}

export type Spans = ReturnType<typeof readableSpan>[];
// The serializers are typed against the SDK's ReadableSpan; these objects carry every field they read.
export const jsonBody = (spans: Spans) => JsonTraceSerializer.serializeRequest(spans as never)!;
export const protobufBody = (spans: Spans) => ProtobufTraceSerializer.serializeRequest(spans as never)!;

