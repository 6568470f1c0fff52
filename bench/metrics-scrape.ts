/**
 * `npx tsx bench/metrics-scrape.ts` — figures, not assertions (issue 67's benchmark), on a throwaway
 * PostgreSQL cluster and on PGlite:
 *  (1) GET /api/metrics with 10,000 failure keys and 500 tools in the workspace: the route's handler
 *      (`handleMetrics`: the admin key's lookup, the gauges' one statement, the render) timed in
 *      process — the server's time, without a client or a socket — for an admin key (its workspace)
 *      and the metrics token (every workspace); median and p95 beside the 100 ms target. The
 *      counters hold real traffic first: a result and a guard.check on every one of the 500 tools.
 *  (2) the counters' cost: 500-event ingest batches (rows/s) and guard.check (per call) with
 *      counting on and off (`setMetricsCounting`, as `VIGIL_METRICS=off` starts a server), in
 *      alternating rounds on one database; the median ratio beside the 5 % budget.
 * Flags: --scrapes <n> (200), --rounds <n> (6, per side), --batches <n> (ingest batches per round, 4),
 *        --no-pglite, --no-postgres, --no-scrape (only the on/off comparison).
 */
import { performance } from "node:perf_hooks";
import os from "node:os";
import { migrateDatabase, openDatabase, type Database } from "@/db/client";
import { keyState } from "@/db/schema";
import { handleMetrics } from "@/server/agent-api/metrics";
import { ingestEvents } from "@/server/ingest";
import { newKeyState } from "@/server/engine/key-state";
import { setMetricsCounting } from "@/server/metrics";
import type { EventInput } from "@/server/ingest/schema";
import { createRuntime } from "@/server/runtime";
import { TestApp } from "@/tests/support/app";
import { startPgCluster } from "@/tests/support/pg-cluster";

const argv = process.argv.slice(2);
const flag = (name: string, def: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : def;
};
const SCRAPES = flag("scrapes", 200);
const ROUNDS = flag("rounds", 6);
const BATCHES_PER_ROUND = flag("batches", 4);
const KEYS = 10_000;
const TOOLS = 500;
const SCRAPE_TARGET_MS = 100;
const BATCH = 500;
const TOKEN = "bench-metrics-token-0123456789";

const results: string[] = [];
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};
const median = (xs: number[]) => pct(xs, 0.5);
const f1 = (v: number) => v.toFixed(1);
/** Each round's figure when there are few; the quartiles when there are many. */
const spread = (xs: number[]) =>
  xs.length <= 12 ? xs.map((x) => x.toFixed(0)).join(" / ") : `quartiles ${[0.25, 0.5, 0.75].map((p) => pct(xs, p).toFixed(0)).join(" / ")}`;

const toolName = (t: number) => (t % 5 === 0 ? `mcp__srv${t % 17}__op_${t}` : `tool_${t}`);

/** 10,000 key_state rows over 500 tools (20 keys each), states mixed as on a busy workspace. */
async function seedKeys(database: Database, workspaceId: string) {
  const state = (i: number) => (i % 50 === 0 ? "blocked" : i % 50 < 3 ? "recovering" : i % 50 < 6 ? "escalated" : "trusted");
  const now = Date.now();
  const rows = Array.from({ length: KEYS }, (_, i) => {
    const tool = toolName(i % TOOLS);
    const failureKey = `${tool}|p=v${i}`;
    return {
      workspaceId, failureKey, toolName: tool, level: "key" as const, domain: null, state: state(i), effectiveState: state(i),
      effectiveFailures: (i % 7) / 2, threshold: 3, consecutiveFailures: i % 4, totalCalls: 100 + (i % 900), totalFailures: i % 60,
      lastFailureAt: new Date(now - (i % 720) * 60_000), lastEventAt: new Date(now - (i % 600) * 60_000),
      trust: { ...newKeyState(failureKey, tool), state: state(i) } as never, data: { failures: [], results: { firstSeq: 1, ts: [] } } as never,
    };
  });
  for (let i = 0; i < rows.length; i += 1000) await database.db.insert(keyState).values(rows.slice(i, i + 1000));
}

/** One result per tool (a failure on every fifth) from 8 agents: the counters' series a fleet makes. */
function toolTraffic(prefix: string): EventInput[] {
  const base = Date.now() - 3_600_000;
  const out: Record<string, unknown>[] = [];
  for (let t = 0; t < TOOLS; t++) {
    const sessionId = `${prefix}-s${t % 40}`;
    const failed = t % 5 === 0;
    out.push({
      type: "tool.result", id: `${prefix}-r${t}`, sessionId, callId: `${prefix}-c${t}`, toolName: toolName(t), args: { q: `x${t}` }, ts: base + t * 100,
      ...(failed ? { success: false, error: `503 Service Unavailable (${t})`, httpStatus: 503 } : { success: true, result: { ok: true } }),
    });
  }
  return out as EventInput[];
}

/** A 500-event batch of calls and results over 20 sessions (a quarter of them failing). */
function batchSource(prefix: string) {
  let n = 0;
  // Each batch spans 30 s of event time: start far enough back that the last round stays in the past.
  let clock = Date.now() - 3_600_000 - (ROUNDS * 2 * BATCHES_PER_ROUND + 10) * (BATCH / 2) * 120;
  return (): EventInput[] => {
    const out: Record<string, unknown>[] = [];
    while (out.length < BATCH) {
      const id = `${prefix}-${++n}`;
      const sessionId = `${prefix}-s${n % 20}`;
      const ts = (clock += 120);
      const tool = toolName(n % 40);
      out.push({ type: "tool.call", id: `${id}-c`, sessionId, callId: id, toolName: tool, args: { q: `v${n % 300}` }, ts });
      out.push({
        type: "tool.result", id: `${id}-r`, sessionId, callId: id, toolName: tool, args: { q: `v${n % 300}` }, ts: ts + 40,
        ...(n % 4 === 0 ? { success: false, error: "timeout after 30000 ms" } : { success: true, result: { ok: true } }),
      });
    }
    return out.slice(0, BATCH) as EventInput[];
  };
}

/** guard.check until answered: a 503 (the host too busy: the lag or capacity guard) is retried and counted. */
let refusals = 0;
async function guardCheck(app: TestApp, input: Record<string, unknown>, key: string) {
  for (let attempt = 0; ; attempt++) {
    const r = await app.mutation("guard.check", input, { key });
    if (r.status === 200) return;
    if (r.status !== 503 || attempt >= 100) throw new Error(`guard.check → ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`);
    refusals++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function scrapeBench(kind: string, database: Database) {
  const app = await TestApp.create(database);
  const ws = await app.seedWorkspace({ scope: "admin" });
  await app.seedWorkspace({ scope: "agent" }); // a second workspace: the token scrape reads both
  const t0 = performance.now();
  await seedKeys(database, ws.workspaceId);
  for (let a = 0; a < 8; a++) {
    await ingestEvents(database.db, { workspaceId: ws.workspaceId, organizationId: ws.organizationId }, toolTraffic(`${kind}-a${a}`).map((e) => ({ ...e, sessionId: `${e.sessionId}-${a}` })) as EventInput[]);
  }
  for (let t = 0; t < TOOLS; t++) {
    await guardCheck(app, { id: `${kind}-g${t}`, sessionId: `${kind}-gs${t % 20}`, callId: `g${t}`, toolName: toolName(t), args: { q: "x" } }, ws.key);
  }
  console.log(`[${kind}] seeded ${KEYS.toLocaleString("en-US")} keys over ${TOOLS} tools and their traffic in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const runtime = await createRuntime(database);
  process.env.VIGIL_METRICS_TOKEN = TOKEN;
  for (const [who, bearer] of [["admin key (its workspace)", ws.key], ["metrics token (every workspace)", TOKEN]] as const) {
    const scrape = async () => {
      const req = new Request("http://vigil.local/api/metrics", { headers: { authorization: `Bearer ${bearer}` } });
      const started = performance.now();
      const res = await handleMetrics(req, async () => runtime);
      const body = await res.text();
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`scrape → ${res.status}: ${body.slice(0, 200)}`);
      return { took, body };
    };
    for (let i = 0; i < 20; i++) await scrape(); // warm-up: JIT, plans, the key cache
    const xs: number[] = [];
    let last = "";
    for (let i = 0; i < SCRAPES; i++) {
      const { took, body } = await scrape();
      xs.push(took);
      last = body;
    }
    const series = last.split("\n").filter((l) => l && !l.startsWith("#")).length;
    const tools = new Set([...last.matchAll(/tool="([^"]*)"/g)].map((m) => m[1])).size;
    const line = `${kind}: scrape, ${who}: median ${f1(median(xs))} ms, p95 ${f1(pct(xs, 0.95))} ms (${SCRAPES} scrapes; ${series.toLocaleString("en-US")} samples, ${tools} tool labels, ${(last.length / 1024).toFixed(0)} KiB) — target ≤ ${SCRAPE_TARGET_MS} ms`;
    console.log(`  ${line}`);
    results.push(line);
  }
}

async function onOffBench(kind: string, database: Database) {
  const app = await TestApp.create(database);
  const ws = await app.seedWorkspace({ scope: "agent" });
  const scope = { workspaceId: ws.workspaceId, organizationId: ws.organizationId };
  const next = batchSource(`${kind}-onoff`);
  for (let i = 0; i < 3; i++) await ingestEvents(database.db, scope, next()); // warm-up
  for (let i = 0; i < 60; i++) {
    await guardCheck(app, { id: `${kind}-oo-w${i}`, sessionId: `${kind}-oo-s${i % 20}`, callId: `w${i}`, toolName: toolName(i % 40), args: { q: `v${i}` } }, ws.key);
  }
  const rate: Record<"on" | "off", number[]> = { on: [], off: [] };
  const guard: Record<"on" | "off", number[]> = { on: [], off: [] };
  let g = 0;
  // Alternating on/off, off/on: a drift of the host over the run falls on both sides.
  const order = Array.from({ length: ROUNDS * 2 }, (_, i) => ((i >> 1) % 2 === i % 2 ? "on" : "off") as "on" | "off");
  for (const side of order) {
    setMetricsCounting(side === "on");
    const batches = Array.from({ length: BATCHES_PER_ROUND }, () => next());
    const started = performance.now();
    for (const b of batches) await ingestEvents(database.db, scope, b);
    rate[side].push((batches.length * BATCH) / ((performance.now() - started) / 1000));
    const calls: number[] = [];
    for (let i = 0; i < 60; i++) {
      const input = { id: `${kind}-oo-g${++g}`, sessionId: `${kind}-oo-s${g % 20}`, callId: `oo${g}`, toolName: toolName(g % 40), args: { q: `v${g % 300}` } };
      const t = performance.now();
      await guardCheck(app, input, ws.key);
      calls.push(performance.now() - t);
    }
    guard[side].push(median(calls));
  }
  setMetricsCounting(true);
  const ingestRatio = median(rate.on) / median(rate.off);
  const guardRatio = median(guard.on) / median(guard.off);
  const lines = [
    `${kind}: ingest rows with counting on vs off: ${median(rate.on).toFixed(0)} vs ${median(rate.off).toFixed(0)} rows/s = ${((ingestRatio - 1) * 100).toFixed(1)} % (median of ${ROUNDS} rounds of ${BATCHES_PER_ROUND} batches each; rounds on ${spread(rate.on)}, off ${spread(rate.off)}) — budget within 5 %`,
    `${kind}: guard.check with counting on vs off: p50 ${guard.on.length ? median(guard.on).toFixed(2) : "-"} vs ${median(guard.off).toFixed(2)} ms = ${((guardRatio - 1) * 100).toFixed(1)} % (median of ${ROUNDS} rounds × 60 calls) — budget within 5 %`,
  ];
  for (const l of lines) console.log(`  ${l}`);
  results.push(...lines);
}

async function main() {
  process.env.VIGIL_ALLOW_SIGNUP ??= "true"; // TestApp signs up each workspace's owner
  console.log(`Machine: ${os.cpus().length} cores, Node ${process.version}`);
  if (!argv.includes("--no-postgres")) {
    const cluster = await startPgCluster({ durable: true });
    try {
      const database = await openDatabase({ url: cluster.url, poolSize: 10 });
      await migrateDatabase(database);
      if (!argv.includes("--no-scrape")) await scrapeBench("postgres", database);
      await onOffBench("postgres", database);
      await database.close();
    } finally {
      cluster.stop();
    }
  }
  if (!argv.includes("--no-pglite")) {
    const lite = await openDatabase({ dataDir: null });
    await migrateDatabase(lite);
    if (!argv.includes("--no-scrape")) await scrapeBench("pglite", lite);
    await onOffBench("pglite", lite);
    await lite.close();
  }
  console.log(`\nSummary (guard.check refused with 503 and retried: ${refusals}):`);
  for (const r of results) console.log(`  ${r}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
