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
import { dropEventPartitionsBefore, ensureEventPartitions } from "@/server/services/partitions";

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
      select c.relname::text as name, citus_table_type as type, distribution_column as column, colocation_id as colocation
      from citus_tables t join pg_class c on c.oid = t.table_name order by 1`;
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
    // Workspaces on both workers (placement is by hash of the id: seed until both are used).
    const workerOf = async (workspaceId: string) =>
      (await coordinator<{ port: number }[]>`
        select nodeport as port from citus_shards where shardid = get_shard_id_for_distribution_column('event_id', ${workspaceId}::text)`)[0].port;
    const candidates: { ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>; port: number }[] = [];
    while (candidates.length < 16 && new Set(candidates.map((c) => c.port)).size < 2) {
      const ws = await app.seedWorkspace();
      candidates.push({ ws, port: await workerOf(ws.workspaceId) });
    }
    const firstOn = [...new Map(candidates.map((c) => [c.port, c])).values()];
    const picked = [...firstOn, ...candidates.filter((c) => !firstOn.includes(c))].slice(0, 4);
    const seeded = [];
    for (const { ws } of picked) {
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
      expect(await workerOf(ws.workspaceId)).toBe([...holders][0]);
    }
    expect(nodesUsed.size, "workers holding the seeded workspaces").toBe(2);

    // Router plans: a workspace's query runs as one task on one worker.
    const ws = seeded[0];
    for (const q of [
      `select * from key_state where workspace_id = $1 and failure_key = any($2::text[]) order by failure_key for update`,
      `select session_id, count(*) from event where workspace_id = $1 group by session_id`,
      `select k.failure_key from key_state k join failure f on f.workspace_id = k.workspace_id and f.failure_key = k.failure_key where k.workspace_id = $1`,
      // The trust-state lock with the failures of the rows it does not hold, and the failure rows' deletes.
      `select k.failure_key, (select coalesce(jsonb_agg(f.record order by f.seq), '[]'::jsonb) from key_failure f where f.workspace_id = $1 and f.failure_key = k.failure_key),
         (select coalesce(jsonb_agg(c.log order by c.chunk), '[]'::jsonb) from key_result_chunk c where c.workspace_id = $1 and c.failure_key = k.failure_key)
       from key_state k where k.workspace_id = $1 and k.failure_key = any($2::text[]) order by k.failure_key for update`,
      `delete from key_result_chunk c where c.workspace_id = $1 and c.failure_key = any($2::text[]) and c.chunk < ('{5}'::int[])[array_position($2::text[], c.failure_key)]`,
      `delete from key_failure f where f.workspace_id = $1 and f.failure_key = any($2::text[]) and f.seq < ('{5}'::bigint[])[array_position($2::text[], f.failure_key)]`,
      `delete from key_failure f where f.workspace_id = $1 and f.failure_key = any($2::text[]) and f.seq = any('{5}'::bigint[]) and f.failure_key || ' ' || f.seq = any('{"a 5"}'::text[])`,
    ]) {
      const plan = (await coordinator.begin((tx) => tx.unsafe(`explain ${q}`, q.includes("$2") ? [ws.workspaceId, "{a}"] : [ws.workspaceId]))) as unknown as Record<string, string>[];
      const text = plan.map((r) => Object.values(r)[0]).join("\n");
      expect(text, q).toMatch(/Task Count: 1\b/);
    }
  });

  it("event partitions created later are distributed with the log (rows in the default partition moved); retention drops them on every node", async () => {
    const now = Date.now();
    const dayName = (ms: number) => `event_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const partOf = async (workspaceId: string) =>
      (await coordinator<{ part: string }[]>`select tableoid::regclass::text as part from event where workspace_id = ${workspaceId}`).map((r) => r.part);
    const { key, workspaceId } = await app.seedWorkspace();
    const old = result(uid("s"), "fetch", { url: "https://a.example/x" }, { success: true }, { ts: new Date(now - 20 * DAY).toISOString() });
    expect((await app.mutation("ingest.events", { events: [old] }, { key })).body.result!.data.accepted).toBe(1);
    // No daily partitions yet: the row sits in (a shard of) the default partition.
    expect((await partOf(workspaceId))[0]).toMatch(/^event_default_\d+$/);

    const created = await ensureEventPartitions(app.db, now, 25, 1);
    expect(created).toContain(dayName(now - 20 * DAY));
    expect((await partOf(workspaceId))[0]).toMatch(new RegExp(`^${dayName(now - 20 * DAY)}_\\d+$`));
    const placed = await coordinator<{ name: string; colocated: boolean }[]>`
      select c.relname::text as name, t.colocation_id = (select colocation_id from citus_tables where table_name = 'event'::regclass) as colocated
      from citus_tables t join pg_class c on c.oid = t.table_name where c.relname = any(${created})`;
    expect(placed.map((p) => p.name).sort()).toEqual([...created].sort());
    expect(placed.every((p) => p.colocated)).toBe(true);
    const [{ n: inDefault }] = await coordinator<{ n: number }[]>`select count(*)::int as n from event_default`;
    expect(inDefault).toBe(0);
    // Still a duplicate after the move (event_id is its own table).
    expect((await app.mutation("ingest.events", { events: [old] }, { key })).body.result!.data).toMatchObject({ accepted: 0, duplicates: 1 });

    const doomed = await coordinator<{ shard: string; port: number }[]>`
      select shard_name::text as shard, nodeport as port from citus_shards where table_name = ${dayName(now - 20 * DAY)}::regclass`;
    expect(doomed.length).toBeGreaterThan(0);
    const dropped = await dropEventPartitionsBefore(app.db, now - 10 * DAY);
    expect(dropped).toContain(dayName(now - 20 * DAY));
    expect(await partOf(workspaceId)).toEqual([]);
    for (const d of doomed) {
      const [{ gone }] = await workers.get(d.port)!<{ gone: boolean }[]>`select to_regclass(${d.shard}) is null as gone`;
      expect(gone, `${d.shard} dropped on its worker`).toBe(true);
    }
  });

  it("a workspace's shards move online to the other worker, events included (the log has no key: every table of it replicates by whole row)", async () => {
    const now = Date.now();
    await ensureEventPartitions(app.db, now, 3, 1);
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const events = [result(s, "fetch", { url: "https://m.example/a" }, { success: true }, { ts: new Date(now - DAY).toISOString() }), call(s, "fetch", { url: "https://m.example/b" })];
    expect((await app.mutation("ingest.events", { events }, { key })).body.result!.data.accepted).toBe(2);
    const [from] = await coordinator<{ shard: string; host: string; port: number }[]>`
      select shardid::text as shard, nodename as host, nodeport as port from citus_shards
      where shardid = get_shard_id_for_distribution_column('event_id', ${workspaceId}::text)`;
    const [to] = await coordinator<{ host: string; port: number }[]>`
      select nodename as host, nodeport as port from pg_dist_node where noderole = 'primary' and shouldhaveshards and nodeport <> ${from.port} and groupid <> 0 limit 1`;
    // The default transfer mode: logical replication, refused for a colocated table that has neither a key nor a replica identity.
    await coordinator`select citus_move_shard_placement(${from.shard}::bigint, ${from.host}, ${from.port}, ${to.host}, ${to.port})`;
    const [moved] = await coordinator<{ port: number }[]>`
      select nodeport as port from citus_shards where shardid = get_shard_id_for_distribution_column('event', ${workspaceId}::text) limit 1`;
    expect(moved.port).toBe(to.port);
    expect((await coordinator<{ n: number }[]>`select count(*)::int as n from event where workspace_id = ${workspaceId}`)[0].n).toBe(2);
    // Ingest goes on against the moved shards; an event sent again is still a duplicate.
    const more = result(s, "fetch", { url: "https://m.example/c" }, { success: false, error: "timeout" });
    expect((await app.mutation("ingest.events", { events: [more, events[0]] }, { key })).body.result!.data).toMatchObject({ accepted: 1, duplicates: 1 });
  });
});
