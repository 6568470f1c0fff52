/**
 * postgres-js answers a transaction whose callback failed with `rollback` (or `rollback to` for a
 * savepoint) on the transaction's connection. When the failure was the connection itself going
 * away (the server stopped or restarted), that connection has no socket any more: the rollback's
 * buffered write then runs `socket.write` on null in a `setImmediate` — an uncaughtException
 * (postgres 3.4.9, porsager/postgres#1208) — and the rollback never settles.
 *
 * This wrapper keeps a transaction whose callback failed for a lost connection from ever reaching
 * that rollback: the caller gets the connection error at once, and the callback's result is handed
 * to postgres-js only if the connection is still open a moment later (then it rolls back as usual).
 * A connection that did close is given back to the pool by postgres-js itself (its onclose), so
 * nothing is held but the pending callback.
 */
import type { Sql, TransactionSql } from "postgres";
import { isDatabaseUnavailable } from "@/server/http/database-unavailable";

type AnySql = Sql | TransactionSql;

/** How long a failed transaction's connection may take to close before it is rolled back as usual. */
const CLOSE_GRACE_MS = 1_000;

/**
 * `transactionSettled` (for the handle inside a transaction): whether the outermost transaction has
 * settled — postgres-js rejects it when its connection closes, and a savepoint has no such signal.
 */
export function withoutWritesAfterConnectionLoss<T extends AnySql>(client: T, transactionSettled?: () => boolean): T {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if ((prop !== "begin" && prop !== "savepoint") || typeof value !== "function") return value;
      // begin([options], fn) / savepoint([name], fn)
      return (...args: unknown[]) => {
        const i = args.findIndex((a) => typeof a === "function");
        if (i < 0) return (value as (...a: unknown[]) => unknown).apply(target, args);
        const fn = args[i] as (tx: TransactionSql) => unknown;
        let settled = false;
        const closed = transactionSettled ?? (() => settled);
        let lost!: (err: unknown) => void;
        const connectionLost = new Promise<never>((_, reject) => (lost = reject));
        connectionLost.catch(() => {});
        args[i] = (tx: TransactionSql) => {
          let result: unknown;
          try {
            result = fn(withoutWritesAfterConnectionLoss(tx, closed));
          } catch (err) {
            result = Promise.reject(err);
          }
          return Promise.resolve(Array.isArray(result) ? Promise.all(result) : result).catch((err: unknown) => {
            if (!isDatabaseUnavailable(err)) throw err;
            lost(err);
            // Handed on (and rolled back) only while the connection is still open after the grace period.
            return new Promise((_, reject) => {
              const timer = setTimeout(() => !closed() && reject(err), CLOSE_GRACE_MS);
              timer.unref?.();
            });
          });
        };
        const outcome = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const finish = () => {
          settled = true;
        };
        outcome.then(finish, finish);
        return Promise.race([outcome, connectionLost]);
      };
    },
  });
}
