/**
 * `POST /api/otlp/v1/traces` (SPEC 7.4), independent of Next.js so tests can drive it with plain
 * Request objects. Order of checks: API key (401), rate limit (429 + Retry-After), content type
 * (415), body size before and after gunzip (413), OTLP shape (400); then the spans are stored
 * durably (./store.ts) before the answer, and traces whose root arrived are applied right away
 * (./applier.ts; the background applier does the rest). Answers use the request's encoding.
 */
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "@/server/http/database-unavailable";
import type { Runtime } from "@/server/runtime";
import { authenticateApiKey } from "@/server/services/api-keys";
import { consumeRateLimit } from "@/server/trpc/rate-limit";
import { bearerToken } from "@/server/trpc/init";
import { readLimitedBody } from "@/server/http/limited-body";
import { OVERLOAD_MESSAGE, withCapacity } from "@/server/http/capacity";
import {
  OtlpRequestError,
  decodeContentEncoding,
  decodeTraceRequest,
  encodeExportResponse,
  encodeStatus,
  formatOf,
  responseContentType,
  type OtlpFormat,
} from "./decode";
import { describeRejections, spanProblem } from "./map";
import { acceptSpans } from "./store";
import { applyTrace, otlpTimingFromEnv, type OtlpTiming } from "./applier";

export const OTLP_TRACES_PATH = "/api/otlp/v1/traces";

/** gRPC status codes carried in the `google.rpc.Status` of error answers. */
const GRPC = { INVALID_ARGUMENT: 3, RESOURCE_EXHAUSTED: 8, UNAUTHENTICATED: 16, INTERNAL: 13, UNIMPLEMENTED: 12, UNAVAILABLE: 14 } as const;

function answer(status: number, body: Uint8Array | string, contentType: string, headers: Record<string, string> = {}): Response {
  return new Response(body as BodyInit, { status, headers: { "content-type": contentType, ...headers } });
}

export function handleOtlpTraces(req: Request, runtime: Runtime, timing: OtlpTiming = otlpTimingFromEnv()): Promise<Response> {
  const requestType = req.headers.get("content-type");
  const format: OtlpFormat = formatOf(requestType) ?? "json";
  const contentType = responseContentType(requestType);
  const fail = (status: number, code: number, message: string, headers?: Record<string, string>) =>
    answer(status, encodeStatus(format, code, message), contentType, headers);
  // OTLP exporters retry 503 with Retry-After (OTLP/HTTP spec: "retryable" status codes).
  return withCapacity(
    () => serveOtlpTraces(req, runtime, timing, format, fail),
    (retryAfter) => fail(503, GRPC.UNAVAILABLE, OVERLOAD_MESSAGE, { "retry-after": String(retryAfter) }),
  );
}

async function serveOtlpTraces(
  req: Request,
  runtime: Runtime,
  timing: OtlpTiming,
  format: OtlpFormat,
  fail: (status: number, code: number, message: string, headers?: Record<string, string>) => Response,
): Promise<Response> {
  const requestType = req.headers.get("content-type");
  const contentType = responseContentType(requestType);

  if (req.method !== "POST") return fail(405, GRPC.UNIMPLEMENTED, "Use POST", { allow: "POST" });

  const db = runtime.database.db;
  const token = bearerToken(req);
  if (!token) return fail(401, GRPC.UNAUTHENTICATED, "Missing API key: send Authorization: Bearer <key>");
  let key;
  try {
    key = await authenticateApiKey(db, token);
  } catch (err) {
    if (!isDatabaseUnavailable(err)) throw err;
    return fail(503, GRPC.UNAVAILABLE, "Database unavailable; retry shortly", { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) });
  }
  if (!key) return fail(401, GRPC.UNAUTHENTICATED, "Invalid or revoked API key");
  const limited = await consumeRateLimit(key.keyId);
  if (limited) {
    return fail(429, GRPC.RESOURCE_EXHAUSTED, `Rate limit exceeded; retry in ${limited.retryAfterSeconds}s`, { "retry-after": String(limited.retryAfterSeconds) });
  }

  if (!formatOf(requestType)) {
    return fail(415, GRPC.INVALID_ARGUMENT, "Unsupported Content-Type: send application/json or application/x-protobuf");
  }

  const raw = await readLimitedBody(req);
  if (raw === "too_large") return fail(413, GRPC.RESOURCE_EXHAUSTED, "Request body exceeds 1 MiB");

  let decoded;
  try {
    const body = await decodeContentEncoding(raw, req.headers.get("content-encoding"));
    decoded = decodeTraceRequest(body, format);
  } catch (err) {
    if (err instanceof OtlpRequestError) {
      return fail(err.status, err.status === 413 ? GRPC.RESOURCE_EXHAUSTED : GRPC.INVALID_ARGUMENT, err.message);
    }
    throw err;
  }

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
