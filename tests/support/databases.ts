/**
 * Real databases for integration tests: each call gives a fresh, migrated database of the asked kind.
 * PGlite runs in memory; PostgreSQL clones the template database migrated by the global setup;
 * Citus creates a database on the throwaway coordinator and workers and runs Vigil's migrations,
 * which distribute the tables (db/citus.ts).
 */
import { inject } from "vitest";
import postgres from "postgres";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrateDatabase, openDatabase, type Database } from "@/db/client";
import { createCitusDatabase } from "./citus-cluster";
import { selectedDatabaseKinds, type DatabaseKind } from "./database-kinds";

export type { DatabaseKind };
export const DATABASE_KINDS: readonly DatabaseKind[] = selectedDatabaseKinds();

/**
 * `migratedUpTo`: the tag of the last migration to run (a database as an earlier release left it),
 * instead of all the committed ones; `migrateDatabase` brings it up to date afterwards.
 */
export async function createTestDatabase(kind: DatabaseKind, opts: { migratedUpTo?: string } = {}): Promise<Database> {
  const folder = opts.migratedUpTo ? migrationsUpTo(opts.migratedUpTo) : undefined;
  try {
    return await createMigrated(kind, folder);
  } finally {
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  }
}

async function createMigrated(kind: DatabaseKind, migrations: string | undefined): Promise<Database> {
  if (kind === "pglite") {
    const db = await openDatabase({ dataDir: null });
    await migrateDatabase(db, migrations);
    return db;
  }
  if (kind === "citus") {
    const cluster = inject("citusCluster");
    const citus = await createCitusDatabase(cluster);
    const db = await openDatabase({ url: citus.url, poolSize: 12 });
    await migrateDatabase(db, migrations);
    const close = db.close;
    return { ...db, close: async () => (await close(), await citus.drop()) };
  }
  const adminUrl = inject("pgAdminUrl");
  const name = `vigil_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name} template ${migrations ? "template0" : "vigil_template"}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), poolSize: 12 });
  if (migrations) await migrateDatabase(db, migrations);
  const close = db.close;
  return {
    ...db,
    close: async () => {
      await close();
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

/** A copy of the committed migrations up to and including `last`. */
function migrationsUpTo(last: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-migrations-"));
  fs.cpSync("drizzle", dir, { recursive: true });
  const journalPath = path.join(dir, "meta", "_journal.json");
  const journal = JSON.parse(fs.readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
  const upTo = journal.entries.findIndex((e) => e.tag === last);
  if (upTo < 0) throw new Error(`no migration ${last}`);
  journal.entries = journal.entries.slice(0, upTo + 1);
  fs.writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}
