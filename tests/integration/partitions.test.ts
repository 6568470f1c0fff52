import { describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { rowsOf } from "@/db/client";
import { result, uid } from "../support/agent";
import { event, eventId } from "@/db/schema";
import { dropEventPartitionsBefore, ensureEventPartitions, listEventPartitions } from "@/server/services/partitions";
import { pruneAll } from "@/server/services/retention";

/** On a Citus worker (a single-node coordinator holds shards too) tableoid names the shard, `event_p20261118_102221`; strip the shard id. */
const partitionName = (relation: string) => relation.replace(/_\d{5,}$/, "");

const DAY = 86_400_000;

describe.each(DATABASE_KINDS)("event log partitions on %s", (kind) => {
  const app = useTestApp(kind);

  it("daily partitions hold the events; pruning drops whole old partitions; duplicates still detected", async () => {
    const now = Date.now();
    const created = await ensureEventPartitions(app.db, now, 10, 1);
    expect(created).toHaveLength(12);
    expect(await ensureEventPartitions(app.db, now, 10, 1)).toEqual([]); // idempotent

    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const old = result(s, "fetch", { url: "https://a.example/x" }, { success: true }, { ts: now - 5 * DAY });
    const fresh = result(s, "fetch", { url: "https://a.example/x" }, { success: true }, { ts: now - 1000 });
    expect((await app.mutation("ingest.events", { events: [old, fresh] }, { key })).body.result!.data.accepted).toBe(2);

    const parts = (await app.db.execute(sql`select tableoid::regclass::text as part, id from event where workspace_id = ${workspaceId} order by ts`)) as unknown;
    const rows = (Array.isArray(parts) ? parts : (parts as { rows: unknown[] }).rows) as { part: string; id: string }[];
    rows.forEach((r) => (r.part = partitionName(r.part)));
    const day = (ms: number) => `event_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`;
    expect(rows.map((r) => r.part)).toEqual([day(now - 5 * DAY), day(now - 1000)]);

    // Re-sent: duplicates, through event_id.
    expect((await app.mutation("ingest.events", { events: [old, fresh] }, { key })).body.result!.data).toMatchObject({ accepted: 0, duplicates: 2 });

    // Every workspace keeps 3 days: partitions before that are dropped, newer ones stay.
    await app.mutation("config.put", { retention_days: 3 }, { key });
    const { workspace } = await import("@/db/schema");
    await app.db.update(workspace).set({ config: { retentionDays: 3 } });
    await pruneAll(app.db, now);
    const remaining = (await listEventPartitions(app.db)).map((p) => p.name);
    expect(remaining).not.toContain(day(now - 5 * DAY));
    expect(remaining).toContain(day(now - 1000));
    expect(remaining).toContain(day(now - 3 * DAY));
    const left = await app.db.select({ id: event.id }).from(event).where(eq(event.workspaceId, workspaceId));
    expect(left.map((r) => r.id)).toEqual([fresh.id]);
    const ids = await app.db.select({ id: eventId.id }).from(eventId).where(eq(eventId.workspaceId, workspaceId));
    expect(ids.map((r) => r.id)).toEqual([fresh.id]);
  });

  it("an event of an old day claimed after the chunked id pass loses its id with the day's partition", async () => {
    const now = Date.now();
    await ensureEventPartitions(app.db, now, 10, 1);
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const early = result(s, "fetch", { url: "https://a.example/early" }, { success: true }, { ts: now - 6 * DAY });
    const late = result(s, "fetch", { url: "https://a.example/late" }, { success: true }, { ts: now - 6 * DAY + 60_000 });
    expect((await app.mutation("ingest.events", { events: [early] }, { key })).body.result!.data.accepted).toBe(1);
    const claimed = async () =>
      (await app.db.select({ id: eventId.id }).from(eventId).where(eq(eventId.workspaceId, workspaceId))).map((r) => r.id).sort();
    const day = `event_p${new Date(now - 6 * DAY).toISOString().slice(0, 10).replaceAll("-", "")}`;
    let lateSent = false;
    await dropEventPartitionsBefore(app.db, now - 4 * DAY, {
      afterIdPass: async (partition) => {
        if (partitionName(partition) !== day) return;
        // The chunked pass has taken the early event's id; the late one arrives before the day is locked.
        expect(await claimed()).toEqual([]);
        expect((await app.mutation("ingest.events", { events: [late] }, { key })).body.result!.data.accepted).toBe(1);
        lateSent = true;
      },
    });
    expect(lateSent).toBe(true);
    expect((await listEventPartitions(app.db)).map((p) => p.name)).not.toContain(day);
    expect(await claimed()).toEqual([]);
  });

  it("the chunked id pass takes every id of the day: each workspace's, over chunk bounds, with events sharing a timestamp across one", async () => {
    const now = Date.now();
    await ensureEventPartitions(app.db, now, 10, 1);
    const dayStart = Math.floor((now - 7 * DAY) / DAY) * DAY;
    const day = `event_p${new Date(dayStart).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const a = await app.seedWorkspace();
    const b = await app.seedWorkspace();
    // Workspace a: seven events of the day, three of them at one instant (each its own session: one
    // session's clock would order them); with chunks of 2 that instant straddles a chunk bound.
    const tie = dayStart + 3_600_000;
    const aDay = [0, 1, 2, 3].map((m) => result(uid("s"), "fetch", { url: `https://a.example/${m}` }, { success: true }, { ts: new Date(dayStart + 60_000 + m * 60_000).toISOString() }));
    const aTies = [0, 1, 2].map((m) => result(uid("s"), "fetch", { url: `https://a.example/tie${m}` }, { success: true }, { ts: new Date(tie).toISOString() }));
    const bDay = [0, 1, 2, 3].map((m) => result(uid("s"), "fetch", { url: `https://b.example/${m}` }, { success: true }, { ts: new Date(dayStart + 120_000 + m * 1_000).toISOString() }));
    const kept = result(uid("s"), "fetch", { url: "https://a.example/kept" }, { success: true }, { ts: new Date(now - 1_000).toISOString() });
    expect((await app.mutation("ingest.events", { events: [...aDay, ...aTies, kept] }, { key: a.key })).body.result!.data.accepted).toBe(8);
    expect((await app.mutation("ingest.events", { events: bDay }, { key: b.key })).body.result!.data.accepted).toBe(4);
    const claimed = async (workspaceId: string) =>
      (await app.db.select({ id: eventId.id }).from(eventId).where(eq(eventId.workspaceId, workspaceId))).map((r) => r.id).sort();
    let checked = false;
    await dropEventPartitionsBefore(app.db, now - 4 * DAY, {
      chunk: 2,
      afterIdPass: async (partition) => {
        if (partitionName(partition) !== day) return;
        // Before the locked drop (which deletes the ids of events received lately): the pass alone took them all.
        expect(await claimed(a.workspaceId)).toEqual([kept.id]);
        expect(await claimed(b.workspaceId)).toEqual([]);
        checked = true;
      },
    });
    expect(checked).toBe(true);
    expect((await listEventPartitions(app.db)).map((p) => p.name)).not.toContain(day);
    expect(await claimed(a.workspaceId)).toEqual([kept.id]);
  });

  it("a day whose rows already sit in the default partition gets its partition, rows moved", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const now = Date.now();
    const far = now - 20 * DAY; // outside the partitions created above (10 days back)
    const ev = result(uid("s"), "fetch", { url: "https://b.example/y" }, { success: true }, { ts: far });
    expect((await app.mutation("ingest.events", { events: [ev] }, { key })).status).toBe(200);
    const where = async () => {
      const r = (await app.db.execute(sql`select tableoid::regclass::text as part from event where workspace_id = ${workspaceId}`)) as unknown;
      return ((Array.isArray(r) ? r : (r as { rows: unknown[] }).rows) as { part: string }[]).map((x) => partitionName(x.part));
    };
    expect(await where()).toEqual(["event_default"]);
    await ensureEventPartitions(app.db, now, 25, 1);
    expect(await where()).toEqual([`event_p${new Date(far).toISOString().slice(0, 10).replaceAll("-", "")}`]);
    // Still a duplicate after the move.
    expect((await app.mutation("ingest.events", { events: [ev] }, { key })).body.result!.data).toMatchObject({ duplicates: 1 });
  });

  it("no table of the event log keeps statistics on the payload: the parent, the default partition, and every day's partition however it was made (not on Citus)", async () => {
    // The tests above made partitions both ways (created empty, and made of rows moved out of the default).
    const targets = rowsOf<{ name: string; target: number }>(
      await app.db.execute(sql`
        select c.relname as name, coalesce(a.attstattarget, -1)::int as target
        from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'payload'
        where c.oid = 'event'::regclass or c.oid in (select inhrelid from pg_inherits where inhparent = 'event'::regclass)`),
    );
    const names = (await listEventPartitions(app.db)).map((p) => p.name);
    expect(names.length).toBeGreaterThan(12);
    expect(targets.map((t) => t.name).sort()).toEqual(["event", "event_default", ...names].sort());
    if (kind !== "citus") {
      expect(targets.filter((t) => Number(t.target) !== 0)).toEqual([]);
      return;
    }
    // Citus takes no such ALTER on a distributed table: the parent and the default partition were
    // set before they were distributed (a new database), the day's partitions keep the default.
    expect(targets.filter((t) => Number(t.target) === 0).map((t) => t.name).sort()).toEqual(["event", "event_default"]);
  });

  it("the event log has no key, and every table of it replicates by whole row: the parent, the default partition, each day's however it was made", async () => {
    const [{ keys }] = rowsOf<{ keys: number }>(
      await app.db.execute(sql`select count(*)::int as keys from pg_constraint where conrelid = 'event'::regclass and contype in ('p', 'u')`),
    );
    expect(Number(keys)).toBe(0);
    const identities = rowsOf<{ name: string; identity: string }>(
      await app.db.execute(sql`
        select c.relname as name, c.relreplident::text as identity from pg_class c
        where c.oid = 'event'::regclass or c.oid in (select inhrelid from pg_inherits where inhparent = 'event'::regclass)`),
    );
    expect(identities.length).toBeGreaterThan(12);
    expect(identities.filter((t) => t.identity !== "f")).toEqual([]);
  });
});
