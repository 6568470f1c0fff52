/**
 * db/fixed-statement.ts on each database: a statement built once answers the same rows as
 * drizzle's `execute` of the same template, in the same shapes (timestamps as text, json as the
 * driver gives it), with values that need escaping, and refuses to run without all its values; on
 * PostgreSQL it is prepared or not as the client drizzle was given (VIGIL_DB_PREPARE).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "@/db/schema";
import { preparingClient } from "@/db/prepared-client";
import { jsonValue, rowsOf, type Database, type Db } from "@/db/client";
import { fixedStatement } from "@/db/fixed-statement";
import { textArray, textArrayLiteral } from "@/db/sql-arrays";
import { DATABASE_KINDS, createTestDatabase } from "../support/databases";
import { errorCode } from "@/server/ingest/sql-errors";

interface Row {
  at: string;
  names: unknown;
  doc: unknown;
  n: number;
  missing: string | null;
}

describe.each(DATABASE_KINDS)("fixed statements on %s", (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await database.close();
  });

  const names = ['plain', 'with "quotes"', "back\\slash", "comma, and {braces}", "ünïcödé"];
  const doc = { a: 1, nested: { list: [1, "two", null] }, text: 'quote " and \\ backslash' };
  const at = "2026-11-27T10:11:12.345Z";

  let builds = 0;
  const statement = fixedStatement(["at", "names", "doc", "n", "missing"], (p) => {
    builds++;
    return sql`select ${p.at}::timestamptz as at, to_json(${p.names}::text[]) as names, ${p.doc}::jsonb as doc,
      ${p.n}::int + 1 as n, ${p.missing}::text as missing`;
  });

  it("answers what drizzle's execute of the same template answers, in the same shapes", async () => {
    const values = { at, names: textArrayLiteral(names), doc: JSON.stringify(doc), n: 41, missing: null };
    const [fixed] = await statement.run<Row>(database.db, values);
    const [viaDrizzle] = rowsOf<Row>(
      await database.db.execute(sql`select ${at}::timestamptz as at, to_json(${textArray(names)}) as names, ${JSON.stringify(doc)}::jsonb as doc,
        ${41}::int + 1 as n, ${null}::text as missing`),
    );
    expect(fixed).toEqual(viaDrizzle);
    expect(typeof fixed.at).toBe("string"); // as drizzle reads timestamps on both drivers
    expect(new Date(fixed.at).toISOString()).toBe(at);
    expect(jsonValue(fixed.names)).toEqual(names);
    expect(jsonValue(fixed.doc)).toEqual(doc);
    expect(fixed.n).toBe(42);
    expect(fixed.missing).toBeNull();
  });

  it("builds its text once, however often it runs", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => statement.run<Row>(database.db, { at, names: textArrayLiteral([`n${i}`]), doc: "{}", n: i, missing: `m${i}` })),
    );
    expect(answers.map(([r]) => [r.n, r.missing, jsonValue(r.names)])).toEqual(Array.from({ length: 20 }, (_, i) => [i + 1, `m${i}`, [`n${i}`]]));
    expect(builds).toBe(1);
    expect(statement.text()).toContain("$1::timestamptz");
  });

  it("refuses to run without a value for each placeholder, naming it", async () => {
    await expect(statement.run(database.db, { at, names: "{}", doc: "{}", n: 1 } as never)).rejects.toThrow('no value for placeholder "missing"');
  });

  it("a database error comes back as the driver's error, with its code", async () => {
    const failing = fixedStatement(["n"], (p) => sql`select 1 / ${p.n}::int as x`);
    await expect(failing.run(database.db, { n: 0 })).rejects.toMatchObject({ code: "22012" });
    const [ok] = await failing.run<{ x: number }>(database.db, { n: 1 });
    expect(ok.x).toBe(1);
  });
});

describe.each(DATABASE_KINDS)("fixed statements in a transaction (runIn) on %s", (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    await database.db.execute(sql`create table fixed_run_in (id text primary key, at timestamptz not null, doc jsonb not null)`);
  });
  afterAll(async () => {
    await database.close();
  });

  const insert = fixedStatement(["id", "at", "doc"], (p) => sql`insert into fixed_run_in (id, at, doc) values (${p.id}, ${p.at}::timestamptz, ${p.doc}::jsonb)`);
  const read = fixedStatement(["ids"], (p) => sql`select id, at, doc from fixed_run_in where id = any(${p.ids}::text[]) order by id`);
  const at = "2026-11-29T08:00:00.123Z";

  it("sends statements in call order (one round trip on PostgreSQL): a read behind a write sees it; a rollback undoes both", async () => {
    const rows = await database.db.transaction(async (tx) => {
      const written = insert.runIn(tx, { id: "a", at, doc: JSON.stringify({ n: 1 }) });
      if (kind === "pglite") await written;
      const [, read1] = await Promise.all([written, read.runIn<{ id: string; at: unknown; doc: unknown }>(tx, { ids: textArrayLiteral(["a", "b"]) })]);
      return read1;
    });
    expect(rows.map((r) => [r.id, new Date(String(r.at instanceof Date ? r.at.toISOString() : r.at)).toISOString(), jsonValue(r.doc)])).toEqual([["a", at, { n: 1 }]]);

    const failed = await database.db
      .transaction(async (tx) => {
        await insert.runIn(tx, { id: "b", at, doc: "{}" });
        await insert.runIn(tx, { id: "a", at, doc: "{}" }); // duplicate key: the transaction fails
      })
      .then(() => null, (err: unknown) => err);
    expect(errorCode(failed)).toBe("23505");
    const after = rowsOf<{ id: string }>(await database.db.execute(sql`select id from fixed_run_in order by id`));
    expect(after.map((r) => r.id)).toEqual(["a"]);
  });
});

describe.runIf(DATABASE_KINDS.includes("postgres"))("fixed statements and VIGIL_DB_PREPARE on postgres", () => {
  let database: Database;
  beforeAll(async () => {
    database = await createTestDatabase("postgres");
  });
  afterAll(async () => {
    await database.close();
  });

  const statement = fixedStatement(["n"], (p) => sql`select ${p.n}::int * 2 as doubled`);
  /** The statement prepared on the one connection of `client`'s pool (pg_prepared_statements is per connection). */
  const preparedOn = async (client: postgres.Sql) =>
    (await client<{ n: number }[]>`select count(*)::int as n from pg_prepared_statements where statement like 'select $1::int * 2%'`)[0].n;

  it("is prepared once on a connection, as drizzle's queries are by default, and answers every run", async () => {
    const pg = postgres(database.url!, { max: 1, onnotice: () => {} });
    try {
      const db = drizzle(preparingClient(pg), { schema }) as unknown as Db;
      for (let n = 0; n < 5; n++) expect(await statement.run<{ doubled: number }>(db, { n })).toEqual([{ doubled: 2 * n }]);
      expect(await preparedOn(pg)).toBe(1);
    } finally {
      await pg.end({ timeout: 5 });
    }
  });

  it("is sent unprepared with VIGIL_DB_PREPARE=off (a pooler that cannot keep prepared statements)", async () => {
    // db/client.ts hands drizzle the plain client then, and the fixed statement uses the same client.
    const pg = postgres(database.url!, { max: 1, onnotice: () => {} });
    try {
      const db = drizzle(pg, { schema }) as unknown as Db;
      for (let n = 0; n < 5; n++) expect(await statement.run<{ doubled: number }>(db, { n })).toEqual([{ doubled: 2 * n }]);
      expect(await preparedOn(pg)).toBe(0);
    } finally {
      await pg.end({ timeout: 5 });
    }
  });
});
