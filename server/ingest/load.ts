/** Loading what the engine needs for a batch, set-based: one query per table, rows locked in a fixed order. */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { jsonValue, msOf, perDatabase, rowsOf, type Db, type Tx } from "@/db/client";
import { keyContexts, type Versioned } from "./row-version-cache";
import { anyOf, textArray, textArrayLiteral } from "@/db/sql-arrays";
import { fixedStatement } from "@/db/fixed-statement";
import { drizzleWrite, onTransactionEnd, postgresJs } from "./pipeline";
import { agentSession, apiKey, event, eventId, keyFailure, keyResultChunk, keyState } from "@/db/schema";
import { historyOf, upgradeKeyContext } from "@/server/engine/key-history";
import { newKeyContext } from "@/server/engine/key-state";
import { DEFAULT_AGENT } from "@/server/engine/decay";
import type { FailureRecord, KeyContext, KeyHistory, KeyState, ResultLog, SessionInfo, StoredResultLog } from "@/server/engine/types";
import { callRef, storedCallFromLog, type BatchConfigs, type BatchSession, type StoredCall, type ToolCallPayload, type WorkspaceConfigs } from "@/server/engine/batch";
import type { ModelToolProfile } from "@/server/engine/models";

export type { WorkspaceConfigs } from "@/server/engine/batch";

/**
 * Records the batch's event ids in `event_id` and returns those that were new (one round trip for
 * the duplicate check and the idempotency record). Ids are inserted in sorted order, so two
 * batches claiming overlapping ids wait for each other instead of deadlocking; a rolled-back
 * batch releases its claims. With `failOnDuplicates` the ids go in with a plain insert, which costs
 * PostgreSQL ~40 % less than skipping conflicts (no speculative insertion, nothing returned): an id
 * claimed before then fails the statement (23505) and the caller retries without it.
 */
export async function claimEventIds(tx: Tx, workspaceId: string, events: { id: string; ts: number }[], options: { failOnDuplicates?: boolean } = {}): Promise<Set<string>> {
  if (!events.length) return new Set();
  const first = new Map<string, number>();
  for (const e of events) if (!first.has(e.id)) first.set(e.id, e.ts);
  const rows = [...first].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, ts]) => ({ workspaceId, id, ts: new Date(ts) }));
  // Two array parameters and unnest: no per-row query building for 1000-event batches.
  const claim = sql`
    insert into ${eventId} (workspace_id, id, ts)
    select ${workspaceId}, u.id, u.ts::timestamptz
    from unnest(${textArray(rows.map((r) => r.id))}, ${textArray(rows.map((r) => r.ts.toISOString()))}) as u(id, ts)
    order by u.id
    ${options.failOnDuplicates ? sql`` : sql`on conflict do nothing returning id`}`;
  // On PostgreSQL the statement is queued on the connection now, in call order (see applyBatch).
  const result = await drizzleWrite(tx, claim)(postgresJs(tx));
  if (options.failOnDuplicates) return new Set(first.keys());
  const inserted = rowsOf<{ id: string }>(result);
  return new Set(inserted.map((r) => r.id));
}

/**
 * Whether an API key taken from the in-memory cache is still active (not revoked, not deleted):
 * checked inside the batch's transaction, so a batch sent with a revoked key commits nothing.
 */
export async function apiKeyStillActive(tx: Tx, workspaceId: string, keyId: string): Promise<boolean> {
  const rows = await tx
    .select({ id: apiKey.id })
    .from(apiKey)
    .where(and(eq(apiKey.workspaceId, workspaceId), eq(apiKey.id, keyId), sql`${apiKey.revokedAt} is null`));
  return rows.length > 0;
}

/**
 * The calls of results sent without their call, read from the event log. Bounded by time so the
 * planner prunes the log's daily partitions at execution: a session's clock never goes back
 * (server/engine/session-phase.ts, the clock clamp), so every event it stored is at or after its
 * `first_event_at`; the earliest of the sessions asked for is the bound. A session without that
 * time (none yet, or written by a version that did not keep it) bounds nothing. Without the bound
 * every partition's index was probed: ~30k buffers per batch with 35 partitions.
 */
export async function loadStoredCalls(
  tx: Tx,
  workspaceId: string,
  wanted: { sessionId: string; callId: string }[],
): Promise<Map<string, StoredCall>> {
  const out = new Map<string, StoredCall>();
  if (!wanted.length) return out;
  const rows = await storedCallsQuery(tx, workspaceId, wanted);
  for (const r of rows) out.set(callRef(r.sessionId, r.callId!), storedCallFromLog((r.payload as ToolCallPayload).call, r.failureKey));
  return out;
}

/** loadStoredCalls' statement (exported for the test of its plan). */
export function storedCallsQuery(tx: Tx | Db, workspaceId: string, wanted: { sessionId: string; callId: string }[]) {
  const sessionIds = [...new Set(wanted.map((w) => w.sessionId))];
  const since = sql`(select min(coalesce(s.first_event_at, '-infinity'::timestamptz)) from ${agentSession} s
    where s.workspace_id = ${workspaceId} and s.session_id = any(${textArray(sessionIds)}))`;
  return tx
    .select({ sessionId: event.sessionId, callId: event.callId, failureKey: event.failureKey, payload: event.payload })
    .from(event)
    .where(
      and(
        eq(event.workspaceId, workspaceId),
        eq(event.type, "tool.call"),
        anyOf(event.sessionId, sessionIds),
        anyOf(event.callId, [...new Set(wanted.map((w) => w.callId))]),
        sql`${event.ts} >= ${since}`,
      ),
    );
}


export interface LockedKeys {
  contexts: Map<string, KeyContext>;
  /** Keys that had no row before this batch (placeholders are inserted for them). */
  created: Set<string>;
  /** The sessions session decay needs for these keys (timelineOfKeys). */
  timeline: SessionInfo[];
}

/** Trust states whose `key_state` row this process has seen (rows are never deleted): no placeholder insert. */
const knownKeyStates = new Set<string>();

/**
 * The trust states that transactions of this process have locked (or queued a lock for) and not
 * yet ended, by database client: `workspace\0key` → how many. A lock queued behind such a
 * transaction is granted the version that transaction writes, and by then this process holds that
 * version (its upsert answers before its COMMIT does), so the lock's answer need not carry it.
 */
const lockedHere = new WeakMap<object, Map<string, number>>();

/** In lockKeyStates' list of held versions: leave the documents out whatever the row's version. */
const ANY_VERSION = "*";

interface LockedKeyRow {
  failure_key: string;
  /** The row version (`xmin`) locked. */
  version: string;
  /** Null when the row is the version this process holds (keyContexts), or is expected to hold. */
  trust: KeyState | string | null;
  data: unknown;
  /** The state's `key_failure` records in seq order (null with `trust`). */
  failures: FailureRecord[] | string | null;
  /** The state's `key_result_chunk` logs in chunk order (null with `trust`). */
  results: (StoredResultLog | ResultLog)[] | string | null;
}

/**
 * Contexts whose result log was read from `key_state.data` in the older whole-log form (whole, not
 * in chunks): their next write stores every chunk of it (resultChanges' `storedWhole`).
 */
export const resultLogsStoredWhole = new WeakSet<KeyContext>();

/**
 * Locks the trust states a batch touches, in failure-key order. `create` keys get a row if they
 * have none; `existingOnly` keys (tool-level states) are locked only if they exist. In the steady
 * state (every key has its row) this is one round trip: placeholders are inserted only for keys
 * this process has not seen yet. The lock sends the row versions this process holds
 * (row-version-cache.ts) and gets a state with its failure rows and result-log chunks back only for
 * a row that is another version; `cacheOwner` is the database handle whose cache that is (`tx` is
 * a transaction). A row another transaction of this process is about to change comes back without
 * its documents either:
 * that transaction tells this process what it wrote before the lock is granted (with 4 writers on
 * one instance, about half of the rows of a lock were such rows, and their histories travelled
 * and were parsed while every writer of the workspace waited).
 */
export async function lockKeyStates(
  tx: Tx,
  workspaceId: string,
  create: { failureKey: string; toolName: string; domain: string | null }[],
  existingOnly: string[],
  ended: EndedSessions,
  cacheOwner: Db | Tx = tx,
): Promise<LockedKeys> {
  const toCreate = [...new Map(create.map((c) => [c.failureKey, c])).values()].sort((a, b) =>
    a.failureKey < b.failureKey ? -1 : a.failureKey > b.failureKey ? 1 : 0,
  );
  const ref = (k: string) => `${workspaceId}\u0000${k}`;
  const created = new Set<string>();
  const insertPlaceholders = async (list: typeof toCreate) => {
    if (!list.length) return;
    const inserted = await tx
      .insert(keyState)
      .values(
        list.map((c) => {
          const ctx = newKeyContext(c.failureKey, c.toolName);
          return { workspaceId, failureKey: c.failureKey, toolName: c.toolName, level: ctx.state.level, domain: c.domain, state: "trusted", effectiveState: "trusted", trust: ctx.state, data: historyOf(ctx) };
        }),
      )
      .onConflictDoNothing()
      .returning({ failureKey: keyState.failureKey });
    for (const r of inserted) created.add(r.failureKey);
  };
  // The contexts this process holds for the keys, taken as the lock statement is made: its answer
  // leaves out the documents of exactly these versions (whatever the cache evicts meanwhile).
  const held = new Map<string, Versioned<KeyContext>>();
  const busy = perDatabase(lockedHere, cacheOwner, () => new Map<string, number>());
  /** The version whose documents the lock's answer may leave out (null: none, send them). */
  const expectedVersion = (k: string): string | null => {
    const entry = keyContexts.get(cacheOwner as Db, workspaceId, k);
    if (entry) held.set(k, entry);
    return busy.has(ref(k)) ? ANY_VERSION : (entry?.version ?? null);
  };
  /** `afresh`: every row with its documents (rows this transaction has locked already). */
  const lockQuery = (keys: string[], afresh = false) => {
    const expected = keys.map((k) => (afresh ? null : expectedVersion(k)));
    // The expected version of a row, by its place in the key list (a plain filter and no join, so
    // the statement stays a single-shard one on Citus).
    const version = sql`(${textArray(expected)})[array_position(${textArray(keys)}, k.failure_key)]`;
    const mine = sql`(${version} = ${ANY_VERSION} or k.xmin::text = ${version})`;
    return sql`select k.failure_key, k.xmin::text as version,
        case when ${mine} then null else k.trust end as trust,
        case when ${mine} then null else k.data end as data,
        case when ${mine} then null else (
          select coalesce(jsonb_agg(f.record order by f.seq), '[]'::jsonb) from ${keyFailure} f
          where f.workspace_id = ${workspaceId} and f.failure_key = k.failure_key
        ) end as failures,
        case when ${mine} then null else (
          select coalesce(jsonb_agg(c.log order by c.chunk), '[]'::jsonb) from ${keyResultChunk} c
          where c.workspace_id = ${workspaceId} and c.failure_key = k.failure_key
        ) end as results
      from ${keyState} k
      where k.workspace_id = ${workspaceId} and k.failure_key = any(${textArray(keys)})
      order by k.failure_key
      for update`;
  };
  const out = new Map<string, KeyContext>();
  // Contexts of another version than the one held when the lock was sent (its answer carried them,
  // or another transaction of this process wrote them meanwhile): their failures may name sessions
  // the timeline read did not ask for.
  const fetched: KeyContext[] = [];
  /** Takes the contexts of locked rows; returns the keys whose rows came without documents this process does not hold. */
  const take = (rows: LockedKeyRow[]): string[] => {
    const unheld: string[] = [];
    for (const r of rows) {
      const kept = held.get(r.failure_key);
      if (r.trust === null) {
        if (kept?.version === r.version) {
          out.set(r.failure_key, kept.value);
          continue;
        }
        // Written by another transaction of this process while the lock waited: held by now,
        // unless that write's answer has not been seen yet (or it rolled back): read again.
        const now = keyContexts.get(cacheOwner as Db, workspaceId, r.failure_key);
        if (now?.version !== r.version) {
          unheld.push(r.failure_key);
          continue;
        }
        fetched.push(now.value);
        out.set(r.failure_key, now.value);
        continue;
      }
      const data = jsonValue<KeyHistory>(r.data);
      const ctx = upgradeKeyContext(jsonValue<KeyState>(r.trust), data, jsonValue<FailureRecord[]>(r.failures), jsonValue<(StoredResultLog | ResultLog)[]>(r.results));
      if ("results" in data) resultLogsStoredWhole.add(ctx);
      fetched.push(ctx);
      out.set(r.failure_key, ctx);
      // Not a placeholder this transaction inserted: its batch rewrites the row under the same
      // xmin, so another batch of this process locking it after the commit would take the
      // placeholder for the written state (a security block overwritten as trusted).
      if (!created.has(r.failure_key)) keyContexts.remember(cacheOwner as Db, workspaceId, r.failure_key, r.version, ctx);
    }
    return unheld;
  };
  const lockRows = async (keys: string[], afresh = false) => (keys.length ? rowsOf<LockedKeyRow>(await tx.execute(lockQuery(keys, afresh))) : []);
  /** take, then the documents of rows it did not get them for (locked already: one more read, rarely). */
  const takeLocked = async (rows: LockedKeyRow[]) => {
    const unheld = take(rows);
    if (unheld.length) take(await lockRows(unheld, true));
  };
  /** Marks `keys` locked by this transaction until it ends (only where that end is known). */
  const markLocked = (keys: string[]) => {
    const refs = keys.map(ref);
    const release = () => {
      for (const r of refs) {
        const n = (busy.get(r) ?? 1) - 1;
        if (n > 0) busy.set(r, n);
        else busy.delete(r);
      }
    };
    if (onTransactionEnd(tx, release)) for (const r of refs) busy.set(r, (busy.get(r) ?? 0) + 1);
  };

  await insertPlaceholders(toCreate.filter((c) => !knownKeyStates.has(ref(c.failureKey))));
  const keys = [...new Set([...toCreate.map((c) => c.failureKey), ...existingOnly])].sort();
  const readTimeline = () => (keys.length || ended.agents.length ? timelineOfKeys(tx, workspaceId, keys, ended) : Promise.resolve([]));
  let timeline: Promise<SessionInfo[]>;
  const pg = postgresJs(tx);
  if (pg && keys.length) {
    // The timeline read goes out right behind the lock (it reads the rows the lock took, not its
    // answer): the rows every writer shares are held one round trip less, and without waiting for
    // this process to get round to sending it.
    const locked = drizzleWrite(tx, lockQuery(keys))(pg) as PromiseLike<LockedKeyRow[]>;
    markLocked(keys);
    // When this process holds the keys' histories, the read asks for the sessions they name by id
    // instead of having PostgreSQL read every failure of the keys to find them (50 keys of the
    // bench's workload: 1.5–2.5 ms instead of 3.8–5.5 when it unpacked their histories, inside the
    // lock); a history the lock's answer brings (changed meanwhile) may name more: completeTimeline. Tool-level states
    // (`existingOnly`) mostly do not exist; one that does and is not held comes with the lock's
    // answer like a changed history.
    const mustExist = new Set(toCreate.map((c) => c.failureKey));
    const named = sessionsNamed(keys.map((k) => held.get(k)?.value ?? (created.has(k) || !mustExist.has(k) ? EMPTY_HISTORY : null)));
    timeline = named ? timelineOfSessions(tx, workspaceId, named, ended) : readTimeline();
    timeline.catch(() => {}); // awaited below; a failed lock is the error reported
    await takeLocked(await locked);
    if (named && fetched.length) timeline = completeTimeline(await timeline, named, sessionsNamed(fetched)!);
  } else {
    await takeLocked(await lockRows(keys));
    timeline = readTimeline();
  }
  // A row this process believed present is gone (a recreated database): create and lock it.
  const missing = toCreate.filter((c) => !out.has(c.failureKey));
  if (missing.length) {
    await insertPlaceholders(missing);
    await takeLocked(await lockRows(missing.map((c) => c.failureKey)));
  }
  if (knownKeyStates.size > 100_000) knownKeyStates.clear();
  for (const c of toCreate) knownKeyStates.add(ref(c.failureKey));
  // Rows created just now (a recreated database) are placeholders: no failures, nothing to add.
  return { contexts: out, created, timeline: await timeline };

  /**
   * The timeline read for the sessions `asked` names, completed for histories the lock's answer
   * brought (`named`): sessions it did not name need the read again with them (one more round trip,
   * rarely: another instance's failures are mostly of sessions already named).
   */
  function completeTimeline(sessions: SessionInfo[], asked: FailedSessions, named: FailedSessions): Promise<SessionInfo[]> {
    const known = new Set(asked.ids.map((id, i) => failedRef(id, asked.agents[i])));
    const more: FailedSessions = { ids: [], agents: [] };
    named.ids.forEach((id, i) => {
      if (known.has(failedRef(id, named.agents[i]))) return;
      more.ids.push(id);
      more.agents.push(named.agents[i]);
    });
    if (!more.ids.length) return Promise.resolve(sessions);
    // The read for both lists is the two reads together: per agent, the starts after the earlier
    // of the two first ends.
    return timelineOfSessions(tx, workspaceId, more, ended).then((extra) => {
      const byId = new Map(sessions.map((x) => [x.sessionId, x]));
      for (const x of extra) byId.set(x.sessionId, x);
      return [...byId.values()];
    });
  }
}

const EMPTY_HISTORY: Pick<KeyContext, "failures"> = { failures: [] };

/** The sessions of a history's failures, each with the agent its failure was recorded under (parallel lists). */
export interface FailedSessions {
  ids: string[];
  agents: (string | null)[];
}

/** A failed session and its failure's agent as one string (sessionsNamed, completeTimeline). */
const failedRef = (sessionId: string, agent: string | null) => `${sessionId}\u0000${agent}`;

/** The distinct sessions one history's failures name, with their refs (failedRef). */
interface NamedInHistory extends FailedSessions {
  refs: string[];
}

/**
 * By history (its failures list): the sessions it names. A held history is never changed — the
 * engine changes a copy (copyKeyContext) and the batch's result is a new one — so each is walked
 * once instead of at every batch that locks its key: with the bench's workload a batch locks ~50
 * keys holding a window's failures each, and that walk was 3.5 % of the server's time per event.
 */
const namedByHistory = new WeakMap<readonly FailureRecord[], NamedInHistory>();

function namedIn(failures: readonly FailureRecord[]): NamedInHistory {
  let named = namedByHistory.get(failures);
  if (named) return named;
  named = { ids: [], agents: [], refs: [] };
  const seen = new Set<string>();
  for (const f of failures) {
    const agent = typeof f.agent === "string" ? f.agent : null;
    const ref = failedRef(f.sessionId, agent);
    if (seen.has(ref)) continue;
    seen.add(ref);
    named.ids.push(f.sessionId);
    named.agents.push(agent);
    named.refs.push(ref);
  }
  namedByHistory.set(failures, named);
  return named;
}

/** The sessions of these histories' failures (null when one is not known). */
function sessionsNamed(histories: (Pick<KeyContext, "failures"> | null)[]): FailedSessions | null {
  const seen = new Set<string>();
  const out: FailedSessions = { ids: [], agents: [] };
  for (const h of histories) {
    if (!h) return null;
    const named = namedIn(h.failures);
    for (let i = 0; i < named.refs.length; i++) {
      if (seen.has(named.refs[i])) continue;
      seen.add(named.refs[i]);
      out.ids.push(named.ids[i]);
      out.agents.push(named.agents[i]);
    }
  }
  return out;
}

/** Sessions of the batch that had ended before it: their later results decay by later starts of their agent. */
export interface EndedSessions {
  agents: string[];
  /** The earliest end (epoch ms), or null when none. */
  since: number | null;
}

/**
 * The timeline session decay needs (SPEC 4.2), given the failures' sessions (`failed`: rows of
 * `session_id` and the `agent` the failure was recorded under): those that have ended, and for
 * each agent of such a failure — or of `ended` — the sessions it started after the earliest such
 * end. A failure's weight decays only by the starts of its agent after its own session ended
 * (decay.ts, sessionsCrossed: the failure's agent, else its session's; a session not in the
 * timeline has not ended), so neither a session still running nor anything before the first end
 * is read.
 * Before, every failure's session and every start of their agents since the earliest failure
 * were read, inside the trust-state locks: with 400 sessions per writer in the bench's workload,
 * ~6,100 rows and ~44 ms per batch, and ingest fell from 4,100 to 2,600 events/s within 96,000.
 */
function timelineStatement(workspaceId: string, failed: SQL, ended: EndedSessions): SQL {
  return sql`
    with failed as (${failed}),
    named as (
      select s.session_id, s.agent, s.started_at, s.ended_at
      from ${agentSession} s
      where s.workspace_id = ${workspaceId} and s.session_id in (select session_id from failed) and s.ended_at is not null
    ),
    ends as (
      select e.agent, min(e.ended_at) as since
      from (
        select coalesce(nullif(f.agent, ''), n.agent, ${DEFAULT_AGENT}) as agent, n.ended_at
        from failed f join named n on n.session_id = f.session_id
        union all
        select a, 'epoch'::timestamptz + ${ended.since}::float8 * interval '1 millisecond'
        from unnest(${textArray(ended.agents)}) as a
      ) e
      where e.ended_at is not null
      group by e.agent
    )
    select session_id, agent, started_at, ended_at from named
    union
    select s.session_id, s.agent, s.started_at, s.ended_at
    from ends join ${agentSession} s on s.workspace_id = ${workspaceId} and s.agent = ends.agent and s.started_at > ends.since`;
}

/** The timeline for the failures of these sessions (timelineStatement). Exported for its tests. */
export async function timelineOfSessions(tx: Tx, workspaceId: string, failed: FailedSessions, ended: EndedSessions): Promise<SessionInfo[]> {
  const rows = sql`select * from unnest(${textArray(failed.ids)}, ${textArray(failed.agents)}) as f(session_id, agent)`;
  return sessionInfos(await tx.execute(timelineStatement(workspaceId, rows, ended)));
}

function sessionInfos(rows: unknown): SessionInfo[] {
  const list = rowsOf<{ session_id: string; agent: string; started_at: string | Date | null; ended_at: string | Date | null }>(rows);
  return list.map((r) => ({ sessionId: r.session_id, agent: r.agent, startedAt: msOf(r.started_at), endedAt: msOf(r.ended_at) }));
}

/**
 * The timeline for the failures these keys keep (timelineStatement), found by PostgreSQL from
 * their `key_failure` rows: the read needs nothing from the lock's answer and goes
 * out right behind it. Exported for its tests.
 */
export async function timelineOfKeys(tx: Tx, workspaceId: string, keys: string[], ended: EndedSessions): Promise<SessionInfo[]> {
  const failed = sql`select f.record->>'sessionId' as session_id, f.record->>'agent' as agent
      from ${keyFailure} f
      where f.workspace_id = ${workspaceId} and f.failure_key = any(${textArray(keys)})`;
  return sessionInfos(await tx.execute(timelineStatement(workspaceId, failed, ended)));
}

const READ_MODEL_PROFILES = fixedStatement(["ws", "keys"], (p) => sql`
  select model, failure_key, attempts, failures, last_failure_at from model_tool_profile
  where workspace_id = ${p.ws} and failure_key = any(${p.keys}::text[])`);

export async function loadModelProfiles(tx: Tx, workspaceId: string, keys: string[]): Promise<Map<string, ModelToolProfile[]>> {
  const out = new Map<string, ModelToolProfile[]>();
  if (!keys.length) return out;
  const rows = await READ_MODEL_PROFILES.runIn<{ model: string; failure_key: string; attempts: number; failures: number; last_failure_at: unknown }>(tx, {
    ws: workspaceId,
    keys: textArrayLiteral([...new Set(keys)]),
  });
  for (const r of rows) {
    const list = out.get(r.failure_key) ?? [];
    list.push({ model: r.model, failureKey: r.failure_key, attempts: r.attempts, failures: r.failures, lastFailureAt: msOf(r.last_failure_at) });
    out.set(r.failure_key, list);
  }
  return out;
}
