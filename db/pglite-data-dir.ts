/**
 * The embedded database's memory: where its data directory is made, and how large its buffer pool is.
 *
 * PGlite makes a new cluster (initdb) in a WebAssembly instance whose memory the process then keeps.
 * A production server that made its own data directory stayed at ~850 MiB RSS idle for the rest of
 * its life, against ~400 MiB for one that found the directory made (measured on the production
 * build). A new directory is therefore made by a short-lived child process (prepareDataDir).
 *
 * Its buffer pool lives in that WebAssembly memory too, resident from the start: PostgreSQL's 128 MB
 * default cost ~120 MiB idle. The embedded default is 32 MB (VIGIL_PGLITE_SHARED_BUFFERS); the
 * files stay in the operating system's cache beyond it.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import path from "node:path";

const execFileAsync = promisify(execFile);

export const DEFAULT_PGLITE_SHARED_BUFFERS = "32MB";

/** `VIGIL_PGLITE_SHARED_BUFFERS`: PGlite's buffer pool, a size from 1MB to 1GB in kB, MB or GB. */
export function pgliteSharedBuffersFromEnv(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === "") return DEFAULT_PGLITE_SHARED_BUFFERS;
  const m = /^\s*(\d+)\s*(kB|MB|GB)\s*$/.exec(raw);
  const kB = m ? Number(m[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[m[2] as "kB" | "MB" | "GB"] : NaN;
  if (!(kB >= 1024 && kB <= 1024 * 1024)) {
    throw new Error(`VIGIL_PGLITE_SHARED_BUFFERS must be a size from 1MB to 1GB written like 32MB (units kB, MB or GB), got "${raw}"`);
  }
  return `${m![1]}${m![2]}`;
}

/**
 * WAL kept by the embedded database. PGlite runs PostgreSQL single-user, with no checkpointer: a
 * checkpoint happens only when asked for, and until then every segment stays (a data directory of
 * 375 MB kept ~1 GB of WAL beside it). Vigil asks (walCheckpointDue, db/client.ts) once the WAL since
 * the last checkpoint passes PGLITE_CHECKPOINT_WAL_BYTES; `min_wal_size` caps the segments then
 * kept for reuse. Each checkpoint flushes at most the 32 MB buffer pool.
 */
export const PGLITE_WAL_SETTINGS = { max_wal_size: "96MB", min_wal_size: "32MB" } as const;
export const PGLITE_CHECKPOINT_WAL_BYTES = 64 * 2 ** 20;
/** How often the embedded database's WAL is looked at, ms. */
export const PGLITE_CHECKPOINT_EVERY_MS = 30_000;

/** The arguments PGlite starts PostgreSQL with beyond its defaults. */
export function pgliteStartSettings(sharedBuffers: string): string[] {
  return ["-c", `shared_buffers=${sharedBuffers}`, ...Object.entries(PGLITE_WAL_SETTINGS).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
}

/** What prepareDataDir did. */
export type DataDirPreparation = "found" | "made" | "left-to-pglite";

/** Runs PGlite's initdb in a child process: the module is resolved from the working directory, as the server's own import is. */
const INIT_SCRIPT = `
const { PGlite } = await import("@electric-sql/pglite");
const db = new PGlite(process.env.VIGIL_PGLITE_INIT_DIR);
await db.waitReady;
await db.close();`;

/**
 * Makes `dataDir` a PGlite cluster in a child process when it is missing or empty. A missing one is
 * made beside it and renamed into place; an empty one (perhaps a mounted volume, which cannot be
 * renamed onto) is made in place, and emptied again should the child fail. A directory holding
 * anything else is left to PGlite, as before (it says what is wrong with it); so is a child that
 * failed, with a warning: the server then makes the directory itself, as it used to.
 */
export async function prepareDataDir(dataDir: string): Promise<DataDirPreparation> {
  if (fs.existsSync(path.join(dataDir, "PG_VERSION"))) return "found";
  const exists = fs.existsSync(dataDir);
  if (exists && fs.readdirSync(dataDir).length > 0) return "left-to-pglite";
  const parent = path.dirname(dataDir);
  fs.mkdirSync(parent, { recursive: true });
  // A start killed while it made the directory left its sibling behind: one data directory has one
  // server (PGlite is in-process), so any such sibling is a leftover.
  const making = `${path.basename(dataDir)}.making-`;
  for (const entry of fs.readdirSync(parent)) if (entry.startsWith(making)) fs.rmSync(path.join(parent, entry), { recursive: true, force: true });
  const target = exists ? dataDir : path.join(parent, `${making}${process.pid}`);
  const clear = () => {
    if (exists) for (const entry of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
    else fs.rmSync(target, { recursive: true, force: true });
  };
  // Nothing to clear first: an existing directory is empty, and the siblings are gone.
  try {
    await execFileAsync(process.execPath, ["--input-type=module", "-e", INIT_SCRIPT], {
      cwd: process.cwd(),
      env: { ...process.env, VIGIL_PGLITE_INIT_DIR: target },
      timeout: 120_000,
    });
    if (!fs.existsSync(path.join(target, "PG_VERSION"))) throw new Error("the child process left no PG_VERSION");
    if (!exists) fs.renameSync(target, dataDir);
    return "made";
  } catch (err) {
    clear();
    // The child's error line says why (execFile's message only names the command).
    const lines = String((err as { stderr?: unknown }).stderr ?? "").split("\n");
    const why = lines.find((l) => /^\w*Error\b/.test(l.trim())) ?? (err as Error).message.split("\n")[0];
    console.warn(`[vigil] could not make the data directory in a child process (${why}); making it in this one`);
    return "left-to-pglite";
  }
}
