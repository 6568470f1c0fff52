/**
 * OTLP spans are stored before they are mapped (./store.ts), and kept so a trace can be re-mapped
 * when more of it arrives — so they are redacted on the way in, like every other thing agents send
 * (SPEC 2): tool arguments, results, prompts and model text in span attributes carry the same
 * passwords and bearer tokens as `ingest.events` args do.
 *
 * Identifier attributes (ids, names, kinds, models) stay as they are: a long random session or call
 * id looks like a token, and the mapper needs it to join spans into sessions.
 */
import { REDACTED, isSecretKey, redactString } from "@/server/engine/redact";
import type { AttrValue, Attributes, OtlpSpan } from "./decode";

/** `session.id`, `gen_ai.tool.call.id`, `ai.toolCall.name`, `toolCallId`, `llm.model_name`, `openinference.span.kind`, … */
const IDENTIFIER_KEY = /(^|[._])(id|name|kind|type|system|model|model_name|model_id|operation\.name|status_code)$|[a-z](Id|Name)$/;

/** Token counts (`gen_ai.usage.input_tokens`, `llm.token_count.prompt`) say "token" but are numbers, not secrets. */
const USAGE_KEY = /(^|[._])(usage|token_count)([._]|$)/;

const MAX_DEPTH = 32;

/** A string that holds JSON (the GenAI conventions carry arguments and messages as JSON text) is redacted as JSON. */
function redactText(s: string, depth: number): string {
  const t = s.trimStart();
  if ((t.startsWith("{") || t.startsWith("[")) && depth < MAX_DEPTH) {
    try {
      return JSON.stringify(redactJson(JSON.parse(s), depth + 1));
    } catch {
      // Not JSON after all: plain text.
    }
  }
  return redactString(s);
}

/**
 * Inside a payload, as for `ingest.events` args: a secret-looking key hides its value whatever it
 * is; ids and names of calls (`toolCallId`) are kept so the mapper can still pair calls and results.
 */
function redactJson(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return "[…]";
  if (typeof value === "string") return redactText(value, depth);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, depth + 1));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (isSecretKey(k) && v !== null && v !== "") out[k] = REDACTED;
      else if (typeof v === "string" && IDENTIFIER_KEY.test(k)) out[k] = v;
      else out[k] = redactJson(v, depth + 1);
    }
    return out;
  }
  return value;
}

/**
 * Span attribute names are semantic-convention names, so there an identifier (`session.id`, which a
 * secret-key test would hide) and a usage count win over the secret-key test.
 */
export function redactAttributes(attributes: Attributes): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) {
    if ((typeof v === "string" && IDENTIFIER_KEY.test(k)) || USAGE_KEY.test(k)) out[k] = v;
    else if (isSecretKey(k) && v !== null && v !== "") out[k] = REDACTED;
    else out[k] = redactJson(v, 1) as AttrValue;
  }
  return out;
}

/** The span as it may be stored: attributes, event attributes and the status message redacted. */
export function redactSpan(span: OtlpSpan): OtlpSpan {
  return {
    ...span,
    attributes: redactAttributes(span.attributes),
    resource: redactAttributes(span.resource),
    events: span.events.map((e) => ({ ...e, attributes: redactAttributes(e.attributes) })),
    status: { ...span.status, message: span.status.message === null ? null : redactString(span.status.message) },
  };
}
