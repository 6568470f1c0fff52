/**
 * A throwaway Citus cluster for a test or bench run: a coordinator and two workers, each a
 * throwaway PostgreSQL cluster (pg-cluster.ts) preloading the extension, which is built from the
 * vendored release source when missing (VIGIL_CITUS_BUILD, default ../shared/vendor/citus/build.sh
 * from the repository root). Databases are created on all three nodes and joined into a cluster.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { startPgCluster, type PgCluster } from "./pg-cluster";

export interface CitusCluster {
  /** Admin URLs (database `postgres`) of the coordinator and the workers. */
  coordinatorUrl: string;
  workerUrls: string[];
  stop(): void;
}

const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

/** Builds and installs Citus for the server binaries when citus.so is not there yet (idempotent). */
export function ensureCitusInstalled(): void {
  const pgConfig = fs.existsSync("/usr/lib/postgresql") ? findPgConfig() : null;
  if (pgConfig) {
    const libDir = execFileSync(pgConfig, ["--pkglibdir"], { encoding: "utf8" }).trim();
    if (fs.existsSync(path.join(libDir, "citus.so"))) return;
  }
  const script = path.resolve(REPO_ROOT, process.env.VIGIL_CITUS_BUILD ?? "../shared/vendor/citus/build.sh");
  if (!fs.existsSync(script)) throw new Error(`Citus is not installed and its build script is missing: ${script} (set VIGIL_CITUS_BUILD)`);
  console.log(`[citus] building the extension with ${script} (a few minutes, once)`);
  execFileSync("bash", [script], { stdio: "inherit" });
}

function findPgConfig(): string | null {
  const versions = fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const p = path.join("/usr/lib/postgresql", v, "bin", "pg_config");
    if (fs.existsSync(p)) return p;
  }
  return null;
}

export interface CitusClusterOptions {
  /**
   * Shards per distributed table (citus.shard_count). Tests use 8, which keeps a test database
   * quick to create with the real layout (hash ranges over both workers); Citus's default is 32.
   */
  shardCount?: number;
}

export async function startCitusCluster(options: CitusClusterOptions = {}): Promise<CitusCluster> {
  ensureCitusInstalled();
  const settings = {
    shared_preload_libraries: "citus",
    "citus.shard_count": String(options.shardCount ?? 8),
    // Citus commits multi-node transactions (reference tables) with two-phase commit.
    max_prepared_transactions: "100",
    // Online shard moves (citus_move_shard_placement, citus_rebalance_start) replicate logically.
    wal_level: "logical",
  };
  const nodes: PgCluster[] = [];
  try {
    for (let i = 0; i < 3; i++) nodes.push(await startPgCluster({ settings }));
  } catch (err) {
    for (const n of nodes) n.stop();
    throw err;
  }
  return {
    coordinatorUrl: nodes[0].url,
    workerUrls: nodes.slice(1).map((n) => n.url),
    stop: () => nodes.forEach((n) => n.stop()),
  };
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function onNode<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export interface CitusDatabase {
  /** URL of the database on the coordinator (what Vigil connects to). */
  url: string;
  /** URLs of the same database on each worker. */
  workerUrls: string[];
  drop(): Promise<void>;
}

/**
 * A new, empty database on every node with the extension created and the workers added to the
 * coordinator's metadata — what a managed Citus gives an operator. Vigil's migrations do the rest.
 */
export async function createCitusDatabase(cluster: Pick<CitusCluster, "coordinatorUrl" | "workerUrls">, name = `vigil_citus_${randomBytes(6).toString("hex")}`): Promise<CitusDatabase> {
  const all = [cluster.coordinatorUrl, ...cluster.workerUrls];
  for (const url of all) {
    await onNode(url, (sql) => sql.unsafe(`create database ${name}`));
    await onNode(withDatabase(url, name), (sql) => sql`create extension citus`);
  }
  const url = withDatabase(cluster.coordinatorUrl, name);
  await onNode(url, async (sql) => {
    const c = new URL(cluster.coordinatorUrl);
    await sql`select citus_set_coordinator_host(${c.hostname}, ${Number(c.port)})`;
    for (const w of cluster.workerUrls) {
      const u = new URL(w);
      await sql`select citus_add_node(${u.hostname}, ${Number(u.port)})`;
    }
  });
  return {
    url,
    workerUrls: cluster.workerUrls.map((w) => withDatabase(w, name)),
    async drop() {
      for (const u of all) await onNode(u, (sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
    },
  };
}
