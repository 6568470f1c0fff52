/**
 * `npx tsx bench/compare.ts --against <checkout>` — this checkout's production build beside another
 * one's (an earlier commit, built with `next build`), under the same fleet load, in one run: the
 * question "is it slower than before?" answered on a shared machine, where figures from two runs
 * cannot be compared.
 *
 * Both servers run at once, each on its own database (two databases of one throwaway PostgreSQL
 * cluster, durable as in production; with --pglite each its own embedded data directory), and are
 * measured in turns — before, after, after, before, … — so a drift of the host falls on both. Per
 * round: guard.check with 64 concurrent sessions (answers per second), guard.check with one client
 * (p50), and ingest.events with 4 writers posting 500-event batches (events per second). The figure
 * is the median of each round's after/before ratio.
 *
 * Flags: --against <dir> (required), --rounds <n> (4 per side), --seconds <n> (4, per load step),
 * --pglite (the embedded database instead of PostgreSQL).
 */
import { performance } from "node:perf_hooks";
import fs from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { startPgCluster } from "@/tests/support/pg-cluster";
import { BENCH_KEY, closedLoop, startVigil, summarize, type Server } from "./http-load";
import { BATCH_SIZE, guardSpec, workload } from "./workloads";

const argv = process.argv.slice(2);
const option = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const against = option("against");
const ROUNDS = Number(option("rounds") ?? 4);
const SECONDS = Number(option("seconds") ?? 4);
const embedded = argv.includes("--pglite");
const WRITERS = 4;
const BATCHES_PER_WRITER = 4;

type Side = "before" | "after";
interface Round {
  /** Answers other than 200, e.g. "503 ×12" (printed: a refusal is not a fast answer). */
  refused: string;
  guard64: number;
  guardOneP50: number;
  ingest: number;
}

async function ingestPass(server: Server, prefix: string): Promise<number> {
  const batches = Array.from({ length: WRITERS }, (_, w) => {
    const next = workload(`${prefix}-w${w}`);
    return Array.from({ length: BATCHES_PER_WRITER }, () => next());
  });
  const t0 = performance.now();
  await Promise.all(
    batches.map(async (writer) => {
      for (const events of writer) {
        const res = await fetch(`${server.url}/api/trpc/ingest.events`, {
          method: "POST",
          headers: { authorization: `Bearer ${BENCH_KEY}`, "content-type": "application/json" },
          body: JSON.stringify({ events }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`ingest.events → ${res.status} on ${prefix}`);
      }
    }),
  );
  return (WRITERS * BATCHES_PER_WRITER * BATCH_SIZE) / ((performance.now() - t0) / 1000);
}

async function measure(server: Server, prefix: string): Promise<Round> {
  const many = summarize(await closedLoop(server.url, guardSpec(`${prefix}-g64`), 64, SECONDS));
  const one = summarize(await closedLoop(server.url, guardSpec(`${prefix}-g1`, 1), 1, Math.max(2, SECONDS / 2)));
  const ingest = await ingestPass(server, `${prefix}-i`);
  const refused = [many, one].map((x) => x.byStatus).filter((x) => !/^200×\d+$/.test(x)).join(", ");
  return { refused, guard64: many.okPerSecond, guardOneP50: one.p50, ingest };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (v: number, digits = 0) => v.toFixed(digits);

async function main() {
  if (!against || !fs.existsSync(path.join(against, ".next", "BUILD_ID"))) {
    console.error("--against <dir>: a checkout with a production build (run `npx next build` in it first)");
    process.exit(2);
  }
  const cluster = embedded ? null : await startPgCluster({ durable: true });
  const servers: Partial<Record<Side, Server>> = {};
  try {
    const urlOf = async (side: Side) => {
      if (!cluster) return undefined;
      const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${side}`);
      await admin.end();
      return cluster.url.replace(/\/postgres$/, `/${side}`);
    };
    servers.before = await startVigil({ databaseUrl: await urlOf("before"), root: path.resolve(against) });
    servers.after = await startVigil({ databaseUrl: await urlOf("after") });
    console.log(`before: ${path.resolve(against)}; after: ${process.cwd()}; ${embedded ? "PGlite" : "PostgreSQL"}; ${ROUNDS} rounds per side of ${SECONDS} s per step`);
    for (const side of ["before", "after"] as const) {
      await closedLoop(servers[side]!.url, guardSpec(`${side}-warm`), 8, 2); // caches, pools, the first JIT tiers
      await ingestPass(servers[side]!, `${side}-warm`);
    }
    const results: Record<Side, Round[]> = { before: [], after: [] };
    for (let r = 0; r < ROUNDS; r++) {
      // before, after in even rounds; after, before in odd ones.
      const order: Side[] = r % 2 === 0 ? ["before", "after"] : ["after", "before"];
      for (const side of order) results[side].push(await measure(servers[side]!, `${side}-r${r}`));
      const b = results.before[r];
      const a = results.after[r];
      console.log(
        `  round ${r + 1}: guard.check 64 sessions ${f(b.guard64)} → ${f(a.guard64)}/s; one client p50 ${f(b.guardOneP50, 2)} → ${f(a.guardOneP50, 2)} ms; ingest ${f(b.ingest)} → ${f(a.ingest)} events/s${b.refused || a.refused ? ` (not 200: before ${b.refused || "none"}, after ${a.refused || "none"})` : ""}`,
      );
    }
    const ratio = (pick: (x: Round) => number) => results.after.map((a, i) => pick(a) / pick(results.before[i]));
    const rows: [string, number[], string][] = [
      ["guard.check, 64 sessions (answers/s)", ratio((x) => x.guard64), "≥ 1 is not slower"],
      ["guard.check, one client (p50 ms)", ratio((x) => x.guardOneP50), "≤ 1 is not slower"],
      ["ingest.events, 4 writers (events/s)", ratio((x) => x.ingest), "≥ 1 is not slower"],
    ];
    console.log("\n| measure | after / before, median of rounds | rounds | reading |\n| --- | --- | --- | --- |");
    for (const [label, xs, reading] of rows) console.log(`| ${label} | ${f(median(xs), 3)}× | ${xs.map((x) => f(x, 2)).join(" / ")} | ${reading} |`);
  } finally {
    await Promise.all(Object.values(servers).map((s) => s?.stop()));
    cluster?.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
