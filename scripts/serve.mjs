#!/usr/bin/env node
/**
 * Serves the production build: what `next start` does, plus a fast path for the agent API.
 *
 * Agents call guard.check before every tool call, so its latency and rate are the product. Next's
 * request pipeline costs a few milliseconds of CPU per request before a route handler runs (on a
 * 2-core machine /api/health managed ~480/s through it, a bare node:http server ~3,000/s), so the
 * agent API — /api/trpc/*, /api/hooks/<cli>, /api/otlp/v1/traces, /api/health — is answered here
 * by the same handlers the route files use (registered on start by instrumentation.ts, compiled
 * with the app, sharing its one runtime); pages, auth and everything else go to Next as before.
 * The security headers of next.config.mjs are added to fast-path answers too.
 * `VIGIL_AGENT_FAST_PATH=off` sends everything through Next.
 *
 * Usage: node scripts/serve.mjs [-p PORT] [-H HOST]   (defaults: $PORT or 3000, 0.0.0.0)
 */
import http from "node:http";
import path from "node:path";
import { captureNativeDate, restoreNativeDate } from "./native-date.mjs";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
process.chdir(root);
// As `next start` does: the production build runs with NODE_ENV=production.
process.env.NODE_ENV ??= "production";
process.env.NEXT_TELEMETRY_DISABLED ??= "1";

function option(flag, fallback) {
  const i = process.argv.indexOf(flag);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}
const port = Number(option("-p", process.env.PORT ?? "3000"));
const hostname = option("-H", "0.0.0.0");
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`[vigil] PORT must be a port number (0–65535), got "${option("-p", process.env.PORT)}"`);
  process.exit(1);
}
const fastPathEnabled = process.env.VIGIL_AGENT_FAST_PATH !== "off";

// When whatever reads the server's output goes away (a launcher that died, `npm start | tee` ended),
// the next log line fails with EPIPE; unhandled, that error is reported on the same closed stream,
// and the server spun at a full core doing so (measured: 9 CPU-seconds per 10 s while the database
// was down and its retries logged). A log that cannot be written is dropped; the server serves on.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});

// Before Next is loaded: it replaces the global Date with a slower wrapper (see native-date.mjs).
const nativeDate = captureNativeDate();
const { default: next } = await import("next");
const { default: nextConfig } = await import(path.join(root, "next.config.mjs"));
const app = next({ dev: false, dir: root, hostname, port });
const handleWithNext = app.getRequestHandler();
// Loads the build and starts instrumentation.ts, which opens and migrates the database (a failure
// exits) and then registers the agent routes.
await app.prepare();
restoreNativeDate(nativeDate, nextConfig);

/** The headers next.config.mjs puts on every answer and every API answer (`/:path*`, `/api/:path*`): fast-path answers are all API answers. */
async function everyAnswerHeaders() {
  if (typeof nextConfig.headers !== "function") return [];
  const rules = await nextConfig.headers();
  return rules.filter((r) => r.source === "/:path*" || r.source === "/api/:path*").flatMap((r) => r.headers.map((h) => [h.key, h.value]));
}
const commonHeaders = await everyAnswerHeaders();

const AGENT_ROUTES_KEY = Symbol.for("vigil.agentRoutes");
const EARLY_REFUSAL_KEY = Symbol.for("vigil.agentEarlyRefusal");

/**
 * `app.prepare()` resolves before instrumentation.ts has finished (it is not awaited in production):
 * listening then would hand the first requests — a load balancer's health probe, an agent's first
 * guard.check — to Next before the runtime is up, and "ready" would be printed before the database
 * was even opened. Wait for the routes (a start-up failure exits meanwhile). Through Next, a request
 * also switches on AsyncLocalStorage, whose async hooks Node 20 then runs on every promise of the
 * process: ~10 % of the server's CPU per guard.check on an instance that serves only agents.
 */
async function agentRoutesRegistered(timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  while (typeof globalThis[AGENT_ROUTES_KEY] !== "function") {
    if (Date.now() > until) {
      console.warn(`[vigil] the agent routes were not registered within ${timeoutMs / 1000} s; Next answers every request`);
      return;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
await agentRoutesRegistered();

/**
 * The agent API's bodies are small JSON or protobuf documents, capped at 1 MiB by the handlers
 * (413). Reading them into one buffer here is much cheaper than bridging the Node stream into a
 * web stream (Readable.toWeb) chunk by chunk. Reading stops one byte past the cap, so an oversized
 * or endless upload costs no more than that: the handler sees more than the cap and answers 413,
 * and the unread rest closes the connection (see answer()).
 */
const BODY_READ_LIMIT = 1024 * 1024 + 1;

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const done = () => {
      req.off("data", onData);
      req.off("end", done);
      req.off("error", reject);
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= BODY_READ_LIMIT) {
        req.pause();
        done();
      }
    };
    req.on("data", onData);
    req.on("end", done);
    req.on("error", reject);
  });
}

function headersOf(req) {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  return headers;
}

async function toRequest(req, url) {
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, { method: req.method, headers: headersOf(req), body: hasBody ? await readBody(req) : undefined });
}

async function answer(route, req, res, url, pathname) {
  if (typeof route.answerParts !== "function") return send(await route(await toRequest(req, url)), req, res);
  // tRPC POST: a plain mutation is answered from the request's parts; a Request is built only for the adapter.
  const body = await readBody(req);
  const headers = headersOf(req);
  const clientGone = new AbortController();
  res.once("close", () => res.writableFinished || clientGone.abort());
  const out = await route.answerParts({ pathname, headers, body, url, signal: clientGone.signal }, () => new Request(url, { method: req.method, headers, body }));
  if (out instanceof Response) return send(out, req, res);
  const bytes = Buffer.from(out.body);
  writeAnswer({ status: out.status, headers: { ...headersWith(out.headers), "content-length": String(bytes.length) }, body: bytes }, req, res);
}

/** The security headers every answer carries, then the handler's own (lower-case name, value pairs). */
function headersWith(own) {
  const headers = {};
  for (const [k, v] of commonHeaders) headers[k.toLowerCase()] = v;
  for (const [k, v] of own) headers[k] = v;
  return headers;
}

/** A handler's answer as what node:http writes: status, headers (with the security headers) and one body buffer. */
async function rawAnswer(response, method) {
  const headers = headersWith([...response.headers].filter(([k]) => k !== "set-cookie"));
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  // The agent API answers small documents, never streams: one buffer, one write.
  const body = response.body && method !== "HEAD" ? Buffer.from(await response.arrayBuffer()) : null;
  if (body) headers["content-length"] = String(body.length);
  return { status: response.status, headers, body };
}

async function send(response, req, res) {
  writeAnswer(await rawAnswer(response, req.method), req, res);
}

/** `bodyUnread`: the body was never read, and Node discards it itself (the connection stays usable). */
function writeAnswer({ status, headers, body }, req, res, bodyUnread = false) {
  // Answered before the body was read to its end (413, 401 before parsing): the rest of the body
  // is still on the connection, so it cannot carry another request. Close it after this answer
  // (Node drains unread bodies itself only when nobody started reading them).
  if (!req.complete && !bodyUnread) {
    headers = { ...headers, connection: "close" };
    res.once("finish", () => req.socket.destroySoon());
  }
  res.writeHead(status, headers);
  res.end(body);
}

/** The overload refusal is constant: turned into bytes once, so refusing costs a write and nothing else. */
let overloadAnswer = null;
async function refuse(early, req, res) {
  overloadAnswer ??= await rawAnswer(early.answer(), "POST");
  writeAnswer(overloadAnswer, req, res, true);
}

/**
 * The TCP peer's address, for the sign-in throttle (server/sign-in-throttle.ts): Next's route
 * handlers see only headers. Whatever a client sent under this name is replaced.
 */
const SOCKET_ADDRESS_HEADER = "x-vigil-socket-address";

const server = http.createServer((req, res) => {
  req.headers[SOCKET_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
  // Registered by instrumentation.ts once the runtime is up; until then Next answers everything.
  const agentRouteFor = globalThis[AGENT_ROUTES_KEY];
  const route = fastPathEnabled && typeof agentRouteFor === "function" ? routeOf(req, agentRouteFor) : null;
  if (!route) return void handleWithNext(req, res);
  // At capacity: refused before the body is read or a Request is built (Node discards the unread body).
  const early = globalThis[EARLY_REFUSAL_KEY];
  const refused = early?.refuses(req.method ?? "GET", route.pathname);
  (refused ? refuse(early, req, res) : answer(route.handler, req, res, route.url, route.pathname)).catch((err) => {
    console.error("[vigil] agent API request failed:", err);
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "Internal server error" } }));
    } else res.destroy();
  });
});

function routeOf(req, agentRouteFor) {
  const raw = req.url ?? "/";
  const q = raw.indexOf("?");
  const pathname = q < 0 ? raw : raw.slice(0, q);
  const handler = agentRouteFor(req.method ?? "GET", pathname);
  if (!handler) return null;
  return { handler, pathname, url: absoluteUrl(req.headers.host, raw) };
}

/**
 * The request's URL as the handlers see it; a Host header that is not a host name falls back to
 * localhost. Agents call the same few URLs on the same host over and over, so the parsed ones are
 * kept (a URL parse was ~1.5 % of the server's time per guard.check).
 */
const absoluteUrls = new Map();
function absoluteUrl(host, raw) {
  const key = `${host ?? ""}\n${raw}`;
  let href = absoluteUrls.get(key);
  if (href !== undefined) return href;
  try {
    href = new URL(raw, `http://${host ?? `localhost:${port}`}`).href;
  } catch {
    href = new URL(raw, `http://localhost:${port}`).href;
  }
  if (absoluteUrls.size >= 1024) absoluteUrls.clear(); // bounded: query strings and odd hosts never grow it without limit
  absoluteUrls.set(key, href);
  return href;
}

// Next's own server keeps idle connections a little longer than typical proxies' 60 s.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
/**
 * Connections the kernel holds for the server until its thread accepts them. Node's default (511)
 * overflowed when a fleet's clients opened hundreds of connections at once (2,000/s offered: ~150
 * connection attempts dropped per run): a dropped attempt is retried by the client's TCP after
 * 1 s, then 3 s, so those requests took 1–3 s although the server refused or answered every
 * request it saw within milliseconds. The kernel caps it at net.core.somaxconn (4096 by default).
 */
const LISTEN_BACKLOG = 4096;
server.listen({ port, host: hostname, backlog: LISTEN_BACKLOG }, () => {
  console.log(`[vigil] ready on http://${hostname === "0.0.0.0" ? "localhost" : hostname}:${port}${fastPathEnabled ? "" : " (agent API fast path off)"}`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 3_000).unref();
  });
}
