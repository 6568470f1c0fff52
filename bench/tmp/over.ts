import { startPgCluster } from "@/tests/support/pg-cluster";
import { closedLoop, summarize, openLoop, startVigil, startBareServer } from "@/bench/http-load";
const READ = Array.from({ length: 500 }, (_, i) => `/repo/src/f${i}.ts`);
const spec = (prefix: string, sessions = 64) => ({
  method: "POST" as const, path: "/api/trpc/guard.check",
  body: (i: number) => { const round = Math.floor(i / sessions); return { id: `${prefix}-${i}`, sessionId: `${prefix}-s${i % sessions}-${Math.floor(round / 40)}`, callId: `${prefix}-c${i}`, toolName: "Read", args: { file_path: READ[(round + (i % sessions)) % READ.length] } }; },
});
const secs = Number(process.env.SECS ?? 8);
const rate = Number(process.env.RATE ?? 2000);
import fs from "node:fs";
function cpuOf(pred: (cmd: string, pid: number) => boolean) { let t = 0; for (const d of fs.readdirSync("/proc")) { if (!/^\d+$/.test(d)) continue; try { const st = fs.readFileSync(`/proc/${d}/stat`, "utf8"); const cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8"); if (!pred(cmd, Number(d))) continue; const f = st.slice(st.lastIndexOf(")") + 2).split(" "); t += Number(f[11]) + Number(f[12]); } catch {} } return t * 10; }
const cpus = () => ({ pg: cpuOf((c) => c.startsWith("postgres")), srv: cpuOf((c) => c.includes("serve.mjs") || c.includes("-e\0require")), me: cpuOf((c, p) => p === process.pid) });
let c0 = cpus();
const cpuLine = () => { const c = cpus(); const r = `cpu ms: server ${c.srv - c0.srv} pg ${c.pg - c0.pg} client ${c.me - c0.me}`; c0 = c; return r; };
const show = (l: string, r: ReturnType<typeof summarize>) => console.log(l, "ok/s", r.okPerSecond.toFixed(0), "p50", r.p50.toFixed(1), "p99", r.p99.toFixed(1), r.byStatus, "rss", r.peakRssMiB?.toFixed(0), cpuLine());
const bare = await startBareServer(); cpuLine();
show(`bare ${rate}/s`, summarize(await openLoop(bare.url, spec("b"), rate, secs, bare.pid)));
await bare.stop();
const pg = await startPgCluster({ durable: true });
const v = await startVigil({ databaseUrl: pg.url, env: JSON.parse(process.env.XENV ?? "{}") });
try {
  await closedLoop(v.url, spec("warm"), 8, 2); cpuLine();
  show(`vigil ${rate}/s`, summarize(await openLoop(v.url, spec("o"), rate, secs, v.pid)));
  if (process.env.R500) show(`vigil 500/s`, summarize(await openLoop(v.url, spec("f"), 500, secs, v.pid)));
} finally { await v.stop(); await pg.stop(); }
