/**
 * `npx tsx bench/scale/explain-pages.ts <postgres-url> [--load 300k] [--workspace <id>] [--full]`:
 * `EXPLAIN (ANALYZE, BUFFERS)` of every query each dashboard page's read models send, for each
 * range (24h, 7d, 30d, all, a custom three weeks ending a week ago). The queries are the read
 * models' own (server/dashboard/), captured as they are sent, then explained with their parameters.
 *
 * --load N: first migrates the database and loads N events of the deterministic fleet
 * (fleet-generator.ts) through the ingest path (ingestEvents, in process) into a new workspace.
 * Without --workspace the workspace with the most failures is explained. Prints each query's plan
 * trimmed to its top lines and its execution time and shared buffers; --full prints whole plans.
 */
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import * as schema from "@/db/schema";
import type { Db } from "@/db/client";
import { fleetStreams } from "./fleet-generator";

const DAY = 86_400_000;
const args = process.argv.slice(2);
const url = args.find((a) => /^postgres(ql)?:\/\//.test(a));
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const full = args.includes("--full");
if (!url) {
  console.error("usage: npx tsx bench/scale/explain-pages.ts <postgres-url> [--load 300k] [--workspace <id>] [--full]");
  process.exit(2);
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(s.trim());
  if (!m) throw new Error(`"${s}" is not a size like 300k`);
  return Math.round(Number(m[1]) * ({ "": 1, k: 1e3, m: 1e6 } as Record<string, number>)[m[2].toLowerCase()]);
}

async function load(events: number): Promise<string> {
  const { openDatabase, migrateDatabase } = await import("@/db/client");
  const { createOrganization, createWorkspace } = await import("@/server/services/tenancy");
  const { ingestEvents } = await import("@/server/ingest/index");
  const { SYSTEM_ACTOR } = await import("@/server/services/audit");
  const database = await openDatabase({ url, poolSize: 4 });
  await migrateDatabase(database);
  const db = database.db;
  // Daily partitions for the fleet's 28 days, as a running server keeps them (else the default one).
  const { ensureEventPartitions } = await import("@/server/services/partitions");
  await ensureEventPartitions(db);
  const userId = `explain-${Date.now()}`;
  await db.insert(schema.user).values({ id: userId, name: "explain", email: `${userId}@bench.test` });
  const org = await createOrganization(db, { name: "Explain", ownerUserId: userId, actor: SYSTEM_ACTOR });
  const ws = await createWorkspace(db, { organizationId: org.id, slug: `explain-${Date.now().toString(36)}`, actor: SYSTEM_ACTOR });
  const now = Date.now() - 10 * 60_000;
  const t0 = performance.now();
  let done = 0;
  await Promise.all(
    fleetStreams({ events, now, prefix: ws.id.slice(0, 8) }).map(async (stream) => {
      for (const batch of stream) {
        await ingestEvents(db, { workspaceId: ws.id, organizationId: org.id }, batch);
        done += batch.length;
        if (done % 50_000 < batch.length) console.error(`  loaded ${done} events (${Math.round(done / ((performance.now() - t0) / 1000))}/s)`);
      }
    }),
  );
  await db.execute(sql`analyze`);
  await database.close();
  return ws.id;
}

interface Captured {
  query: string;
  params: unknown[];
}

async function main() {
  const workspaceFlag = flag("--workspace");
  const loadFlag = flag("--load");
  const loaded = loadFlag ? await load(parseSize(loadFlag)) : undefined;
  let capturing: Captured[] | null = null;
  const pg = postgres(url!, {
    max: 1,
    onnotice: () => {},
    debug: (_c, query, params) => {
      if (capturing && !/^\s*explain/i.test(query)) capturing.push({ query, params: params as unknown[] });
    },
  });
  const db = drizzle(pg, { schema }) as unknown as Db;
  const [{ id: workspaceId, events }] = workspaceFlag
    ? await pg<{ id: string; events: string }[]>`select ${workspaceFlag}::text as id, (select count(*) from event where workspace_id = ${workspaceFlag})::text as events`
    : loaded
      ? await pg<{ id: string; events: string }[]>`select ${loaded}::text as id, (select count(*) from event where workspace_id = ${loaded})::text as events`
      : await pg<{ id: string; events: string }[]>`select workspace_id as id, count(*)::text as events from event group by 1 order by 2 desc limit 1`;
  const [{ last }] = await pg<{ last: Date }[]>`select coalesce(max(ts), now()) as last from event where workspace_id = ${workspaceId}`;
  const now = new Date(new Date(last).getTime() + 60_000);
  console.log(`workspace ${workspaceId}: ${events} events; now = ${now.toISOString()}`);

  const { getFailureRateSeries, getLiveCounts, getTopFailingKeys } = await import("@/server/dashboard/overview");
  const { listFailures, listFailureGroups } = await import("@/server/dashboard/failures");
  const { listKeys, countKeysByState } = await import("@/server/dashboard/tools");
  const { modelMatrix, patternStats, recentSuggestions } = await import("@/server/dashboard/patterns-data");
  const { listSessions } = await import("@/server/dashboard/sessions-data");
  const { windowDays } = await import("@/server/dashboard/time-range");

  const day = (ms: number) => new Date(Math.floor(ms / DAY) * DAY);
  const ranges: Array<[string, { from?: Date; to?: Date }]> = [
    ["24h", { from: new Date(now.getTime() - DAY) }],
    ["7d", { from: new Date(now.getTime() - 7 * DAY) }],
    ["30d", { from: new Date(now.getTime() - 30 * DAY) }],
    ["all", {}],
    ["custom 3w", { from: day(now.getTime() - 28 * DAY), to: day(now.getTime() - 7 * DAY) }],
  ];
  const pages: Record<string, (w: { from?: Date; to?: Date }) => Promise<unknown>> = {
    overview: (w) =>
      Promise.all([
        getLiveCounts(db, workspaceId, now),
        getFailureRateSeries(db, workspaceId, windowDays({ range: "custom", label: "", ...w }, now, { fallbackDays: 28 }), now),
        getTopFailingKeys(db, workspaceId, 8, w),
      ]),
    failures: async (w) => {
      const first = await listFailures(db, workspaceId, { ...w, pageSize: 50 });
      await listFailureGroups(db, workspaceId, { ...w, withDaily: true, now });
      // A deep page: the cursor of the row 2,500 pages in is one index probe away.
      const [deep] = await pg<{ ts: Date; id: string }[]>`select ts, id::text from failure where workspace_id = ${workspaceId} order by ts desc, id desc offset 2500 limit 1`;
      if (deep) await listFailures(db, workspaceId, { ...w, pageSize: 50, after: `${new Date(deep.ts).toISOString()}_${deep.id}` });
      return first;
    },
    tools: (w) => Promise.all([listKeys(db, workspaceId, { window: w, pageSize: 50 }), countKeysByState(db, workspaceId, w)]),
    models: (w) => Promise.all([modelMatrix(db, workspaceId, 12, w), recentSuggestions(db, workspaceId, 50, w)]),
    patterns: (w) =>
      patternStats(db, { workspaceId, days: windowDays({ range: "custom", label: "", ...w }, now, { fallbackDays: 28 }), from: w.from ?? new Date(now.getTime() - 28 * DAY), to: w.to, now: now.getTime() }),
    sessions: (w) => listSessions(db, { workspaceId, page: 1, pageSize: 50, from: w.from, to: w.to } as Parameters<typeof listSessions>[1]),
  };

  const only = flag("--page");
  for (const [page, run] of Object.entries(pages)) {
    if (only && only !== page) continue;
    for (const [range, w] of ranges) {
      capturing = [];
      const t0 = performance.now();
      await run(w);
      const wall = performance.now() - t0;
      const queries = capturing;
      capturing = null;
      console.log(`\n=== ${page} · ${range}: ${queries.length} queries, ${wall.toFixed(1)} ms as the page runs them`);
      for (const q of queries) {
        const plan = (await pg.unsafe(`explain (analyze, buffers) ${q.query}`, q.params as never[])).map((r) => (r as Record<string, string>)["QUERY PLAN"]);
        const exec = plan.find((l) => l.startsWith("Execution Time"));
        const buffers = plan.find((l) => /Buffers:/.test(l))?.trim();
        console.log(`--- ${q.query.replace(/\s+/g, " ").slice(0, 140)}`);
        console.log(`    ${exec ?? ""}${buffers ? ` · top ${buffers}` : ""}`);
        for (const l of full ? plan : plan.slice(0, 6)) console.log(`    ${l}`);
      }
    }
  }
  await pg.end({ timeout: 5 });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
