/**
 * drizzle's postgres-js driver runs every query that has no name with `prepare: false`, and
 * postgres-js then sends a parameterised query in two round trips: Parse + Describe, wait for the
 * parameter types, then Bind + Execute. So each statement of the hot path cost two round trips
 * (on a 2-core VM a socket write alone is ~0.3 ms of CPU). Prepared, postgres-js learns the types
 * once per connection and statement text, and every later execution is one round trip.
 *
 * This wraps the postgres-js client handed to drizzle so that parameterised queries are prepared,
 * in transactions and savepoints too. Parameterless text (DDL, partition maintenance with inlined
 * names) stays unprepared: it needs one round trip anyway and would only fill the statement cache.
 * Statement texts are stable (parameters, `unnest` arrays for bulk writes); connections are
 * recycled by postgres-js' max_lifetime, which bounds the per-connection statement cache.
 */
import type { Sql, TransactionSql } from "postgres";

type AnySql = Sql | TransactionSql;

export function preparingClient<T extends AnySql>(client: T): T {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "unsafe") {
        return (query: string, params?: unknown[], options?: Record<string, unknown>) =>
          (target.unsafe as (q: string, p?: unknown[], o?: object) => unknown)(query, params, params && params.length ? { ...options, prepare: true } : options);
      }
      if ((prop === "begin" || prop === "savepoint") && typeof value === "function") {
        // begin([options], fn) / savepoint([name], fn): the callback gets a wrapped client too.
        return (...args: unknown[]) => {
          const i = args.findIndex((a) => typeof a === "function");
          if (i >= 0) {
            const fn = args[i] as (tx: TransactionSql) => unknown;
            args[i] = (tx: TransactionSql) => fn(preparingClient(tx));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value;
    },
  });
}
