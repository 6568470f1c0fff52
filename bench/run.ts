/**
 * `npm run bench` — figures, not assertions. In one run, on a throwaway PostgreSQL cluster (fsync
 * on, as in production) and on PGlite:
 *  (1) fleet load against the production build (scripts/serve.mjs, as `npm start` runs it), beside
 *      a bare `node:http` server answering a constant JSON and (on PostgreSQL) a floor server making
 *      guard.check's two round trips with nothing else: GET /api/health; guard.check with one
 *      client, with 64 concurrent sessions (closed loop; with the CPU a check costs the server, the
 *      database server and the load generator) — both also through Next's pipeline with the
 *      agent API fast path off, and 64 sessions with group commit off —, at 500/s and 2,000/s offered (open loop; on PostgreSQL 500/s
 *      also with synchronous_commit off, a diagnostic of the disk's share); ingest.events with 4
 *      writers × 500-event batches beside a raw multi-row INSERT of the same rows; on PostgreSQL,
 *      guard.check with 20 workspace policies and the built-in risk rules on beside none and the
 *      rules off, alternating on one server;
 *  (2) in-process: 500-event batches, guard.check vs an empty call, coding-agent hooks;
 *  (3) dashboard-sized queries on 10k key_state rows and 100k failure rows, EXPLAIN ANALYZE of
 *      the slowest;
 *  (4) ingest and guard.check on Citus (a coordinator and two workers) beside plain PostgreSQL.
 * Issue 15's targets are printed beside the figures. Flags: --batches <n> (20), --guards <n>
 * (200), --seconds <n> (8, per load step), --no-pglite, --no-http, --no-inprocess, --no-citus,
 * --no-policies, --no-metrics (counting off, as `VIGIL_METRICS=off`: compare with a run with it;
 * bench/metrics-scrape.ts compares both in one run).
 */
import { performance } from "node:perf_hooks";
import { migrateDatabase, openDatabase, type Database } from "@/db/client";
import { ingestEvents } from "@/server/ingest";
import { setMetricsCounting } from "@/server/metrics";
import { newKeyState } from "@/server/engine/key-state";
import type { EventInput } from "@/server/ingest/schema";
import { startPgCluster } from "@/tests/support/pg-cluster";
import { TestApp } from "@/tests/support/app";
import { handleHookRequest } from "@/server/agent-api/hooks";
import { PGlite } from "@electric-sql/pglite";
import { runCitusBench } from "./citus";
import postgres from "postgres";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
// @ts-expect-error — a plain ESM script without types
import { BUILD_SOURCES, needsBuild, newestMtime } from "../scripts/start-plan.mjs";
import { BATCH_SIZE, KEYS, MODELS, guardSpec, loopingGuardSpec, workload } from "./workloads";
import { BENCH_KEY, closedLoop, cpuMeter, openLoop, startBareServer, startFloorServer, startVigil, summarize, type ClientTurn, type CpuPerRequest, type RequestSpec, type Server } from "./http-load";

const argv = process.argv.slice(2);
const flag = (name: string, def: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : def;
};
const BATCHES = flag("batches", 20);
const GUARDS = flag("guards", 200);
const LOAD_SECONDS = flag("seconds", 8);
/**
 * Ingest passes, each beside a raw INSERT of its rows (the median ratio is the figure). Five, not
 * three: a pass is ~1 s, and rounds of one run swing ±20 % with the host (the raw INSERT itself
 * from 58k to 89k rows/s), so the median of three moved with a single slow round.
 */
const INGEST_ROUNDS = 5;
/** guard.check at 64 sessions, each round beside the bare server (the median ratio is the figure). */
const GUARD_ROUNDS = 3;
/** The guard.check pair with and without 20 workspace policies (PostgreSQL, with the HTTP rows). */
const withPolicies = !argv.includes("--no-policies");
if (argv.includes("--no-metrics")) {
  process.env.VIGIL_METRICS = "off"; // the servers started here inherit it
  setMetricsCounting(false);
}

// ------------------------------------------------------------------ helpers
type Row = [string, ...(string | number)[]];
const rows: Row[] = [];
const ms = (v: number) => v.toFixed(1);
function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1], n: s.length };
}
function record(label: string, xs: number[]) {
  const s = stats(xs);
  rows.push([label, s.n, ms(s.p50), ms(s.p95), ms(s.max)]);
  console.log(`  ${label.padEnd(58)} p50 ${ms(s.p50).padStart(7)}  p95 ${ms(s.p95).padStart(7)}  max ${ms(s.max).padStart(7)} ms`);
  return s;
}
async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}
function printTable() {
  const head = ["measurement", "n", "p50 ms", "p95 ms", "max ms"];
  const all = [head, ...rows.map((r) => r.map(String))];
  const w = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => "│ " + r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join(" │ ") + " │";
  const sep = (l: string, m: string, r: string) => l + w.map((x) => "─".repeat(x + 2)).join(m) + r;
  console.log("\n" + sep("┌", "┬", "┐"));
  console.log(line(head));
  console.log(sep("├", "┼", "┤"));
  for (const r of all.slice(1)) console.log(line(r));
  console.log(sep("└", "┴", "┘"));
}

// ------------------------------------------------------------------ (a) + (b)
async function ingestAndGuard(kind: string, database: Database) {
  const app = await TestApp.create(database);
  console.log(`\n[${kind}] applying ${BATCHES} batches of ${BATCH_SIZE} events`);
  for (const via of ["ingestEvents", "HTTP handler"] as const) {
    const ws = await app.seedWorkspace();
    const next = workload(`${kind}-${via === "HTTP handler" ? "h" : "d"}`);
    const apply = async (events: EventInput[]) => {
      if (via === "ingestEvents") return ingestEvents(database.db, { workspaceId: ws.workspaceId, organizationId: ws.organizationId }, events);
      const res = await app.mutation("ingest.events", { events }, { key: ws.key });
      if (res.status !== 200) throw new Error(`ingest.events → ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
    };
    for (let i = 0; i < 3; i++) await apply(next()); // warm-up (JIT, plan cache, first rows)
    const xs: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      const events = next();
      xs.push(await time(() => apply(events)));
    }
    record(`${kind}: 500-event batch via ${via}`, xs);
  }

  console.log(`[${kind}] guard.check vs account.whoami through the handler (${GUARDS} each, interleaved)`);
  const ws = await app.seedWorkspace({ scope: "agent" });
  const warm = workload(`${kind}-g`);
  await app.mutation("ingest.events", { events: warm() }, { key: ws.key }); // some key history to decide on
  const guard: number[] = [];
  const empty: number[] = [];
  for (let i = -20; i < GUARDS; i++) {
    const key = KEYS[i & 31];
    const input = { id: `${kind}-guard-${i}`, sessionId: `${kind}-g-s${(i + 40) % 20}`, callId: `gc-${i}`, toolName: key.toolName, args: key.args() };
    const g = await time(async () => {
      const r = await app.mutation("guard.check", input, { key: ws.key });
      if (r.status !== 200) throw new Error(`guard.check → ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    });
    const e = await time(() => app.query("account.whoami", undefined, { key: ws.key }));
    if (i >= 0) (guard.push(g), empty.push(e));
  }
  const gs = record(`${kind}: guard.check (HTTP handler)`, guard);
  const es = record(`${kind}: account.whoami, empty call (HTTP handler)`, empty);
  console.log(`  → guard.check costs ${ms(gs.p50 - es.p50)} ms over an empty call at p50, ${ms(gs.p95 - es.p95)} ms at p95`);

  console.log(`[${kind}] Claude Code hooks through the hook handler (${GUARDS} tool calls)`);
  const hook = async (body: Record<string, unknown>) => {
    const req = new Request("http://bench/api/hooks/claude-code", {
      method: "POST",
      headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
      body: JSON.stringify({ transcript_path: "/tmp/t.jsonl", cwd: "/tmp", permission_mode: "default", ...body }),
    });
    const res = await handleHookRequest(req, app.runtime, "claude-code");
    if (res.status !== 200) throw new Error(`hook → ${res.status}`);
    await res.text();
  };
  const pre: number[] = [];
  const post: number[] = [];
  for (let i = -20; i < GUARDS; i++) {
    const key = KEYS[i & 31];
    const call = { session_id: `${kind}-hook-s${(i + 40) % 20}`, tool_name: key.toolName, tool_input: key.args(), tool_use_id: `toolu_bench_${kind}_${i}` };
    const p = await time(() => hook({ ...call, hook_event_name: "PreToolUse" }));
    const r = await time(() => hook({ ...call, hook_event_name: "PostToolUse", tool_response: { stdout: "ok" }, duration_ms: 12 }));
    if (i >= 0) (pre.push(p), post.push(r));
  }
  record(`${kind}: Claude Code PreToolUse hook`, pre);
  record(`${kind}: Claude Code PostToolUse hook`, post);
}

// ------------------------------------------------------------------ (d) dashboard queries
async function dashboardQueries(database: Database) {
  const pg = database.pg!;
  const app = await TestApp.create(database);
  const ws = await app.seedWorkspace();
  const wsId = ws.workspaceId;
  const tools = Array.from({ length: 40 }, (_, i) => (i < 10 ? `http_request` : i < 20 ? `tool_${i}` : `mcp__srv${i % 7}__op${i}`));
  const states = (i: number) => (i % 50 === 0 ? "blocked" : i % 50 < 3 ? "recovering" : i % 50 < 6 ? "escalated" : "trusted");
  const now = Date.now();
  const DAY = 86_400_000;
  // drizzle's postgres-js driver passes timestamps through as strings: bind ISO strings, not Dates.
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  console.log("\n[postgres] seeding 10k key_state rows and 100k failure rows (bulk insert)");
  const t0 = performance.now();
  const keys = Array.from({ length: 10_000 }, (_, i) => {
    const tool = tools[i % tools.length];
    const last = i % 10 < 7 ? new Date(now - Math.random() * 30 * DAY) : null;
    return {
      workspace_id: wsId, failure_key: `${tool}|p=v${i}`, tool_name: tool, level: "key", domain: tool === "http_request" ? `svc${i % 100}.example.com` : null,
      state: states(i), effective_state: states(i), effective_failures: Math.random() * 5, threshold: 3, consecutive_failures: i % 4,
      total_calls: 100 + (i % 900), total_failures: i % 60, last_failure_at: iso(last), last_event_at: iso(last ?? new Date(now - Math.random() * 30 * DAY)),
      escalation_expires: states(i) === "escalated" ? iso(new Date(now + 600_000)) : null,
      trust: JSON.stringify({ ...newKeyState(`${tool}|p=v${i}`, tool), state: states(i) }), data: JSON.stringify({ failures: [], results: { firstSeq: 1, ts: [] } }), updated_at: iso(new Date()),
    };
  });
  for (let i = 0; i < keys.length; i += 2000) await pg`insert into key_state ${pg(keys.slice(i, i + 2000))}`;
  const severities = ["server_error", "timeout", "not_found", "permission", "invalid_input", "security"];
  for (let i = 0; i < 100_000; i += 2000) {
    const part = Array.from({ length: 2000 }, (_, j) => {
      const k = Math.floor(Math.pow(Math.random(), 3) * keys.length); // skewed: a few keys fail a lot
      return {
        workspace_id: wsId, event_id: `f-${i + j}`, failure_key: keys[k].failure_key, tool_name: keys[k].tool_name, domain: keys[k].domain,
        severity: severities[(i + j) % severities.length], weight: 1, ts: iso(new Date(now - Math.random() * 30 * DAY)), session_id: `s-${(i + j) % 3000}`,
        agent: `agent-${(i + j) % 12}`, model: MODELS[(i + j) % MODELS.length], error_message: "503 Service Unavailable", http_status: 503, args_hash: "deadbeef",
      };
    });
    await pg`insert into failure ${pg(part)}`;
  }
  await pg`analyze key_state`;
  await pg`analyze failure`;
  console.log(`  seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s (then ANALYZE)`);

  const since = iso(new Date(now - 7 * DAY));
  const until = iso(new Date(now));
  const queries: { label: string; text: string; params: unknown[] }[] = [
    { label: "keys page: sort by last failure, limit 50", text: `select * from key_state where workspace_id = $1 order by last_failure_at desc nulls last, failure_key asc limit 50`, params: [wsId] },
    { label: "keys page: count(*)", text: `select count(*)::int from key_state where workspace_id = $1`, params: [wsId] },
    {
      label: "keys page: default sort (state rank), limit 50",
      text: `select * from key_state where workspace_id = $1 order by case effective_state when 'blocked' then 3 when 'escalated' then 2 when 'recovering' then 1 else 0 end desc, effective_failures desc, failure_key asc limit 50`,
      params: [wsId],
    },
    {
      label: "failures page: tool + last 7 days, limit 50",
      text: `select id, event_id, failure_key, tool_name, domain, severity, weight, ts, session_id, agent, model, error_message, http_status from failure where workspace_id = $1 and tool_name = $2 and ts >= $3 and ts < $4 order by ts desc, id desc limit 50`,
      params: [wsId, "http_request", since, until],
    },
    { label: "failures page: count(*) tool + last 7 days", text: `select count(*)::int from failure where workspace_id = $1 and tool_name = $2 and ts >= $3 and ts < $4`, params: [wsId, "http_request", since, until] },
    { label: "failures page: all, newest first, limit 50", text: `select * from failure where workspace_id = $1 order by ts desc, id desc limit 50`, params: [wsId] },
  ];
  let slowest = { p50: -1, q: queries[0] };
  for (const q of queries) {
    const xs: number[] = [];
    for (let i = 0; i < 25; i++) {
      const d = await time(() => pg.unsafe(q.text, q.params as never[]));
      if (i >= 5) xs.push(d);
    }
    const s = record(`postgres: ${q.label}`, xs);
    if (s.p50 > slowest.p50) slowest = { p50: s.p50, q };
  }
  console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of the slowest — ${slowest.q.label}:`);
  const plan = await pg.unsafe(`explain (analyze, buffers) ${slowest.q.text}`, slowest.q.params as never[]);
  for (const r of plan) console.log("  " + (r as Record<string, string>)["QUERY PLAN"]);
}

// ------------------------------------------------------------------ (1) fleet load over HTTP
type FleetRow = { measure: string; figure: string; target: string };
const fleetRows: { kind: string; rows: FleetRow[] }[] = [];

const f0 = (v: number) => v.toFixed(0);

/** The sum of a CpuPerRequest: what one request costs the machine, all processes counted. */
const cpuTotal = (cpu: CpuPerRequest) => cpu.server + (cpu.database ?? 0) + cpu.loadGenerator;
/**
 * A CpuPerRequest in words: "server 220 µs (main thread 150) + PostgreSQL 110 µs + load generator
 * 80 µs = 410 µs". What the server spends beyond its main thread is mostly garbage collection.
 */
function cpuParts(cpu: CpuPerRequest, client = "load generator"): string {
  const database = cpu.database === null ? " (PGlite inside)" : ` + PostgreSQL ${f0(cpu.database)} µs`;
  return `server ${f0(cpu.server)} µs (main thread ${f0(cpu.serverMainThread)})${database} + ${client} ${f0(cpu.loadGenerator)} µs = ${f0(cpuTotal(cpu))} µs`;
}

/**
 * What a check costs the machine, all processes counted (the median round's): the server, the
 * database server and the load generator share its cores, so their sum bounds the rate however
 * well the work is spread — the ceiling printed is every core busy with nothing else.
 */
function cpuBudgetRow(cpu: CpuPerRequest, bare: number): FleetRow {
  const ceiling = (os.cpus().length * 1e6) / cpuTotal(cpu);
  return {
    measure: "guard.check, 64 sessions: CPU per check, that round",
    figure: `${cpuParts(cpu)}; all ${os.cpus().length} cores busy with nothing else: at most ${f0(ceiling)}/s = ${(ceiling / bare).toFixed(2)}× bare`,
    target: "—",
  };
}

/**
 * The same for an ingested event (the median round's), beside what a row of the raw INSERT cost
 * (its client and PostgreSQL): the ceiling is every core busy with the ingest alone, against that
 * round's raw rate — a target above it needs less CPU per event, not better spreading.
 */
function ingestCpuRow(round: { cpu: CpuPerRequest; rawCpu: CpuPerRequest | null; raw: number }): FleetRow {
  const ceiling = (os.cpus().length * 1e6) / cpuTotal(round.cpu);
  const raw = round.rawCpu ? `; a raw INSERT row: client ${f0(round.rawCpu.loadGenerator)} µs${round.rawCpu.database === null ? "" : ` + PostgreSQL ${f0(round.rawCpu.database)} µs`}` : "";
  return {
    measure: "ingest.events: CPU per event, that round",
    figure: `${cpuParts(round.cpu, "writers")}; all ${os.cpus().length} cores busy with nothing else: at most ${f0(ceiling)}/s = ${(ceiling / round.raw).toFixed(2)}× that raw INSERT${raw}`,
    target: "—",
  };
}
/** The middle value of an odd number of measurements (one of them, so its round can be named). */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f1 = (v: number) => v.toFixed(1);
/** Milliseconds near a target of a few: one decimal would print 3.04 as "3.0" against "≤ 3 ms". */
const f2 = (v: number) => v.toFixed(2);

async function ensureBuild() {
  const builtAt = fs.existsSync(".next/BUILD_ID") ? fs.statSync(".next/BUILD_ID").mtimeMs : 0;
  const changedAt = Math.max(...(BUILD_SOURCES as string[]).map((s) => newestMtime(s)));
  if (!needsBuild({ builtAt, changedAt, skip: false })) return;
  console.log("Building the production app (next build): the build is missing or older than the sources…");
  const r = spawnSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (r.status !== 0) throw new Error("next build failed");
}

async function bareBaseline(): Promise<number> {
  const bare = await startBareServer();
  try {
    await closedLoop(bare.url, { method: "GET", path: "/" }, 64, 1); // warm-up
    const r = summarize(await closedLoop(bare.url, { method: "POST", path: "/api/trpc/guard.check", body: guardSpec("bare").body }, 64, LOAD_SECONDS));
    console.log(`  bare node:http, 64 clients: ${f0(r.okPerSecond)}/s, p50 ${f1(r.p50)} ms`);
    return r.okPerSecond;
  } finally {
    await bare.stop();
  }
}

/**
 * Raw multi-row INSERTs of the same events (4 writers), the ceiling the ingest is compared with:
 * rows per second and, on PostgreSQL, the CPU per row of this client and the database server.
 */
async function rawInsertRate(kind: string, batches: EventInput[][][], databaseUrl?: string, databasePid: number | null = null): Promise<{ rate: number; cpu: CpuPerRequest | null }> {
  const rowsOf = (events: EventInput[]) =>
    events.map((e) => ({ id: `${kind}-raw-${e.id}`, session_id: e.sessionId, type: e.type, ts: new Date((e as { ts?: number }).ts ?? Date.now()).toISOString(), tool_name: (e as { toolName?: string }).toolName ?? null, body: e }));
  const ddl = "create table if not exists bench_raw_event (id text primary key, session_id text not null, type text not null, ts timestamptz not null, tool_name text, body jsonb not null)";
  const total = batches.flat(2).length;
  if (databaseUrl) {
    const sql = postgres(databaseUrl, { max: batches.length, onnotice: () => {} });
    await sql.unsafe(ddl);
    // Every writer's connection open before the clock starts, as the ingest's server holds its pool
    // open: connecting (a PostgreSQL backend started per connection) is no part of inserting.
    await Promise.all(batches.map(() => sql`select 1`));
    const meter = databasePid === null ? null : cpuMeter(process.pid, databasePid);
    const t0 = performance.now();
    await Promise.all(batches.map(async (writer) => {
      for (const events of writer) await sql`insert into bench_raw_event ${sql(rowsOf(events).map((r) => ({ ...r, body: sql.json(r.body as never) })))}`;
    }));
    const rate = total / ((performance.now() - t0) / 1000);
    // This process's CPU is the client's (its child processes, the servers, are not counted).
    const cpu = meter ? { ...meter.perRequest(total), server: 0, serverMainThread: 0 } : null;
    await sql.end();
    return { rate, cpu };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-bench-raw-"));
  const lite = new PGlite(dir);
  await lite.exec(ddl);
  const t0 = performance.now();
  await Promise.all(batches.map(async (writer) => {
    for (const events of writer) {
      const rows = rowsOf(events);
      const params: unknown[] = [];
      const values = rows.map((r, i) => {
        params.push(r.id, r.session_id, r.type, r.ts, r.tool_name, JSON.stringify(r.body));
        const b = i * 6;
        return `($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5},$${b + 6}::jsonb)`;
      });
      await lite.query(`insert into bench_raw_event values ${values.join(",")}`, params);
    }
  }));
  const rate = total / ((performance.now() - t0) / 1000);
  await lite.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { rate, cpu: null };
}

/** `databasePid`: the PostgreSQL postmaster, whose backends do a check's database work (null for PGlite, inside the server). */
async function fleetLoad(kind: string, bareRate: number, databaseUrl?: string, databasePid: number | null = null) {
  console.log(`\n[${kind}] fleet load against the production build (scripts/serve.mjs)`);
  const rows: FleetRow[] = [];
  const vigil: Server = await startVigil({ databaseUrl });
  try {
    rows.push({ measure: "bare node:http, 64 clients", figure: `${f0(bareRate)}/s`, target: "baseline" });
    const health = summarize(await closedLoop(vigil.url, { method: "GET", path: "/api/health" }, 64, LOAD_SECONDS));
    rows.push({ measure: "GET /api/health, 64 clients", figure: `${f0(health.okPerSecond)}/s, p50 ${f1(health.p50)} ms`, target: "—" });

    await closedLoop(vigil.url, guardSpec(`${kind}-warm`), 8, 2); // warm-up: caches, pools, the first JIT tiers
    const justStarted = summarize(await closedLoop(vigil.url, guardSpec(`${kind}-one-fresh`, 1), 1, Math.min(LOAD_SECONDS, 5)));
    rows.push({ measure: "guard.check, one client, 2 s after start", figure: `p50 ${f2(justStarted.p50)} ms, p99 ${f1(justStarted.p99)} ms`, target: "—" });

    // On a shared machine the cores' speed drifts within a run: each round measures the bare server
    // again right after guard.check, and the median of the rounds' ratios is the figure.
    const guardRounds: { many: LoadSummary; cpu: CpuPerRequest; bare: number }[] = [];
    for (let round = 0; round < GUARD_ROUNDS; round++) {
      const meter = cpuMeter(vigil.pid, databasePid);
      const many = summarize(await closedLoop(vigil.url, guardSpec(`${kind}-64-${round}`), 64, LOAD_SECONDS));
      guardRounds.push({ many, cpu: meter.perRequest(many.n), bare: await bareBaseline() });
    }
    const guardRatios = guardRounds.map((r) => r.many.okPerSecond / r.bare);
    const guardMedian = median(guardRatios);
    const medianRound = guardRounds[guardRatios.indexOf(guardMedian)];
    const many = medianRound.many;
    rows.push({
      measure: "guard.check, 64 sessions (closed loop)",
      figure:
        `${f0(many.okPerSecond)}/s = ${guardMedian.toFixed(2)}× bare measured right after, the median of ${guardRounds.length} rounds ` +
        `(${guardRounds.map((r) => `${f0(r.many.okPerSecond)}/${f0(r.bare)} = ${(r.many.okPerSecond / r.bare).toFixed(2)}×`).join(", ")}; ` +
        `${(many.okPerSecond / bareRate).toFixed(2)}× bare at the start), p50 ${f1(many.p50)} ms, non-200 ${guardRounds.reduce((n, r) => n + r.many.errors, 0)}`,
      target: "≥ 0.25× bare",
    });
    rows.push(cpuBudgetRow(medianRound.cpu, medianRound.bare));
    // One agent against a server that has been running: the process has now served the rounds
    // above. Its first seconds (the row "2 s after start") are slower — JIT tiers, caches, and the
    // host: in most scratch runs one client alone read p50 4.0–4.7 ms in its first 3 s, 2.7–4.1 ms 12 s later.
    // Rounds of 3 s, the median p50's round the figure: a hiccup of the host moves one round, not the row.
    const oneRounds: LoadSummary[] = [];
    for (let round = 0; round < GUARD_ROUNDS; round++) oneRounds.push(summarize(await closedLoop(vigil.url, guardSpec(`${kind}-one-warm-${round}`, 1), 1, 3)));
    const one = oneRounds.find((r) => r.p50 === median(oneRounds.map((o) => o.p50)))!;
    rows.push({
      measure: "guard.check, one client, warm",
      figure: `p50 ${f2(one.p50)} ms, p99 ${f1(one.p99)} ms, the median of ${oneRounds.length} rounds (p50 ${oneRounds.map((r) => f2(r.p50)).join(" / ")} ms)`,
      target: kind === "postgres" ? "p50 ≤ 3 ms" : "—",
    });
    if (databaseUrl) await floorBaseline(rows, databaseUrl, { one, many });
    const looping = summarize(await closedLoop(vigil.url, loopingGuardSpec(`${kind}-loop`), 64, LOAD_SECONDS));
    rows.push({ measure: "guard.check, 64 looping sessions (patterns, nudges, pauses)", figure: `${f0(looping.okPerSecond)}/s = ${(looping.okPerSecond / bareRate).toFixed(2)}× bare, p50 ${f1(looping.p50)} ms, non-200 ${looping.errors}`, target: "—" });
    await throughNext(kind, rows, databaseUrl);
    await eachCheckAlone(kind, rows, databaseUrl);
    if (databaseUrl && withPolicies) await policiesBeside(kind, rows, databaseUrl, databasePid);

    const at500 = summarize(await openLoop(vigil.url, guardSpec(`${kind}-500`), 500, LOAD_SECONDS));
    rows.push({ measure: "guard.check, 500/s offered", figure: `p50 ${f1(at500.p50)} ms, p99 ${f1(at500.p99)} ms, errors ${at500.errors} (${at500.byStatus})`, target: "p99 ≤ 25 ms, 0 errors" });
    if (databaseUrl) await at500WithoutFlushWait(kind, rows, vigil.url, databaseUrl);

    const at2000 = summarize(await openLoop(vigil.url, guardSpec(`${kind}-2000`), 2000, LOAD_SECONDS, vigil.pid));
    rows.push({
      measure: "guard.check, 2,000/s offered",
      figure: `accepted p99 ${f1(at2000.p99)} ms; ${at2000.byStatus}; refusals without Retry-After ${at2000.refusedWithoutRetryAfter}; RSS peak ${f0(at2000.peakRssMiB ?? 0)} MiB`,
      target: "only 200 or 429/503 + Retry-After; RSS ≤ 400 MiB",
    });

    // Ingest: 4 writers, each posting 500-event batches over its own sessions, on a fresh server:
    // after 2,000/s offered this one is still working off what it accepted (and the ingest
    // must run last: its failures escalate tools the guard.check steps call).
    await vigil.stop();
    const ingestServer: Server = await startVigil({ databaseUrl });
    const writers = 4;
    const perWriter = 8;
    const passBatches = (pass: string) =>
      Array.from({ length: writers }, (_, w) => {
        const next = workload(`${kind}-${pass}-w${w}-${Date.now()}`);
        return Array.from({ length: perWriter }, () => next());
      });
    const post = (events: EventInput[]) =>
      fetch(`${ingestServer.url}/api/trpc/ingest.events`, { method: "POST", headers: { authorization: `Bearer ${BENCH_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ events }) });
    // Each writer posts its batches one after another; the pass's events per second.
    const ingestPass = async (batches: EventInput[][][]) => {
      const t0 = performance.now();
      let failed = 0;
      await Promise.all(batches.map(async (writer) => {
        for (const events of writer) {
          const res = await post(events);
          if (res.status !== 200) failed++;
          await res.arrayBuffer();
        }
      }));
      return { rate: (writers * perWriter * BATCH_SIZE) / ((performance.now() - t0) / 1000), failed };
    };
    let fresh: { rate: number; failed: number };
    // Warm passes, each followed at once by the raw INSERT of its rows: on a shared machine the
    // cores' speed drifts within a run, so each ratio is of two measurements taken side by side,
    // and the median of the rounds is the figure (all of them are printed).
    const rounds: { rate: number; raw: number; cpu: CpuPerRequest; rawCpu: CpuPerRequest | null }[] = [];
    let failed = 0;
    try {
      // A fresh process first (as earlier figures were taken): each writer sends two batches of its
      // own, then 16,000 events are timed — V8 is still compiling the hot code through most of them.
      // Then the same again on the now warm process, as a server that has been running serves a
      // fleet: the target is read on those passes.
      await Promise.all(Array.from({ length: writers }, async (_, w) => {
        const next = workload(`${kind}-iw${w}`);
        for (let i = 0; i < 2; i++) await (await post(next())).arrayBuffer();
      }));
      fresh = await ingestPass(passBatches("fresh"));
      failed += fresh.failed;
      for (let round = 0; round < INGEST_ROUNDS; round++) {
        const batches = passBatches(`warm${round}`);
        const meter = cpuMeter(ingestServer.pid, databasePid);
        const warm = await ingestPass(batches);
        const cpu = meter.perRequest(writers * perWriter * BATCH_SIZE);
        failed += warm.failed;
        const raw = await rawInsertRate(`${kind}-r${round}`, batches, databaseUrl, databasePid);
        rounds.push({ rate: warm.rate, raw: raw.rate, cpu, rawCpu: raw.cpu });
      }
    } finally {
      await ingestServer.stop();
    }
    const ratios = rounds.map((r) => r.rate / r.raw);
    const ingestMedian = median(ratios);
    const mid = rounds[ratios.indexOf(ingestMedian)];
    rows.push({
      measure: "ingest.events, 4 writers × 500-event batches",
      figure:
        `${f0(mid.rate)} events/s = ${ingestMedian.toFixed(2)}× raw INSERT (${f0(mid.raw)} rows/s), the median of ${rounds.length} rounds ` +
        `(${rounds.map((r) => `${f0(r.rate)}/${f0(r.raw)} = ${(r.rate / r.raw).toFixed(2)}×`).join(", ")}); ` +
        `the first 16,000 events of a fresh process ${f0(fresh.rate)}/s = ${(fresh.rate / rounds[0].raw).toFixed(2)}×${failed ? `; ${failed} failed` : ""}`,
      target: "≥ 0.3× raw insert",
    });
    rows.push(ingestCpuRow(mid));
    await hotKey(kind, rows, databaseUrl);
  } finally {
    await vigil.stop();
  }
  for (const r of rows) console.log(`  ${r.measure.padEnd(46)} ${r.figure}   [target: ${r.target}]`);
  fleetRows.push({ kind, rows });
}

type LoadSummary = ReturnType<typeof summarize>;

/**
 * The floor beside guard.check (bench/http-load.ts startFloorServer): node:http and postgres-js
 * making the same two round trips per request to the same PostgreSQL, and nothing else. It tells
 * apart what Vigil's own work costs from what the database and this machine cost.
 */
async function floorBaseline(rows: FleetRow[], databaseUrl: string, guard: { one: LoadSummary; many: LoadSummary }) {
  const floor = await startFloorServer(databaseUrl);
  try {
    await closedLoop(floor.url, guardSpec("floor-warm"), 8, 2);
    // In guard.check's order: its one-client figure is measured warm, after its 64-session rounds.
    const many = summarize(await closedLoop(floor.url, guardSpec("floor-64"), 64, LOAD_SECONDS));
    const one = summarize(await closedLoop(floor.url, guardSpec("floor-one", 1), 1, Math.min(LOAD_SECONDS, 5)));
    rows.push({
      measure: "floor: node:http + postgres-js, a read and a write per request (no Vigil), one client",
      figure: `p50 ${f2(one.p50)} ms, p99 ${f1(one.p99)} ms (guard.check's p50 is ${(guard.one.p50 / one.p50).toFixed(1)}× this)`,
      target: "baseline",
    });
    rows.push({
      measure: "floor: the same, 64 clients",
      figure: `${f0(many.okPerSecond)}/s, p50 ${f1(many.p50)} ms, non-200 ${many.errors} (guard.check, 64 sessions, is ${(guard.many.okPerSecond / many.okPerSecond).toFixed(2)}× this)`,
      target: "baseline",
    });
  } finally {
    await floor.stop();
  }
}

/**
 * guard.check at 500/s offered again, with commits that do not wait for the disk: a diagnostic, never
 * a production setting (an acknowledged check must survive a crash). The 500/s tail is the commit's
 * WAL flush: this host's shared disk answers fsync in under a millisecond on average and now and then
 * in over 100 ms, and every check in flight waits for it (PostgreSQL's wait events, sampled every
 * 10 ms, showed every stall over 30 ms as one backend in WALSync or WALInitSync and the rest queued on
 * WALWrite). Read the two rows together: when this one's tail is far lower, the disk made the other's;
 * when it is as high, that round's stall was something else (the shared host's CPU, a collection).
 */
async function at500WithoutFlushWait(kind: string, rows: FleetRow[], url: string, databaseUrl: string) {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const setting = async (change: "set synchronous_commit = off" | "reset synchronous_commit") => {
    await sql.unsafe(`alter system ${change}`);
    await sql`select pg_reload_conf()`;
    await new Promise((r) => setTimeout(r, 300)); // backends take a reload before their next statement
  };
  try {
    await setting("set synchronous_commit = off");
    const r = summarize(await openLoop(url, guardSpec(`${kind}-500-no-flush-wait`), 500, LOAD_SECONDS));
    rows.push({
      measure: "guard.check, 500/s offered, commits not waiting for the disk (synchronous_commit off: a diagnostic, never for production)",
      figure: `p50 ${f1(r.p50)} ms, p99 ${f1(r.p99)} ms, errors ${r.errors} (${r.byStatus})`,
      target: "—",
    });
  } finally {
    await setting("reset synchronous_commit");
    await sql.end();
  }
}

/**
 * The same server with the agent API fast path off (VIGIL_AGENT_FAST_PATH=off): every request
 * through Next's pipeline, as `next start` serves it — what the fast path saves, side by side.
 */
async function throughNext(kind: string, rows: FleetRow[], databaseUrl?: string) {
  const viaNext = await startVigil({ databaseUrl, env: { VIGIL_AGENT_FAST_PATH: "off" } });
  try {
    const health = summarize(await closedLoop(viaNext.url, { method: "GET", path: "/api/health" }, 64, LOAD_SECONDS));
    rows.push({ measure: "GET /api/health through Next (fast path off)", figure: `${f0(health.okPerSecond)}/s, p50 ${f1(health.p50)} ms`, target: "—" });
    await closedLoop(viaNext.url, guardSpec(`${kind}-next-warm`), 8, 2);
    const many = summarize(await closedLoop(viaNext.url, guardSpec(`${kind}-next-64`), 64, LOAD_SECONDS));
    rows.push({ measure: "guard.check, 64 sessions through Next", figure: `${f0(many.okPerSecond)}/s, p50 ${f1(many.p50)} ms, non-200 ${many.errors}`, target: "—" });
  } finally {
    await viaNext.stop();
  }
}

/**
 * The same server with group commit off (VIGIL_GUARD_BATCH_SIZE=1): every guard.check sends its own
 * read and write — what sharing statements between checks that arrive together saves, side by side.
 */
/**
 * A hot key under a rate rule: one key holding the 36,000 results of its one-hour window (called
 * 10 times a second), then 500-event batches with 250 results of it, and guard.checks of it
 * interleaved with checks of a cold key. Runs last, on its own server: it puts a rate rule on the
 * workspace's default rule.
 */
async function hotKey(kind: string, rows: FleetRow[], databaseUrl?: string) {
  const server = await startVigil({ databaseUrl });
  const post = async (procedure: string, body: unknown) => {
    const res = await fetch(`${server.url}/api/trpc/${procedure}`, { method: "POST", headers: { authorization: `Bearer ${BENCH_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${procedure}: ${res.status} ${text.slice(0, 300)}`);
  };
  try {
    await post("config.put", { default_rule: { count_threshold: 1_000_000, rate_threshold: 0.9, rate_min_calls: 4 } });
    const RESULTS = 36_000;
    const start = Date.now() - 3_500_000;
    const result = (id: string, url: string, ts?: number) => ({
      type: "tool.result", id, sessionId: `${kind}-hot-s${Math.floor(Math.random() * 50)}`, callId: id, toolName: "http_request", args: { url }, ts, durationMs: 5,
      ...(Math.random() < 0.03 ? { success: false, error: "503 Service Unavailable", httpStatus: 503 } : { success: true }),
    });
    const HOT = "https://hot.example.com/v1/items";
    for (let n = 0; n < RESULTS; n += BATCH_SIZE) {
      await post("ingest.events", { events: Array.from({ length: BATCH_SIZE }, (_, j) => result(`${kind}-hot-${n + j}`, HOT, Math.round(start + ((n + j) * 3_400_000) / RESULTS))) });
    }
    const batches: number[] = [];
    for (let b = 0; b < 12; b++) {
      const events = Array.from({ length: BATCH_SIZE }, (_, j) => (j % 2 ? result(`${kind}-hb-${b}-${j}`, HOT) : result(`${kind}-cb-${b}-${j}`, `https://cold${j % 40}.example.com/v1/items`)));
      const t0 = performance.now();
      await post("ingest.events", { events });
      if (b >= 2) batches.push(performance.now() - t0);
    }
    const checks: Record<"hot" | "cold", number[]> = { hot: [], cold: [] };
    for (let i = 0; i < 600; i++) {
      for (const [which, url] of [["hot", HOT], ["cold", "https://cold3.example.com/v1/items"]] as const) {
        const t0 = performance.now();
        await post("guard.check", { id: `${kind}-hg-${which}-${i}`, sessionId: `${kind}-hg-${which}-${i % 40}`, callId: `${kind}-hg-${which}-${i}`, toolName: "http_request", args: { url } });
        if (i >= 100) checks[which].push(performance.now() - t0);
      }
    }
    rows.push({
      measure: "a hot key: 36,000 results in a rate rule's window",
      figure: `500-event batch with 250 of its results p50 ${f1(stats(batches).p50)} ms; guard.check of it p50 ${f1(stats(checks.hot).p50)} ms, of a cold key ${f1(stats(checks.cold).p50)} ms`,
      target: "—",
    });
  } finally {
    await server.stop();
  }
}

/**
 * A workspace's 20 policies (SPEC 4.5) as a team writes them: tool globs, argument globs, `{ regex }`,
 * `{ equals }`, shell commands matched per sub-command. None matches guardSpec's calls (`Read` of
 * `/repo/pkg…/src/file….ts`) and no built-in risk rule does either, so a check decides `allow` as
 * without them: what differs is the evaluation alone. Four name `Read` and two any tool, so their
 * arguments are tested on every call.
 */
const BENCH_POLICIES = [
  { name: "no-sudo", tool: "Bash", args: { command: "sudo *" }, decision: "deny" },
  { name: "no-force-push", tool: "Bash", args: { command: "git push *--force*" }, decision: "deny", reason: "Force pushes need a person" },
  { name: "ask-npm-publish", tool: "Bash", args: { command: "npm publish*" }, decision: "ask" },
  { name: "ask-kubectl-delete", tool: "Bash", args: { command: "kubectl delete *" }, decision: "ask" },
  { name: "ask-terraform-apply", tool: "*shell*", args: { command: "terraform apply*" }, decision: "ask" },
  { name: "no-curl-to-shell", tool: "Bash", args: { command: { regex: "curl[^|]*\\|\\s*(ba|z)?sh" } }, decision: "deny" },
  { name: "ask-docker-prune", tool: "Bash", args: { command: "docker system prune*" }, decision: "ask" },
  { name: "no-read-secrets-dir", tool: "Read", args: { file_path: "**/secrets/**" }, decision: "deny" },
  { name: "no-read-ssh", tool: "Read", args: { file_path: "**/.ssh/*" }, decision: "deny" },
  { name: "no-read-keys", tool: "Read", args: { file_path: { regex: "\\.(pem|key|p12)$" } }, decision: "deny" },
  { name: "ask-read-prod-env", tool: "Read", args: { file_path: "/srv/prod/**" }, decision: "ask" },
  { name: "ask-edit-migrations", tool: "Edit", args: { file_path: "**/migrations/*.sql" }, decision: "ask" },
  { name: "no-write-etc", tool: "Write", args: { file_path: "/etc/**" }, decision: "deny" },
  { name: "no-plain-http", tool: "*", args: { url: "http://**" }, decision: "deny", reason: "Plain HTTP leaves the network unencrypted" },
  { name: "ask-prod-api-post", tool: "http_request", args: { method: { equals: "POST" }, url: "https://api.prod.example.com/**" }, decision: "ask" },
  { name: "no-http-delete", tool: "http_request", args: { method: { equals: "DELETE" } }, decision: "deny" },
  { name: "ask-large-refund", tool: "mcp__billing__*", args: { "refund.amount": { equals: 10000 } }, decision: "ask" },
  { name: "no-payments", tool: "mcp__stripe__*", decision: "deny" },
  { name: "ask-slack-general", tool: "mcp__slack__post*", args: { channel: "#general" }, decision: "ask" },
  { name: "allow-github-reads", tool: "mcp__github__get_*", decision: "allow" },
];
/** Rounds of the policies pair, each measuring both configurations (the median ratio is the figure). */
const POLICY_ROUNDS = 5;

/**
 * guard.check with the 20 policies above and the built-in risk rules on, beside the same server
 * with no policies and the risk rules off (the check as it was before policies), switched by
 * config.put between measurements on one server: 64 sessions and one client, the two
 * configurations alternating within each round and which goes first alternating between rounds,
 * the median round's ratio the figure. The workspace's document is put back afterwards: the rows
 * after this one read the database it leaves.
 */
async function policiesBeside(kind: string, rows: FleetRow[], databaseUrl: string, databasePid: number | null) {
  const server = await startVigil({ databaseUrl });
  const call = async (procedure: string, body?: unknown) => {
    const res = await fetch(`${server.url}/api/trpc/${procedure}`, body === undefined
      ? { headers: { authorization: `Bearer ${BENCH_KEY}` } }
      : { method: "POST", headers: { authorization: `Bearer ${BENCH_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${procedure}: ${res.status} ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { result: { data: Record<string, unknown> } }).result.data;
  };
  const original = await call("config.get");
  const configs = {
    off: { ...original, policies: [], risk_rules: { enabled: false } },
    on: { ...original, policies: BENCH_POLICIES, risk_rules: { enabled: true } },
  };
  type Side = { many: LoadSummary; one: LoadSummary; cpu: CpuPerRequest };
  const rounds: { off: Side; on: Side }[] = [];
  try {
    // A new process: its first seconds are slower (JIT tiers, pools) for whichever side came first.
    await closedLoop(server.url, guardSpec(`${kind}-pol-warm`), 64, 2);
    const measure = async (which: "off" | "on", round: number): Promise<Side> => {
      await call("config.put", configs[which]);
      const prefix = `${kind}-pol-${which}-${round}`;
      // The first check after a put reads the new document and compiles it; warm both JIT paths too.
      await closedLoop(server.url, guardSpec(`${prefix}-warm`), 8, 1);
      const meter = cpuMeter(server.pid, databasePid);
      const many = summarize(await closedLoop(server.url, guardSpec(`${prefix}-64`), 64, LOAD_SECONDS));
      const cpu = meter.perRequest(many.n);
      const one = summarize(await closedLoop(server.url, guardSpec(`${prefix}-one`, 1), 1, 3));
      return { many, one, cpu };
    };
    for (let round = 0; round < POLICY_ROUNDS; round++) {
      const order = round % 2 ? (["on", "off"] as const) : (["off", "on"] as const);
      const side: Partial<Record<"off" | "on", Side>> = {};
      for (const which of order) side[which] = await measure(which, round);
      rounds.push({ off: side.off!, on: side.on! });
    }
  } finally {
    await call("config.put", original).catch((err) => console.error(`  restoring the workspace's configuration failed: ${err}`));
    await server.stop();
  }
  const rate = rounds.map((r) => r.on.many.okPerSecond / r.off.many.okPerSecond);
  const latency = rounds.map((r) => r.on.one.p50 / r.off.one.p50);
  const mainThread = rounds.map((r) => r.on.cpu.serverMainThread / r.off.cpu.serverMainThread);
  const mid = rounds[rate.indexOf(median(rate))];
  const errors = rounds.reduce((n, r) => n + r.on.many.errors + r.off.many.errors + r.on.one.errors + r.off.one.errors, 0);
  const within = (x: number, higherIsBetter: boolean) => ((higherIsBetter ? x >= 0.9 : x <= 1.1) ? "within 10 %" : "NOT within 10 %");
  rows.push({
    measure: "guard.check, 64 sessions: 20 policies + built-in rules on, beside none and rules off",
    figure:
      `${f0(mid.on.many.okPerSecond)}/s beside ${f0(mid.off.many.okPerSecond)}/s = ${median(rate).toFixed(3)}×, the median of ${rounds.length} rounds ` +
      `(${rounds.map((r, i) => `${f0(r.on.many.okPerSecond)}/${f0(r.off.many.okPerSecond)} = ${rate[i].toFixed(2)}×`).join(", ")}) [${within(median(rate), true)}]; ` +
      `server main thread per check ${median(mainThread).toFixed(3)}× (that round ${f0(mid.on.cpu.serverMainThread)} beside ${f0(mid.off.cpu.serverMainThread)} µs); non-200 ${errors}`,
    target: "≥ 0.9× without",
  });
  rows.push({
    measure: "guard.check, one client: 20 policies + built-in rules on, beside none and rules off",
    figure:
      `p50 ${median(latency).toFixed(3)}× (median of ${rounds.length} rounds: ${rounds.map((r, i) => `${f2(r.on.one.p50)}/${f2(r.off.one.p50)} ms = ${latency[i].toFixed(2)}×`).join(", ")}) [${within(median(latency), false)}]`,
    target: "p50 ≤ 1.1× without",
  });
}

async function eachCheckAlone(kind: string, rows: FleetRow[], databaseUrl?: string) {
  const alone = await startVigil({ databaseUrl, env: { VIGIL_GUARD_BATCH_SIZE: "1" } });
  try {
    await closedLoop(alone.url, guardSpec(`${kind}-alone-warm`), 8, 2);
    const many = summarize(await closedLoop(alone.url, guardSpec(`${kind}-alone-64`), 64, LOAD_SECONDS));
    rows.push({ measure: "guard.check, 64 sessions, each check alone (no group commit)", figure: `${f0(many.okPerSecond)}/s, p50 ${f1(many.p50)} ms, non-200 ${many.errors}`, target: "—" });
  } finally {
    await alone.stop();
  }
}

function printFleetTable() {
  if (!fleetRows.length) return;
  const kinds = fleetRows.map((f) => f.kind);
  const measures = fleetRows[0].rows.map((r) => r.measure);
  console.log("\nFleet load (production build, same machine, same run):");
  for (const m of measures) {
    console.log(`  ${m}`);
    for (const k of kinds) {
      const row = fleetRows.find((f) => f.kind === k)!.rows.find((r) => r.measure === m);
      if (row) console.log(`    ${k.padEnd(9)} ${row.figure}${k === kinds[0] ? `   [target: ${row.target}]` : ""}`);
    }
  }
}

// ------------------------------------------------------------------ main
async function main() {
  if (argv.includes("--scale")) return (await import("./scale/run-scale")).runScaleBench(argv);
  // The bench signs up several users on its own throwaway databases (sign-up closes after the first).
  process.env.VIGIL_ALLOW_SIGNUP ??= "true";
  console.log(`Machine: ${os.cpus().length} cores, Node ${process.version}`);
  const withHttp = !argv.includes("--no-http");
  const withInProcess = !argv.includes("--no-inprocess");
  const withPglite = !argv.includes("--no-pglite");
  const withCitus = !argv.includes("--no-citus");
  if (withHttp) await ensureBuild();
  console.log("Starting a throwaway PostgreSQL cluster (fsync on)…");
  const cluster = await startPgCluster({ durable: true });
  try {
    if (withHttp) {
      const bareRate = await bareBaseline();
      await fleetLoad("postgres", bareRate, cluster.url, cluster.serverPid());
      if (withPglite) await fleetLoad("pglite", bareRate);
    }
    if (withInProcess) {
      const database = await openDatabase({ url: cluster.url, poolSize: 10 });
      await migrateDatabase(database);
      const [{ version }] = await database.pg!`select version()`;
      console.log(`\n  ${String(version).split(",")[0]}`);
      await ingestAndGuard("postgres", database);
      await dashboardQueries(database);
      await database.close();
      if (withPglite) {
        const lite = await openDatabase({ dataDir: null });
        await migrateDatabase(lite);
        await ingestAndGuard("pglite", lite);
        await lite.close();
      }
    }
  } finally {
    cluster.stop();
  }
  printFleetTable();
  if (rows.length) {
    console.log("\nIn-process figures (through the handlers, no HTTP server):");
    printTable();
  }
  // Citus beside plain PostgreSQL (issue: overhead of distribution on one machine).
  if (withCitus) {
    console.log("\nCitus beside plain PostgreSQL (a coordinator and two workers on this machine):");
    await runCitusBench();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
