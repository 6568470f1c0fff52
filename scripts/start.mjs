#!/usr/bin/env node
/**
 * `npm start`: serves Vigil. Installs dependencies only when node_modules is missing or was
 * installed from another lockfile (`npm ci`, which never rewrites the lockfile; production
 * dependencies only under NODE_ENV=production), builds only when the build is missing or older
 * than the sources, then serves with scripts/serve.mjs (Next plus the agent API fast path) on
 * PORT (default 3000). A restart with nothing changed goes straight to serving. The database is opened and migrated by the server itself on start
 * (instrumentation.ts) — PGlite in VIGIL_DATA_DIR unless DATABASE_URL is set.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { serverArgs } from "./server-command.mjs";
import { BUILD_SOURCES, installStamp, lockfileHash, needsBuild, needsInstall, newestMtime } from "./start-plan.mjs";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
process.chdir(root);
const production = process.env.NODE_ENV === "production";
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };

const stampFile = path.join(root, "node_modules", ".vigil-install-stamp");
const lockHash = lockfileHash(fs.readFileSync(path.join(root, "package-lock.json")));
const stamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, "utf8").trim() : null;
if (process.env.VIGIL_SKIP_INSTALL !== "1" && needsInstall({ hasNodeModules: fs.existsSync(path.join(root, "node_modules", "next")), stamp, lockHash, production })) {
  console.log(`[vigil] installing dependencies (npm ci${production ? " --omit=dev" : ""})…`);
  if (Number(process.versions.node.split(".")[0]) < 22)
    console.log(`[vigil] Node ${process.versions.node} is past end of life: the EBADENGINE warnings below come from test tools that want Node 22 or 24; Vigil itself runs, but use Node 22 or 24.`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["ci", "--no-audit", "--no-fund", ...(production ? ["--omit=dev"] : [])], { stdio: "inherit", env });
  if (r.status !== 0) process.exit(r.status ?? 1);
  fs.writeFileSync(stampFile, installStamp(lockHash, production));
}

const buildId = path.join(root, ".next", "BUILD_ID");
const builtAt = fs.existsSync(buildId) ? fs.statSync(buildId).mtimeMs : 0;
const changedAt = Math.max(...BUILD_SOURCES.map((s) => newestMtime(path.join(root, s))));
if (needsBuild({ builtAt, changedAt, skip: process.env.VIGIL_SKIP_BUILD === "1" })) {
  console.log(builtAt ? "[vigil] sources changed since the last build; rebuilding…" : "[vigil] building (first start)…");
  const r = spawnSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { stdio: "inherit", env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const port = process.env.PORT ?? "3000";
const hostname = process.env.HOSTNAME_BIND ?? process.env.VIGIL_HOST ?? "0.0.0.0";
console.log(`[vigil] starting on http://localhost:${port} (${process.env.DATABASE_URL ? "PostgreSQL" : `PGlite in ${process.env.VIGIL_DATA_DIR ?? "./.vigil/data"}`})`);
const child = spawn(process.execPath, serverArgs(port, hostname), { stdio: "inherit", env });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
