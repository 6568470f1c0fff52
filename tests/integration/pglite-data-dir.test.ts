/**
 * db/pglite-data-dir.ts: a new PGlite data directory is made by a child process and renamed into
 * place, and PGlite runs with the configured buffer pool. (What it saves, the server's memory, is a
 * figure of `npm run bench`.)
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { migrateDatabase, openDatabase, rowsOf, type Database } from "@/db/client";
import { prepareDataDir } from "@/db/pglite-data-dir";
import { sql } from "drizzle-orm";

const setting = async (database: Database, name: string) => rowsOf<{ v: string }>(await database.db.execute(sql.raw(`select current_setting('${name}') as v`)))[0].v;

describe("the embedded database's data directory", () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-datadir-"));
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("is made by a child process when missing, renamed into place, then found", async () => {
    const dir = path.join(root, "nested", "data");
    // What a start killed while making it leaves behind.
    fs.mkdirSync(path.join(root, "nested", "data.making-99999", "base"), { recursive: true });
    expect(await prepareDataDir(dir)).toBe("made");
    expect(fs.readFileSync(path.join(dir, "PG_VERSION"), "utf8").trim()).toMatch(/^\d+$/);
    // Nothing half-made beside it.
    expect(fs.readdirSync(path.dirname(dir))).toEqual(["data"]);
    expect(await prepareDataDir(dir)).toBe("found");
  });

  it("is made into an empty directory; a directory holding something else is left to PGlite", async () => {
    const empty = path.join(root, "empty");
    fs.mkdirSync(empty);
    expect(await prepareDataDir(empty)).toBe("made");
    expect(fs.existsSync(path.join(empty, "PG_VERSION"))).toBe(true);

    const other = path.join(root, "other");
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, "notes.txt"), "not a database");
    expect(await prepareDataDir(other)).toBe("left-to-pglite");
    expect(fs.readdirSync(other)).toEqual(["notes.txt"]);
  });

  it("left as found when the child fails (absent, or empty), and then made by PGlite in this process", async () => {
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `--require ${path.join(root, "no-such-preload.cjs")}`; // the child cannot start
    try {
      const absent = path.join(root, "absent");
      expect(await prepareDataDir(absent)).toBe("left-to-pglite");
      expect(fs.readdirSync(root)).toEqual([]);
      const empty = path.join(root, "empty");
      fs.mkdirSync(empty);
      expect(await prepareDataDir(empty)).toBe("left-to-pglite");
      expect(fs.readdirSync(empty)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
    const database = await openDatabase({ dataDir: path.join(root, "absent") });
    try {
      expect(await setting(database, "shared_buffers")).toBe("32MB");
    } finally {
      await database.close();
    }
  });

  it("opens with the buffer pool asked for, migrates, and keeps its rows across a reopen", async () => {
    const dir = path.join(root, "data");
    const first = await openDatabase({ dataDir: dir, sharedBuffers: "16MB" });
    try {
      expect(await setting(first, "shared_buffers")).toBe("16MB");
      await migrateDatabase(first);
      await first.db.execute(sql`insert into organization (id, name) values ('o1', 'Org')`);
    } finally {
      await first.close();
    }
    const again = await openDatabase({ dataDir: dir });
    try {
      expect(await setting(again, "shared_buffers")).toBe("32MB");
      expect(rowsOf<{ name: string }>(await again.db.execute(sql`select name from organization where id = 'o1'`))).toEqual([{ name: "Org" }]);
    } finally {
      await again.close();
    }
  });

  it("runs an in-memory database with the default buffer pool", async () => {
    const memory = await openDatabase({ dataDir: null });
    try {
      expect(await setting(memory, "shared_buffers")).toBe("32MB");
    } finally {
      await memory.close();
    }
  });
});
