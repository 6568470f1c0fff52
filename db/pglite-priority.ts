/**
 * Agents first on the embedded database. PGlite runs one statement at a time, on the server's only
 * thread, and takes them in the order they were asked for: a dashboard page's reads queued ahead of a
 * guard.check held the check for the whole page (p99 30 → 189 ms with Models 30d loaded over and
 * over). This gate in front of the client lets one operation — a statement, or a whole transaction —
 * into PGlite at a time and, when it ends, hands the turn to the longest-waiting agent operation
 * before any dashboard one (db/query-priority.ts says whose an operation is).
 *
 * A statement under way is never interrupted, so an agent waits at most for the one dashboard
 * statement already running: the dashboard's heavy reads are kept to bounded pieces (roll-ups read
 * per day; docs/performance.md "Scale"). Agents cannot starve the dashboard: after
 * DASHBOARD_TURN_AFTER agent operations in a row while a dashboard one waited, the dashboard gets a
 * turn.
 *
 * Statements inside a transaction go through the transaction's handle, not through here: the
 * transaction holds its turn to its end, as it holds PGlite's own lock.
 */
import type { PGlite, QueryOptions, Results, Transaction } from "@electric-sql/pglite";
import { currentQueryPriority, type QueryPriority } from "./query-priority";

/** Agent operations let through in a row, while a dashboard operation waits, before it gets a turn. */
export const DASHBOARD_TURN_AFTER = 16;

/** Event-loop turns given to agents before each dashboard operation starts. */
export const DASHBOARD_YIELD_TURNS = 2;

/** One-at-a-time turns, agents' before the dashboard's. */
export class PriorityGate {
  private busy = false;
  private readonly waiting: Record<QueryPriority, (() => void)[]> = { agent: [], dashboard: [] };
  private agentTurnsWhileDashboardWaits = 0;

  /** Runs `fn` in its turn: alone, and after every agent operation that was waiting before it (dashboard ones aside). */
  async run<T>(priority: QueryPriority, fn: () => Promise<T>): Promise<T> {
    const turn = new Promise<void>((resolve) => this.waiting[priority].push(resolve));
    if (!this.busy) {
      this.busy = true;
      this.next();
    }
    await turn;
    try {
      return await fn();
    } finally {
      this.next();
    }
  }

  /** Operations waiting for a turn now, by priority. */
  get queued(): Record<QueryPriority, number> {
    return { agent: this.waiting.agent.length, dashboard: this.waiting.dashboard.length };
  }

  private turnsYielded = 0;

  /**
   * Hands the turn on (busy stays set, so nothing slips in between). Before a dashboard operation
   * starts, the event loop turns DASHBOARD_YIELD_TURNS times: a page's statements follow each other
   * in promise callbacks, which never let the loop read a new request from its socket, so an agent
   * could not even ask for its turn; an agent's next statement (a guard.check is several) and new
   * agent requests get in first.
   */
  private next() {
    const { agent, dashboard } = this.waiting;
    if (agent.length > 0 && (dashboard.length === 0 || this.agentTurnsWhileDashboardWaits < DASHBOARD_TURN_AFTER)) {
      this.agentTurnsWhileDashboardWaits = dashboard.length > 0 ? this.agentTurnsWhileDashboardWaits + 1 : 0;
      this.turnsYielded = 0;
      agent.shift()!();
    } else if (dashboard.length > 0) {
      if (this.turnsYielded < DASHBOARD_YIELD_TURNS && agent.length === 0) {
        this.turnsYielded++;
        setImmediate(() => this.next());
        return;
      }
      this.turnsYielded = 0;
      this.agentTurnsWhileDashboardWaits = 0;
      dashboard.shift()!();
    } else {
      this.turnsYielded = 0;
      this.busy = false;
    }
  }
}

/**
 * The client answers its gate under this key: the framework may bundle this module more than once
 * (the database is opened by one copy, a page's data layer asks another), so no module-level map.
 */
const GATE = Symbol.for("vigil.pglite-priority-gate");

/** The gate in front of a client made by prioritizedPglite; undefined for any other client (PostgreSQL, a transaction). */
export function pglitePriorityGate(client: object): PriorityGate | undefined {
  return (client as { [GATE]?: PriorityGate })[GATE];
}

/**
 * `VIGIL_PGLITE_PRIORITY=off` lets statements into PGlite in the order they come, as PGlite alone
 * does (to measure what the gate is worth; see bench/scale).
 */
export function pglitePriorityFromEnv(raw: string | undefined): boolean {
  if (raw === undefined || raw.trim() === "" || raw.trim() === "on") return true;
  if (raw.trim() === "off") return false;
  throw new Error(`VIGIL_PGLITE_PRIORITY must be "on" or "off", got "${raw}"`);
}

/** Wraps a PGlite client (db/pglite-prepared.ts's, or PGlite's own): its statements and transactions take turns through a PriorityGate. */
export function prioritizedPglite(client: PGlite): PGlite {
  const gate = new PriorityGate();
  const bound = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(client, {
    get(target, prop) {
      if (prop === GATE) return gate;
      if (prop === "query")
        return <T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> => gate.run(currentQueryPriority(), () => target.query<T>(text, params, options));
      if (prop === "exec") return (text: string, options?: QueryOptions) => gate.run(currentQueryPriority(), () => target.exec(text, options));
      if (prop === "transaction") return <T>(callback: (tx: Transaction) => Promise<T>) => gate.run(currentQueryPriority(), () => target.transaction(callback));
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      let fn = bound.get(prop);
      if (!fn) bound.set(prop, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
  return proxy;
}
