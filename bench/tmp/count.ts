import { startPgCluster } from "@/tests/support/pg-cluster";
import { openDatabase, migrateDatabase } from "@/db/client";
import { TestApp } from "@/tests/support/app";
import fs from "node:fs";
const READ = Array.from({ length: 500 }, (_, i) => `/repo/src/f${i}.ts`);
const pg = await startPgCluster({ settings: { log_statement: "'all'", log_min_duration_statement: "-1" } });
const database = await openDatabase({ url: pg.url });
await migrateDatabase(database);
const app = await TestApp.create(database);
const ws = await app.seedWorkspace({ scope: "agent" });
const ev = (p: string, i: number) => ({ id: `${p}-${i}`, sessionId: `${p}-s${i % 8}`, callId: `${p}-c${i}`, toolName: "Read", args: { file_path: READ[i % 500] } });
for (let i = 0; i < 20; i++) await app.mutation("guard.check", ev("w", i), { key: ws.key });
await database.pg!`select 'MARK'`;
for (let i = 0; i < 10; i++) await app.mutation("guard.check", ev("m", i), { key: ws.key });
await database.pg!`select 'END'`;
const dir = new URL(pg.url).port; 
const logs = fs.readdirSync("/tmp").filter((d) => d.startsWith("vigil-pg-")).map((d) => `/tmp/${d}/log`).filter((f) => fs.existsSync(f));
for (const f of logs) { const t = fs.readFileSync(f, "utf8"); if (t.includes("'MARK'")) { const part = t.slice(t.indexOf("'MARK'"), t.indexOf("'END'")); fs.writeFileSync("/tmp/stmts.log", part); } }
await database.close(); pg.stop();
