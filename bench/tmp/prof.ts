import { startPgCluster } from "@/tests/support/pg-cluster";
import { closedLoop, summarize, freePort, BENCH_KEY, openLoop } from "@/bench/http-load";
import { spawn } from "node:child_process";
import fs from "node:fs";
const READ = Array.from({ length: 500 }, (_, i) => `/repo/src/f${i}.ts`);
const spec = (prefix: string, sessions = 64) => ({
  method: "POST" as const, path: "/api/trpc/guard.check",
  body: (i: number) => { const round = Math.floor(i / sessions); return { id: `${prefix}-${i}`, sessionId: `${prefix}-s${i % sessions}-${Math.floor(round / 40)}`, callId: `${prefix}-c${i}`, toolName: "Read", args: { file_path: READ[(round + (i % sessions)) % READ.length] } }; },
});
const prof = process.argv.includes("--prof");
const secs = Number(process.env.SECS ?? 6);
const pg = await startPgCluster({ durable: true });
fs.rmSync("/tmp/cpuprof", { recursive: true, force: true });
const port = await freePort();
const child = spawn(process.execPath, [...(prof ? ["--cpu-prof", "--cpu-prof-dir=/tmp/cpuprof"] : []), "scripts/serve.mjs", "-p", String(port), "-H", "127.0.0.1"], {
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, NODE_ENV: "production", DATABASE_URL: pg.url, VIGIL_INIT_ORG: "Bench", VIGIL_INIT_WORKSPACE: "bench", VIGIL_INIT_API_KEY: BENCH_KEY, VIGIL_RATE_LIMIT_PER_MINUTE: "0", ...JSON.parse(process.env.XENV ?? "{}") },
});
const url = `http://127.0.0.1:${port}`;
for (;;) { try { if ((await fetch(url + "/api/health")).ok) break; } catch {} await new Promise((r) => setTimeout(r, 200)); }
try {
  await closedLoop(url, spec("warm"), 8, 2);
  const one = summarize(await closedLoop(url, spec("one", 1), 1, 4));
  console.log("one client", one.p50.toFixed(2), one.p99.toFixed(2), one.n);
  const many = summarize(await closedLoop(url, spec("many"), 64, secs));
  console.log("64 sessions", many.okPerSecond.toFixed(0), "/s p50", many.p50.toFixed(1), "errors", many.errors, many.byStatus);
  if (process.argv.includes("--open")) {
    const at500 = summarize(await openLoop(url, spec("o500"), 500, secs));
    console.log("500/s", at500.p50.toFixed(1), at500.p99.toFixed(1), at500.byStatus);
  }
} finally { await new Promise((r) => { child.once("exit", r); child.kill("SIGTERM"); }); await pg.stop(); }
