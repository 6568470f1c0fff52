/**
 * Crash trials against the production build (issue 13 part 2). For PGlite and a throwaway
 * PostgreSQL cluster: a writer posts ingest.events batches with unique ids and records each
 * acknowledged one while the server is killed with SIGKILL at a random moment; after each kill the
 * database is read directly and we count acknowledged events missing and batches present only in
 * part (goal 0 and 0). The next trial restarts the app on the same data. On PostgreSQL also: the
 * database stopped while the app serves → 503 + Retry-After within 2 s, and recovery without an app
 * restart once it is back; and with the reader of its output gone and the database down, the app stays
 * idle and answers. Exits non-zero when a figure misses its goal.
 *
 * Usage: npx tsx scripts/hardening/crash-trials.ts   (after `next build`; E2E_PORT picks the port)
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { serverArgs } from "../server-command.mjs";
import { PGlite } from "@electric-sql/pglite";
import { startPgCluster, type PgCluster } from "../../tests/support/pg-cluster";

const PORT = Number(process.env.CRASH_TRIALS_PORT ?? process.env.E2E_PORT ?? 3205);
const TRIALS = Number(process.env.CRASH_TRIALS ?? 25);
const BATCH = 20;
const KEY = "vgl_crash_trials_key_0123456789abcdef";
const BASE = `http://127.0.0.1:${PORT}`;

const baseEnv = {
  ...process.env,
  NEXT_TELEMETRY_DISABLED: "1",
  VIGIL_AUTH_RATE_LIMIT: "off",
  VIGIL_RATE_LIMIT_PER_MINUTE: "1000000",
  VIGIL_INIT_ORG: "Crash Org",
  VIGIL_INIT_WORKSPACE: "crash",
  VIGIL_INIT_API_KEY: KEY,
  VIGIL_INIT_USER_EMAIL: "owner@crash.test",
  VIGIL_INIT_USER_PASSWORD: "owner-password-123",
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startApp(env: Record<string, string | undefined>): Promise<ChildProcess> {
  const child = spawn(process.execPath, serverArgs(PORT, "127.0.0.1"), {
    env: { ...baseEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`app exited during start-up:\n${log}`);
    try {
      const res = await fetch(`${BASE}/api/health`);
      if (res.ok) return child;
    } catch {}
    await sleep(100);
  }
  child.kill("SIGKILL");
  throw new Error(`app did not become healthy in 60 s:\n${log}`);
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

function batchEvents(trial: number, batch: number) {
  const sessionId = `t${trial}-s${batch % 3}`;
  return Array.from({ length: BATCH }, (_, i) => ({
    type: "tool.call",
    id: `t${trial}-b${batch}-e${i}`,
    sessionId,
    callId: `t${trial}-b${batch}-c${i}`,
    toolName: "http_request",
    args: { url: `https://api.example.com/v1/items/${i}` },
  }));
}

function post(events: unknown[], signal?: AbortSignal) {
  return fetch(`${BASE}/api/trpc/ingest.events`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ events }),
    signal,
  });
}

/** Posts batches one after another until the server dies; returns the acknowledged batch numbers. */
async function writeUntilDead(trial: number, acked: number[], attempted: number[]): Promise<void> {
  for (let b = 0; ; b++) {
    attempted.push(b);
    try {
      const res = await post(batchEvents(trial, b));
      if (res.status !== 200) return;
      const body = (await res.json()) as { result?: { data?: { accepted: number; duplicates: number } } };
      const d = body.result?.data;
      if (d && d.accepted + d.duplicates === BATCH) acked.push(b);
    } catch {
      return; // connection refused/reset: the server is gone
    }
  }
}

interface Figures {
  trials: number;
  acknowledgedBatches: number;
  acknowledgedEvents: number;
  missing: number;
  partialBatches: number;
}

type CountEvents = (trial: number) => Promise<Map<number, number>>;

async function runTrials(label: string, env: Record<string, string>, countEvents: CountEvents): Promise<Figures> {
  const f: Figures = { trials: 0, acknowledgedBatches: 0, acknowledgedEvents: 0, missing: 0, partialBatches: 0 };
  for (let trial = 0; trial < TRIALS; trial++) {
    const app = await startApp(env);
    const acked: number[] = [];
    const attempted: number[] = [];
    const writer = writeUntilDead(trial, acked, attempted);
    await sleep(100 + Math.random() * 900);
    await killHard(app);
    await writer;
    const present = await countEvents(trial);
    for (const b of acked) f.missing += BATCH - (present.get(b) ?? 0);
    for (const [, n] of present) if (n > 0 && n < BATCH) f.partialBatches++;
    f.trials++;
    f.acknowledgedBatches += acked.length;
    f.acknowledgedEvents += acked.length * BATCH;
  }
  console.log(
    `[crash-trials] ${label}: ${f.trials} SIGKILL trials, ${f.acknowledgedBatches} batches (${f.acknowledgedEvents} events) acknowledged → ` +
      `${f.missing} acknowledged events missing, ${f.partialBatches} batches present in part`,
  );
  return f;
}

function perBatch(rows: { id: string }[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const r of rows) {
    const b = Number(/-b(\d+)-/.exec(r.id)![1]);
    m.set(b, (m.get(b) ?? 0) + 1);
  }
  return m;
}

async function pgliteTrials(): Promise<Figures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-crash-"));
  try {
    return await runTrials("PGlite", { VIGIL_DATA_DIR: dataDir }, async (trial) => {
      const db = new PGlite(dataDir);
      try {
        const { rows } = await db.query<{ id: string }>("select id from event where id like $1", [`t${trial}-b%`]);
        return perBatch(rows);
      } finally {
        await db.close();
      }
    });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgresTrials(cluster: PgCluster): Promise<Figures> {
  const sql = postgres(cluster.url, { max: 1, onnotice: () => {} });
  try {
    return await runTrials("PostgreSQL", { DATABASE_URL: cluster.url }, async (trial) =>
      perBatch(await sql<{ id: string }[]>`select id from event where id like ${`t${trial}-b%`}`),
    );
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Stops PostgreSQL under a running app: every request must end in ≤ 2 s with 503 + Retry-After. */
async function databaseOutage(cluster: PgCluster): Promise<{ violations: number; slowest: number; recoveredMs: number }> {
  const app = await startApp({ DATABASE_URL: cluster.url });
  let violations = 0;
  let slowest = 0;
  let recoveredMs = -1;
  try {
    if ((await post(batchEvents(1000, 0))).status !== 200) throw new Error("app not writing before the outage");
    cluster.halt();
    // tRPC writes, tRPC reads, OTLP export; the health check says 503 too.
    const requests: ((signal: AbortSignal) => Promise<Response>)[] = [
      (signal) => post(batchEvents(1001, Math.floor(Math.random() * 1e9)), signal),
      (signal) => fetch(`${BASE}/api/trpc/reliability.status?input=${encodeURIComponent("{}")}`, { headers: { authorization: `Bearer ${KEY}` }, signal }),
      (signal) => fetch(`${BASE}/api/otlp/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ resourceSpans: [] }), signal }),
    ];
    for (let i = 0; i < 12; i++) {
      const t0 = Date.now();
      let status = 0;
      let retryAfter: string | null = null;
      try {
        const res = await requests[i % requests.length](AbortSignal.timeout(10_000));
        status = res.status;
        retryAfter = res.headers.get("retry-after");
        await res.text();
      } catch {
        status = -1; // hang (aborted) or dropped connection
      }
      const ms = Date.now() - t0;
      slowest = Math.max(slowest, ms);
      if (status !== 503 || !retryAfter || ms > 2000) {
        violations++;
        console.log(`[crash-trials] outage request ${i}: status ${status}, Retry-After ${retryAfter}, ${ms} ms`);
      }
    }
    const health = await fetch(`${BASE}/api/health`, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
    if (health?.status !== 503) {
      violations++;
      console.log(`[crash-trials] /api/health during the outage: ${health?.status ?? "no answer"}`);
    }
    cluster.resume();
    const t0 = Date.now();
    while (Date.now() - t0 < 30_000) {
      const res = await post(batchEvents(1002, 0)).catch(() => null);
      if (res?.status === 200) {
        recoveredMs = Date.now() - t0;
        break;
      }
      await sleep(200);
    }
  } finally {
    await killHard(app);
  }
  console.log(
    `[crash-trials] PostgreSQL stopped under the app: ${violations} of 13 requests (ingest, status, OTLP, health) not 503(+Retry-After) within 2 s (slowest ${slowest} ms); ` +
      (recoveredMs >= 0 ? `writes recovered ${recoveredMs} ms after the database returned, no app restart` : "app did NOT recover within 30 s"),
  );
  return { violations, slowest, recoveredMs };
}

/** The server's CPU time so far (user + system, seconds), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks: 100 per second on Linux
}

/**
 * Whatever reads the app's output goes away (a launcher that died) while PostgreSQL is down, so the
 * app keeps logging its background jobs' failures into a closed pipe: it must stay idle and keep
 * answering. (Before serve.mjs dropped such write errors, the app spun at a full core reporting
 * them.) Returns the CPU seconds the app used in the 6 s after, and whether it still answered.
 */
async function logReaderGone(cluster: PgCluster): Promise<{ cpu: number; answered: boolean }> {
  const app = await startApp({ DATABASE_URL: cluster.url });
  try {
    app.stdout!.destroy();
    app.stderr!.destroy();
    cluster.halt();
    const before = cpuSeconds(app.pid!);
    await sleep(6_000);
    const cpu = cpuSeconds(app.pid!) - before;
    const health = await fetch(`${BASE}/api/health`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
    console.log(`[crash-trials] log reader gone and PostgreSQL stopped: the app used ${cpu.toFixed(2)} CPU s in 6 s; /api/health ${health?.status ?? "no answer"}`);
    return { cpu, answered: health?.status === 503 };
  } finally {
    await killHard(app);
    cluster.resume();
  }
}

async function main() {
  const started = Date.now();
  const failures: string[] = [];
  const lite = await pgliteTrials();
  const cluster = await startPgCluster();
  try {
    const pg = await postgresTrials(cluster);
    for (const [label, f] of [["PGlite", lite], ["PostgreSQL", pg]] as const) {
      if (f.missing !== 0 || f.partialBatches !== 0) failures.push(`${label}: ${f.missing} missing, ${f.partialBatches} partial`);
      if (f.acknowledgedBatches === 0) failures.push(`${label}: no batch was acknowledged (the trial proved nothing)`);
    }
    const outage = await databaseOutage(cluster);
    if (outage.violations !== 0) failures.push(`outage: ${outage.violations} requests without a prompt 503 + Retry-After`);
    if (outage.recoveredMs < 0) failures.push("outage: the app did not recover when PostgreSQL returned");
    const orphaned = await logReaderGone(cluster);
    if (orphaned.cpu > 1.5) failures.push(`log reader gone: the app used ${orphaned.cpu.toFixed(2)} CPU s in 6 s (at most 1.5)`);
    if (!orphaned.answered) failures.push("log reader gone: /api/health did not answer 503 during the outage");
  } finally {
    cluster.stop();
  }
  console.log(`[crash-trials] done in ${Math.round((Date.now() - started) / 1000)} s`);
  if (failures.length) {
    console.error(`[crash-trials] FAILED:\n  ${failures.join("\n  ")}`);
    process.exit(1);
  }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
