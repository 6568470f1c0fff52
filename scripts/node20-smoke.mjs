#!/usr/bin/env node
/**
 * Node 20 smoke: the suite runs on Node 24, and 20.19 stays the floor where it still works (README,
 * "Requirements"). This serves the production build (`next build` first) with the machine's Node 20
 * on a fresh PGlite data directory and a free port, then checks the agent API over HTTP with real
 * answers: health, ingest.events (accepted, duplicates, an escalation), guard.check (ask on the
 * escalated key, allow elsewhere), reliability.status, a 400 naming the field; then stops the
 * server with SIGTERM and expects it to exit cleanly.
 *
 * The Node 20 binary: NODE20 if set, else /usr/bin/node. When it is missing or is not Node 20.19+
 * below 22, the smoke says so and skips (exit 0).
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { serverArgs } from "./server-command.mjs";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
process.chdir(root);

const KEY = "vgl_node20_smoke_key_0123456789abcdefgh";
const URL_V1 = "https://api.example.com/v1/users";
const KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1";
// Start-up opens and migrates PGlite; on a busy 2-core machine that took over a minute.
const START_TIMEOUT_MS = 300_000;

const log = (line) => console.log(`[node20-smoke] ${line}`);

const node20 = process.env.NODE20 || "/usr/bin/node";
const version = fs.existsSync(node20) ? spawnSync(node20, ["-p", "process.versions.node"], { encoding: "utf8" }).stdout?.trim() : "";
const [major, minor] = (version || "0.0").split(".").map(Number);
if (!version) {
  log(`skipped: no Node binary at ${node20} (set NODE20 to a Node 20 binary to run it)`);
  process.exit(0);
}
if (major !== 20 || minor < 19) {
  log(`skipped: ${node20} is Node ${version}, not Node 20.19 or later 20.x (set NODE20 to a Node 20 binary to run it)`);
  process.exit(0);
}
if (!fs.existsSync(path.join(root, ".next", "BUILD_ID"))) {
  console.error("[node20-smoke] no production build: run `node node_modules/next/dist/bin/next build` first");
  process.exit(1);
}

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-node20-smoke-"));
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", VIGIL_DATA_DIR: dataDir, VIGIL_INIT_ORG: "Smoke Org", VIGIL_INIT_WORKSPACE: "smoke", VIGIL_INIT_API_KEY: KEY };
delete env.DATABASE_URL;
delete env.PORT;

log(`serving the build with Node ${version} (${node20}) on ${base}, PGlite in ${dataDir}`);
const server = spawn(node20, serverArgs(port, "127.0.0.1"), { env, stdio: ["ignore", "pipe", "pipe"] });
let serverLog = "";
server.stdout.on("data", (d) => (serverLog += d));
server.stderr.on("data", (d) => (serverLog += d));
const exited = new Promise((resolve) => server.once("exit", (code, signal) => resolve({ code, signal })));

const failures = [];
const check = (ok, what) => {
  if (ok) log(`ok: ${what}`);
  else failures.push(what);
};

try {
  const health = await waitForHealth();
  check(health.status === "ok" && health.db === "pglite", `/api/health answers ok on PGlite (${JSON.stringify(health)})`);

  const sessionId = "node20-smoke-session";
  const events = [{ type: "session.start", id: "s-start", sessionId, agent: "node20-smoke", model: "smoke-model" }];
  for (let i = 1; i <= 3; i++) {
    events.push({ type: "tool.call", id: `call-${i}`, sessionId, callId: `c${i}`, toolName: "http_request", args: { url: URL_V1 } });
    events.push({ type: "tool.result", id: `result-${i}`, sessionId, callId: `c${i}`, toolName: "http_request", success: false, error: "Service Unavailable", httpStatus: 503 });
  }
  const ingested = await trpc("POST", "ingest.events", { events });
  check(ingested.status === 200 && ingested.data?.accepted === 7 && ingested.data?.duplicates === 0, `ingest.events accepts 7 events (${JSON.stringify({ status: ingested.status, accepted: ingested.data?.accepted, duplicates: ingested.data?.duplicates })})`);
  check(ingested.data?.effects?.some((e) => e.type === "escalated" && e.failureKey === KEY_V1), `three failures escalate ${KEY_V1}`);
  const again = await trpc("POST", "ingest.events", { events });
  check(again.status === 200 && again.data?.accepted === 0 && again.data?.duplicates === 7, `the same batch again is 7 duplicates (${JSON.stringify(again.data && { accepted: again.data.accepted, duplicates: again.data.duplicates })})`);

  const asked = await trpc("POST", "guard.check", { id: "check-1", sessionId: "node20-smoke-other", callId: "c-ask", toolName: "http_request", args: { url: URL_V1 } });
  check(asked.status === 200 && asked.data?.decision === "ask" && asked.data?.state === "escalated" && asked.data?.failureKey === KEY_V1, `guard.check on the escalated key asks (${JSON.stringify(asked.data && { decision: asked.data.decision, state: asked.data.state, failureKey: asked.data.failureKey })})`);
  const allowed = await trpc("POST", "guard.check", { id: "check-2", sessionId: "node20-smoke-other", callId: "c-allow", toolName: "readFile", args: { path: "/srv/app/README.md" } });
  check(allowed.status === 200 && allowed.data?.decision === "allow" && allowed.data?.state === "trusted", `guard.check of an untouched key allows (${allowed.data?.decision})`);

  const status = await trpc("GET", "reliability.status", { toolName: "http_request" });
  const key = status.data?.keys?.find((k) => k.failureKey === KEY_V1);
  check(status.status === 200 && key?.state === "escalated" && key?.totalFailures === 3, `reliability.status shows the key escalated with 3 failures (${JSON.stringify(key && { state: key.state, totalFailures: key.totalFailures })})`);

  const invalid = await trpc("POST", "guard.check", { id: "check-3", sessionId, callId: "c-bad", args: {} });
  check(invalid.status === 400 && JSON.stringify(invalid.error ?? "").includes("toolName"), `guard.check without toolName is a 400 naming it (${invalid.status})`);
  const noKey = await fetch(`${base}/api/trpc/guard.check`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  check(noKey.status === 401, `a request without a key is a 401 (${noKey.status})`);
} catch (error) {
  failures.push(error instanceof Error ? error.message : String(error));
} finally {
  if (server.exitCode === null && server.signalCode === null) server.kill("SIGTERM");
  const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  check(code === 0, `the server stops on SIGTERM with exit status 0 (${code ?? signal})`);
  fs.rmSync(dataDir, { recursive: true, force: true });
}

if (failures.length) {
  console.error(`[node20-smoke] FAILED on Node ${version}:\n${failures.map((f) => `  - ${f}`).join("\n")}\n--- server output ---\n${serverLog.slice(-8000)}`);
  process.exit(1);
}
log(`passed: the build and the agent API work on Node ${version}`);

async function trpc(method, procedure, input) {
  const url = method === "GET" ? `${base}/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}` : `${base}/api/trpc/${procedure}`;
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    body: method === "POST" ? JSON.stringify(input) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const body = await res.json().catch(() => null);
  return { status: res.status, data: body?.result?.data, error: body?.error };
}

async function waitForHealth() {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the server exited during start-up (status ${server.exitCode})`);
    try {
      const res = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(5_000) });
      if (res.ok) return await res.json();
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`/api/health did not answer 200 within ${START_TIMEOUT_MS / 1000} s`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = http.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
