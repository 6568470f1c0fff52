/**
 * OpenTelemetry spans → agent events (SPEC 7.4). Pure: no I/O, the time of receipt is an input.
 *
 * | span | events |
 * | --- | --- |
 * | tool (`gen_ai.operation.name = execute_tool`, name `execute_tool …`, `ai.toolCall`, OpenInference `TOOL`, Traceloop `tool`) | `tool.call` at the start, `tool.result` at the end |
 * | inference (`chat …`, `ai.generateText.doGenerate`, `ai.streamText.doStream`, OpenInference `LLM`) | `model.text` (with the model) at the end when there is assistant text; the model alone otherwise |
 * | `invoke_agent …` | `session.start` with `agent` |
 *
 * Event ids are `otel:<spanId>:<part>`, so an export sent again is a duplicate. Other spans are
 * ignored; a span that should map but cannot (times out of range, no tool name, args too large,
 * …) is rejected and reported, without failing the rest of the export.
 */
import { MAX_ARGS_BYTES, MAX_FUTURE_MS, MAX_PAST_MS, eventSchema, type EventInput } from "@/server/ingest/schema";
import type { AttrValue, OtlpSpan } from "./decode";

export type SpanKind = "tool" | "inference" | "agent";

export interface RejectedSpan {
  spanId: string;
  name: string;
  reason: string;
}

export interface MapResult {
  /** Ordered by time (stable), ready for `ingestEvents`. */
  events: EventInput[];
  mappedSpans: number;
  ignoredSpans: number;
  rejected: RejectedSpan[];
}

export const OTEL_ID_PREFIX = "otel:";
export const eventId = (spanId: string, part: "call" | "result" | "text" | "start") => `${OTEL_ID_PREFIX}${spanId}:${part}`;

const MAX_ID = 128;
const MAX_TOOL_NAME = 256;
const MAX_LABEL = 200;
const MAX_ERROR = 65536;
const NANOS_PER_MS = 1_000_000n;

// ---------------------------------------------------------------------------
// Attribute helpers
// ---------------------------------------------------------------------------

/** Span attributes over resource attributes. */
function attr(span: OtlpSpan, key: string): AttrValue | undefined {
  if (key in span.attributes) return span.attributes[key];
  if (key in span.resource) return span.resource[key];
  return undefined;
}

/** The first of the keys holding a non-empty string (numbers are turned into strings). */
function firstString(span: OtlpSpan, keys: string[]): string | undefined {
  for (const k of keys) {
    const v = attr(span, k);
    if (typeof v === "string" && v.trim() !== "") return v;
    if (typeof v === "number" && Number.isFinite(v)) return String(v);
  }
  return undefined;
}

function lower(v: AttrValue | undefined): string | undefined {
  return typeof v === "string" ? v.toLowerCase() : undefined;
}

/** `execute_tool get_weather` → `get_weather`. */
function nameSuffix(name: string, operation: string): string | undefined {
  if (!name.startsWith(operation + " ")) return undefined;
  const rest = name.slice(operation.length + 1).trim();
  return rest || undefined;
}

const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

// ---------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------

const INFERENCE_SPAN_NAMES = new Set(["ai.generateText.doGenerate", "ai.streamText.doStream"]);
const INFERENCE_OPERATIONS = new Set(["chat", "text_completion", "generate_content"]);

/** Which row of the SPEC 7.4 table a span falls under, or null (ignored). Tool wins over agent over inference. */
export function classifySpan(span: OtlpSpan): SpanKind | null {
  const op = lower(span.attributes["gen_ai.operation.name"]);
  const oi = typeof span.attributes["openinference.span.kind"] === "string" ? (span.attributes["openinference.span.kind"] as string).toUpperCase() : undefined;
  const tl = lower(span.attributes["traceloop.span.kind"]);
  const name = span.name;
  if (op === "execute_tool" || name === "execute_tool" || name.startsWith("execute_tool ") || name === "ai.toolCall" || oi === "TOOL" || tl === "tool") return "tool";
  if (op === "invoke_agent" || name === "invoke_agent" || name.startsWith("invoke_agent ")) return "agent";
  if (
    name === "chat" ||
    name.startsWith("chat ") ||
    INFERENCE_SPAN_NAMES.has(name) ||
    oi === "LLM" ||
    (op !== undefined && INFERENCE_OPERATIONS.has(op))
  ) {
    return "inference";
  }
  return null;
}

/** `gen_ai.conversation.id` ?? `session.id` ?? the trace id (span attributes over resource attributes). */
export function sessionIdOf(span: OtlpSpan): string {
  return firstString(span, ["gen_ai.conversation.id", "session.id"]) ?? span.traceId;
}

/** The model of an inference (or agent) span. */
export function modelOf(span: OtlpSpan): string | undefined {
  const m = firstString(span, ["gen_ai.response.model", "gen_ai.request.model", "ai.model.id", "llm.model_name"]);
  return m === undefined ? undefined : clip(m, MAX_LABEL);
}

export function toolNameOf(span: OtlpSpan): string | undefined {
  return firstString(span, ["gen_ai.tool.name", "ai.toolCall.name", "tool.name", "traceloop.entity.name"]) ?? nameSuffix(span.name, "execute_tool");
}

export function callIdOf(span: OtlpSpan): string {
  return firstString(span, ["gen_ai.tool.call.id", "ai.toolCall.id"]) ?? span.spanId;
}

/**
 * The tool arguments: the JSON in `gen_ai.tool.call.arguments` / `ai.toolCall.args` /
 * `input.value`. An object is used as it is; anything else (a non-JSON string, an array, a
 * number) is kept as `{ input: <value> }` so the call still counts.
 */
export function argsOf(span: OtlpSpan): Record<string, unknown> {
  for (const key of ["gen_ai.tool.call.arguments", "ai.toolCall.args", "input.value"]) {
    const v = attr(span, key);
    if (v === undefined || v === null) continue;
    let value: unknown = v;
    if (typeof v === "string") {
      try {
        value = JSON.parse(v);
      } catch {
        value = v;
      }
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    return { input: value };
  }
  return {};
}

/**
 * When the span failed (status code 2 = ERROR), its error: the status message, else the
 * `exception` event (`type: message`), else `error.type`. Null when the span did not fail.
 */
export function failureOf(span: OtlpSpan): string | null {
  if (span.status.code !== 2) return null;
  if (span.status.message) return clip(span.status.message, MAX_ERROR);
  const exception = span.events.find((e) => e.name === "exception");
  if (exception) {
    const type = exception.attributes["exception.type"];
    const message = exception.attributes["exception.message"];
    const parts = [typeof type === "string" && type ? type : null, typeof message === "string" && message ? message : null].filter(Boolean);
    if (parts.length) return clip(parts.join(": "), MAX_ERROR);
  }
  const errorType = attr(span, "error.type");
  if (typeof errorType === "string" && errorType) return clip(errorType, MAX_ERROR);
  return "Span status ERROR";
}

/**
 * The assistant text of an inference span: the text parts of the assistant messages in
 * `gen_ai.output.messages` (GenAI conventions, JSON), else `ai.response.text` (Vercel AI SDK).
 */
export function assistantTextOf(span: OtlpSpan): string | undefined {
  const raw = attr(span, "gen_ai.output.messages");
  if (raw !== undefined && raw !== null) {
    let messages: unknown = raw;
    if (typeof raw === "string") {
      try {
        messages = JSON.parse(raw);
      } catch {
        messages = undefined;
      }
    }
    const texts: string[] = [];
    for (const m of Array.isArray(messages) ? messages : messages && typeof messages === "object" ? [messages] : []) {
      if (!m || typeof m !== "object") continue;
      const msg = m as { role?: unknown; parts?: unknown; content?: unknown };
      if (typeof msg.role === "string" && msg.role !== "assistant") continue;
      if (Array.isArray(msg.parts)) {
        for (const p of msg.parts) {
          if (p && typeof p === "object" && (p as { type?: unknown }).type === "text" && typeof (p as { content?: unknown }).content === "string") {
            texts.push((p as { content: string }).content);
          }
        }
      } else if (typeof msg.content === "string") {
        texts.push(msg.content);
      }
    }
    const joined = texts.join("\n");
    if (joined.trim()) return joined;
  }
  const text = attr(span, "ai.response.text");
  if (typeof text === "string" && text.trim()) return text;
  return undefined;
}

// ---------------------------------------------------------------------------
// Times
// ---------------------------------------------------------------------------

function nanosToMs(n: bigint): number {
  return Number(n / NANOS_PER_MS);
}

interface SpanTimes {
  startMs: number;
  endMs: number;
  durationMs: number;
}

function spanTimes(span: OtlpSpan, receivedAt: number): SpanTimes | { reason: string } {
  if (span.startTimeUnixNano === null || span.startTimeUnixNano === 0n) return { reason: "span has no start time" };
  const start = span.startTimeUnixNano;
  const end = span.endTimeUnixNano !== null && span.endTimeUnixNano >= start ? span.endTimeUnixNano : start;
  const startMs = nanosToMs(start);
  const endMs = nanosToMs(end);
  if (startMs < receivedAt - MAX_PAST_MS) return { reason: "span started more than 30 days ago" };
  if (endMs > receivedAt + MAX_FUTURE_MS) return { reason: "span ends more than 5 minutes in the future" };
  return { startMs, endMs, durationMs: Number(end - start) / 1e6 };
}

// ---------------------------------------------------------------------------
// Mapping
// ---------------------------------------------------------------------------

/** An event on its way out, with what ordering needs; `modelOnly` carries a model and no event. */
interface Pending {
  ts: number;
  order: number;
  seq: number;
  sessionId: string;
  event: EventInput | null;
  model?: string;
}

/** Within one instant: the session starts, then the model speaks, then calls, then results. */
const ORDER = { "session.start": 0, "model.text": 1, model: 1, "tool.call": 2, "tool.result": 3 } as const;

type SpanOutcome = { pending: Omit<Pending, "seq">[] } | { reason: string };

function mapSpan(span: OtlpSpan, kind: SpanKind, receivedAt: number): SpanOutcome {
  const times = spanTimes(span, receivedAt);
  if ("reason" in times) return times;
  const sessionId = sessionIdOf(span);
  if (sessionId.length > MAX_ID) return { reason: `session id is longer than ${MAX_ID} characters` };

  if (kind === "tool") {
    const toolName = toolNameOf(span);
    if (!toolName) return { reason: "tool span has no tool name (gen_ai.tool.name, ai.toolCall.name, tool.name or traceloop.entity.name)" };
    if (toolName.length > MAX_TOOL_NAME) return { reason: `tool name is longer than ${MAX_TOOL_NAME} characters` };
    const callId = callIdOf(span);
    if (callId.length > MAX_ID) return { reason: `tool call id is longer than ${MAX_ID} characters` };
    const args = argsOf(span);
    if (Buffer.byteLength(JSON.stringify(args), "utf8") > MAX_ARGS_BYTES) return { reason: "tool arguments exceed 64 KiB of JSON" };
    const error = failureOf(span);
    const call: EventInput = { type: "tool.call", id: eventId(span.spanId, "call"), sessionId, callId, toolName, args, ts: times.startMs };
    const result: EventInput = {
      type: "tool.result",
      id: eventId(span.spanId, "result"),
      sessionId,
      callId,
      toolName,
      args,
      success: error === null,
      ...(error !== null ? { error } : {}),
      durationMs: times.durationMs,
      ts: times.endMs,
    };
    return {
      pending: [
        { ts: times.startMs, order: ORDER["tool.call"], sessionId, event: call },
        { ts: times.endMs, order: ORDER["tool.result"], sessionId, event: result },
      ],
    };
  }

  if (kind === "agent") {
    const agent = firstString(span, ["gen_ai.agent.name"]) ?? nameSuffix(span.name, "invoke_agent");
    const model = modelOf(span);
    const start: EventInput = {
      type: "session.start",
      id: eventId(span.spanId, "start"),
      sessionId,
      ...(agent ? { agent: clip(agent, MAX_LABEL) } : {}),
      ...(model ? { model } : {}),
      ts: times.startMs,
    };
    return { pending: [{ ts: times.startMs, order: ORDER["session.start"], sessionId, event: start }] };
  }

  // Inference.
  const model = modelOf(span);
  const text = assistantTextOf(span);
  if (text !== undefined) {
    const ev: EventInput = { type: "model.text", id: eventId(span.spanId, "text"), sessionId, text, ...(model ? { model } : {}), ts: times.endMs };
    return { pending: [{ ts: times.endMs, order: ORDER["model.text"], sessionId, event: ev }] };
  }
  if (model) return { pending: [{ ts: times.endMs, order: ORDER.model, sessionId, event: null, model }] };
  return { pending: [] };
}

/**
 * Maps the spans of one export. Events come out ordered by time (the engine applies a session's
 * events in order, SPEC 4.4), so a span exported after its children still lands in place within
 * the export. An inference span without assistant text gives the session's model to that
 * session's later events of the export that carry none.
 */
export function mapSpans(spans: OtlpSpan[], receivedAt: number): MapResult {
  const pending: Pending[] = [];
  const rejected: RejectedSpan[] = [];
  const seenSpans = new Set<string>();
  let mappedSpans = 0;
  let ignoredSpans = 0;
  let seq = 0;

  for (const span of spans) {
    const kind = classifySpan(span);
    if (!kind) {
      ignoredSpans += 1;
      continue;
    }
    // The same span twice in one export: the second is a duplicate, like a re-sent export.
    if (seenSpans.has(span.spanId)) continue;
    seenSpans.add(span.spanId);
    const outcome = mapSpan(span, kind, receivedAt);
    if ("reason" in outcome) {
      rejected.push({ spanId: span.spanId, name: span.name, reason: outcome.reason });
      continue;
    }
    // Last line of defence: every event must pass the agent API's own validation.
    const invalid = outcome.pending.map((p) => (p.event ? eventSchema.safeParse(p.event) : null)).find((r) => r && !r.success);
    if (invalid && !invalid.success) {
      const issue = invalid.error.issues[0];
      rejected.push({ spanId: span.spanId, name: span.name, reason: `cannot be mapped: ${issue.path.join(".")} ${issue.message}` });
      continue;
    }
    mappedSpans += 1;
    for (const p of outcome.pending) pending.push({ ...p, seq: seq++ });
  }

  pending.sort((a, b) => a.ts - b.ts || a.order - b.order || a.seq - b.seq);
  const sessionModel = new Map<string, string>();
  const events: EventInput[] = [];
  for (const p of pending) {
    if (!p.event) {
      if (p.model) sessionModel.set(p.sessionId, p.model);
      continue;
    }
    const ev = p.event;
    if (ev.model) sessionModel.set(p.sessionId, ev.model);
    else if (sessionModel.has(p.sessionId)) ev.model = sessionModel.get(p.sessionId);
    events.push(ev);
  }
  return { events, mappedSpans, ignoredSpans, rejected };
}

/** The `errorMessage` of a partial success: how many and why, for the first few. */
export function describeRejections(rejected: { spanId: string | null; name?: string; reason: string }[], limit = 5): string {
  const parts = rejected.slice(0, limit).map((r) => `${r.name ? `'${r.name}' ` : ""}(span ${r.spanId ?? "?"}): ${r.reason}`);
  const more = rejected.length > limit ? `; and ${rejected.length - limit} more` : "";
  return `${rejected.length} span${rejected.length === 1 ? "" : "s"} could not be mapped: ${parts.join("; ")}${more}`;
}

