/**
 * Vigil on a real Citus cluster (a coordinator and two workers, tests/support/citus-cluster.ts):
 * the migrations placed every table, a workspace's rows live on a single worker, workspace queries
 * route to one shard, and event partitions created later are distributed with the log.
 * Selected with VIGIL_TEST_DATABASES=citus (the Citus step of `npm test`).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import postgres from "postgres";
import { TestApp } from "../support/app";
import { createTestDatabase } from "../support/databases";
import { call, result, uid } from "../support/agent";
import { migrateDatabase } from "@/db/client";
import { ensureEventPartitions } from "@/server/services/partitions";

const DAY = 86_400_000;

describe("Vigil on Citus", () => {
  let app: TestApp;
  let coordinator: postgres.Sql;
  const workers = new Map<number, postgres.Sql>();

  beforeAll(async () => {
    app = await TestApp.create(await createTestDatabase("citus"));
    coordinator = postgres(app.database.url!, { max: 2, onnotice: () => {} });
    const dbName = new URL(app.database.url!).pathname;
    for (const w of inject("citusCluster").workerUrls) {
      const u = new URL(w);
      u.pathname = dbName;
      workers.set(Number(u.port), postgres(u.toString(), { max: 1, onnotice: () => {} }));
    }
  });
  afterAll(async () => {
    await coordinator?.end();
    for (const w of workers.values()) await w.end();
    await app?.database.close();
  });

  it("migrations placed every table: workspace data colocated by workspace_id, audit_log by organization, api keys and organization data as reference tables", async () => {
    const rows = await coordinator<{ name: string; type: string; column: string | null; colocation: number }[]>`
      select table_name::text as name, citus_table_type as type, distribution_column as column, colocation_id as colocation
      from citus_tables order by 1`;
    const by = new Map(rows.map((r) => [r.name, r]));
    const local = await coordinator<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not exists (select 1 from pg_dist_partition d where d.logicalrelid = c.oid)`;
    expect(local.map((r) => r.name)).toEqual([]);

    for (const t of ["user", "session", "account", "verification", "organization", "member", "workspace", "installation", "global_tool_pattern", "api_key"])
      expect(by.get(t), t).toMatchObject({ type: "reference" });
    expect(by.get("audit_log")).toMatchObject({ type: "distributed", column: "organization_id" });
    const workspaceTables = rows.filter((r) => r.column === "workspace_id");
    expect(workspaceTables.map((r) => r.name)).toEqual(expect.arrayContaining(["event", "event_default", "event_id", "failure", "key_state", "agent_session", "approval", "notification_outbox"]));
    expect(new Set(workspaceTables.map((r) => r.colocation)).size).toBe(1);

    // Idempotent: a second run (another instance starting) changes nothing.
    await migrateDatabase(app.database);
    expect((await coordinator`select count(*)::int as n from citus_tables`)[0].n).toBe(rows.length);
  });

  it("a workspace's rows live on a single worker, and its queries route to one shard", async () => {
    const seeded = [];
    for (let i = 0; i < 4; i++) {
      const ws = await app.seedWorkspace();
      const s = uid("s");
      const events = [
        { type: "session.start", id: uid(), sessionId: s, agent: "router", model: "gpt-4o" },
        call(s, "http_request", { url: "https://api.example.com/v1/a" }),
        ...Array.from({ length: 4 }, () => result(s, "http_request", { url: "https://api.example.com/v1/a" }, { success: false, httpStatus: 503, error: "unavailable" })),
        result(s, "readFile", { path: "/etc/hosts" }, { success: true }),
        { type: "model.text", id: uid(), sessionId: s, text: "Let me check the logs." },
      ];
      const res = await app.mutation("ingest.events", { events }, { key: ws.key });
      expect(res.status).toBe(200);
      expect(res.body.result!.data.accepted).toBe(events.length);
      seeded.push(ws);
    }

    const tables = await coordinator<{ name: string }[]>`
      select p.logicalrelid::regclass::text as name from pg_dist_partition p join pg_class c on c.oid = p.logicalrelid
      where column_to_column_name(p.logicalrelid, p.partkey) = 'workspace_id' and not c.relispartition order by 1`;
    const shards = await coordinator<{ table: string; shard: string; port: number }[]>`
      select table_name::text as table, shard_name as shard, nodeport as port from citus_shards
      where table_name::text = any(${tables.map((t) => t.name)})`;
    const nodesUsed = new Set<number>();
    for (const ws of seeded) {
      const holders = new Set<number>();
      for (const { name } of tables) {
        const [{ n: total }] = await coordinator.unsafe(`select count(*)::int as n from "${name}" where workspace_id = $1`, [ws.workspaceId]);
        let found = 0;
        for (const sh of shards.filter((x) => x.table === name)) {
          const [{ n }] = await workers.get(sh.port)!.unsafe(`select count(*)::int as n from "${sh.shard}" where workspace_id = $1`, [ws.workspaceId]);
          if (n) holders.add(sh.port);
          found += n;
        }
        expect(found, `${name} rows of ${ws.slug} found on the workers`).toBe(total);
      }
      expect([...holders], `workers holding ${ws.slug}`).toHaveLength(1);
      nodesUsed.add([...holders][0]);
      // The shard Citus routes this workspace to sits on that worker.
      const [{ port }] = await coordinator<{ port: number }[]>`
        select nodeport as port from citus_shards where shardid = get_shard_id_for_distribution_column('event_id', ${ws.workspaceId}::text)`;
      expect(port).toBe([...holders][0]);
    }
    expect(nodesUsed.size).toBeGreaterThanOrEqual(1);

    // Router plans: a workspace's query runs as one task on one worker.
    const ws = seeded[0];
    for (const q of [
      `select * from key_state where workspace_id = $1 and failure_key = any($2::text[]) order by failure_key for update`,
      `select session_id, count(*) from event where workspace_id = $1 group by session_id`,
      `select k.failure_key from key_state k join failure f on f.workspace_id = k.workspace_id and f.failure_key = k.failure_key where k.workspace_id = $1`,
    ]) {
      const plan = (await coordinator.begin((tx) => tx.unsafe(`explain ${q}`, q.includes("$2") ? [ws.workspaceId, "{a}"] : [ws.workspaceId]))) as unknown as Record<string, string>[];
      const text = plan.map((r) => Object.values(r)[0]).join("\n");
      expect(text, q).toMatch(/Task Count: 1\b/);
    }
  });

  it("event partitions created later are distributed with the log; retention drops them on every node", async () => {
    const now = Date.now();
    const created = await ensureEventPartitions(app.db, now + 40 * DAY, 0, 1);
    expect(created.length).toBeGreaterThan(0);
    const placed = await coordinator<{ name: string; colocated: boolean }[]>`
      select t.table_name::text as name, t.colocation_id = (select colocation_id from citus_tables where table_name = 'event'::regclass) as colocated
      from citus_tables t where t.table_name::text = any(${created})`;
    expect(placed.map((p) => p.name).sort()).toEqual([...created].sort());
    expect(placed.every((p) => p.colocated)).toBe(true);

    const { key, workspaceId } = await app.seedWorkspace();
    const future = result(uid("s"), "fetch", { url: "https://a.example/x" }, { success: true }, { ts: new Date(now + 40 * DAY + 1000).toISOString() });
    // Events from the future are clamped to the receive time by the engine, so insert the day's row as the log would hold it.
    await coordinator`insert into event (workspace_id, id, session_id, type, ts, payload) values (${workspaceId}, ${future.id}, 's', 'tool.result', ${new Date(now + 40 * DAY + 1000)}, '{}')`;
    expect(key).toBeTruthy();
    const [{ part }] = await coordinator<{ part: string }[]>`select tableoid::regclass::text as part from event where workspace_id = ${workspaceId}`;
    expect(part.startsWith(created[0])).toBe(true);

    const { dropEventPartitionsBefore } = await import("@/server/services/partitions");
    const dropped = await dropEventPartitionsBefore(app.db, now + 50 * DAY);
    expect(dropped).toEqual(expect.arrayContaining(created));
    const left = await coordinator`select 1 from citus_shards where table_name::text = any(${created})`;
    expect(left).toHaveLength(0);
    for (const w of workers.values()) {
      const rows = await w`select count(*)::int as n from pg_class where relname like ${created[0] + "%"}`;
      expect(rows[0].n).toBe(0);
    }
  });
});
