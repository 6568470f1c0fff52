/**
 * The HTTP entry of the tRPC API, independent of Next.js so integration tests can drive it with
 * plain Request objects. Enforces the 1 MiB body limit (413) before anything is parsed.
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import type { Runtime } from "@/server/runtime";
import { appRouter } from "./root";
import { createContext } from "./init";

export const MAX_BODY_BYTES = 1024 * 1024;
export const TRPC_ENDPOINT = "/api/trpc";

function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ error: { message, code: -32000, data: { code, httpStatus: status } } }, { status });
}

/** Reads the body with a hard cap, so a chunked upload cannot exceed the limit either. */
async function readLimitedBody(req: Request): Promise<Uint8Array | "too_large"> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) return "too_large";
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      return "too_large";
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    body.set(c, offset);
    offset += c.byteLength;
  }
  return body;
}

export async function handleTrpcRequest(req: Request, runtime: Runtime): Promise<Response> {
  let request = req;
  if (req.method !== "GET" && req.method !== "HEAD") {
    const body = await readLimitedBody(req);
    if (body === "too_large") return errorResponse(413, "PAYLOAD_TOO_LARGE", "Request body exceeds 1 MiB");
    request = new Request(req.url, { method: req.method, headers: req.headers, body: body as BodyInit });
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: request,
    router: appRouter,
    createContext: (opts) => createContext(runtime, opts),
  });
}
