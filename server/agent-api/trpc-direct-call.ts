/**
 * One tRPC mutation (a plain `POST /api/trpc/<path>` with a JSON body) answered without the fetch
 * adapter: guard.check runs before every tool call of every agent, and the adapter's generic
 * machinery — a second `Request`, a streamed body read, URL parsing, two combined abort signals per
 * call, a `Response` turned back into bytes — cost about as much server CPU as the decision itself.
 *
 * The answer is the adapter's, byte for byte: the same procedure (middlewares, input validation,
 * error formatter), the same error shape and HTTP status, the same headers (tests/integration/
 * direct-call.test.ts compares both paths on valid, invalid, unauthorised and failing calls). Anything
 * outside the common case — a batch, a query, a body that is not one JSON document, a streaming
 * `trpc-accept`, an oversized body — returns null before any work, and the caller hands the request
 * to the adapter (server/agent-api/trpc.ts), which owns those answers.
 */
import { getErrorShape, getHTTPStatusCode, getProcedureAtPath, getTRPCErrorFromUnknown, transformTRPCResponse, type TRPCError } from "@trpc/server/unstable-core-do-not-import";
import { runProcedure } from "@/server/trpc/run-procedure";
import type { Runtime } from "@/server/runtime";
import { MAX_BODY_BYTES } from "@/server/http/limited-body";
import { appRouter } from "@/server/trpc/root";
import { createContext } from "@/server/trpc/init";
import { serveTrpcRequest, trpcOverloadResponse, trpcResponseMeta, TRPC_ENDPOINT } from "./trpc";
import { withCapacity, type CapacitySlot } from "@/server/http/capacity";
import { withQueryPriority } from "@/db/query-priority";
import { agentRequestPriority } from "./agent-request";

export interface DirectCall {
  /** The URL path, without the query string. */
  pathname: string;
  headers: Headers;
  body: Uint8Array;
  /** The full URL; one with a query string (`?batch=1`) goes to the adapter. */
  url: string;
  /** Aborted when the client goes away (a guard.check waiting for a person stops waiting). */
  signal: AbortSignal;
}

/** An answer as node:http writes it. */
export interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

const config = appRouter._def._config;

function isJsonContentType(value: string | null): boolean {
  return value !== null && value.split(";", 1)[0].trim().toLowerCase() === "application/json";
}

/** The mutation a direct call may run, or null when the adapter must answer. */
async function directMutation(call: DirectCall) {
  if (!call.pathname.startsWith(`${TRPC_ENDPOINT}/`) || call.url.includes("?")) return null;
  const path = call.pathname.slice(TRPC_ENDPOINT.length + 1);
  // Batches (`a,b`), encoded or odd paths, streaming and non-JSON requests: the adapter decides.
  if (!/^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$/.test(path)) return null;
  if (!isJsonContentType(call.headers.get("content-type")) || call.headers.has("trpc-accept")) return null;
  if (call.body.byteLength === 0 || call.body.byteLength > MAX_BODY_BYTES) return null;
  const procedure = await getProcedureAtPath(appRouter, path);
  if (typeof procedure !== "function" || procedure._def?.type !== "mutation") return null;
  let input: unknown;
  try {
    input = JSON.parse(Buffer.from(call.body.buffer, call.body.byteOffset, call.body.byteLength).toString("utf8"));
  } catch {
    return null; // the adapter words the parse error
  }
  return { path, procedure, input: config.transformer.input.deserialize(input) };
}

/**
 * Runs the call, or returns null (having run nothing) when the adapter must answer it. Capacity is
 * the caller's: this runs inside the request's slot like the adapter does.
 */
async function callMutationDirect(runtime: Runtime, call: DirectCall, slot: CapacitySlot | null = null): Promise<RawAnswer | null> {
  const found = await directMutation(call);
  if (!found) return null;
  const { path, procedure, input } = found;
  const resHeaders = new Headers();
  // The context sees what the adapter's would: the request's headers, URL, method and signal.
  const req = { headers: call.headers, url: call.url, method: "POST", signal: call.signal } as Request;
  const ctx = await createContext(runtime, { req, resHeaders, info: undefined as never }, slot);
  let error: TRPCError | null = null;
  let response: { result: { data: unknown } } | { error: ReturnType<typeof getErrorShape> };
  try {
    const data = await runProcedure(procedure, { path, getRawInput: async () => input, ctx, type: "mutation", signal: call.signal, batchIndex: 0 });
    response = { result: { data } };
  } catch (cause) {
    error = getTRPCErrorFromUnknown(cause);
    response = { error: getErrorShape({ config, ctx, error, input, path, type: "mutation" }) };
  }
  const meta = trpcResponseMeta(error ? [error] : []);
  const headers: [string, string][] = [
    ["vary", "trpc-accept, accept"],
    ["content-type", "application/json"],
  ];
  meta.headers?.forEach((value, key) => resHeaders.append(key, value));
  resHeaders.forEach((value, key) => headers.push([key, value]));
  return {
    status: meta.status ?? getHTTPStatusCode([response] as never),
    headers,
    body: JSON.stringify(transformTRPCResponse(config, response as never)),
  };
}

/**
 * The agent fast path's tRPC entry (scripts/serve.mjs): in one capacity slot, a plain mutation
 * answered directly, anything else by the adapter with the `Request` built only then.
 */
export function handleTrpcCall(runtime: Runtime, call: DirectCall, toRequest: () => Request): Promise<RawAnswer | Response> {
  return withQueryPriority(agentRequestPriority(call.headers, "in-procedure"), () =>
    withCapacity<RawAnswer | Response>(async (slot) => (await callMutationDirect(runtime, call, slot)) ?? serveTrpcRequest(toRequest(), runtime, slot), trpcOverloadResponse),
  );
}
