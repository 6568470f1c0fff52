/**
 * db/pglite-prepared.ts: PGlite's parameterised queries through named prepared statements. The
 * answers must be exactly PGlite's own (same rows, same parsed types, same errors), in and out of
 * transactions, with PGlite's isolation between a transaction and the queries outside it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PGlite } from "@electric-sql/pglite";
import { pgliteStatementCache, preparingPglite } from "@/db/pglite-prepared";

describe("preparingPglite", () => {
  let raw: PGlite;
  let db: PGlite;
  beforeEach(async () => {
    raw = new PGlite();
    await raw.waitReady;
    await raw.exec("create table t (id text primary key, n int not null, at timestamptz, doc jsonb, tags text[])");
    db = preparingPglite(raw, { cacheSize: 3 });
  });
  afterEach(async () => {
    await raw.close();
  });

  it("answers as PGlite's own query, and prepares each statement text once", async () => {
    const at = new Date("2026-11-30T01:02:03.456Z");
    const insert = "insert into t (id, n, at, doc, tags) values ($1, $2, $3, $4, $5) returning id, n, at, doc, tags";
    const mine = await db.query(insert, ["a", 7, at, { k: [1, "x"] }, ["p", "q"]]);
    const theirs = await raw.query(insert, ["b", 7, at, { k: [1, "x"] }, ["p", "q"]]);
    expect(mine.rows).toEqual([{ ...(theirs.rows[0] as object), id: "a" }]);
    expect(mine.rows[0]).toMatchObject({ n: 7, at, doc: { k: [1, "x"] }, tags: ["p", "q"] });
    expect(mine.affectedRows).toBe(1);

    const select = "select id, n, doc from t where id = any($1::text[]) order by id";
    for (const rowMode of ["object", "array"] as const) {
      expect((await db.query(select, [["a", "b"]], { rowMode })).rows).toEqual((await raw.query(select, [["a", "b"]], { rowMode })).rows);
    }
    // A null value, and the same text again: still two statements prepared.
    expect((await db.query("select id from t where id = $1 or $2::int is null order by id", ["zzz", null])).rows).toEqual([{ id: "a" }, { id: "b" }]);
    expect(pgliteStatementCache(db)?.size).toBe(3);
  });

  it("applies a query's own parsers over the defaults, each set its own", async () => {
    const at = "2026-11-30 01:02:03.456+00";
    const q = "select $1::timestamptz as at";
    expect((await db.query<{ at: unknown }>(q, [at])).rows[0].at).toEqual(new Date("2026-11-30T01:02:03.456Z"));
    // Fresh objects with the same parsers each time, as drizzle passes them; then another set.
    for (let i = 0; i < 2; i++) expect((await db.query<{ at: unknown }>(q, [at], { parsers: { 1184: (v: string) => v } })).rows[0].at).toBe(at);
    expect((await db.query<{ at: unknown }>(q, [at], { parsers: { 1184: (v: string) => `t:${v}` } })).rows[0].at).toBe(`t:${at}`);
    expect((await db.query<{ at: unknown }>(q, [at])).rows[0].at).toBeInstanceOf(Date);
  });

  it("keeps at most its size of statements, and runs an evicted one again", async () => {
    for (let i = 0; i < 5; i++) await db.query(`select $1::int + ${i} as v`, [1]);
    expect(pgliteStatementCache(db)?.size).toBe(3);
    expect((await db.query("select $1::int + 0 as v", [1])).rows).toEqual([{ v: 1 }]);
    // Evicted statements are closed in PostgreSQL too, not only forgotten.
    const open = await raw.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements");
    expect(open.rows[0].n).toBeLessThanOrEqual(4);
  });

  it("fails as PGlite does — the error's code and statement — and the next statement runs", async () => {
    await db.query("insert into t (id, n) values ($1, $2)", ["a", 1]);
    const err = await db.query("insert into t (id, n) values ($1, $2)", ["a", 2]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "23505", query: "insert into t (id, n) values ($1, $2)" });
    await expect(db.query("select nope from t where id = $1", ["a"])).rejects.toMatchObject({ code: "42703" });
    expect((await db.query("select n from t where id = $1", ["a"])).rows).toEqual([{ n: 1 }]);
  });

  it("prepares inside transactions, which still roll back whole", async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query("insert into t (id, n) values ($1, $2)", ["in-tx", 1]);
        expect((await tx.query("select count(*)::int as c from t where id = $1", ["in-tx"])).rows).toEqual([{ c: 1 }]);
        await tx.query("insert into t (id, n) values ($1, $2)", ["in-tx", 2]); // unique violation
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect((await db.query("select count(*)::int as c from t where id = $1", ["in-tx"])).rows).toEqual([{ c: 0 }]);
  });

  it("a query outside a transaction waits for it to end: it never runs inside it", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((r) => (inserted = r));
    const tx = db
      .transaction(async (t) => {
        await t.query("insert into t (id, n) values ($1, $2)", ["rolled-back", 1]);
        inserted();
        await held;
        await t.rollback();
      })
      .catch(() => {});
    await insertedYet;
    let answered = false;
    const outside = db.query<{ c: number }>("select count(*)::int as c from t where n = $1", [1]).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    release();
    await tx;
    expect((await outside).rows).toEqual([{ c: 0 }]);
  });

  it("prepares again when a migration changed the columns a statement returns", async () => {
    const select = "select * from t where id = $1";
    await db.query("insert into t (id, n) values ($1, $2)", ["a", 1]);
    expect(Object.keys((await db.query<Record<string, unknown>>(select, ["a"])).rows[0])).not.toContain("extra");
    await db.exec("alter table t add column extra text default 'x'");
    expect((await db.query<Record<string, unknown>>(select, ["a"])).rows[0]).toMatchObject({ id: "a", extra: "x" });
  });
});
