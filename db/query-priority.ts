/**
 * Whose statements these are: an agent's (guard.check, ingest, hooks, OTLP, MCP) or the dashboard's
 * and everything else (pages, background upkeep). Only the embedded database acts on it
 * (db/pglite-priority.ts): PGlite runs one statement at a time on the server's thread, and a waiting
 * agent statement goes before a waiting dashboard one. On PostgreSQL the mark is carried and unread.
 *
 * The mark is set where an agent request starts (server/agent-api/agent-request.ts) and follows the
 * request through every await (AsyncLocalStorage); work started outside an agent request is
 * "dashboard". The store lives on globalThis: the framework may bundle this module more than once.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export type QueryPriority = "agent" | "dashboard";

const storeKey = Symbol.for("vigil.query-priority");
type GlobalWithStore = typeof globalThis & { [storeKey]?: AsyncLocalStorage<QueryPriority> };
const g = globalThis as GlobalWithStore;
const store: AsyncLocalStorage<QueryPriority> = (g[storeKey] ??= new AsyncLocalStorage<QueryPriority>());

/** Runs `fn` with its statements marked `priority` (an agent request's, or the dashboard's). */
export function withQueryPriority<T>(priority: QueryPriority, fn: () => T): T {
  return store.run(priority, fn);
}

/** The priority of statements issued here: "dashboard" outside any agent request. */
export function currentQueryPriority(): QueryPriority {
  return store.getStore() ?? "dashboard";
}
