/**
 * `npm run bench -- --scale`: does every page stay fast as a fleet's history grows, and does the
 * embedded default keep agents first? Figures, not assertions (issue 69's targets printed beside).
 *
 * For each size a fresh server (the production build, scripts/serve.mjs) on its own database is
 * loaded through the API by the deterministic fleet (fleet-generator.ts: 4 writers × 500-event
 * batches over 28 days), then measured: every dashboard page × range (the median of N full GETs
 * with a signed-in session), guard.check with one client, ingest's rate while loading, bytes per
 * event; on PostgreSQL a retention prune of the oldest 7 days with a writer ingesting meanwhile;
 * on PGlite guard.check's p99 quiet and while the heaviest page (Models 30d) is loaded over and
 * over — first with statements let into PGlite in arrival order (VIGIL_PGLITE_PRIORITY=off), then
 * with agents first (db/pglite-priority.ts), on the same data directory — and the data directory's WAL.
 *
 * Flags: --scale-sizes 20k,2m (PostgreSQL; default 20k,2m; "none" skips), --scale-pglite 300k (0 skips),
 * --scale-requests 15 (per page × range), --scale-guards 300. --scale-quick: PGlite 100k alone, 3
 * requests per cell (a quick look at agents-first; the flags above still apply after it).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import postgres from "postgres";
import { startPgCluster } from "@/tests/support/pg-cluster";
import { BENCH_KEY, startVigil, type Server } from "../http-load";
// @ts-expect-error — a plain ESM script without types
import { BUILD_SOURCES, needsBuild, newestMtime } from "../../scripts/start-plan.mjs";
import { fleetGuardInput, fleetStreams } from "./fleet-generator";

const USER = { email: "scale@bench.test", password: "scale-bench-password-1" };
const SLUG = "bench";
const PAGES = ["overview", "failures", "tools", "models", "patterns", "sessions"] as const;
const DAY = 86_400_000;

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(s.trim());
  if (!m) throw new Error(`--scale-sizes: "${s}" is not a size like 20k or 2m`);
  return Math.round(Number(m[1]) * ({ "": 1, k: 1e3, m: 1e6 } as Record<string, number>)[m[2].toLowerCase()]);
}
const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
}
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "–");

/** The page × range cells: presets, and a custom three weeks ending a week ago (the slow case). */
function cells(now: number): { page: string; range: string; query: string }[] {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const custom = `from=${day(now - 28 * DAY)}&to=${day(now - 7 * DAY)}`;
  const out: { page: string; range: string; query: string }[] = [];
  for (const page of PAGES) {
    for (const r of ["24h", "7d", "30d", "all"]) out.push({ page, range: r, query: `range=${r}` });
    out.push({ page, range: "custom 3w", query: custom });
  }
  return out;
}

async function signIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify(USER),
  });
  if (!res.ok) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
  return res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
}

/** A full GET of a page (the body read to its end), ms. */
async function pageTime(url: string, cookie: string, pathAndQuery: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}${pathAndQuery}`, { headers: { cookie }, redirect: "manual" });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${pathAndQuery}: ${res.status}`);
  return performance.now() - t0;
}

/** An agent's POST; a 503 (at capacity, Retry-After) is retried as an agent would, its wait counted in the latency. */
async function agentPost(url: string, procedure: string, body: unknown): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${url}/api/trpc/${procedure}`, { method: "POST", headers: { authorization: `Bearer ${BENCH_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    if (res.status !== 503 || attempt >= 20) return res;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get("retry-after") ?? 1)));
  }
}

/** Loads the fleet through ingest.events with 4 writers; answers events/s and batch latencies. */
async function loadFleet(url: string, events: number, now: number, prefix = "fleet") {
  const streams = fleetStreams({ events, now, prefix, writers: 4 });
  const latencies: number[] = [];
  let sent = 0;
  const t0 = performance.now();
  let lastReport = t0;
  // When the first tenth of the events was acknowledged, and the last tenth began: the rates over
  // both say what a growing history costs ingest within one load (a small size's whole load is a
  // few seconds of a cold server).
  let firstTenth = null as { at: number; sent: number } | null;
  let lastTenth = null as { at: number; sent: number } | null;
  await Promise.all(
    streams.map(async (stream) => {
      for (const batch of stream) {
        const b0 = performance.now();
        const res = await agentPost(url, "ingest.events", { events: batch });
        const body = await res.text();
        if (res.status !== 200) throw new Error(`ingest.events: ${res.status} ${body.slice(0, 300)}`);
        latencies.push(performance.now() - b0);
        sent += batch.length;
        if (!firstTenth && sent >= events / 10) firstTenth = { at: performance.now(), sent };
        if (!lastTenth && sent >= (events * 9) / 10) lastTenth = { at: performance.now(), sent };
        if (performance.now() - lastReport > 15_000) {
          lastReport = performance.now();
          console.log(`    … ${label(sent)} events, ${Math.round(sent / ((lastReport - t0) / 1000))}/s`);
        }
      }
    }),
  );
  const end = performance.now();
  const seconds = (end - t0) / 1000;
  const firstTenthRate = firstTenth ? firstTenth.sent / ((firstTenth.at - t0) / 1000) : NaN;
  const lastTenthRate = lastTenth && end > lastTenth.at ? (sent - lastTenth.sent) / ((end - lastTenth.at) / 1000) : NaN;
  // The rate over the last tenth of the load: what ingest costs with the history in place.
  const tail = latencies.slice(-Math.max(4, Math.floor(latencies.length / 10)));
  return { rate: sent / seconds, p50: quantile(latencies, 0.5), tailP50: quantile(tail, 0.5), tailRate: (4 * 500) / (quantile(tail, 0.5) / 1000), firstTenthRate, lastTenthRate };
}

async function guardLatencies(url: string, n: number, prefix: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await agentPost(url, "guard.check", fleetGuardInput(prefix, i, Date.now()));
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`guard.check: ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

interface SizeResult {
  kind: "postgres" | "pglite";
  events: number;
  ingest: { rate: number; p50: number; tailP50: number; tailRate: number; firstTenthRate: number; lastTenthRate: number };
  guard: { p50: number; p99: number };
  pages: Map<string, number>;
  bytesPerEvent: number;
  prune?: { seconds: number; batchesDuring: number; batchP50: number; batchMax: number; dropped: string };
  pglite?: { arrival: GuardUnderPage; agentsFirst: GuardUnderPage; walMiB: number; dataMiB: number };
}

/** guard.check quiet and while Models 30d is loaded over and over, on one server. */
interface GuardUnderPage {
  quietP50: number;
  quietP99: number;
  busyP50: number;
  busyP99: number;
  pagesLoaded: number;
  /** The Models 30d page's median time while the agent checked. */
  pageP50: number;
}

async function guardUnderHeavyPage(url: string, cookie: string, guards: number, prefix: string): Promise<GuardUnderPage> {
  await pageTime(url, cookie, `/w/${SLUG}/models?range=30d`); // warm
  const quiet = await guardLatencies(url, guards, `${prefix}q`);
  let busy = true;
  const pageTimes: number[] = [];
  const viewer = (async () => {
    while (busy) pageTimes.push(await pageTime(url, cookie, `/w/${SLUG}/models?range=30d`));
  })();
  const loaded = await guardLatencies(url, guards, `${prefix}b`);
  busy = false;
  await viewer;
  return { quietP50: quantile(quiet, 0.5), quietP99: quantile(quiet, 0.99), busyP50: quantile(loaded, 0.5), busyP99: quantile(loaded, 0.99), pagesLoaded: pageTimes.length, pageP50: quantile(pageTimes, 0.5) };
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return total;
}

async function measurePages(server: Server, cookie: string, now: number, requests: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const c of cells(now)) {
    const p = `/w/${SLUG}/${c.page}?${c.query}`;
    await pageTime(server.url, cookie, p); // warm: the first render of a route compiles nothing, but fills caches
    const times: number[] = [];
    for (let i = 0; i < requests; i++) times.push(await pageTime(server.url, cookie, p));
    out.set(`${c.page}|${c.range}`, quantile(times, 0.5));
  }
  return out;
}

const serverEnv = { VIGIL_INIT_USER_EMAIL: USER.email, VIGIL_INIT_USER_PASSWORD: USER.password, VIGIL_RATE_LIMIT_PER_MINUTE: "0" };

async function runPostgresSize(clusterUrl: string, events: number, opts: { requests: number; guards: number }): Promise<SizeResult> {
  const dbName = `scale_${label(events).toLowerCase().replace(".", "_")}`;
  const admin = postgres(clusterUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${dbName}`);
  await admin.unsafe(`create database ${dbName}`);
  await admin.end();
  const url = clusterUrl.replace(/\/[^/?]+(\?|$)/, `/${dbName}$1`);
  const server = await startVigil({ databaseUrl: url, env: serverEnv });
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  try {
    const now = Date.now() - 10 * 60_000;
    console.log(`\n[postgres ${label(events)}] loading the fleet through ingest.events…`);
    const ingest = await loadFleet(server.url, events, now);
    console.log(`  ingest ${Math.round(ingest.rate)} events/s, batch p50 ${f1(ingest.p50)} ms`);
    await sql`analyze`;
    const cookie = await signIn(server.url);
    const g = await guardLatencies(server.url, opts.guards, `g-${events}`);
    const pages = await measurePages(server, cookie, now, opts.requests);
    const [{ bytes }] = await sql<{ bytes: string }[]>`select pg_database_size(current_database())::text as bytes`;
    // Retention: keep 21 of the 28 days (the oldest 7 pruned) while one writer keeps ingesting.
    const res = await agentPost(server.url, "config.put", { retention_days: 21 });
    if (res.status !== 200) throw new Error(`config.put: ${res.status} ${await res.text()}`);
    const { openDatabase } = await import("@/db/client");
    const { pruneAll } = await import("@/server/services/retention");
    const database = await openDatabase({ url, poolSize: 2 });
    let pruning = true;
    const during: number[] = [];
    const writer = (async () => {
      const live = fleetStreams({ events: 1e9, now: Date.now(), days: 0.01, prefix: `live-${events}`, writers: 1 })[0];
      for (const batch of live) {
        if (!pruning) break;
        const b0 = performance.now();
        const r = await agentPost(server.url, "ingest.events", { events: batch });
        await r.arrayBuffer();
        if (pruning) during.push(performance.now() - b0);
      }
    })();
    const p0 = performance.now();
    await pruneAll(database.db, Date.now());
    const pruneSeconds = (performance.now() - p0) / 1000;
    pruning = false;
    await writer;
    await database.close();
    return {
      kind: "postgres",
      events,
      ingest,
      guard: { p50: quantile(g, 0.5), p99: quantile(g, 0.99) },
      pages,
      bytesPerEvent: Number(bytes) / events,
      prune: { seconds: pruneSeconds, batchesDuring: during.length, batchP50: quantile(during, 0.5), batchMax: during.length ? Math.max(...during) : NaN, dropped: "7 days" },
    };
  } finally {
    await sql.end();
    await server.stop();
  }
}

async function runPgliteSize(events: number, opts: { requests: number; guards: number }): Promise<SizeResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-scale-pglite-"));
  const env = { ...serverEnv, VIGIL_DATA_DIR: path.join(dataDir, "data") };
  // Statements in arrival order first (the server restarted on the same data directory), then agents first.
  let server = await startVigil({ env: { ...env, VIGIL_PGLITE_PRIORITY: "off" } });
  try {
    const now = Date.now() - 10 * 60_000;
    console.log(`\n[pglite ${label(events)}] loading the fleet through ingest.events…`);
    const ingest = await loadFleet(server.url, events, now);
    console.log(`  ingest ${Math.round(ingest.rate)} events/s, batch p50 ${f1(ingest.p50)} ms`);
    const arrival = await guardUnderHeavyPage(server.url, await signIn(server.url), opts.guards, `ga-${events}`);
    console.log(`  arrival order: guard.check p50/p99 quiet ${f1(arrival.quietP50)} / ${f1(arrival.quietP99)} ms, Models 30d loading ${f1(arrival.busyP50)} / ${f1(arrival.busyP99)} ms (${arrival.pagesLoaded} pages, p50 ${f1(arrival.pageP50)} ms)`);
    await server.stop();
    server = await startVigil({ env });
    const cookie = await signIn(server.url);
    const agentsFirst = await guardUnderHeavyPage(server.url, cookie, opts.guards, `gf-${events}`);
    console.log(`  agents first:  guard.check p50/p99 quiet ${f1(agentsFirst.quietP50)} / ${f1(agentsFirst.quietP99)} ms, Models 30d loading ${f1(agentsFirst.busyP50)} / ${f1(agentsFirst.busyP99)} ms (${agentsFirst.pagesLoaded} pages, p50 ${f1(agentsFirst.pageP50)} ms)`);
    const pages = await measurePages(server, cookie, now, opts.requests);
    const dir = path.join(dataDir, "data");
    const walMiB = dirBytes(path.join(dir, "pg_wal")) / 2 ** 20;
    const total = dirBytes(dir);
    return {
      kind: "pglite",
      events,
      ingest,
      guard: { p50: agentsFirst.quietP50, p99: agentsFirst.quietP99 },
      pages,
      bytesPerEvent: (total - dirBytes(path.join(dir, "pg_wal"))) / events,
      pglite: { arrival, agentsFirst, walMiB, dataMiB: (total / 2 ** 20) - walMiB },
    };
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function ensureBuild() {
  const builtAt = fs.existsSync(".next/BUILD_ID") ? fs.statSync(".next/BUILD_ID").mtimeMs : 0;
  const changedAt = Math.max(...(BUILD_SOURCES as string[]).map((s) => newestMtime(s)));
  if (!needsBuild({ builtAt, changedAt, skip: false })) return;
  console.log("Building the production app (next build): the build is missing or older than the sources…");
  const r = spawnSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (r.status !== 0) throw new Error("next build failed");
}

function printResults(results: SizeResult[]) {
  const cols = results.map((r) => `${r.kind === "postgres" ? "PG" : "PGlite"} ${label(r.events)}`);
  const table = (head: string[], rows: string[][]) => {
    const w = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i].length)));
    const line = (r: string[]) => "| " + r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join(" | ") + " |";
    console.log(line(head));
    console.log("| " + w.map((x, i) => (i === 0 ? "-".repeat(x) : "-".repeat(x - 1) + ":")).join(" | ") + " |");
    for (const r of rows) console.log(line(r));
  };
  const pg = results.filter((r) => r.kind === "postgres");
  const ratio = pg.length >= 2 ? (key: string) => pg[pg.length - 1].pages.get(key)! / pg[0].pages.get(key)! : null;
  console.log("\nPage × range, time_total median ms (target at the largest PostgreSQL size: within 2× of the smallest, or under 150 ms):\n");
  const keys = [...results[0].pages.keys()];
  table(["page × range", ...cols, ...(ratio ? ["PG largest ÷ smallest"] : [])], keys.map((k) => {
    const over = ratio && ratio(k) > 2 && pg[pg.length - 1].pages.get(k)! >= 150 ? " ✗" : "";
    return [k.replace("|", " "), ...results.map((r) => f1(r.pages.get(k)!)), ...(ratio ? [ratio(k).toFixed(2) + over] : [])];
  }));
  console.log("\nPer size:\n");
  table(["measurement", ...cols], [
    ["ingest while loading, events/s (4 writers × 500)", ...results.map((r) => String(Math.round(r.ingest.rate)))],
    ["ingest events/s over the load's first / last tenth (last ÷ first)", ...results.map((r) => `${Math.round(r.ingest.firstTenthRate)} / ${Math.round(r.ingest.lastTenthRate)} (${(r.ingest.lastTenthRate / r.ingest.firstTenthRate).toFixed(2)})`)],
    ["ingest batch p50 over the whole load / last tenth, ms", ...results.map((r) => `${f1(r.ingest.p50)} / ${f1(r.ingest.tailP50)}`)],
    ["guard.check one client p50 / p99, ms", ...results.map((r) => `${f1(r.guard.p50)} / ${f1(r.guard.p99)}`)],
    ["bytes per event (database, WAL aside)", ...results.map((r) => String(Math.round(r.bytesPerEvent)))],
    ["retention prune of 7 days, s", ...results.map((r) => (r.prune ? f1(r.prune.seconds) : "–"))],
    ["ingest during the prune: batches, p50 / max ms", ...results.map((r) => (r.prune ? `${r.prune.batchesDuring}, ${f1(r.prune.batchP50)} / ${f1(r.prune.batchMax)}` : "–"))],
    ...(["arrival", "agentsFirst"] as const).flatMap((order) => {
      const name = order === "arrival" ? "statements in arrival order" : "agents first";
      const of = (r: SizeResult) => r.pglite?.[order];
      return [
        [`PGlite ${name}: guard.check p50 / p99 quiet, ms`, ...results.map((r) => (of(r) ? `${f1(of(r)!.quietP50)} / ${f1(of(r)!.quietP99)}` : "–"))],
        [`PGlite ${name}: guard.check p50 / p99, Models 30d loading, ms`, ...results.map((r) => (of(r) ? `${f1(of(r)!.busyP50)} / ${f1(of(r)!.busyP99)}` : "–"))],
        [`PGlite ${name}: Models 30d pages loaded meanwhile, p50 ms`, ...results.map((r) => (of(r) ? `${of(r)!.pagesLoaded}, ${f1(of(r)!.pageP50)}` : "–"))],
      ];
    }),
    ["PGlite data / pg_wal, MiB", ...results.map((r) => (r.pglite ? `${f1(r.pglite.dataMiB)} / ${f1(r.pglite.walMiB)}` : "–"))],
  ]);
}

export async function runScaleBench(argv: string[]) {
  const opt = (name: string, def: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : def;
  };
  const quick = argv.includes("--scale-quick");
  const sizes = opt("scale-sizes", quick ? "none" : "20k,2m").split(",").filter((s) => s && s !== "none").map(parseSize);
  const pgliteSize = parseSize(opt("scale-pglite", quick ? "100k" : "300k"));
  const requests = Number(opt("scale-requests", quick ? "3" : "15"));
  const guards = Number(opt("scale-guards", "300"));
  console.log(`Scale bench: PostgreSQL ${sizes.map(label).join(", ")}; PGlite ${pgliteSize ? label(pgliteSize) : "off"}; ${requests} requests per page × range. Machine: ${os.cpus().length} cores, Node ${process.version}`);
  ensureBuild();
  const results: SizeResult[] = [];
  if (sizes.length) {
    const cluster = await startPgCluster({ durable: true });
    try {
      for (const n of sizes) {
        results.push(await runPostgresSize(cluster.url, n, { requests, guards }));
        printResults(results);
      }
    } finally {
      cluster.stop();
    }
  }
  if (pgliteSize) results.push(await runPgliteSize(pgliteSize, { requests, guards }));
  printResults(results);
}
