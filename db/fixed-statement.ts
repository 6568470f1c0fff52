/**
 * A statement whose text is built once. drizzle turns a `sql` template into text and parameters on
 * every execution: for guard.check's read and write (a few KB of SQL each, dozens of fragments)
 * that was a fifth of all the memory a check allocated — more young-generation collections, each a
 * pause for every request in flight. Here the template is written once with named placeholders
 * (`sql.placeholder(name)`), turned into text on first use, and each execution only fills in the
 * values and hands text and parameters to the driver, as drizzle's own `execute` does.
 */
import { fillPlaceholders, sql, type Placeholder, type Query, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { PGlite } from "@electric-sql/pglite";
import type { Sql } from "postgres";
import { clientOf, isEmbedded, postgresJs, rowsOf, type Db, type Tx } from "./client";

/**
 * drizzle's PGlite driver reads timestamps, dates and intervals (and arrays of them) as text, as
 * postgres-js does under drizzle: the same rows whichever database runs the statement.
 */
const TEXT_TYPES = [1114, 1184, 1186, 1082, 1231, 1115, 1185, 1187, 1182];
const PGLITE_ROWS = { rowMode: "object" as const, parsers: Object.fromEntries(TEXT_TYPES.map((oid) => [oid, (value: string) => value])) };

export type Placeholders<N extends string> = { readonly [K in N]: Placeholder<K> };

export interface FixedStatement<N extends string> {
  /** Runs the statement on `db` (not a transaction's handle) with these values; answers its rows. */
  run<T>(db: Db, values: Readonly<Record<N, unknown>>): Promise<T[]>;
  /**
   * Runs it in the transaction `tx`. On PostgreSQL it is sent at once (statements go out in the
   * order of the calls, and several on their way share a round trip); rows are as postgres-js
   * gives them under drizzle (timestamps and json as text). On PGlite it runs through drizzle.
   */
  runIn<T>(tx: Tx, values: Readonly<Record<N, unknown>>): Promise<T[]>;
  /** The statement's text (built on first use). */
  text(): string;
}

/** A statement of `names` placeholders; `build` writes it once, with each placeholder where its value goes. */
export function fixedStatement<const N extends string>(names: readonly N[], build: (p: Placeholders<N>) => SQL): FixedStatement<N> {
  let query: Query | undefined;
  const compiled = () => {
    if (!query) {
      const placeholders = Object.fromEntries(names.map((n) => [n, sql.placeholder(n)])) as unknown as Placeholders<N>;
      query = new PgDialect().sqlToQuery(build(placeholders));
    }
    return query;
  };
  const filledWith = (values: Readonly<Record<N, unknown>>) => {
    for (const n of names) if (!(n in values)) throw new Error(`fixedStatement: no value for placeholder "${n}"`);
    return fillPlaceholders(compiled().params, values);
  };
  return {
    text: () => compiled().sql,
    runIn<T>(tx: Tx, values: Readonly<Record<N, unknown>>): Promise<T[]> {
      const text = compiled().sql;
      const filled = filledWith(values);
      const pg = postgresJs(tx);
      if (pg) return pg.unsafe(text, filled as never[]).execute() as unknown as Promise<T[]>;
      return tx.execute(inlineParams(text, filled)).then((result) => rowsOf<T>(result));
    },
    async run<T>(db: Db, values: Readonly<Record<N, unknown>>): Promise<T[]> {
      const { sql: text } = compiled();
      const filled = filledWith(values);
      const client = clientOf(db);
      if (isEmbedded(db)) return (await (client as PGlite).query<T>(text, filled, PGLITE_ROWS)).rows;
      // The client drizzle was given: prepared (db/prepared-client.ts) unless VIGIL_DB_PREPARE=off.
      return (await (client as Sql).unsafe(text, filled as never[])) as unknown as T[];
    },
  };
}

/** A statement with numbered parameters ($1, $2…) as drizzle SQL, for drizzle to run (PGlite). */
export function inlineParams(statement: string, params: unknown[]): SQL {
  const parts = statement.split(/\$(\d+)/);
  return sql.join(parts.map((part, i) => (i % 2 ? sql`${params[Number(part) - 1]}` : sql.raw(part))), sql.raw(""));
}
