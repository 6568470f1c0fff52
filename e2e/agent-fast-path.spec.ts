/**
 * The agent API fast path (scripts/serve.mjs) answers exactly as the Next route handlers do: the
 * e2e server serves agents through it; a second server with VIGIL_AGENT_FAST_PATH=off serves the
 * same requests through Next's pipeline, and status, content type, Retry-After and body agree —
 * including bad input (400 naming the field), a missing key (401), an oversized body (413), hooks
 * and OTLP. Both servers start from the same headless init on their own fresh database.
 */
import { expect, test, type APIRequestContext } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serverArgs } from "../scripts/server-command.mjs";

const KEY = "vgl_fastpath_key_0123456789abcdef";
const port = String(Number(process.env.E2E_PORT ?? "3100") + 1001);
const viaNextUrl = `http://127.0.0.1:${port}`;

let viaNext: ChildProcess | null = null;
let dataDir = "";

async function waitForHealth(url: string, child: ChildProcess) {
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/health`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("server did not come up in 60 s");
}

test.beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-fastpath-"));
  viaNext = spawn(process.execPath, serverArgs(port, "127.0.0.1"), {
    stdio: "ignore",
    env: {
      ...process.env,
      VIGIL_AGENT_FAST_PATH: "off",
      VIGIL_DATA_DIR: dataDir,
      VIGIL_INIT_ORG: "Fast Path Org",
      VIGIL_INIT_WORKSPACE: "fastpath",
      VIGIL_INIT_API_KEY: KEY,
    },
  });
  await waitForHealth(viaNextUrl, viaNext);
});

test.afterAll(async () => {
  viaNext?.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  fs.rmSync(dataDir, { recursive: true, force: true });
});

type Call = { name: string; method: "GET" | "POST"; path: string; body?: string; headers?: Record<string, string>; key?: boolean };

const json = { "content-type": "application/json" };
const CALLS: Call[] = [
  { name: "health", method: "GET", path: "/api/health" },
  { name: "guard.check without a key", method: "POST", path: "/api/trpc/guard.check", body: JSON.stringify({ sessionId: "s", toolName: "Bash" }), headers: json },
  { name: "guard.check with a wrong key", method: "POST", path: "/api/trpc/guard.check", body: "{}", headers: { ...json, authorization: "Bearer vgl_wrong_wrong_wrong_wrong" } },
  { name: "guard.check with bad input", method: "POST", path: "/api/trpc/guard.check", body: JSON.stringify({ sessionId: 7, toolName: "" }), headers: json, key: true },
  { name: "ingest.events that is not JSON", method: "POST", path: "/api/trpc/ingest.events", body: "{not json", headers: json, key: true },
  { name: "ingest.events over 1 MiB", method: "POST", path: "/api/trpc/ingest.events", body: JSON.stringify({ events: [], pad: "x".repeat(1_100_000) }), headers: json, key: true },
  { name: "an unknown procedure", method: "POST", path: "/api/trpc/nope.nothing", body: "{}", headers: json, key: true },
  { name: "a GET of a mutation", method: "GET", path: "/api/trpc/guard.check?input=%7B%7D", key: true },
  { name: "a hook without a key", method: "POST", path: "/api/hooks/claude-code", body: JSON.stringify({ hook_event_name: "PreToolUse" }), headers: json },
  { name: "a hook that is not JSON", method: "POST", path: "/api/hooks/codex", body: "nope", headers: json, key: true },
  { name: "OTLP with a wrong content type", method: "POST", path: "/api/otlp/v1/traces", body: "x", headers: { "content-type": "text/plain" }, key: true },
  { name: "OTLP that is not an export", method: "POST", path: "/api/otlp/v1/traces", body: JSON.stringify({ hello: 1 }), headers: json, key: true },
];

async function send(request: APIRequestContext, base: string, call: Call, key: string) {
  const headers = { ...call.headers, ...(call.key ? { authorization: `Bearer ${key}` } : {}) };
  const res = await request.fetch(`${base}${call.path}`, { method: call.method, headers, data: call.body });
  return {
    status: res.status(),
    type: res.headers()["content-type"]?.split(";")[0] ?? null,
    retryAfter: res.headers()["retry-after"] ?? null,
    body: await res.text(),
  };
}

test("the fast path answers agents exactly as Next's route handlers do", async ({ request, baseURL }) => {
  for (const call of CALLS) {
    const fast = await send(request, baseURL!, call, "vgl_e2e_admin_key_0123456789abcdef");
    const slow = await send(request, viaNextUrl, call, KEY);
    expect(fast, call.name).toEqual(slow);
  }
  // And a real decision through both: the same key state gives the same answer.
  const check = { method: "POST" as const, path: "/api/trpc/guard.check", headers: json, key: true, name: "allow" };
  const fast = await send(request, baseURL!, { ...check, body: JSON.stringify({ id: "fp-call-1", sessionId: "fp-1", callId: "fp-call-1", toolName: "Read", args: { file_path: "/tmp/a" } }) }, "vgl_e2e_admin_key_0123456789abcdef");
  const slow = await send(request, viaNextUrl, { ...check, body: JSON.stringify({ id: "fp-call-1", sessionId: "fp-1", callId: "fp-call-1", toolName: "Read", args: { file_path: "/tmp/a" } }) }, KEY);
  expect(fast.status).toBe(200);
  expect(JSON.parse(fast.body).result.data.decision).toBe("allow");
  expect(JSON.parse(slow.body).result.data.decision).toBe("allow");
});
