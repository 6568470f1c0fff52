/**
 * Load the way fleets load Vigil: many concurrent clients (closed loop) and an offered rate (open
 * loop, latency measured from each request's scheduled start, so a stalled server cannot hide its
 * queue), against the production build started with scripts/serve.mjs, next to a bare `node:http`
 * server answering a constant JSON in the same run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { serverArgs } from "../scripts/server-command.mjs";
import { performance } from "node:perf_hooks";

export const BENCH_KEY = "vgl_bench_admin_key_0123456789abcdef";
const REQUEST_TIMEOUT_MS = 10_000;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

export interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function waitUntilUp(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server at ${url} did not come up`);
}

/**
 * The servers this process started and that still run. They are detached (their own process group,
 * so stopping one stops all it forked); should the bench end early — an error, Ctrl-C — they are
 * killed with it instead of being left serving (and loading the machine) after it.
 */
const running = new Set<ChildProcess>();
let killOnExitRegistered = false;
function owned(child: ChildProcess): ChildProcess {
  if (!killOnExitRegistered) registerKillOnExit();
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}
/** Registered with the first server, so importing this module alone leaves the process's exit and signals as they were. */
function registerKillOnExit() {
  killOnExitRegistered = true;
  process.once("exit", () => {
    for (const child of running) {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone already */
      }
    }
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      // The whole process group, so nothing the server forked survives it.
      const kill = (sig: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, sig);
        } catch {
          child.kill(sig);
        }
      };
      kill("SIGTERM");
      setTimeout(() => kill("SIGKILL"), 5_000).unref();
    });
}

/** The baseline: a bare node:http server in its own process answering a constant JSON. */
export async function startBareServer(): Promise<Server> {
  const port = await freePort();
  const code = `require("node:http").createServer((req,res)=>{req.resume();req.on("end",()=>{res.writeHead(200,{"content-type":"application/json"});res.end('{"result":{"data":{"decision":"allow"}}}')})}).listen(${port},"127.0.0.1")`;
  const child = owned(spawn(process.execPath, ["-e", code], { stdio: "ignore", detached: true }));
  await waitUntilUp(`http://127.0.0.1:${port}/`, child);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: stopper(child) };
}

/**
 * The second baseline: the least a server can do per check against the same PostgreSQL with two
 * round trips, as guard.check makes — node:http and postgres-js, no Vigil. Per request it reads
 * a session row by primary key, then in one autocommit statement upserts that row (a 2.5 KB
 * document, the size of a session's behaviour) and inserts an event row for the request. No
 * indexes beyond the primary keys, no batching, no validation, no decision: what separates
 * guard.check from this is Vigil's own work; what separates this from the bare server is the
 * database and the machine.
 */
export async function startFloorServer(databaseUrl: string): Promise<Server> {
  const port = await freePort();
  const code = `
const postgres = require("postgres");
const sql = postgres(process.env.FLOOR_DATABASE_URL, { max: 10, onnotice: () => {} });
const doc = { behaviour: "x".repeat(2500) };
(async () => {
  await sql\`create table if not exists bench_floor_session (id text primary key, doc jsonb not null, calls integer not null)\`;
  await sql\`create table if not exists bench_floor_event (id text primary key, session_id text not null, ts timestamptz not null, payload jsonb not null)\`;
  require("node:http").createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      try {
        const call = JSON.parse(Buffer.concat(chunks).toString());
        await sql\`select doc, calls from bench_floor_session where id = \${call.sessionId}\`;
        await sql\`with s as (insert into bench_floor_session (id, doc, calls) values (\${call.sessionId}, \${sql.json(doc)}, 1)
            on conflict (id) do update set doc = excluded.doc, calls = bench_floor_session.calls + 1 returning id)
          insert into bench_floor_event (id, session_id, ts, payload) select \${call.id}, s.id, now(), \${sql.json({ tool: call.toolName, args: call.args })} from s\`;
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"result":{"data":{"decision":"allow"}}}');
      } catch (e) {
        res.writeHead(500);
        res.end(String(e));
      }
    });
  }).listen(${port}, "127.0.0.1");
})();`;
  const child = owned(spawn(process.execPath, ["-e", code], { stdio: ["ignore", "ignore", "inherit"], detached: true, env: { ...process.env, FLOOR_DATABASE_URL: databaseUrl } }));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`floor server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url, { method: "POST", body: JSON.stringify({ id: "floor-up", sessionId: "floor-up", toolName: "Read", args: {} }) });
      if (res.ok) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > until) throw new Error("floor server did not come up");
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, pid: child.pid!, stop: stopper(child) };
}

/** Vigil's production build (`next build` must have run), on PostgreSQL (`databaseUrl`) or PGlite. */
/** The production build of this checkout, or with `root` of another (bench/compare.ts: before beside after). */
export async function startVigil(opts: { databaseUrl?: string; env?: Record<string, string>; root?: string }): Promise<Server> {
  const port = await freePort();
  const dataDir = opts.databaseUrl ? null : fs.mkdtempSync(path.join(os.tmpdir(), "vigil-bench-"));
  const child = owned(spawn(process.execPath, serverArgs(port, "127.0.0.1"), {
    cwd: opts.root,
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
    env: {
      ...process.env,
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : { VIGIL_DATA_DIR: dataDir! }),
      VIGIL_INIT_ORG: "Bench",
      VIGIL_INIT_WORKSPACE: "bench",
      VIGIL_INIT_API_KEY: BENCH_KEY,
      // The per-key rate limit would answer most of one key's traffic with 429: the bench measures capacity.
      VIGIL_RATE_LIMIT_PER_MINUTE: "0",
      ...opts.env,
    },
  }));
  await waitUntilUp(`http://127.0.0.1:${port}/api/health`, child);
  const stop = stopper(child);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      await stop();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The fields of /proc/<pid>/stat after the command name (state first: ppid is [1], utime [11], stime [12]); null when the process is gone. */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** A process and all its descendants (the server and anything it forks; a postmaster and its backends). */
export function processTree(rootPid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (!fields) continue;
    const ppid = Number(fields[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const out: number[] = [];
  const stack = [rootPid];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Resident memory of a process and all its descendants, in MiB. */
export function treeRssMiB(rootPid: number): number {
  let kb = 0;
  for (const pid of processTree(rootPid)) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) kb += Number(m[1]);
    } catch {
      /* gone */
    }
  }
  return kb / 1024;
}

/** CPU seconds (user + system) a process and its descendants have used so far; Linux counts them in ticks of 1/100 s. */
function treeCpuSeconds(rootPid: number): number {
  let ticks = 0;
  for (const pid of processTree(rootPid)) {
    const fields = statFields(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
  }
  return ticks / 100;
}

/** The CPU seconds of one thread of a process (`/proc/PID/task/TID/stat`); 0 once it is gone. */
function threadCpuSeconds(pid: number, tid: number): number {
  const fields = statFields(`${pid}/task/${tid}`);
  return fields ? (Number(fields[11]) + Number(fields[12])) / 100 : 0;
}

/** CPU per request, in µs: the server's process tree, the database's (null when it runs inside the server) and this load generator. */
export interface CpuPerRequest {
  server: number;
  /**
   * Of `server`, its main thread's: JavaScript, the sockets and the young-generation collections'
   * own share. The rest of a Node server's CPU is V8's helper threads — parallel and concurrent
   * garbage collection, optimizing compilation — and libuv's pool.
   */
  serverMainThread: number;
  database: number | null;
  loadGenerator: number;
}

/** Starts counting the CPU the server, the database server and this process spend; `perRequest` divides it by the requests answered. */
export function cpuMeter(serverPid: number, databasePid: number | null) {
  const server = treeCpuSeconds(serverPid);
  const serverMainThread = threadCpuSeconds(serverPid, serverPid);
  const database = databasePid === null ? 0 : treeCpuSeconds(databasePid);
  const own = process.cpuUsage();
  return {
    perRequest(requests: number): CpuPerRequest {
      const used = process.cpuUsage(own);
      const us = (seconds: number) => (seconds * 1e6) / Math.max(1, requests);
      return {
        server: us(treeCpuSeconds(serverPid) - server),
        serverMainThread: us(threadCpuSeconds(serverPid, serverPid) - serverMainThread),
        database: databasePid === null ? null : us(treeCpuSeconds(databasePid) - database),
        loadGenerator: us((used.user + used.system) / 1e6),
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------

export interface Answer {
  status: number | "timeout" | "error";
  ms: number;
  retryAfter: boolean;
}

/** Which client of a closed loop sends a request, and how many it sent before. */
export interface ClientTurn {
  client: number;
  n: number;
}

export interface RequestSpec {
  method: "GET" | "POST";
  path: string;
  /** The body of request `i` of the run (counted over all clients); `from` in a closed loop. */
  body?: (i: number, from?: ClientTurn) => unknown;
}

function send(agent: http.Agent, base: URL, spec: RequestSpec, i: number, startedAt: number, from?: ClientTurn): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = spec.body ? JSON.stringify(spec.body(i, from)) : undefined;
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: spec.method,
        path: spec.path,
        headers: { authorization: `Bearer ${BENCH_KEY}`, ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - startedAt, retryAfter: res.headers["retry-after"] !== undefined }));
      },
    );
    req.on("timeout", () => {
      req.destroy();
      resolve({ status: "timeout", ms: performance.now() - startedAt, retryAfter: false });
    });
    req.on("error", () => resolve({ status: "error", ms: performance.now() - startedAt, retryAfter: false }));
    if (payload) req.write(payload);
    req.end();
  });
}

export interface LoadResult {
  answers: Answer[];
  seconds: number;
  peakRssMiB: number | null;
}

/** `clients` clients, each sending its next request when the previous one is answered. */
export async function closedLoop(url: string, spec: RequestSpec, clients: number, seconds: number): Promise<LoadResult> {
  const base = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const answers: Answer[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let i = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; performance.now() < end; n++) {
        const started = performance.now();
        answers.push(await send(agent, base, spec, i++, started, { client, n }));
      }
    }),
  );
  agent.destroy();
  return { answers, seconds: (performance.now() - t0) / 1000, peakRssMiB: null };
}

/** Requests scheduled at `rate` per second for `seconds`, whatever the server's answers take. */
export async function openLoop(url: string, spec: RequestSpec, rate: number, seconds: number, rssOfPid?: number): Promise<LoadResult> {
  const base = new URL(url);
  // A fleet's agents are connected already when its load rises: the connections are opened before
  // the measured window, and kept (Node's agent closes free sockets beyond 256 by default, and the
  // next peak opens them again). Opened inside the window, hundreds of connections at once were the
  // load generator's own storm on this 2-core machine: requests of the first second took up to 3 s
  // while the server's thread was never more than ~15 ms late.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 1024 });
  await Promise.all(Array.from({ length: Math.min(512, Math.ceil(rate / 4)) }, (_, i) => send(agent, base, { method: "GET", path: "/api/health" }, i, performance.now())));
  const total = Math.round(rate * seconds);
  const pending: Promise<Answer>[] = [];
  let peak = rssOfPid ? treeRssMiB(rssOfPid) : 0;
  const sampler = rssOfPid ? setInterval(() => (peak = Math.max(peak, treeRssMiB(rssOfPid))), 250) : null;
  const t0 = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + (next * 1000) / rate <= now) {
        const scheduled = t0 + (next * 1000) / rate;
        pending.push(send(agent, base, spec, next, scheduled));
        next++;
      }
      if (next >= total) return resolve();
      setTimeout(tick, 2);
    };
    tick();
  });
  const answers = await Promise.all(pending);
  if (sampler) clearInterval(sampler);
  if (rssOfPid) peak = Math.max(peak, treeRssMiB(rssOfPid));
  agent.destroy();
  return { answers, seconds: (performance.now() - t0) / 1000, peakRssMiB: rssOfPid ? peak : null };
}

export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

export function summarize(r: LoadResult) {
  const ok = r.answers.filter((a) => a.status === 200);
  const byStatus = new Map<string, number>();
  for (const a of r.answers) byStatus.set(String(a.status), (byStatus.get(String(a.status)) ?? 0) + 1);
  const refusedWithoutRetryAfter = r.answers.filter((a) => (a.status === 429 || a.status === 503) && !a.retryAfter).length;
  const errors = r.answers.length - ok.length;
  return {
    n: r.answers.length,
    okPerSecond: ok.length / r.seconds,
    p50: percentile(ok.map((a) => a.ms), 0.5),
    p99: percentile(ok.map((a) => a.ms), 0.99),
    errors,
    byStatus: [...byStatus.entries()].sort().map(([s, n]) => `${s}×${n}`).join(" "),
    refusedWithoutRetryAfter,
    peakRssMiB: r.peakRssMiB,
  };
}
