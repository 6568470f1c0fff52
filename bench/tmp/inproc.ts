import { startPgCluster } from "@/tests/support/pg-cluster";
import { openDatabase, migrateDatabase } from "@/db/client";
import { TestApp } from "@/tests/support/app";
import { leanGuardCheck } from "@/server/ingest/guard-lean";
import { performance } from "node:perf_hooks";
const READ = Array.from({ length: 500 }, (_, i) => `/repo/src/f${i}.ts`);
const pg = await startPgCluster({ durable: process.env.DURABLE !== "0", settings: JSON.parse(process.env.PGSET ?? "{}") });
const port = new URL(pg.url).port;
const fsm = await import("node:fs"); const sockDir = fsm.readdirSync("/tmp").map((d) => `/tmp/${d}`).find((d) => d.includes("vigil-pg-") && fsm.existsSync(`${d}/.s.PGSQL.${port}`));
const url = process.env.SOCK ? `${pg.url}?host=${sockDir}` : pg.url;
console.log("url", url);
const database = await openDatabase({ url, poolSize: Number(process.env.POOL ?? 10) });
await migrateDatabase(database);
const app = await TestApp.create(database);
const ws = await app.seedWorkspace({ scope: "agent" });
const scope = { workspaceId: ws.workspaceId, organizationId: ws.organizationId };
import fs from "node:fs";
function pgCpu() { let t = 0; for (const d of fs.readdirSync("/proc")) { if (!/^\d+$/.test(d)) continue; try { const st = fs.readFileSync(`/proc/${d}/stat`, "utf8"); if (!st.includes("(postgres)")) continue; const f = st.slice(st.lastIndexOf(")") + 2).split(" "); t += Number(f[11]) + Number(f[12]); } catch {} } return t * 10; }
async function loop(label: string, conc: number, secs: number, fn: (i: number) => Promise<unknown>) {
  const c0 = process.cpuUsage(), p0 = pgCpu();
  let i = 0; const end = performance.now() + secs * 1000; let n = 0;
  await Promise.all(Array.from({ length: conc }, async () => { while (performance.now() < end) { await fn(i++); n++; } }));
  const c = process.cpuUsage(c0), p = pgCpu() - p0;
  console.log(label, (n / secs).toFixed(0), "/s", "node ms/op", ((c.user + c.system) / 1000 / n).toFixed(3), "pg ms/op", (p / n).toFixed(3));
}
const ev = (p: string, i: number) => { const round = Math.floor(i / 64); return { type: "tool.call" as const, id: `${p}-${i}`, sessionId: `${p}-s${i % 64}-${Math.floor(round / 40)}`, callId: `${p}-c${i}`, toolName: "Read", args: { file_path: READ[(round + (i % 64)) % READ.length] }, ts: Date.now() }; };
await loop("warm", 8, 2, (i) => leanGuardCheck(database.db, scope, ev("w", i) as any, null));
if (!process.env.ONLY) await loop("select 1 x64", 64, 4, () => database.pg!`select 1`);
if (!process.env.ONLY) await loop("lean x64", 64, 5, (i) => leanGuardCheck(database.db, scope, ev("l", i) as any, null));
await loop("handler x64", 64, 5, (i) => { const e = ev("h", i); const { type, ts, ...input } = e; return app.mutation("guard.check", input, { key: ws.key }); });
await database.close(); await pg.stop();
