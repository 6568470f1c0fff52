/**
 * `POST /api/otlp/v1/traces` (SPEC 7.4), independent of Next.js so tests can drive it with plain
 * Request objects. The agent-request steps (./agent-request.ts: capacity, API key, rate limit), content
 * type (415), body size before and after gunzip (413), OTLP shape (400); then the spans are stored
 * durably (server/otlp/store.ts) before the answer, and traces whose root arrived are applied right away
 * (server/otlp/applier.ts; the background applier does the rest). Answers use the request's encoding.
 */
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "@/server/http/database-unavailable";
import type { Db } from "@/db/client";
import type { Runtime } from "@/server/runtime";
import type { AuthenticatedKey } from "@/server/services/api-keys";
import { handleAgentRequest, type AgentRefusal } from "./agent-request";
import {
  OtlpRequestError,
  decodeContentEncoding,
  decodeTraceRequest,
  encodeExportResponse,
  encodeStatus,
  formatOf,
  responseContentType,
  type OtlpFormat,
} from "@/server/otlp/decode";
import { describeRejections, spanProblem } from "@/server/otlp/map";
import { acceptSpans } from "@/server/otlp/store";
import { applyTrace, otlpTimingFromEnv, type OtlpTiming } from "@/server/otlp/applier";

/** gRPC status codes carried in the `google.rpc.Status` of error answers. */
const GRPC = { INVALID_ARGUMENT: 3, RESOURCE_EXHAUSTED: 8, UNAUTHENTICATED: 16, INTERNAL: 13, UNIMPLEMENTED: 12, UNAVAILABLE: 14 } as const;

const REFUSAL_CODE: Record<AgentRefusal["reason"], number> = {
  overloaded: GRPC.UNAVAILABLE,
  method_not_allowed: GRPC.UNIMPLEMENTED,
  unauthenticated: GRPC.UNAUTHENTICATED,
  rate_limited: GRPC.RESOURCE_EXHAUSTED,
  too_large: GRPC.RESOURCE_EXHAUSTED,
  database_unavailable: GRPC.UNAVAILABLE,
};

function answer(status: number, body: Uint8Array | string, contentType: string, headers: Record<string, string> = {}): Response {
  return new Response(body as BodyInit, { status, headers: { "content-type": contentType, ...headers } });
}

export function handleOtlpTraces(req: Request, runtime: Runtime, timing: OtlpTiming = otlpTimingFromEnv()): Promise<Response> {
  const requestType = req.headers.get("content-type");
  const format: OtlpFormat = formatOf(requestType) ?? "json";
  const contentType = responseContentType(requestType);
  const fail = (status: number, code: number, message: string, headers?: Record<string, string>) =>
    answer(status, encodeStatus(format, code, message), contentType, headers);
  return handleAgentRequest(req, runtime, {
    // OTLP exporters retry 503 with Retry-After (OTLP/HTTP spec: "retryable" status codes).
    refuse: (r) => fail(r.status, REFUSAL_CODE[r.reason], r.message, r.headers),
    key: "fresh",
    methods: ["POST"],
    check: () => (formatOf(requestType) ? null : fail(415, GRPC.INVALID_ARGUMENT, "Unsupported Content-Type: send application/json or application/x-protobuf")),
    parse: async (raw) => {
      try {
        return decodeTraceRequest(await decodeContentEncoding(raw!, req.headers.get("content-encoding")), format);
      } catch (err) {
        if (err instanceof OtlpRequestError) {
          return fail(err.status, err.status === 413 ? GRPC.RESOURCE_EXHAUSTED : GRPC.INVALID_ARGUMENT, err.message);
        }
        throw err;
      }
    },
    run: (decoded, _req, ctx) => storeSpans(decoded, ctx.db, ctx.key!, timing, format, contentType, fail),
  });
}

async function storeSpans(
  decoded: ReturnType<typeof decodeTraceRequest>,
  db: Db,
  key: AuthenticatedKey,
  timing: OtlpTiming,
  format: OtlpFormat,
  contentType: string,
  fail: (status: number, code: number, message: string, headers?: Record<string, string>) => Response,
): Promise<Response> {
  const receivedAt = Date.now();
  const scope = { workspaceId: key.workspaceId, organizationId: key.organizationId };
  // A span that cannot be mapped on its own is reported (and not stored); the rest is acknowledged.
  const problems = decoded.spans.map((s) => ({ span: s, reason: spanProblem(s, receivedAt) }));
  const accepted = problems.filter((p) => p.reason === null).map((p) => p.span);
  let dueTraceIds: string[];
  try {
    dueTraceIds = await acceptSpans(db, scope, accepted, receivedAt, timing.settleMs);
  } catch (err) {
    // A database outage is temporary: exporters retry a 503 after Retry-After (OTLP/HTTP spec).
    if (isDatabaseUnavailable(err)) {
      return fail(503, GRPC.UNAVAILABLE, "Database unavailable; retry shortly", { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) });
    }
    console.error("[vigil] OTLP spans could not be stored:", err);
    return fail(500, GRPC.INTERNAL, "Internal server error");
  }
  // Stored: the 200 is safe. Traces whose root arrived are applied now (others when they settle).
  for (const traceId of dueTraceIds) {
    await applyTrace(db, { workspaceId: key.workspaceId, traceId }, receivedAt, timing.settleMs).catch((err) =>
      console.error(`[vigil] OTLP trace ${traceId} will be applied by the background applier:`, err),
    );
  }

  const rejected = [
    ...decoded.malformed.map((m) => ({ spanId: m.spanId, reason: m.reason })),
    ...problems.filter((p) => p.reason !== null).map((p) => ({ spanId: p.span.spanId, name: p.span.name, reason: p.reason! })),
  ];
  const partial = rejected.length ? { rejectedSpans: rejected.length, errorMessage: describeRejections(rejected) } : null;
  return answer(200, encodeExportResponse(format, partial), contentType);
}
