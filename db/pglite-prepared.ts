/**
 * PGlite's `query` runs a parameterised statement as six separate trips into PostgreSQL (Parse,
 * Describe, Bind, Describe, Execute, Sync), and PostgreSQL parses and plans it every time: ~490 µs
 * for a primary-key select on this machine, and guard.check's write statement spent 1.7–1.9 ms of
 * its ~5 ms planning. Prepared once under a name, an execution is one trip (Bind, Describe,
 * Execute, Sync in one message buffer) and PostgreSQL keeps its plan as a server does: ~140 µs for
 * the same select. This is db/prepared-client.ts's idea for the embedded database.
 *
 * This wraps the PGlite client handed to drizzle so that parameterised queries — in transactions
 * too — go through a statement cache; everything else (parameterless text, `exec`, listen, …) is
 * PGlite's own. The locking is PGlite's: outside a transaction a query waits for any transaction to
 * end and for the statement before it, inside one only for the statement before it (PGlite's
 * protocol calls take no lock of their own).
 */
import { parse, protocol, type PGlite, type QueryOptions, type Results, type Transaction } from "@electric-sql/pglite";

const { serialize } = protocol;

/** Statements kept prepared per database; beyond this the least recently used is closed. */
export const PGLITE_STATEMENT_CACHE_SIZE = 500;

interface Prepared {
  name: string;
  /** The parameters' type oids, as PostgreSQL inferred them: each value is serialized by its type. */
  paramTypes: number[];
}

type Serializer = (value: unknown) => string;
type TypeHandlers = { serializers: Record<number, Serializer>; parsers: Record<number, (value: string, typeId?: number) => unknown> };

/** PGlite's own error decoration (the statement and values on the error), so errors read alike either way. */
function withQuery(err: unknown, query: string, params: unknown[], options: QueryOptions | undefined): unknown {
  if (err && typeof err === "object") Object.assign(err, { query, params, queryOptions: options });
  return err;
}

/** PostgreSQL refuses a cached plan whose result columns changed under it (a migration altered a table). */
const isStalePlan = (err: unknown) => (err as { code?: string })?.code === "0A000" && /cached plan must not change result type/.test(String((err as Error).message));

class StatementCache {
  private readonly byText = new Map<string, Prepared>();
  private next = 0;
  /** Names evicted from the cache, closed in the next trip into PostgreSQL. */
  private toClose: string[] = [];

  constructor(
    private readonly client: PGlite,
    private readonly capacity: number,
  ) {}

  /** Runs a parameterised query through a prepared statement; the caller holds PGlite's query lock. */
  async run<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
    try {
      return await this.execute<T>(text, params, options);
    } catch (err) {
      if (!isStalePlan(err) || this.client.isInTransaction()) throw withQuery(err, text, params, options);
      this.forget(text); // prepared again from the current schema, once
      try {
        return await this.execute<T>(text, params, options);
      } catch (again) {
        throw withQuery(again, text, params, options);
      }
    }
  }

  private async execute<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
    const prepared = this.byText.get(text) ?? (await this.prepare(text, options));
    // Most recently used last: eviction takes the first.
    this.byText.delete(text);
    this.byText.set(text, prepared);
    const handlers = this.client as unknown as TypeHandlers;
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = prepared.paramTypes[i];
      const serializer = options?.serializers?.[type] ?? handlers.serializers[type];
      return serializer ? serializer(value) : String(value);
    });
    const messages = await this.client.execProtocolStream(
      Buffer.concat([serialize.bind({ statement: prepared.name, values }), serialize.describe({ type: "P" }), serialize.execute({}), serialize.sync()]),
      { syncToFs: false, onNotice: options?.onNotice },
    );
    return parse.parseResults(messages, this.parsersFor(options), options?.rowMode ? { rowMode: options.rowMode } : undefined)[0] as Results<T>;
  }

  private readonly mergedByObject = new WeakMap<object, TypeHandlers["parsers"]>();
  private readonly mergedBySource = new Map<string, TypeHandlers["parsers"]>();

  /**
   * The parsers for a query's results: PGlite's 318 defaults with the query's own on top. PGlite's
   * parseResults merges them itself, an object spread of all 318 per query — 14 % of the thread in
   * PGlite's looping-sessions load, as drizzle passes its own (identity parsers for times, intervals
   * and dates, a fresh object with every query). Merged once per set of overrides instead, found by
   * the object, else by the overrides' source text (drizzle's are closures over nothing).
   */
  private parsersFor(options: QueryOptions | undefined): TypeHandlers["parsers"] {
    const defaults = (this.client as unknown as TypeHandlers).parsers;
    const own = options?.parsers as TypeHandlers["parsers"] | undefined;
    if (!own) return defaults;
    let merged = this.mergedByObject.get(own);
    if (merged) return merged;
    const source = Object.entries(own)
      .map(([type, parser]) => `${type}:${String(parser)}`)
      .join("\n");
    merged = this.mergedBySource.get(source);
    if (!merged) {
      if (this.mergedBySource.size >= 100) this.mergedBySource.clear();
      this.mergedBySource.set(source, (merged = { ...defaults, ...own }));
    }
    this.mergedByObject.set(own, merged);
    return merged;
  }

  private async prepare(text: string, options: QueryOptions | undefined): Promise<Prepared> {
    const name = `vigil_${this.next++}`;
    const closing = this.toClose.map((n) => serialize.close({ type: "S", name: n }));
    this.toClose = [];
    const messages = await this.client.execProtocolStream(
      Buffer.concat([...closing, serialize.parse({ name, text, types: options?.paramTypes }), serialize.describe({ type: "S", name }), serialize.sync()]),
      { syncToFs: false, onNotice: options?.onNotice },
    );
    const prepared = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    this.byText.set(text, prepared);
    if (this.byText.size > this.capacity) {
      const [oldest] = this.byText.keys();
      this.forget(oldest);
    }
    return prepared;
  }

  private forget(text: string) {
    const prepared = this.byText.get(text);
    if (!prepared) return;
    this.byText.delete(text);
    this.toClose.push(prepared.name);
  }

  /** For tests: statements held prepared now. */
  get size() {
    return this.byText.size;
  }
}

const caches = new WeakMap<object, StatementCache>();

/** The statement cache behind a client made by preparingPglite (for tests). */
export function pgliteStatementCache(client: object): { size: number } | undefined {
  return caches.get(client);
}

const hasParams = (params: unknown[] | undefined): params is unknown[] => Array.isArray(params) && params.length > 0;

/** Wraps a transaction's handle: its parameterised queries are prepared too. */
function preparingTransaction(tx: Transaction, client: PGlite, cache: StatementCache): Transaction {
  return new Proxy(tx, {
    get(target, prop) {
      if (prop === "query")
        return <T>(text: string, params?: unknown[], options?: QueryOptions) => {
          if (!hasParams(params)) return target.query<T>(text, params, options);
          if (target.closed) throw new Error("Transaction is closed");
          return client._runExclusiveQuery(() => cache.run<T>(text, params, options));
        };
      return Reflect.get(target, prop, target);
    },
  });
}

/** A PGlite client whose parameterised queries are prepared once and executed in one trip. */
export function preparingPglite(client: PGlite, options: { cacheSize?: number } = {}): PGlite {
  const cache = new StatementCache(client, options.cacheSize ?? PGLITE_STATEMENT_CACHE_SIZE);
  const bound = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(client, {
    get(target, prop) {
      if (prop === "query")
        return async <T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> => {
          if (!hasParams(params)) return target.query<T>(text, params, options);
          await target._checkReady();
          return target._runExclusiveTransaction(async () => {
            const result = await target._runExclusiveQuery(() => cache.run<T>(text, params, options));
            await target.syncToFs(); // as PGlite's own query does outside a transaction
            return result;
          });
        };
      if (prop === "transaction")
        return <T>(callback: (tx: Transaction) => Promise<T>) => target.transaction((tx) => callback(preparingTransaction(tx, target, cache)));
      // PGlite's methods use private fields: they must run on the client itself, not the proxy.
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      let fn = bound.get(prop);
      if (!fn) bound.set(prop, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
  caches.set(proxy, cache);
  return proxy;
}
