import { sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";

/**
 * A text[] parameter written as an array literal: portable across postgres-js and PGlite (drizzle
 * would expand a JS array into one parameter per value), and one stable statement text whatever
 * the number of values — so set-based statements stay prepared. `null` is SQL NULL.
 */
export function textArray(values: readonly (string | null)[]) {
  return sql`${textArrayLiteral(values)}::text[]`;
}

/** The array literal alone, for a placeholder's value (db/fixed-statement.ts) followed by `::text[]`. */
export function textArrayLiteral(values: readonly (string | null)[]): string {
  return "{" + values.map((v) => (v === null ? "NULL" : '"' + v.replaceAll("\\", "\\\\").replaceAll('"', '\\"') + '"')).join(",") + "}";
}

/**
 * `column = any($1::text[])`: one parameter and one statement text whatever the number of values
 * (inArray builds a parameter per value and a new statement text per count — drizzle's building
 * work and a new prepared statement each time).
 */
export const anyOf = (column: AnyPgColumn, values: readonly string[]) => sql`${column} = any(${textArray(values)})`;
