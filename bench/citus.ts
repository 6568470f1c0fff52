/**
 * Vigil on Citus beside plain PostgreSQL, on the same machine (figures, not assertions):
 *  - ingest: 4 writers, each posting 500-event batches to its own workspace through the tRPC
 *    handler (`ingest.events`), all at once — events/s and batch latency;
 *  - guard.check: 64 sessions (over 4 workspaces) asking concurrently — checks/s and latency.
 * Plain PostgreSQL is one throwaway cluster; Citus is a throwaway coordinator and two workers
 * (tests/support/citus-cluster.ts, building the extension once when missing). All nodes share
 * this machine's cores, so the comparison shows Citus's overhead, not its scale-out.
 *
 * Standalone: `npx tsx bench/citus.ts [--batches <n per writer> (10)] [--guards <n per session> (10)]`.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { migrateDatabase, openDatabase, type Database } from "@/db/client";
import { startPgCluster } from "@/tests/support/pg-cluster";
import { createCitusDatabase, startCitusCluster } from "@/tests/support/citus-cluster";
import { TestApp } from "@/tests/support/app";

export interface CitusBenchOptions {
  /** Batches each of the 4 writers posts (after one warm-up batch). */
  batchesPerWriter?: number;
  /** guard.checks each of the 64 sessions makes (after one warm-up check). */
  guardsPerSession?: number;
}

export interface ThroughputFigures {
  /** Operations per second over the whole run (events for ingest, checks for guard). */
  perSecond: number;
  p50: number;
  p95: number;
  n: number;
}

export interface CitusBenchResult {
  postgres: { ingest: ThroughputFigures; guard: ThroughputFigures };
  citus: { ingest: ThroughputFigures; guard: ThroughputFigures };
}

const WRITERS = 4;
const BATCH = 500;
const SESSIONS = 64;
const GUARD_WORKSPACES = 4;

const TOOLS: { toolName: string; args: (i: number) => Record<string, unknown> }[] = [
  ...Array.from({ length: 12 }, (_, k) => ({ toolName: "http_request", args: (i: number) => ({ url: `https://svc${k % 6}.example.com/v${k >> 2}/items/${i}`, method: "GET" }) })),
  ...Array.from({ length: 8 }, (_, k) => ({ toolName: "Read", args: (i: number) => ({ file_path: `/repo/pkg${k}/src/file${i % 40}.ts` }) })),
  ...["npm", "git", "make", "pytest"].map((c) => ({ toolName: "Bash", args: (i: number) => ({ command: `${c} ${i % 50}` }) })),
  ...["jira__search", "github__get_pr", "slack__post", "linear__list"].map((t) => ({ toolName: `mcp__${t}`, args: (i: number) => ({ q: `q${i % 30}` }) })),
];

/** 500-event batches over 20 sessions: calls and results (~8% failing), model text, turns. */
function batches(prefix: string) {
  let n = 0;
  let clock = Date.now() - 3 * 3600_000;
  const started = new Set<string>();
  return () => {
    const out: Record<string, unknown>[] = [];
    while (out.length < BATCH) {
      const s = `${prefix}-s${n % 20}`;
      const ts = (clock += 150);
      const id = `${prefix}-${++n}`;
      if (!started.has(s)) {
        started.add(s);
        out.push({ type: "session.start", id: `${id}-start`, sessionId: s, agent: `agent-${n % 5}`, model: ["gpt-4.1", "claude-sonnet-4.5"][n % 2], ts });
      }
      const r = (n * 7919) % 100;
      if (r < 5) out.push({ type: "turn.start", id, sessionId: s, turnIndex: n, ts });
      else if (r < 20) out.push({ type: "model.text", id, sessionId: s, text: `Checking the handler, step ${n}.`, ts });
      else {
        const tool = TOOLS[n % TOOLS.length];
        const args = tool.args(n);
        const failed = r >= 92;
        out.push({ type: "tool.call", id: `${id}-c`, sessionId: s, callId: id, toolName: tool.toolName, args, ts });
        out.push({
          type: "tool.result", id: `${id}-r`, sessionId: s, callId: id, toolName: tool.toolName, args, ts: ts + 50,
          ...(failed ? { success: false, error: "503 Service Unavailable", httpStatus: 503 } : { success: true, result: { ok: true } }),
        });
      }
    }
    return out.slice(0, BATCH);
  };
}

function figures(latencies: number[], operations: number, wallMs: number): ThroughputFigures {
  const s = [...latencies].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  return { perSecond: (operations * 1000) / wallMs, p50: at(0.5), p95: at(0.95), n: s.length };
}

async function measure(kind: string, database: Database, opts: Required<CitusBenchOptions>) {
  // Owners of the seeded workspaces sign up through better-auth; the bench is not rate-limited.
  process.env.VIGIL_ALLOW_SIGNUP ??= "true";
  process.env.VIGIL_RATE_LIMIT_PER_MINUTE ??= "0";
  const app = await TestApp.create(database);

  // Ingest: 4 writers at once, one workspace each.
  const writers = await Promise.all(Array.from({ length: WRITERS }, async (_, w) => ({ ws: await app.seedWorkspace(), next: batches(`${kind}-w${w}`) })));
  const post = async (key: string, events: unknown[]) => {
    const res = await app.mutation("ingest.events", { events }, { key });
    if (res.status !== 200) throw new Error(`[${kind}] ingest.events → ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  await Promise.all(writers.map((w) => post(w.ws.key, w.next()))); // warm-up
  const batchMs: number[] = [];
  let t0 = performance.now();
  await Promise.all(
    writers.map(async (w) => {
      for (let i = 0; i < opts.batchesPerWriter; i++) {
        const events = w.next();
        const t = performance.now();
        await post(w.ws.key, events);
        batchMs.push(performance.now() - t);
      }
    }),
  );
  const ingest = figures(batchMs, WRITERS * opts.batchesPerWriter * BATCH, performance.now() - t0);

  // guard.check: 64 sessions over 4 workspaces, all asking at once.
  const spaces = await Promise.all(Array.from({ length: GUARD_WORKSPACES }, () => app.seedWorkspace({ scope: "agent" })));
  const check = async (s: number, i: number) => {
    const tool = TOOLS[(s + i) % TOOLS.length];
    const res = await app.mutation(
      "guard.check",
      { id: `${kind}-g${s}-${i}`, sessionId: `${kind}-gs${s}`, callId: `c${s}-${i}`, toolName: tool.toolName, args: tool.args(i) },
      { key: spaces[s % GUARD_WORKSPACES].key },
    );
    if (res.status !== 200) throw new Error(`[${kind}] guard.check → ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  await Promise.all(Array.from({ length: SESSIONS }, (_, s) => check(s, opts.guardsPerSession))); // warm-up (its own ids)
  const guardMs: number[] = [];
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      for (let i = 0; i < opts.guardsPerSession; i++) {
        const t = performance.now();
        await check(s, i);
        guardMs.push(performance.now() - t);
      }
    }),
  );
  const guard = figures(guardMs, SESSIONS * opts.guardsPerSession, performance.now() - t0);
  return { ingest, guard };
}

/** Runs both measurements on plain PostgreSQL and on Citus, prints a table and returns the figures. */
export async function runCitusBench(options: CitusBenchOptions = {}): Promise<CitusBenchResult> {
  // The bench signs up several users on its own throwaway databases (sign-up closes after the first).
  process.env.VIGIL_ALLOW_SIGNUP ??= "true";
  const opts = { batchesPerWriter: options.batchesPerWriter ?? 10, guardsPerSession: options.guardsPerSession ?? 10 };
  const pool = 24;

  console.log("[bench:citus] plain PostgreSQL (one throwaway cluster)");
  const pg = await startPgCluster();
  let plain: CitusBenchResult["postgres"];
  try {
    const database = await openDatabase({ url: pg.url, poolSize: pool });
    await migrateDatabase(database);
    plain = await measure("postgres", database, opts);
    await database.close();
  } finally {
    pg.stop();
  }

  console.log("[bench:citus] Citus (a coordinator and two workers on this machine)");
  const cluster = await startCitusCluster({ shardCount: 32 });
  let citus: CitusBenchResult["citus"];
  try {
    const created = await createCitusDatabase(cluster);
    const database = await openDatabase({ url: created.url, poolSize: pool });
    await migrateDatabase(database);
    citus = await measure("citus", database, opts);
    await database.close();
  } finally {
    cluster.stop();
  }

  const result = { postgres: plain, citus };
  printTable(result);
  return result;
}

function printTable(r: CitusBenchResult) {
  const f = (v: number) => v.toFixed(1);
  const rows = [
    ["measurement", "PostgreSQL", "Citus (1+2)", "Citus / PostgreSQL"],
    [`ingest, ${WRITERS} writers × ${BATCH}-event batches: events/s`, f(r.postgres.ingest.perSecond), f(r.citus.ingest.perSecond), (r.citus.ingest.perSecond / r.postgres.ingest.perSecond).toFixed(2)],
    ["  batch p50 ms", f(r.postgres.ingest.p50), f(r.citus.ingest.p50), (r.citus.ingest.p50 / r.postgres.ingest.p50).toFixed(2)],
    ["  batch p95 ms", f(r.postgres.ingest.p95), f(r.citus.ingest.p95), (r.citus.ingest.p95 / r.postgres.ingest.p95).toFixed(2)],
    [`guard.check, ${SESSIONS} concurrent sessions: checks/s`, f(r.postgres.guard.perSecond), f(r.citus.guard.perSecond), (r.citus.guard.perSecond / r.postgres.guard.perSecond).toFixed(2)],
    ["  check p50 ms", f(r.postgres.guard.p50), f(r.citus.guard.p50), (r.citus.guard.p50 / r.postgres.guard.p50).toFixed(2)],
    ["  check p95 ms", f(r.postgres.guard.p95), f(r.citus.guard.p95), (r.citus.guard.p95 / r.postgres.guard.p95).toFixed(2)],
  ];
  const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  console.log("");
  for (const [i, row] of rows.entries()) {
    console.log(row.map((c, j) => (j === 0 ? c.padEnd(w[j]) : c.padStart(w[j]))).join("  "));
    if (i === 0) console.log(w.map((x) => "─".repeat(x)).join("  "));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const argv = process.argv.slice(2);
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : undefined;
  };
  await runCitusBench({ batchesPerWriter: flag("batches"), guardsPerSession: flag("guards") });
  process.exit(0);
}
