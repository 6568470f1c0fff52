/**
 * The secret that signs session cookies. It is kept out of the database: the database holds each
 * session's token, and a token is a valid cookie only once signed with this secret, so someone who
 * can read the database (a dump, a backup, an injected query) still cannot make a cookie.
 *
 * In order: VIGIL_AUTH_SECRET (or BETTER_AUTH_SECRET); else the file VIGIL_AUTH_SECRET_FILE;
 * else `auth-secret` in the data directory (VIGIL_DATA_DIR, default ./.vigil/data), generated on
 * first start with mode 0600. Instances that share a database but not a data directory must be
 * given the same secret (the variable, or one file), or a cookie from one is refused by another.
 *
 * Installations from before kept a generated secret in the database (installation.auth_secret).
 * It is not carried over — it may already have been read with the rest of the database — but
 * deleted, and a new secret is made in the file: everyone signs in again once.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { installation } from "@/db/schema";

const AUTH_SECRET_FILE_NAME = "auth-secret";
/** Where the secret lived before it moved to the file (deleted on start). */
const LEGACY_SECRET_KEY = "auth_secret";

function authSecretFile(env: NodeJS.ProcessEnv = process.env): string {
  if (env.VIGIL_AUTH_SECRET_FILE) return path.resolve(/*turbopackIgnore: true*/ env.VIGIL_AUTH_SECRET_FILE);
  return path.join(path.resolve(/*turbopackIgnore: true*/ env.VIGIL_DATA_DIR ?? "./.vigil/data"), AUTH_SECRET_FILE_NAME);
}

/** Reads the secret file, or creates it (0600) with a new random secret; concurrent starts agree on one. */
function readOrCreateSecretFile(file: string): string {
  const existing = readSecret(file);
  if (existing) return existing;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Written whole under a temporary name, then linked into place: a reader never sees half a file,
  // and of two processes starting at once the second finds the first one's secret.
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  fs.writeFileSync(temporary, randomBytes(32).toString("base64url") + "\n", { mode: 0o600, flag: "wx" });
  try {
    fs.linkSync(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  const secret = readSecret(file);
  if (!secret) throw new Error(`The auth secret file ${file} is empty`);
  return secret;
}

function readSecret(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  if (process.platform !== "win32" && (fs.statSync(file).mode & 0o077) !== 0) {
    console.warn(`[vigil] the auth secret file ${file} can be read by other users of this machine: chmod 600 it`);
  }
  return text.trim() || null;
}

/** The cookie-signing secret for this instance (see the module comment). */
export async function authSecret(db: Db, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const secret = env.VIGIL_AUTH_SECRET || env.BETTER_AUTH_SECRET || readOrCreateSecretFile(authSecretFile(env));
  const legacy = await db.delete(installation).where(eq(installation.key, LEGACY_SECRET_KEY)).returning({ key: installation.key });
  if (legacy.length) {
    console.warn(
      "[vigil] the session-signing secret is no longer kept in the database: existing sessions end and everyone signs in again once. " +
        "Several instances on one database need the same secret: set VIGIL_AUTH_SECRET (or VIGIL_AUTH_SECRET_FILE) alike on each.",
    );
  }
  return secret;
}
