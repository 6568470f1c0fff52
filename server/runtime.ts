/**
 * The process-wide runtime: the database (migrated) and auth, created once per process.
 * Next.js may load this module in several bundles (route handlers, server components,
 * instrumentation), so the singleton lives on globalThis.
 */
import { databaseOptionsFromEnv, migrateDatabase, openDatabase, type Database } from "@/db/client";
import { createAuth, type Auth } from "./auth";
import { limitFromEnv } from "./http/capacity";
import { lagLimitFromEnv } from "./http/event-loop-lag";
import { guardBatchSizeFromEnv } from "./ingest/guard-lean";
import { pruneAll } from "./services/retention";
import { ensureEventPartitions } from "./services/partitions";
import { keepPlannerStatistics } from "./services/planner-statistics";
import { applyHeadlessInit, checkHeadlessInitEnv, type HeadlessInitEnv } from "./headless-init";
import { otlpTimingFromEnv, startOtlpApplier } from "./otlp/applier";
import { startDeliveryWorker, workerOptionsFromEnv } from "./notifications/worker";
import { startOpenCallSweep } from "./ingest/open-call-sweep";
import { startFingerprintBackfill } from "./services/fingerprint-backfill";

export interface Runtime {
  database: Database;
  auth: Auth;
}

const globalKey = Symbol.for("vigil.runtime");
type GlobalWithRuntime = typeof globalThis & { [globalKey]?: Promise<Runtime> };

async function boot(): Promise<Runtime> {
  // Settings first: a bad value stops start-up before anything is opened.
  checkHeadlessInitEnv(process.env as HeadlessInitEnv);
  limitFromEnv(process.env.VIGIL_MAX_CONCURRENT_REQUESTS);
  lagLimitFromEnv(process.env.VIGIL_MAX_EVENT_LOOP_LAG_MS);
  guardBatchSizeFromEnv(process.env.VIGIL_GUARD_BATCH_SIZE);
  const otlpTiming = otlpTimingFromEnv();
  const database = await openDatabase(databaseOptionsFromEnv());
  await migrateDatabase(database);
  const auth = await createAuth(database.db);
  const created = await applyHeadlessInit(database.db, auth, process.env as HeadlessInitEnv);
  if (created.length) console.log(`[vigil] headless init created: ${created.join(", ")}`);
  await ensureEventPartitions(database.db).catch((err) => console.error("[vigil] event partitions:", err));
  schedulePruning(database);
  keepPlannerStatistics(database.db);
  // Applies stored OTLP traces as they settle, and whatever a previous process left unapplied.
  startOtlpApplier(database.db, otlpTiming);
  startDeliveryWorker(database.db, workerOptionsFromEnv());
  // Raises calls left without a result (hung_call, SPEC 5.1); every instance sweeps, each call is raised once.
  startOpenCallSweep(database.db);
  // Failures stored before fingerprints existed get theirs in the background, in chunks.
  startFingerprintBackfill(database.db);
  return { database, auth };
}

/** The retention pruning job: shortly after start, then hourly (idempotent across instances). */
function schedulePruning(database: Database) {
  const run = () =>
    ensureEventPartitions(database.db)
      .then(() => pruneAll(database.db))
      .then((n) => n && console.log(`[vigil] retention: pruned ${n} rows`))
      .catch((err) => console.error("[vigil] retention pruning failed:", err));
  setTimeout(run, 30_000).unref();
  setInterval(run, 3_600_000).unref();
}

export function getRuntime(): Promise<Runtime> {
  const g = globalThis as GlobalWithRuntime;
  if (!g[globalKey]) {
    g[globalKey] = boot().catch((err) => {
      g[globalKey] = undefined; // allow a retry on the next request
      throw err;
    });
  }
  return g[globalKey]!;
}

/** For tests: build a runtime around an already-open, migrated database. */
export async function createRuntime(database: Database): Promise<Runtime> {
  return { database, auth: await createAuth(database.db) };
}
