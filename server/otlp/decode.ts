/**
 * OTLP/HTTP trace requests → a flat list of spans (SPEC 7.4), and the answers back.
 *
 * - `application/json`: the OTLP JSON encoding as `@opentelemetry/exporter-trace-otlp-http` and
 *   the collector send it: lowerCamelCase (snake_case accepted too), ids as hex (base64 accepted,
 *   as older exporters sent them), 64-bit integers as numbers or strings, enums as numbers or names.
 * - `application/x-protobuf` (or `application/protobuf`): decoded by protobufjs with the OTLP
 *   trace schema of ./proto.ts, then converted to the same JSON shape (`longs: String`,
 *   `bytes: base64`), so both encodings go through one normalizer.
 * - `Content-Encoding: gzip`: decompressed with a cap on the output (a zip bomb → 413).
 *
 * A body that is not an OTLP export is an `OtlpRequestError` (400, or 413/415); a span whose ids or
 * times are unusable is reported in `malformed` and counted as rejected, not failing the export.
 */
import { InputHygieneError, inputProblem } from "@/server/http/input-hygiene";
import { gunzip } from "node:zlib";
import { promisify } from "node:util";
import { ExportTraceServiceRequest, ExportTraceServiceResponse, RpcStatus } from "./proto";
import { MAX_BODY_BYTES } from "@/server/http/limited-body";

// ---------------------------------------------------------------------------
// The decoded model
// ---------------------------------------------------------------------------

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attributes = Record<string, AttrValue>;

export interface OtlpSpanEvent {
  name: string;
  timeUnixNano: bigint | null;
  attributes: Attributes;
}

export interface OtlpSpan {
  /** Lower-case hex, 32 characters. */
  traceId: string;
  /** Lower-case hex, 16 characters. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  startTimeUnixNano: bigint | null;
  endTimeUnixNano: bigint | null;
  attributes: Attributes;
  /** The attributes of the span's resource (`service.name`, …). */
  resource: Attributes;
  scope: { name: string; version: string | null };
  events: OtlpSpanEvent[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string | null };
}

export interface MalformedSpan {
  spanId: string | null;
  reason: string;
}

export type OtlpFormat = "json" | "protobuf";

export interface DecodedTraces {
  spans: OtlpSpan[];
  malformed: MalformedSpan[];
}

/** The request is not an acceptable OTLP export; `status` is the HTTP status to answer with. */
export class OtlpRequestError extends Error {
  constructor(
    public readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
    this.name = "OtlpRequestError";
  }
}

// ---------------------------------------------------------------------------
// Content type and encoding
// ---------------------------------------------------------------------------

const JSON_TYPES = new Set(["application/json"]);
const PROTOBUF_TYPES = new Set(["application/x-protobuf", "application/protobuf"]);

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0].trim().toLowerCase();
}

/** The encoding of a request by its Content-Type, or null when it is neither OTLP encoding. */
export function formatOf(contentType: string | null): OtlpFormat | null {
  const t = mediaType(contentType);
  if (JSON_TYPES.has(t)) return "json";
  if (PROTOBUF_TYPES.has(t)) return "protobuf";
  return null;
}

/** The Content-Type of the answer: the request's own media type when it is an OTLP one. */
export function responseContentType(contentType: string | null): string {
  const t = mediaType(contentType);
  if (PROTOBUF_TYPES.has(t)) return t;
  return "application/json";
}

const gunzipAsync = promisify(gunzip);

/**
 * Undoes `Content-Encoding` (identity or gzip). The decompressed size is capped like the body
 * itself, so a small gzip of a huge payload stops at the cap instead of exhausting memory.
 */
export async function decodeContentEncoding(body: Uint8Array, contentEncoding: string | null, maxBytes = MAX_BODY_BYTES): Promise<Uint8Array> {
  const encodings = (contentEncoding ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e && e !== "identity");
  let out = body;
  // Encodings are listed in the order they were applied; undo them from the last.
  for (const enc of encodings.reverse()) {
    if (enc !== "gzip" && enc !== "x-gzip") throw new OtlpRequestError(415, `Unsupported Content-Encoding '${enc}': send gzip or no encoding`);
    try {
      out = new Uint8Array(await gunzipAsync(out, { maxOutputLength: maxBytes }));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError) {
        throw new OtlpRequestError(413, `Decompressed request body exceeds ${maxBytes} bytes`);
      }
      throw new OtlpRequestError(400, "Request body is not valid gzip");
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/** The export, unless it nests too deep (400 naming the field); unstorable characters are stored as U+FFFD later. */
function checkedInput(value: unknown): unknown {
  const issue = inputProblem(value, { strings: false });
  if (issue) throw new OtlpRequestError(400, new InputHygieneError(issue).message);
  return value;
}

/** Decodes the (already decompressed) body of an OTLP trace export. Throws OtlpRequestError(400) when it is not one. */
export function decodeTraceRequest(body: Uint8Array, format: OtlpFormat): DecodedTraces {
  if (format === "protobuf") {
    let message: unknown;
    try {
      message = ExportTraceServiceRequest.decode(body);
    } catch (err) {
      throw new OtlpRequestError(400, `Request body is not an OTLP ExportTraceServiceRequest: ${(err as Error).message}`);
    }
    const object = ExportTraceServiceRequest.toObject(message as never, { longs: String, bytes: String, enums: Number, arrays: true });
    return normalizeExport(checkedInput(object));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new OtlpRequestError(400, "Request body is not valid JSON");
  }
  return normalizeExport(checkedInput(parsed));
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** A field by its lowerCamelCase JSON name, or the proto field name (snake_case). */
function field(o: Obj, camel: string): unknown {
  if (camel in o) return o[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
  return o[snake];
}

function listField(o: Obj, camel: string, where: string): unknown[] {
  const v = field(o, camel);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpRequestError(400, `Not an OTLP export: ${where}.${camel} must be an array`);
  return v;
}

function objectEntries(list: unknown[], where: string): Obj[] {
  return list.map((item, i) => {
    if (!isObj(item)) throw new OtlpRequestError(400, `Not an OTLP export: ${where}[${i}] must be an object`);
    return item;
  });
}

/** The OTLP JSON shape (or protobufjs' toObject of the protobuf) → spans. */
function normalizeExport(input: unknown): DecodedTraces {
  if (!isObj(input)) throw new OtlpRequestError(400, "Not an OTLP export: the body must be an ExportTraceServiceRequest object");
  const rsRaw = field(input, "resourceSpans");
  if (rsRaw === undefined && Object.keys(input).length > 0) {
    throw new OtlpRequestError(400, "Not an OTLP export: no resourceSpans");
  }
  const spans: OtlpSpan[] = [];
  const malformed: MalformedSpan[] = [];
  const resourceSpans = objectEntries(listField(input, "resourceSpans", "request"), "resourceSpans");
  resourceSpans.forEach((rs, ri) => {
    const where = `resourceSpans[${ri}]`;
    const resource = field(rs, "resource");
    const resourceAttrs = isObj(resource) ? attributesOf(field(resource, "attributes")) : {};
    // instrumentationLibrarySpans: the pre-1.0 name of scopeSpans, still sent by old exporters.
    const scopeLists = [...listField(rs, "scopeSpans", where), ...listField(rs, "instrumentationLibrarySpans", where)];
    objectEntries(scopeLists, `${where}.scopeSpans`).forEach((ss, si) => {
      const scopeRaw = field(ss, "scope") ?? field(ss, "instrumentationLibrary");
      const scope = {
        name: isObj(scopeRaw) && typeof scopeRaw.name === "string" ? scopeRaw.name : "",
        version: isObj(scopeRaw) && typeof scopeRaw.version === "string" && scopeRaw.version ? scopeRaw.version : null,
      };
      objectEntries(listField(ss, "spans", `${where}.scopeSpans[${si}]`), `${where}.scopeSpans[${si}].spans`).forEach((raw) => {
        const span = normalizeSpan(raw, resourceAttrs, scope);
        if ("reason" in span) malformed.push(span);
        else spans.push(span);
      });
    });
  });
  return { spans, malformed };
}

function normalizeSpan(raw: Obj, resource: Attributes, scope: OtlpSpan["scope"]): OtlpSpan | MalformedSpan {
  const spanId = parseId(field(raw, "spanId"), 8);
  const traceId = parseId(field(raw, "traceId"), 16);
  if (!spanId) return { spanId: null, reason: "span has no valid spanId" };
  if (!traceId) return { spanId, reason: "span has no valid traceId" };
  const statusRaw = field(raw, "status");
  const status = {
    code: isObj(statusRaw) ? statusCode(field(statusRaw, "code")) : 0,
    message: isObj(statusRaw) && typeof statusRaw.message === "string" && statusRaw.message ? statusRaw.message : null,
  };
  const eventsRaw = field(raw, "events");
  const events: OtlpSpanEvent[] = Array.isArray(eventsRaw)
    ? eventsRaw.filter(isObj).map((e) => ({
        name: typeof e.name === "string" ? e.name : "",
        timeUnixNano: parseNanos(field(e, "timeUnixNano")),
        attributes: attributesOf(field(e, "attributes")),
      }))
    : [];
  return {
    traceId,
    spanId,
    parentSpanId: parseId(field(raw, "parentSpanId"), 8),
    name: typeof raw.name === "string" ? raw.name : "",
    startTimeUnixNano: parseNanos(field(raw, "startTimeUnixNano")),
    endTimeUnixNano: parseNanos(field(raw, "endTimeUnixNano")),
    attributes: attributesOf(field(raw, "attributes")),
    resource,
    scope,
    events,
    status,
  };
}

const STATUS_NAMES: Record<string, number> = { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 };

function statusCode(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") return STATUS_NAMES[v] ?? (/^\d+$/.test(v) ? Number(v) : 0);
  return 0;
}

const HEX = /^[0-9a-fA-F]+$/;

/**
 * A trace (16 bytes) or span (8 bytes) id as lower-case hex. OTLP JSON sends hex; older JS
 * exporters and protobufjs' toObject give base64. The lengths differ (32 vs 24 characters for a
 * trace id, 16 vs 12 for a span id), so the two cannot be confused. All-zero ids are invalid.
 */
export function parseId(v: unknown, bytes: 8 | 16): string | null {
  let hex: string | null = null;
  if (typeof v === "string") {
    if (v.length === bytes * 2 && HEX.test(v)) hex = v.toLowerCase();
    else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
      const buf = Buffer.from(v, "base64");
      if (buf.length === bytes) hex = buf.toString("hex");
    }
  } else if (v instanceof Uint8Array && v.length === bytes) {
    hex = Buffer.from(v).toString("hex");
  }
  if (!hex || /^0+$/.test(hex)) return null;
  return hex;
}

/** Unix nanoseconds from a string, a number, or protobufjs' `{ low, high }` long bits. */
export function parseNanos(v: unknown): bigint | null {
  try {
    if (typeof v === "string" && /^\d+$/.test(v)) return BigInt(v);
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) return BigInt(Math.trunc(v));
    if (typeof v === "bigint") return v;
    if (isObj(v) && typeof v.low === "number" && typeof v.high === "number") {
      return (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
    }
  } catch {
    /* fall through */
  }
  return null;
}

/** OTLP `KeyValue[]` → a plain object (later keys win). */
function attributesOf(list: unknown): Attributes {
  const out: Attributes = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) {
    if (!isObj(kv) || typeof kv.key !== "string") continue;
    out[kv.key] = anyValue(kv.value);
  }
  return out;
}

/** OTLP `AnyValue` → a plain JSON value. `intValue` may be a number or a decimal string. */
export function anyValue(v: unknown, depth = 0): AttrValue {
  if (!isObj(v) || depth > 32) return null;
  const s = field(v, "stringValue");
  if (typeof s === "string") return s;
  const b = field(v, "boolValue");
  if (typeof b === "boolean") return b;
  const i = field(v, "intValue");
  if (i !== undefined && i !== null) {
    if (typeof i === "number") return i;
    if (typeof i === "string" && /^-?\d+$/.test(i)) {
      const n = Number(i);
      return Number.isSafeInteger(n) ? n : i;
    }
    if (isObj(i) && typeof i.low === "number" && typeof i.high === "number") {
      return Number(BigInt.asIntN(64, (BigInt(i.high >>> 0) << 32n) | BigInt(i.low >>> 0)));
    }
    return null;
  }
  const d = field(v, "doubleValue");
  if (typeof d === "number") return d;
  if (typeof d === "string") return Number(d);
  const arr = field(v, "arrayValue");
  if (isObj(arr)) {
    const values = arr.values;
    return Array.isArray(values) ? values.map((x) => anyValue(x, depth + 1)) : [];
  }
  const kvl = field(v, "kvlistValue");
  if (isObj(kvl)) {
    const out: { [key: string]: AttrValue } = {};
    if (Array.isArray(kvl.values)) {
      for (const kv of kvl.values) if (isObj(kv) && typeof kv.key === "string") out[kv.key] = anyValue(kv.value, depth + 1);
    }
    return out;
  }
  const bytes = field(v, "bytesValue");
  if (typeof bytes === "string") return bytes;
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString("base64");
  return null;
}

// ---------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------

export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

/** `ExportTraceServiceResponse`: `{}` on success, `{ partialSuccess }` when spans were rejected. */
export function encodeExportResponse(format: OtlpFormat, partial: PartialSuccess | null): Uint8Array | string {
  if (format === "protobuf") {
    const T = ExportTraceServiceResponse;
    const message = T.fromObject(partial ? { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } } : {});
    return T.encode(message).finish();
  }
  // OTLP JSON: int64 as a decimal string.
  return JSON.stringify(partial ? { partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage } } : {});
}

/** The body of an error answer: a `google.rpc.Status` in the request's encoding. */
export function encodeStatus(format: OtlpFormat, code: number, message: string): Uint8Array | string {
  if (format === "protobuf") return RpcStatus.encode(RpcStatus.create({ code, message })).finish();
  return JSON.stringify({ code, message });
}

/** For tests and tools: decode an `ExportTraceServiceResponse` body. */
export function decodeExportResponse(body: Uint8Array): Record<string, unknown> {
  const T = ExportTraceServiceResponse;
  return T.toObject(T.decode(body), { longs: String });
}

/** For tests and tools: decode a protobuf `google.rpc.Status` body. */
export function decodeStatus(body: Uint8Array): { code?: number; message?: string } {
  return RpcStatus.toObject(RpcStatus.decode(body)) as { code?: number; message?: string };
}
