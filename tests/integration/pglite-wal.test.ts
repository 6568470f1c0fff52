/**
 * The embedded database keeps its WAL small: single-user PostgreSQL never checkpoints by itself, so
 * Vigil checkpoints once the WAL since the last one passes PGLITE_CHECKPOINT_WAL_BYTES (the timer in
 * db/client.ts calls checkpointIfWalAbove), and min_wal_size caps the segments kept for reuse.
 * Without it pg_wal grew with everything written (~1 GB beside a 375 MB database).
 */
import { afterAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { checkpointIfWalAbove, openDatabase, rowsOf, type Database } from "@/db/client";
import { PGLITE_CHECKPOINT_WAL_BYTES, PGLITE_WAL_SETTINGS } from "@/db/pglite-data-dir";

const MiB = 2 ** 20;
const dirBytes = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? dirBytes(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);

describe("PGlite's WAL", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-wal-"));
  let database: Database | null = null;
  afterAll(async () => {
    await database?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("stays near the checkpoint threshold after writing three times as much", { timeout: 240_000 }, async () => {
    const dir = path.join(root, "data");
    database = await openDatabase({ dataDir: dir });
    const [setting] = rowsOf<{ max_wal_size: string }>(await database.db.execute(sql`show max_wal_size`));
    expect(setting.max_wal_size).toBe(PGLITE_WAL_SETTINGS.max_wal_size);
    const limit = PGLITE_CHECKPOINT_WAL_BYTES;
    let checkpoints = 0;
    await database.db.execute(sql`create table filler (id int, body text)`);
    // ~3× the threshold of WAL in statements of ~20 MB, the WAL looked at after each as the timer would.
    for (let i = 0; i < 10; i++) {
      await database.db.execute(sql`insert into filler select g, repeat(md5(g::text), 32) from generate_series(${i * 18_000}::int, ${(i + 1) * 18_000 - 1}::int) g`);
      if (await checkpointIfWalAbove(database.db)) checkpoints++;
    }
    expect(checkpoints).toBeGreaterThanOrEqual(2);
    const heap = rowsOf<{ bytes: string }>(await database.db.execute(sql`select pg_total_relation_size('filler')::text as bytes`))[0];
    expect(Number(heap.bytes)).toBeGreaterThan(2.5 * limit);
    const wal = dirBytes(path.join(dir, "pg_wal"));
    // The threshold's worth since the last checkpoint, and min_wal_size's segments kept for reuse.
    expect(wal).toBeLessThan(limit + parseInt(PGLITE_WAL_SETTINGS.min_wal_size, 10) * MiB + 16 * MiB);
  });
});
