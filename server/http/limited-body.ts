/**
 * Request bodies with a hard size cap (SPEC 7: a body over 1 MiB → 413), shared by the tRPC
 * handler and the OTLP endpoint. The cap is enforced while streaming, so a chunked upload without
 * Content-Length cannot exceed it either.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the body with a hard cap; "too_large" as soon as the declared or streamed size exceeds it. */
export async function readLimitedBody(req: Request, maxBytes = MAX_BODY_BYTES): Promise<Uint8Array | "too_large"> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return "too_large";
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
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
