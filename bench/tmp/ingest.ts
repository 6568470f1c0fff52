import { startPgCluster } from "@/tests/support/pg-cluster";
import { openDatabase, migrateDatabase } from "@/db/client";
import { TestApp } from "@/tests/support/app";
import { ingestEvents } from "@/server/ingest";
import type { EventInput } from "@/server/ingest/schema";
import { leanGuardCheck } from "@/server/ingest/guard-lean";
import { performance } from "node:perf_hooks";
const READ = Array.from({ length: 500 }, (_, i) => `/repo/src/f${i}.ts`);
const pg = await startPgCluster({ durable: process.env.DURABLE !== "0" });
const database = await openDatabase({ url: pg.url, poolSize: Number(process.env.POOL ?? 10) });
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
const BATCH_SIZE = 500;
const KEYS: { toolName: string; args: () => Record<string, unknown> }[] = [
  ...Array.from({ length: 20 }, (_, k) => ({ toolName: "http_request", args: () => ({ url: `https://svc${k % 10}.example.com/v${k >> 3}/items/${Math.floor(Math.random() * 1e6)}`, method: "GET" }) })),
  ...Array.from({ length: 10 }, (_, k) => ({ toolName: "Read", args: () => ({ file_path: `/repo/pkg${k}/src/file${Math.floor(Math.random() * 50)}.ts` }) })),
  ...Array.from({ length: 10 }, (_, k) => ({ toolName: "Edit", args: () => ({ file_path: `/repo/pkg${k}/src/index.ts`, old_string: "a", new_string: "b" }) })),
  ...["npm", "git", "ls", "make", "pytest"].map((c) => ({ toolName: "Bash", args: () => ({ command: `${c} ${Math.floor(Math.random() * 100)}` }) })),
  ...["jira__search", "jira__get_issue", "github__get_pr", "slack__post", "linear__list"].map((t) => ({ toolName: `mcp__${t}`, args: () => ({ q: Math.random().toString(36).slice(2) }) })),
];
const MODELS = ["claude-sonnet-4.5", "gpt-4.1", "glm-4.6", "gemini-2.5-pro"];

/** A workload generator: batches of ~500 events over 20 sessions, per-session time increasing. */
function workload(prefix: string, sessions = 20) {
  let n = 0;
  let clock = Date.now() - 3 * 3600_000;
  const started = new Set<string>();
  return (): EventInput[] => {
    const out: Record<string, unknown>[] = [];
    while (out.length < BATCH_SIZE) {
      const s = `${prefix}-s${n % sessions}`;
      const ts = (clock += 150);
      const id = `${prefix}-${++n}`;
      if (!started.has(s)) {
        started.add(s);
        out.push({ type: "session.start", id: `${id}-start`, sessionId: s, agent: `agent-${n % 5}`, model: MODELS[n % MODELS.length], ts });
      }
      const r = Math.random();
      if (r < 0.05) out.push({ type: "turn.start", id, sessionId: s, turnIndex: n, ts });
      else if (r < 0.2) out.push({ type: "model.text", id, sessionId: s, text: "Looking at the failing request; the payload seems fine, checking the handler next.", ts });
      else {
        const key = KEYS[Math.floor(Math.random() * KEYS.length)];
        const args = key.args();
        const failed = Math.random() < 0.08;
        out.push({ type: "tool.call", id: `${id}-c`, sessionId: s, callId: id, toolName: key.toolName, args, ts });
        out.push({
          type: "tool.result", id: `${id}-r`, sessionId: s, callId: id, toolName: key.toolName, args, ts: ts + 50, durationMs: 50,
          ...(failed ? { success: false, error: "503 Service Unavailable", httpStatus: 503 } : { success: true, result: { ok: true } }),
        });
      }
    }
    return out.slice(0, BATCH_SIZE) as EventInput[];
  };
}


const gens = [0,1,2,3].map((w) => workload(`w${w}`));
const warmB = workload("warm"); for (let i = 0; i < 3; i++) await ingestEvents(database.db, scope, warmB());
const batches = gens.map((g) => Array.from({ length: 8 }, () => g()));
const c0 = process.cpuUsage(), p0 = pgCpu(), t0 = performance.now();
await Promise.all(batches.map(async (bs) => { for (const b of bs) await ingestEvents(database.db, scope, b); }));
const c = process.cpuUsage(c0), p = pgCpu() - p0, secs = (performance.now() - t0) / 1000, n = 32 * 500;
console.log("ingest", (n / secs).toFixed(0), "events/s", "node µs/event", ((c.user + c.system) / n).toFixed(1), "pg µs/event", (p * 1000 / n).toFixed(1));
await database.close(); await pg.stop();
