/**
 * What `npm start` must do before serving, decided from facts gathered by scripts/start.mjs.
 * Pure functions, so the decisions are unit-tested (tests/unit/start-plan.test.ts).
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** Folders and files whose change needs a new build (package-lock.json: dependencies changed). */
export const BUILD_SOURCES = ["app", "components", "server", "db", "lib", "drizzle", "public", "instrumentation.ts", "next.config.mjs", "tsconfig.json", "tsconfig.build.json", "package-lock.json"];

export function lockfileHash(lockfileText) {
  return createHash("sha256").update(lockfileText).digest("hex");
}

/**
 * Install when there is no node_modules, or when it was installed from another lockfile (the
 * stamp holds the lockfile's hash and the production flag it was installed with). `npm ci` never
 * rewrites package-lock.json, so installing never looks like a source change.
 */
export function needsInstall({ hasNodeModules, stamp, lockHash, production }) {
  if (!hasNodeModules) return true;
  if (!stamp) return true;
  return stamp !== installStamp(lockHash, production);
}

export function installStamp(lockHash, production) {
  return `${lockHash}${production ? ":production" : ""}`;
}

/** Build when there is no build, or a source is newer than it (VIGIL_SKIP_BUILD=1 never builds). */
export function needsBuild({ builtAt, changedAt, skip }) {
  if (skip) return false;
  return builtAt === 0 || changedAt > builtAt;
}

/** Newest modification time under `p` (skipping node_modules and dot-folders); 0 when missing. */
export function newestMtime(p) {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of fs.readdirSync(p)) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    newest = Math.max(newest, newestMtime(path.join(p, entry)));
  }
  return newest;
}
