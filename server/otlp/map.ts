/**
 * OpenTelemetry traces → agent events (SPEC 7.4, revision 2). Pure: no I/O, the time of
 * application is an input.
 *
 * A trace is mapped as a whole, because the attributes that matter are spread over its spans:
 * the conversation id sits on the agent and chat spans (not on `execute_tool`), the model on the
 * inference span that requested a tool, the agent name on the root span that is exported last.
 *
 * | span | events |
 * | --- | --- |
 * | tool (see `classifySpan`) | `tool.call` at the start, `tool.result` at the end |
 * | inference | the session's model; `model.text` at the end (empty text, or `reasoningOnly`, when so) |
 * | agent | `session.start` with the agent name |
 *
 * Event ids are `otel:<spanId>:<part>`, so a re-sent span is a duplicate. Other spans are ignored;
 * a span that should map but cannot (no tool name, args too large, …) is rejected and reported.
 */
import { MAX_ARGS_BYTES, MAX_FUTURE_MS, MAX_PAST_MS, eventSchema, type EventInput } from "@/server/ingest/schema";
import type { AttrValue, OtlpSpan } from "./decode";

export type SpanKind = "tool" | "inference" | "agent";

export interface RejectedSpan {
  spanId: string;
  name: string;
  reason: string;
}

export interface MappedEvent {
  /** The span the event comes from (the applier applies only the events of unapplied spans). */
  spanId: string;
  event: EventInput;
}

export interface MapResult {
  /** In application order: span start time, then the order within an instant. */
  events: MappedEvent[];
  rejected: RejectedSpan[];
  /** Every session the trace fed, with the end time of its last span (ms). */
  sessions: Map<string, number>;
  /**
   * Tool spans left out until the inference span that requested them arrives, or the trace
   * settles: mapped without it, they would take another step's (or turn's) model for good.
   */
  held: string[];
}

export interface MapOptions {
  /** No span of the trace has arrived for the settle time: nothing more is waited for. Default true. */
  settled?: boolean;
}

export const OTEL_ID_PREFIX = "otel:";
const eventId = (spanId: string, part: "call" | "result" | "text" | "start") => `${OTEL_ID_PREFIX}${spanId}:${part}`;
const DEFAULT_AGENT = "default";

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
function firstString(span: OtlpSpan, keys: readonly string[]): string | undefined {
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

function upper(v: AttrValue | undefined): string | undefined {
  return typeof v === "string" ? v.toUpperCase() : undefined;
}

/** `execute_tool get_weather` → `get_weather`. */
function nameSuffix(name: string, operation: string): string | undefined {
  if (!name.startsWith(operation + " ")) return undefined;
  const rest = name.slice(operation.length + 1).trim();
  return rest || undefined;
}

const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

function parseJson(v: AttrValue | undefined): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

// ---------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------

const INFERENCE_SPAN_NAMES = new Set(["ai.generateText.doGenerate", "ai.streamText.doStream", "ai.generateObject.doGenerate", "ai.streamObject.doStream"]);
const INFERENCE_OPERATIONS = new Set(["chat", "text_completion", "generate_content"]);
const INFERENCE_NAME_PREFIXES = ["chat", "text_completion", "generate_content"];

/** Which row of the SPEC 7.4 table a span falls under, or null (ignored). Tool wins over agent over inference. */
export function classifySpan(span: OtlpSpan): SpanKind | null {
  const a = span.attributes;
  const op = lower(a["gen_ai.operation.name"]);
  const oi = upper(a["openinference.span.kind"]);
  const tl = lower(a["traceloop.span.kind"]);
  const name = span.name;
  const isTool =
    op === "execute_tool" ||
    name === "execute_tool" ||
    name.startsWith("execute_tool ") ||
    name === "ai.toolCall" ||
    a["ai.operationId"] === "ai.toolCall" ||
    oi === "TOOL" ||
    tl === "tool" ||
    // pydantic-ai tool spans
    (typeof a["gen_ai.tool.name"] === "string" && "tool_arguments" in a);
  if (isTool) return "tool";
  if (op === "invoke_agent" || name === "invoke_agent" || name.startsWith("invoke_agent ") || oi === "AGENT" || tl === "agent") return "agent";
  const llmType = lower(a["llm.request.type"]);
  if (
    INFERENCE_NAME_PREFIXES.some((p) => name === p || name.startsWith(p + " ")) ||
    INFERENCE_SPAN_NAMES.has(name) ||
    INFERENCE_SPAN_NAMES.has(String(a["ai.operationId"] ?? "")) ||
    oi === "LLM" ||
    llmType === "chat" ||
    llmType === "completion" ||
    (op !== undefined && INFERENCE_OPERATIONS.has(op))
  ) {
    return "inference";
  }
  return null;
}

const SESSION_KEYS = [
  "gen_ai.conversation.id",
  "session.id",
  "ai.telemetry.metadata.sessionId",
  "ai.telemetry.metadata.conversationId",
  "traceloop.association.properties.session_id",
  "gcp.vertex.agent.session_id",
] as const;

/** The conversation id carried by this span itself (span attributes over resource attributes). */
export function ownSessionId(span: OtlpSpan): string | undefined {
  return firstString(span, SESSION_KEYS);
}

/** The agent name of an agent span (or a Vercel AI SDK span with a functionId); never a span name. */
function agentNameOf(span: OtlpSpan): string | undefined {
  const a = span.attributes;
  const fromAttrs = firstString(span, ["gen_ai.agent.name", "ai.telemetry.functionId"]);
  if (fromAttrs) return clip(fromAttrs, MAX_LABEL);
  if (upper(a["openinference.span.kind"]) === "AGENT") {
    const n = firstString(span, ["agent.name"]);
    if (n) return clip(n, MAX_LABEL);
  }
  if (lower(a["traceloop.span.kind"]) === "agent") {
    const n = firstString(span, ["traceloop.entity.name"]);
    if (n) return clip(n, MAX_LABEL);
  }
  return undefined;
}

/** The model of an inference (or agent) span. */
export function modelOf(span: OtlpSpan): string | undefined {
  const m = firstString(span, ["gen_ai.response.model", "gen_ai.request.model", "ai.model.id", "llm.model_name"]);
  return m === undefined ? undefined : clip(m, MAX_LABEL);
}

export function toolNameOf(span: OtlpSpan): string | undefined {
  const named = firstString(span, ["gen_ai.tool.name", "ai.toolCall.name", "tool.name", "traceloop.entity.name"]) ?? nameSuffix(span.name, "execute_tool");
  if (named) return named;
  // An OpenInference TOOL span (traceTool / withSpan) is named after the tool.
  if (upper(span.attributes["openinference.span.kind"]) === "TOOL" && span.name.trim()) return span.name.trim();
  return undefined;
}

const CALL_ID_KEYS = ["gen_ai.tool.call.id", "ai.toolCall.id"];

/** The call id the model gave the tool call, when the span carries one (then an inference span requested it). */
function issuedCallIdOf(span: OtlpSpan): string | undefined {
  return firstString(span, CALL_ID_KEYS);
}

function callIdOf(span: OtlpSpan): string {
  return issuedCallIdOf(span) ?? span.spanId;
}

const FLAT_TOOL_CALL_ID = [/^gen_ai\.completion\.\d+\.tool_calls\.\d+\.id$/, /^llm\.output_messages\.\d+\.message\.tool_calls\.\d+\.tool_call\.id$/];

/**
 * The call ids of the tool calls an inference span made, when its output is recorded: Vercel's
 * `ai.response.toolCalls`, the `tool_call` parts of `gen_ai.output.messages`, OpenLLMetry's and OpenInference's flattened tool calls.
 * Undefined when the span does not say.
 */
export function requestedCallIdsOf(span: OtlpSpan): Set<string> | undefined {
  const a = span.attributes;
  let ids: Set<string> | undefined;
  // A listed call without an id makes the list useless for matching: the span then does not say.
  let incomplete = false;
  const add = (id: unknown) => {
    if (typeof id === "string" && id) ids!.add(id);
    else incomplete = true;
  };
  const vercel = parseJson(a["ai.response.toolCalls"]);
  if (Array.isArray(vercel)) {
    ids ??= new Set();
    for (const c of vercel) add((c as { toolCallId?: unknown } | null)?.toolCallId);
  }
  const output = parseJson(a["gen_ai.output.messages"]);
  const messages = Array.isArray(output) ? output : output && typeof output === "object" ? [output] : null;
  if (messages) {
    ids ??= new Set();
    for (const m of messages) {
      const parts = (m as { parts?: unknown } | null)?.parts;
      if (Array.isArray(parts)) for (const p of parts) if ((p as { type?: unknown } | null)?.type === "tool_call") add((p as { id?: unknown }).id);
    }
  }
  for (const [key, value] of Object.entries(a)) {
    if (FLAT_TOOL_CALL_ID.some((re) => re.test(key))) {
      ids ??= new Set();
      add(value);
    }
  }
  if (incomplete) return undefined;
  // No list, but the step says why it ended, and not for tool calls: it requested none. (Vercel
  // omits `ai.response.toolCalls` from a step that only answered; without this, such a step that
  // started in the same millisecond as a tool span — its timestamps are whole milliseconds — passed
  // for the tool's requester while the real one had not arrived yet.)
  if (ids === undefined) {
    const reasons = finishReasonsOf(a);
    if (reasons.length && reasons.every((r) => ENDED_WITHOUT_TOOL_CALLS.has(r.toLowerCase()))) return new Set();
  }
  return ids;
}

/** Finish reasons that mean the model requested no tool (OpenAI, Anthropic, Vercel, GenAI spellings). */
const ENDED_WITHOUT_TOOL_CALLS = new Set(["stop", "length", "content-filter", "content_filter", "end_turn", "max_tokens", "stop_sequence"]);

/** Vercel's `ai.response.finishReason` and GenAI's `gen_ai.response.finish_reasons` (an array, or its JSON). */
function finishReasonsOf(a: OtlpSpan["attributes"]): string[] {
  const out: string[] = [];
  for (const value of [a["ai.response.finishReason"], a["gen_ai.response.finish_reasons"]]) {
    const parsed = typeof value === "string" && value.startsWith("[") ? parseJson(value) : value;
    for (const r of Array.isArray(parsed) ? parsed : [parsed]) if (typeof r === "string" && r) out.push(r);
  }
  return out;
}

const ARGS_KEYS = ["gen_ai.tool.call.arguments", "ai.toolCall.args", "input.value", "traceloop.entity.input", "tool_arguments", "gcp.vertex.agent.tool_call_args"];

/**
 * The tool arguments, JSON of the first present attribute. Traceloop's entity input is
 * `{args, kwargs}`: its `kwargs` are the arguments. An object is used as it is; anything else is
 * kept as `{ input: <value> }` so the call still counts. OpenInference's `withSpan` records the
 * function's arguments as an array: a single object argument is unwrapped.
 */
export function argsOf(span: OtlpSpan): Record<string, unknown> {
  for (const key of ARGS_KEYS) {
    const v = attr(span, key);
    if (v === undefined || v === null) continue;
    let value = parseJson(v);
    if (key === "traceloop.entity.input" && value && typeof value === "object" && !Array.isArray(value) && "kwargs" in value) {
      value = (value as { kwargs: unknown }).kwargs;
    }
    if (Array.isArray(value) && value.length === 1 && value[0] && typeof value[0] === "object" && !Array.isArray(value[0])) value = value[0];
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    return { input: value };
  }
  return {};
}

const RESULT_KEYS = ["gen_ai.tool.call.result", "ai.toolCall.result", "output.value", "traceloop.entity.output"];

/** The tool's result, JSON-parsed when it is JSON; undefined when no result attribute is there (or it is too large). */
export function resultOf(span: OtlpSpan): unknown {
  for (const key of RESULT_KEYS) {
    const v = attr(span, key);
    if (v === undefined || v === null) continue;
    const value = parseJson(v);
    if (Buffer.byteLength(JSON.stringify(value) ?? "", "utf8") > MAX_ARGS_BYTES) return typeof v === "string" ? v.slice(0, 4096) : undefined;
    return value;
  }
  return undefined;
}

/** `http.response.status_code`, or a numeric `error.type` (the GenAI conventions put the HTTP status there). */
export function httpStatusOf(span: OtlpSpan): number | undefined {
  for (const key of ["http.response.status_code", "http.status_code", "error.type"]) {
    const v = attr(span, key);
    const n = typeof v === "number" ? v : typeof v === "string" && /^\d{3}$/.test(v.trim()) ? Number(v) : NaN;
    if (Number.isInteger(n) && n >= 100 && n <= 599) return n;
  }
  return undefined;
}

/**
 * When the span failed (status code 2 = ERROR), its error: the status message, else the
 * `exception` event (`type: message`), else `error.type`. Null when the span did not fail.
 */
export function failureOf(span: OtlpSpan): string | null {
  if (span.status.code !== 2) return null;
  const exception = span.events.find((e) => e.name === "exception");
  const excMessage = exception?.attributes["exception.message"];
  if (span.status.message) return clip(span.status.message, MAX_ERROR);
  if (exception) {
    const type = exception.attributes["exception.type"];
    const parts = [typeof type === "string" && type ? type : null, typeof excMessage === "string" && excMessage ? excMessage : null].filter(Boolean);
    if (parts.length) return clip(parts.join(": "), MAX_ERROR);
  }
  const errorType = attr(span, "error.type");
  if (typeof errorType === "string" && errorType) return clip(errorType, MAX_ERROR);
  if (typeof errorType === "number") return `HTTP ${errorType}`;
  return "Span status ERROR";
}

interface AssistantOutput {
  text: string;
  reasoningOnly: boolean;
}

/** The assistant messages of an inference span: text parts, and whether it held reasoning only. */
export function assistantOutputOf(span: OtlpSpan): AssistantOutput | undefined {
  const raw = attr(span, "gen_ai.output.messages");
  if (raw !== undefined && raw !== null) {
    const messages = parseJson(raw);
    const texts: string[] = [];
    let reasoning = false;
    let other = false;
    for (const m of Array.isArray(messages) ? messages : messages && typeof messages === "object" ? [messages] : []) {
      if (!m || typeof m !== "object") continue;
      const msg = m as { role?: unknown; parts?: unknown; content?: unknown };
      if (typeof msg.role === "string" && msg.role !== "assistant") continue;
      if (Array.isArray(msg.parts)) {
        for (const p of msg.parts) {
          const part = p as { type?: unknown; content?: unknown };
          if (part?.type === "text" && typeof part.content === "string") texts.push(part.content);
          else if (part?.type === "reasoning" || part?.type === "thinking") reasoning = true;
          else other = true;
        }
      } else if (typeof msg.content === "string") {
        texts.push(msg.content);
      }
    }
    const text = texts.join("\n");
    return { text, reasoningOnly: !text.trim() && reasoning && !other };
  }
  for (const key of ["ai.response.text", "gen_ai.completion.0.content", "llm.output_messages.0.message.content"]) {
    const v = attr(span, key);
    if (typeof v === "string") {
      const reasoning = attr(span, "ai.response.reasoning");
      const toolCalls = attr(span, "ai.response.toolCalls");
      return { text: v, reasoningOnly: !v.trim() && typeof reasoning === "string" && reasoning.trim() !== "" && !toolCalls };
    }
  }
  const choice = span.events.find((e) => e.name === "gen_ai.choice");
  if (choice) {
    const msg = parseJson(choice.attributes["message"]) as { content?: unknown } | undefined;
    const content = typeof msg?.content === "string" ? msg.content : typeof choice.attributes["content"] === "string" ? (choice.attributes["content"] as string) : "";
    return { text: content, reasoningOnly: false };
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Times
// ---------------------------------------------------------------------------

const nanosToMs = (n: bigint) => Number(n / NANOS_PER_MS);

interface SpanTimes {
  startMs: number;
  endMs: number;
  durationMs: number;
}

/** The span's times, or why they are unusable (checked on receipt and again when applied). */
function spanTimes(span: OtlpSpan, now: number): SpanTimes | { reason: string } {
  if (span.startTimeUnixNano === null || span.startTimeUnixNano === 0n) return { reason: "span has no start time" };
  const start = span.startTimeUnixNano;
  const end = span.endTimeUnixNano !== null && span.endTimeUnixNano >= start ? span.endTimeUnixNano : start;
  const startMs = nanosToMs(start);
  const endMs = nanosToMs(end);
  if (startMs < now - MAX_PAST_MS) return { reason: "span started more than 30 days ago" };
  if (endMs > now + MAX_FUTURE_MS) return { reason: "span ends more than 5 minutes in the future" };
  return { startMs, endMs, durationMs: Number(end - start) / 1e6 };
}

// ---------------------------------------------------------------------------
// The trace
// ---------------------------------------------------------------------------

/** Parent links and the lookups of SPEC 7.4 over one trace's spans. */
class TraceView {
  readonly byId = new Map<string, OtlpSpan>();
  readonly children = new Map<string, OtlpSpan[]>();
  readonly kinds = new Map<string, SpanKind | null>();
  /** The inference spans, by start time. */
  readonly inference: OtlpSpan[];
  private readonly calls = new Map<string, Set<string> | undefined>();
  /** The first conversation id of any span, by start time (the fallback of the session search). */
  readonly traceSession: string | undefined;
  private readonly sessions = new Map<string, string>();

  constructor(spans: OtlpSpan[]) {
    const ordered = [...spans].sort(byStart);
    for (const s of ordered) {
      this.byId.set(s.spanId, s);
      this.kinds.set(s.spanId, classifySpan(s));
    }
    for (const s of ordered) {
      if (s.parentSpanId && this.byId.has(s.parentSpanId)) {
        const list = this.children.get(s.parentSpanId) ?? [];
        list.push(s);
        this.children.set(s.parentSpanId, list);
      }
    }
    this.traceSession = ordered.map(ownSessionId).find((x) => x !== undefined);
    this.inference = ordered.filter((s) => this.kinds.get(s.spanId) === "inference");
  }

  /** `requestedCallIdsOf`, parsed once per span. */
  requestedCalls(span: OtlpSpan): Set<string> | undefined {
    if (!this.calls.has(span.spanId)) this.calls.set(span.spanId, requestedCallIdsOf(span));
    return this.calls.get(span.spanId);
  }

  parent(span: OtlpSpan): OtlpSpan | undefined {
    return span.parentSpanId ? this.byId.get(span.parentSpanId) : undefined;
  }

  /** The span's ancestors, nearest first (cycles cut). */
  ancestors(span: OtlpSpan): OtlpSpan[] {
    const out: OtlpSpan[] = [];
    const seen = new Set([span.spanId]);
    for (let p = this.parent(span); p && !seen.has(p.spanId); p = this.parent(p)) {
      seen.add(p.spanId);
      out.push(p);
    }
    return out;
  }

  /** The conversation id: on the span, its ancestors, then any span of the trace; else the trace id. */
  private baseSession(span: OtlpSpan): string {
    for (const s of [span, ...this.ancestors(span)]) {
      const id = ownSessionId(s);
      if (id) return id;
    }
    return this.traceSession ?? span.traceId;
  }

  /** The nearest agent span among the span and its ancestors, with its agent name. */
  private agentOf(span: OtlpSpan): { span: OtlpSpan; name: string } | undefined {
    for (const s of [span, ...this.ancestors(span)]) {
      if (this.kinds.get(s.spanId) !== "agent") continue;
      return { span: s, name: agentNameOf(s) ?? DEFAULT_AGENT };
    }
    return undefined;
  }

  /**
   * The session of a span. A nested agent (an agent span below another agent of a different
   * name) is a child session `<session>/<agent>`, and its spans belong to it.
   */
  sessionOf(span: OtlpSpan): string {
    const cached = this.sessions.get(span.spanId);
    if (cached !== undefined) return cached;
    let session: string;
    const agent = this.agentOf(span);
    if (!agent) session = this.baseSession(span);
    else {
      const parentSpan = this.parent(agent.span);
      const outer = parentSpan ? this.agentOf(parentSpan) : undefined;
      if (outer && outer.name !== agent.name) session = `${this.sessionOf(outer.span)}/${agent.name}`;
      else if (outer) session = this.sessionOf(outer.span);
      else session = this.baseSession(agent.span);
    }
    this.sessions.set(span.spanId, session);
    return session;
  }

  /** The agent name for a session without an agent span: a Vercel AI SDK `ai.telemetry.functionId` up the tree. */
  functionIdOf(span: OtlpSpan): string | undefined {
    for (const s of [span, ...this.ancestors(span)]) {
      const f = firstString(s, ["ai.telemetry.functionId"]);
      if (f) return clip(f, MAX_LABEL);
    }
    return undefined;
  }

  /**
   * The inference span that requested a tool call, with its model. First the inference span that
   * lists the tool's call id among the calls it made (exact, whatever the span tree); else the
   * parent when it is an inference span (Vercel's `ai.toolCall` under `doGenerate`), else the
   * nearest earlier inference span among the siblings (the `chat` before `execute_tool` in a step),
   * going up a level at a time — while the trace may still grow, skipping an inference span that
   * lists its calls without this one (once it settled, ids that never matched are not trusted over
   * the tree); else the enclosing agent's model; else the nearest earlier inference span of the
   * trace. `awaited` says the requester is not in the trace (yet) although a model issued the
   * call (the model is then only a fallback).
   */
  requester(tool: OtlpSpan, settled: boolean): { model: string | undefined; awaited: boolean } {
    const callId = issuedCallIdOf(tool);
    const toolStart = tool.startTimeUnixNano ?? 0n;
    if (callId !== undefined) {
      const listing = this.inference.filter((s) => this.requestedCalls(s)?.has(callId));
      const exact = listing.filter((s) => (s.startTimeUnixNano ?? 0n) <= toolStart).at(-1) ?? listing[0];
      if (exact) return { model: modelOf(exact), awaited: false };
    }
    const mayHaveRequested = (s: OtlpSpan) => {
      const listed = settled ? undefined : this.requestedCalls(s);
      return callId === undefined || listed === undefined || listed.has(callId);
    };
    let child: OtlpSpan = tool;
    for (let p = this.parent(child); p; child = p, p = this.parent(p)) {
      if (this.kinds.get(p.spanId) === "inference" && mayHaveRequested(p)) {
        const m = modelOf(p);
        if (m) return { model: m, awaited: false };
      }
      const siblings = (this.children.get(p.spanId) ?? []).filter(
        (s) => s !== child && this.kinds.get(s.spanId) === "inference" && (s.startTimeUnixNano ?? 0n) <= toolStart && modelOf(s) && mayHaveRequested(s),
      );
      const nearest = siblings[siblings.length - 1];
      if (nearest) return { model: modelOf(nearest), awaited: false };
      if (this.kinds.get(p.spanId) === "agent") {
        const m = modelOf(p);
        if (m) return { model: m, awaited: callId !== undefined };
      }
    }
    // Spans without parent links: the nearest earlier inference span of the whole trace.
    const earlier = this.inference.filter((s) => (s.startTimeUnixNano ?? 0n) <= toolStart && modelOf(s) && mayHaveRequested(s)).at(-1);
    if (earlier) return { model: modelOf(earlier), awaited: false };
    return { model: undefined, awaited: callId !== undefined };
  }
}

function byStart(a: OtlpSpan, b: OtlpSpan): number {
  const x = a.startTimeUnixNano ?? 0n;
  const y = b.startTimeUnixNano ?? 0n;
  return x < y ? -1 : x > y ? 1 : a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0;
}

// ---------------------------------------------------------------------------
// Mapping
// ---------------------------------------------------------------------------

/** Within one instant: the session starts, then the model speaks, then calls, then results. */
const ORDER = { "session.start": 0, "model.text": 1, "tool.call": 2, "tool.result": 3 } as const;

interface Pending {
  ts: number;
  order: number;
  seq: number;
  spanId: string;
  event: EventInput;
}

/** Why a span that should map cannot, judged on the span alone (used on receipt, for the partial success). */
export function spanProblem(span: OtlpSpan, now: number): string | null {
  const kind = classifySpan(span);
  if (!kind) return null;
  const times = spanTimes(span, now);
  if ("reason" in times) return times.reason;
  const own = ownSessionId(span);
  if (own && own.length > MAX_ID) return `session id is longer than ${MAX_ID} characters`;
  if (kind === "tool") {
    const toolName = toolNameOf(span);
    if (!toolName) return "tool span has no tool name (gen_ai.tool.name, ai.toolCall.name, tool.name or traceloop.entity.name)";
    if (toolName.length > MAX_TOOL_NAME) return `tool name is longer than ${MAX_TOOL_NAME} characters`;
    if (callIdOf(span).length > MAX_ID) return `tool call id is longer than ${MAX_ID} characters`;
    if (Buffer.byteLength(JSON.stringify(argsOf(span)), "utf8") > MAX_ARGS_BYTES) return "tool arguments exceed 64 KiB of JSON";
  }
  return null;
}

/**
 * Maps all spans of one trace (applied and not) to events in application order: by the span's
 * start time (a tool's result at its end), whatever the order the spans arrived in. Until the
 * trace settles, a tool span whose requesting inference span is missing is held (see `held`).
 */
export function mapTrace(spans: OtlpSpan[], now: number, options: MapOptions = {}): MapResult {
  const settled = options.settled ?? true;
  const view = new TraceView(dedupe(spans));
  const pending: Pending[] = [];
  const rejected: RejectedSpan[] = [];
  const held: string[] = [];
  const sessions = new Map<string, number>();
  const started = new Set<string>();
  let seq = 0;
  const push = (ts: number, spanId: string, event: EventInput) => pending.push({ ts, order: ORDER[event.type as keyof typeof ORDER], seq: seq++, spanId, event });

  const ordered = [...view.byId.values()];
  for (const span of ordered) {
    const kind = view.kinds.get(span.spanId);
    if (!kind) continue;
    const problem = spanProblem(span, now);
    if (problem) {
      rejected.push({ spanId: span.spanId, name: span.name, reason: problem });
      continue;
    }
    const requester = kind === "tool" ? view.requester(span, settled) : undefined;
    if (requester?.awaited && !settled) {
      held.push(span.spanId);
      continue;
    }
    const times = spanTimes(span, now) as SpanTimes;
    let sessionId = view.sessionOf(span);
    if (sessionId.length > MAX_ID) sessionId = clip(sessionId, MAX_ID);
    sessions.set(sessionId, Math.max(sessions.get(sessionId) ?? 0, times.endMs));
    const out: EventInput[] = [];

    if (kind === "agent") {
      const agent = agentNameOf(span) ?? DEFAULT_AGENT;
      const model = modelOf(span);
      started.add(sessionId);
      out.push({ type: "session.start", id: eventId(span.spanId, "start"), sessionId, agent, ...(model ? { model } : {}), ts: times.startMs });
    } else if (kind === "tool") {
      const toolName = toolNameOf(span)!;
      const callId = callIdOf(span);
      const args = argsOf(span);
      const model = requester!.model;
      const result = resultOf(span);
      const httpStatus = httpStatusOf(span);
      const error = failureOf(span);
      out.push({ type: "tool.call", id: eventId(span.spanId, "call"), sessionId, callId, toolName, args, ...(model ? { model } : {}), ts: times.startMs });
      out.push({
        type: "tool.result",
        id: eventId(span.spanId, "result"),
        sessionId,
        callId,
        toolName,
        args,
        // A span that ended OK may still report a failure in its result (SPEC 3): leave `success` to the engine then.
        ...(error !== null ? { success: false, error } : {}),
        ...(result !== undefined ? { result: result as never } : {}),
        ...(httpStatus !== undefined ? { httpStatus } : {}),
        ...(model ? { model } : {}),
        durationMs: times.durationMs,
        ts: times.endMs,
      });
    } else {
      const model = modelOf(span);
      const output = assistantOutputOf(span);
      out.push({
        type: "model.text",
        id: eventId(span.spanId, "text"),
        sessionId,
        text: output?.text ?? "",
        ...(output?.reasoningOnly ? { reasoningOnly: true } : {}),
        ...(model ? { model } : {}),
        ts: times.endMs,
      });
    }

    // Last line of defence: every event must pass the agent API's own validation.
    const invalid = out.map((e) => eventSchema.safeParse(e)).find((r) => !r.success);
    if (invalid && !invalid.success) {
      const issue = invalid.error.issues[0];
      rejected.push({ spanId: span.spanId, name: span.name, reason: `cannot be mapped: ${issue.path.join(".")} ${issue.message}` });
      continue;
    }
    for (const e of out) push(e.ts as number, span.spanId, e);
  }

  // A session without an agent span (the Vercel AI SDK's legacy spans): its agent is the
  // functionId, given by a session.start at its earliest mapped span.
  for (const span of ordered) {
    const kind = view.kinds.get(span.spanId);
    if (!kind || rejected.some((r) => r.spanId === span.spanId)) continue;
    const sessionId = clip(view.sessionOf(span), MAX_ID);
    if (started.has(sessionId)) continue;
    started.add(sessionId);
    const agent = view.functionIdOf(span);
    if (!agent) continue;
    const root = view.ancestors(span).at(-1) ?? span;
    const ts = nanosToMs(root.startTimeUnixNano ?? span.startTimeUnixNano!);
    push(ts, root.spanId, { type: "session.start", id: eventId(root.spanId, "start"), sessionId, agent, ts });
  }

  pending.sort((a, b) => a.ts - b.ts || a.order - b.order || a.seq - b.seq);
  // A model.text without a model, and other events, carry the session's latest model.
  const sessionModel = new Map<string, string>();
  for (const p of pending) {
    const ev = p.event;
    if (ev.model) sessionModel.set(ev.sessionId, ev.model);
    else if (ev.type !== "session.start" && sessionModel.has(ev.sessionId)) ev.model = sessionModel.get(ev.sessionId);
  }
  return { events: pending.map((p) => ({ spanId: p.spanId, event: p.event })), rejected, sessions, held };
}

function dedupe(spans: OtlpSpan[]): OtlpSpan[] {
  const seen = new Map<string, OtlpSpan>();
  for (const s of spans) if (!seen.has(s.spanId)) seen.set(s.spanId, s);
  return [...seen.values()];
}

/** The `errorMessage` of a partial success: how many and why, for the first few. */
export function describeRejections(rejected: { spanId: string | null; name?: string; reason: string }[], limit = 5): string {
  const parts = rejected.slice(0, limit).map((r) => `${r.name ? `'${r.name}' ` : ""}(span ${r.spanId ?? "?"}): ${r.reason}`);
  const more = rejected.length > limit ? `; and ${rejected.length - limit} more` : "";
  return `${rejected.length} span${rejected.length === 1 ? "" : "s"} could not be mapped: ${parts.join("; ")}${more}`;
}
