#!/usr/bin/env node
/**
 * Serves Vigil: builds when the build is missing or older than the sources, then runs
 * `next start` on PORT (default 3000). The database is opened and migrated by the server itself
 * on start (instrumentation.ts) — PGlite in VIGIL_DATA_DIR unless DATABASE_URL is set.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
process.chdir(root);

function newestMtime(p) {
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

const buildId = path.join(root, ".next", "BUILD_ID");
const sources = ["app", "components", "server", "db", "lib", "drizzle", "instrumentation.ts", "next.config.mjs", "package-lock.json"];
const builtAt = fs.existsSync(buildId) ? fs.statSync(buildId).mtimeMs : 0;
const changedAt = Math.max(...sources.map((s) => newestMtime(path.join(root, s))));
if (process.env.VIGIL_SKIP_BUILD !== "1" && changedAt > builtAt) {
  console.log(builtAt ? "[vigil] sources changed since the last build; rebuilding…" : "[vigil] building (first start)…");
  const r = spawnSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const port = process.env.PORT ?? "3000";
const hostname = process.env.HOSTNAME_BIND ?? process.env.VIGIL_HOST ?? "0.0.0.0";
console.log(`[vigil] starting on http://localhost:${port} (${process.env.DATABASE_URL ? "PostgreSQL" : `PGlite in ${process.env.VIGIL_DATA_DIR ?? "./.vigil/data"}`})`);
const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "start", "-p", port, "-H", hostname], {
  stdio: "inherit",
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
