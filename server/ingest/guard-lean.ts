/**
 * The lean guard.check (SPEC 7.2): decides and records the `tool.call` in two database round trips
 * (one for a session this process alone writes, below) and without a transaction held across them.
 *
 *  1. One read: the session row, the key's, domain's and tool's trust
 *     states, the global tool pattern, whether the event id was seen, whether the API key is still
 *     active, and the configuration fingerprint (documents only when the cached ones are stale).
 *  2. One write statement, atomic on its own: updates (or creates) the session only if the
 *     row is the version it read, then claims the event id and inserts the event from that row. A
 *     concurrent change of the session makes it write nothing, and the check starts over; a
 *     concurrent claim of the same id fails the whole statement (unique violation), likewise.
 *
 * Under load, the checks of a workspace that arrive together share these statements (group commit,
 * server/ingest/coalescer.ts): a fleet's checks cost a statement and a commit per batch, not per call.
 *
 * A session that only this process writes (an agent's checks, one after the other) needs no read at
 * all: the process holds the row as it wrote it, and the check assumes the rest is as usual — its
 * key, domain and tool trusted, no global pattern, the API key active, the configuration it holds.
 * Its write then carries those assumptions as conditions and applies only if they all still hold; if
 * any does not, it writes nothing and the check reads and decides again. One round trip instead of two
 * for the answer agents wait on before every tool call.
 *
 * Anything beyond the common answer — `ask` (tool-call approvals), a behaviour effect of the call
 * (pattern, nudge, pause, guidance, verdict, turn counters) — returns null and the caller runs the
 * full transactional path, which owns those rules.
 */
import { sql, type SQLWrapper } from "drizzle-orm";
import { isEmbedded, jsonValue, perDatabase, type Db } from "@/db/client";
import { fixedStatement, type Placeholders } from "@/db/fixed-statement";
import { storedSessionBehaviour, type SessionBehaviour } from "@/server/engine/behaviour-state";
import type { AgentEvent, KeyState } from "@/server/engine/types";
import type { BatchScope } from "./scope";
import { cachedConfigs, configDocumentsSql, configFingerprintSql, readConfigs, rememberConfigs, type CachedConfigs } from "@/server/services/config-cache";
import { Coalescer, coalescerFor } from "./coalescer";
import { textArrayLiteral } from "@/db/sql-arrays";
import { guardLevelKeys, guardSession, guardToolCallStep, type GuardSessionFields, type GuardVerdict } from "@/server/engine/guard";
import { ApiKeyRevokedError } from "./api-key-revoked";
import { noteSessionSeen, rememberSession, sessionSeen, sessionSnapshots, trustStates } from "./row-version-cache";
import { isUniqueViolation } from "./sql-errors";
import { applicableHold, foldHold, type HoldRow } from "@/server/services/holds";
import { DEFAULT_AGENT } from "@/server/engine/decay";

type ToolCall = Extract<AgentEvent, { type: "tool.call" }>;

interface SessionRead extends GuardSessionFields {
  /** Null when the read found the version this process holds (row-version-cache.ts). */
  behaviour: unknown;
  /** Absent when decided from memory: the write then checks the holds itself (holdsAsSeen). */
  agent?: string;
  /** Nudges wait for the session (server/services/pending-nudges.ts): the full path delivers them. */
  pending_nudges?: boolean;
  /** The row version (`xmin`): any committed change of the row since it was read changes it. */
  version: string;
}

/** What one check reads; many checks of a workspace are read in one statement (server/ingest/coalescer.ts). */
interface ReadRequest {
  sessionId: string;
  eventId: string;
  toolName: string;
  levelKeys: string[];
  apiKeyId: string | null;
}

interface Inputs {
  /** Null when the workspace is gone. */
  configFingerprint: string | null;
  session: SessionRead | null;
  /** The session's behaviour when the row is still the version this process wrote last. */
  cachedBehaviour: SessionBehaviour | null;
  /** Not read: assumed from memory (`assumedInputs`), for the write to confirm. */
  assumed: boolean;
  states: Map<string, KeyState>;
  globalPattern: boolean;
  duplicate: boolean;
  keyActive: boolean;
  /** The workspace's holds (SPEC 4.6) as read with the session; none assumed when decided from memory. */
  holds: HoldRow[];
}

/**
 * The write applies only if the session row is the version the decision read. Its `xmin` (the
 * transaction that wrote this version) changes with every committed update, whoever made it; comparing
 * it rather than the fields spares sending the ~5 KB behaviour back and PostgreSQL parsing and
 * comparing it as jsonb on every call. (An immutable operator, so Citus routes it like any filter.)
 */
const SESSION_UNCHANGED = sql`u.version is not null and s.xmin = u.version::xid`;

const distinct = <T extends string | null>(values: Iterable<T>): T[] => [...new Set(values)];

/**
 * The values a read probes for, one row each. The array goes through a sub-select so that the
 * planner estimates its length alike whether it sees the parameter's value or not: it then keeps
 * one generic plan for the prepared statement instead of planning it again on every execution
 * (with the value visible, the one-row estimate of a single check always beat the generic
 * plan's, and planning this statement cost ~0.8 ms, four times its execution).
 */
const probeList = (values: SQLWrapper) => sql`unnest((select ${values}::text[]))`;

interface InputsRow {
  config_fingerprint: string | null;
  configs: unknown;
  sessions: unknown;
  states: unknown;
  global_tools: unknown;
  duplicates: unknown;
  active_keys: unknown;
  holds: unknown;
}

/**
 * The inputs of many checks of one workspace in one statement: the sessions, the key/domain/tool
 * states of all their level keys, the global patterns of their tools, which event ids were seen,
 * which API keys are still active, and the configuration fingerprint (documents only when the
 * cached ones are stale). Each lookup is an index probe per value (`lateral … limit 1`), a plan that
 * does not depend on the statistics of the moment: a prepared statement keeps its plan, and one
 * made while a table was small would otherwise scan it whole once it has grown.
 */
const READ_INPUTS = fixedStatement(
  ["ws", "org", "cachedFingerprint", "sessionIds", "heldSessions", "levelKeys", "heldStates", "tools", "eventIds", "apiKeyIds"],
  (p) => sql`
      with cfg as (select ${configFingerprintSql(p.ws)} as fingerprint)
      select
        cfg.fingerprint as config_fingerprint,
        case when cfg.fingerprint is distinct from ${p.cachedFingerprint}::text then ${configDocumentsSql(p.ws)} end as configs,
        (select json_agg(l.j) from unnest((select ${p.sessionIds}::text[]), (select ${p.heldSessions}::text[])) as x(id, held)
          cross join lateral (select json_build_object(
              'session_id', s.session_id, 'agent', s.agent, 'model', s.model, 'paused', s.paused, 'pause_reason', s.pause_reason,
              'pending_nudges', s.pending_nudges,
              'settings', s.settings, 'behaviour', case when s.xmin::text = x.held then null else s.behaviour end,
              'clock', s.clock, 'first_event_at', s.first_event_at,
              'event_count', s.event_count, 'call_count', s.call_count, 'version', s.xmin::text) as j
            from agent_session s where s.workspace_id = ${p.ws} and s.session_id = x.id limit 1) l) as sessions,
        (select json_agg(l.j) from unnest((select ${p.levelKeys}::text[]), (select ${p.heldStates}::text[])) as x(k, held)
          cross join lateral (select json_build_object('k', k.failure_key, 'v', k.xmin::text,
              's', case when k.xmin::text = x.held then null else k.trust end) as j
            from key_state k where k.workspace_id = ${p.ws} and k.failure_key = x.k limit 1) l) as states,
        (select json_agg(x.t) from ${probeList(p.tools)} as x(t)
          cross join lateral (select 1 from global_tool_pattern g
            where g.organization_id = ${p.org} and g.tool_name = x.t and g.status = 'active' limit 1) l) as global_tools,
        (select json_agg(x.id) from ${probeList(p.eventIds)} as x(id)
          cross join lateral (select 1 from event_id e where e.workspace_id = ${p.ws} and e.id = x.id limit 1) l) as duplicates,
        (select json_agg(x.id) from ${probeList(p.apiKeyIds)} as x(id)
          cross join lateral (select 1 from api_key a where a.workspace_id = ${p.ws} and a.id = x.id and a.revoked_at is null limit 1) l) as active_keys,
        (select json_agg(json_build_object('scope', h.scope, 'target', h.target, 'reason', h.reason)) from operator_hold h
          where h.workspace_id = ${p.ws}) as holds
      from cfg`,
);

/** The inputs of many checks of one workspace (READ_INPUTS), and the caches brought up to date with them. */
async function readInputs(db: Db, scope: BatchScope, requests: ReadRequest[]): Promise<Inputs[]> {
  const ws = scope.workspaceId;
  const cached = cachedConfigs(db, ws);
  const sessionIds = distinct(requests.map((r) => r.sessionId));
  // The behaviour documents this process holds, taken now: the statement compares their versions.
  const held = sessionIds.map((id) => sessionSnapshots.get(db, ws, id));
  const levelKeys = distinct(requests.flatMap((r) => r.levelKeys));
  const heldStates = levelKeys.map((k) => trustStates.get(db, ws, k));
  const [row] = await READ_INPUTS.run<InputsRow>(db, {
    ws,
    org: scope.organizationId,
    cachedFingerprint: cached?.fingerprint ?? null,
    sessionIds: textArrayLiteral(sessionIds),
    heldSessions: textArrayLiteral(held.map((h) => h?.version ?? null)),
    levelKeys: textArrayLiteral(levelKeys),
    heldStates: textArrayLiteral(heldStates.map((h) => h?.version ?? null)),
    tools: textArrayLiteral(distinct(requests.map((r) => r.toolName))),
    eventIds: textArrayLiteral(distinct(requests.map((r) => r.eventId))),
    apiKeyIds: textArrayLiteral(distinct(requests.map((r) => r.apiKeyId).filter((id) => id !== null))),
  });
  const docs = row.configs ? jsonValue<{ ws: unknown; org: unknown }>(row.configs) : null;
  // Stale cached documents are replaced here, once for the batch; each check compares with what it used.
  if (docs && row.config_fingerprint) rememberConfigs(db, ws, row.config_fingerprint, docs.ws, docs.org);
  const sessions = new Map((jsonValue<(SessionRead & { session_id: string })[] | null>(row.sessions) ?? []).map((s) => [s.session_id, s]));
  const states = new Map<string, KeyState>();
  const heldByKey = new Map(levelKeys.map((k, i) => [k, heldStates[i]]));
  for (const st of jsonValue<{ k: string; v: string; s: unknown }[] | null>(row.states) ?? []) {
    const mine = heldByKey.get(st.k);
    if (st.s === null && mine?.version === st.v) states.set(st.k, mine.value);
    else {
      const state = jsonValue<KeyState>(st.s);
      states.set(st.k, state);
      trustStates.remember(db, ws, st.k, st.v, state);
    }
  }
  const globalTools = new Set(jsonValue<string[] | null>(row.global_tools) ?? []);
  for (const tool of distinct(requests.map((r) => r.toolName))) noteGlobalPattern(db, scope.organizationId, tool, globalTools.has(tool));
  const duplicates = new Set(jsonValue<string[] | null>(row.duplicates) ?? []);
  const activeKeys = new Set(jsonValue<string[] | null>(row.active_keys) ?? []);
  const holds = jsonValue<HoldRow[] | null>(row.holds) ?? [];
  for (const id of sessions.keys()) noteSessionSeen(db, ws, id);
  const heldBy = new Map(sessionIds.map((id, i) => [id, held[i]]));
  return requests.map((r) => {
    const session = sessions.get(r.sessionId) ?? null;
    const mine = heldBy.get(r.sessionId);
    return {
    configFingerprint: row.config_fingerprint,
    session,
    cachedBehaviour: session && mine && session.version === mine.version ? mine.value.behaviour : null,
    assumed: false,
    states,
    globalPattern: globalTools.has(r.toolName),
    duplicate: duplicates.has(r.eventId),
    keyActive: r.apiKeyId === null || activeKeys.has(r.apiKeyId),
    holds,
    };
  });
}

/**
 * Tools with an active global pattern as the last read saw them, per database client: a check of
 * such a tool is read first (its write would fail the assumption of no pattern). A hint only — the
 * write checks the pattern itself.
 */
const globalPatternHints = new WeakMap<object, Set<string>>();
const hintsOf = (db: Db) => perDatabase(globalPatternHints, db, () => new Set<string>());
const hintKey = (organizationId: string, tool: string) => `${organizationId}\u0000${tool}`;

function noteGlobalPattern(db: Db, organizationId: string, tool: string, active: boolean) {
  const hints = hintsOf(db);
  if (!active) hints.delete(hintKey(organizationId, tool));
  else if (hints.size < 10_000) hints.add(hintKey(organizationId, tool));
}

/**
 * The inputs of a check decided without reading, or null when it must read: the session as this
 * process last wrote it (and nobody else has been writing it) — or, one it has never seen, a new
 * session, which the write creates only if no row exists —, its key, domain and tool trusted as
 * far as this process knows (a state it holds that is not trusted is read), no global pattern
 * known, the API key active, the configuration it holds. The decision from these is the common
 * `allow`; the write applies it only if every one of them still holds (WRITE_CHECKS).
 */
function assumedInputs(db: Db, scope: BatchScope, ev: ToolCall, levelKeys: string[], configs: CachedConfigs): Inputs | null {
  const held = sessionSnapshots.get(db, scope.workspaceId, ev.sessionId);
  if (held ? !held.value.settled : sessionSeen(db, scope.workspaceId, ev.sessionId)) return null;
  const states = new Map<string, KeyState>();
  for (const k of levelKeys) {
    const state = trustStates.get(db, scope.workspaceId, k)?.value;
    if (state && state.state !== "trusted") return null;
    if (state) states.set(k, state);
  }
  if (hintsOf(db).has(hintKey(scope.organizationId, ev.toolName))) return null;
  return {
    configFingerprint: configs.fingerprint,
    session: held ? { ...held.value.fields, behaviour: null, version: held.version } : null,
    cachedBehaviour: held?.value.behaviour ?? null,
    states,
    globalPattern: false,
    duplicate: false,
    keyActive: true,
    assumed: true,
    holds: [],
  };
}

/**
 * What one check writes: its session (created, or updated if unchanged since read) and its event.
 * Column names as in the write statement, which reads a batch as one JSON document.
 */
interface WriteRequest {
  session_id: string;
  /** The session version read, or null for a new session. */
  version: string | null;
  clock: number;
  at: string;
  first_event_at: string;
  event_count: number;
  call_count: number;
  model: string | null;
  behaviour: unknown;
  event_id: string;
  event_ts: string;
  tool_name: string;
  call_id: string;
  failure_key: string;
  turn_index: number | null;
  payload: unknown;
  /** Decided from `assumedInputs`: written only if they hold, checked against the next four. */
  assumed: boolean;
  fingerprint: string;
  level_keys: string[];
  api_key_id: string | null;
  /** Whether a hold applied to the session when decided: the write applies only if that still holds (holdsAsSeen). */
  held: boolean;
}

/** The columns of a check's write as the statements read them from the batch's JSON document (WriteRequest). */
const WRITE_COLUMNS = sql`session_id text, version text, clock bigint, at timestamptz, first_event_at timestamptz, event_count integer,
          call_count integer, model text, behaviour json, event_id text, event_ts timestamptz, tool_name text, call_id text,
          failure_key text, turn_index integer, payload jsonb, assumed boolean, fingerprint text, level_keys text[], api_key_id text, held boolean`;

type WritePlaceholders = Placeholders<"ws" | "org" | "batch">;

/**
 * Whether what check `g` assumed holds. A check decided without reading (assumedInputs) is written
 * only if it does: the configuration it used, its API key active, no level key out of trust, no
 * global pattern.
 */
const inputsHold = (p: WritePlaceholders) => sql`(not g.assumed or (
          g.fingerprint = ${configFingerprintSql(p.ws)}
          and (g.api_key_id is null or exists (select 1 from api_key a where a.workspace_id = ${p.ws} and a.id = g.api_key_id and a.revoked_at is null))
          and not exists (select 1 from key_state k where k.workspace_id = ${p.ws} and k.failure_key = any(g.level_keys) and k.state <> 'trusted')
          and not exists (select 1 from global_tool_pattern t where t.organization_id = ${p.org} and t.tool_name = g.tool_name and t.status = 'active')
        ))`;

/**
 * Whether a hold over the session (the workspace's, or its agent's) exists as the check saw it: a
 * hold set or lifted since — on any instance — makes the write apply nothing, and the check reads
 * and decides again. Two primary-key probes.
 */
const holdsAsSeen = (p: WritePlaceholders, agent: SQLWrapper) => sql`(exists (select 1 from operator_hold h where h.workspace_id = ${p.ws} and h.scope = 'workspace' and h.target = '')
          or exists (select 1 from operator_hold h where h.workspace_id = ${p.ws} and h.scope = 'agent' and h.target = ${agent})) = u.held`;

/** The session's new fields, from the check's row `u`. */
const SESSION_UPDATE = sql`clock = u.clock, last_event_at = u.at, first_event_at = u.first_event_at,
          event_count = u.event_count, call_count = u.call_count, model = u.model, behaviour = u.behaviour`;

/** After `ok` (the sessions written, with their new versions): each such check claims its event id and inserts its event. */
const claimAndRecord = (p: WritePlaceholders) => sql`
      claim as (
        insert into event_id (workspace_id, id, ts)
        select ${p.ws}, u.event_id, u.event_ts from u join ok on ok.session_id = u.session_id order by u.event_id
        returning id
      ),
      ev as (
        insert into event (workspace_id, id, session_id, type, ts, model, tool_name, call_id, failure_key, turn_index, payload)
        select ${p.ws}, claim.id, u.session_id, 'tool.call', u.at, u.model, u.tool_name, u.call_id, u.failure_key, u.turn_index, u.payload
        from claim join u on u.event_id = claim.id
        returning id, session_id
      )
      select ev.id, ok.version from ev join ok on ok.session_id = ev.session_id`;

/**
 * Many checks' writes in one statement, atomic as a whole: each session is updated only if it is
 * the version its check read (or created if it was new), then each such check claims its event id
 * and inserts its event. A check whose session changed meanwhile (or, decided without reading, one
 * whose assumptions no longer hold) writes nothing and reads again; a
 * concurrent claim of one of the ids fails the statement (unique violation), and the coalescer
 * runs its checks one by one. Answers, per check, the version its session row has now (the
 * `xmin` this statement gave it), or null when the check was not written.
 *
 * The sessions are locked in id order first, as ingest locks them (server/services/workspace-locks.ts): two
 * statements on their way with the same sessions in another order deadlocked, and PostgreSQL takes
 * a second (deadlock_timeout) to find that and fail one of them. An update's own order follows its
 * plan (a bitmap scan's is the rows' places on disk). Each session is reached by its key, one probe
 * per id in id order, whatever the statistics were when the statement was prepared: a `session_id =
 * any(…)` filter planned while the table was small kept scanning it whole as it grew (a run's
 * sessions, ~10 % of PostgreSQL's time per check within minutes).
 *
 * The batch travels as one JSON parameter (`json_to_recordset`): one serialization and one parse
 * of the behaviour documents, not one per column and escaping level. As `json`, not `jsonb`: the
 * behaviour goes into its json column as sent (db/schema.ts), and only the small payloads are built
 * into jsonb.
 */
export const WRITE_CHECKS = fixedStatement(["ws", "org", "batch", "updated"], (p) => sql`
      with u as materialized (
        select g.*, ${inputsHold(p)} as inputs_hold
        from json_to_recordset(${p.batch}::json) as g(${WRITE_COLUMNS})
      ),
      -- Sessions are locked in one order (by id) before they are updated: batches on their way at
      -- once may hold the same sessions (a coding agent's parallel tool calls), in any order.
      locked as materialized (
        select l.session_id from (select x.id from ${probeList(p.updated)} as x(id) order by x.id) x
        cross join lateral (
          select s.session_id from agent_session s where s.workspace_id = ${p.ws} and s.session_id = x.id for update
        ) l
      ),
      upd as (
        update agent_session s set ${SESSION_UPDATE}
        from u join locked l on l.session_id = u.session_id
        -- the list of ids lets the plan reach the rows by primary key whatever the statistics said
        where s.workspace_id = ${p.ws} and s.session_id = any(${p.updated}::text[]) and s.session_id = u.session_id
          and ${SESSION_UNCHANGED} and u.inputs_hold and ${holdsAsSeen(p, sql`s.agent`)}
        returning s.session_id, s.xmin::text as version
      ),
      ins as (
        insert into agent_session (workspace_id, session_id, clock, last_event_at, first_event_at, event_count, call_count, model, behaviour)
        select ${p.ws}, u.session_id, u.clock, u.at, u.at, 1, 1, u.model, u.behaviour
        from u where u.version is null and u.inputs_hold and ${holdsAsSeen(p, sql`${DEFAULT_AGENT}::text`)} order by u.session_id
        on conflict do nothing
        returning session_id, xmin::text as version
      ),
      ok as (select session_id, version from upd union all select session_id, version from ins),${claimAndRecord(p)}`);

/**
 * WRITE_CHECKS for the commonest batch of all: one check of a session already stored — an agent's
 * checks one after the other. One row has no lock order to keep and there is no session to create,
 * so the plan has about half the nodes, and PostgreSQL starts every one of them on each execution
 * (at one client, starting WRITE_CHECKS' plan was about a fifth of PostgreSQL's time per check).
 * The session is reached by its key (`session`), whatever the statistics say.
 */
export const WRITE_ONE_STORED_CHECK = fixedStatement(["ws", "org", "batch", "session"], (p) => sql`
      with u as materialized (
        select g.*, ${inputsHold(p)} as inputs_hold
        from json_to_recordset(${p.batch}::json) as g(${WRITE_COLUMNS})
      ),
      ok as (
        update agent_session s set ${SESSION_UPDATE}
        from u
        where s.workspace_id = ${p.ws} and s.session_id = ${p.session}::text and s.session_id = u.session_id
          and ${SESSION_UNCHANGED} and u.inputs_hold and ${holdsAsSeen(p, sql`s.agent`)}
        returning s.session_id, s.xmin::text as version
      ),${claimAndRecord(p)}`);

async function writeChecks(db: Db, scope: BatchScope, requests: WriteRequest[]): Promise<(string | null)[]> {
  const common = { ws: scope.workspaceId, org: scope.organizationId, batch: JSON.stringify(requests) };
  const [only] = requests;
  const written = await (requests.length === 1 && only.version !== null
    ? WRITE_ONE_STORED_CHECK.run<{ id: string; version: string }>(db, { ...common, session: only.session_id })
    : WRITE_CHECKS.run<{ id: string; version: string }>(db, { ...common, updated: textArrayLiteral(requests.filter((r) => r.version !== null).map((r) => r.session_id)) }));
  const versions = new Map(written.map((r) => [r.id, r.version]));
  return requests.map((r) => versions.get(r.event_id) ?? null);
}

/** Readers and writers per database client and workspace. */
const readers = new WeakMap<object, Map<string, Coalescer<ReadRequest, Inputs>>>();
const writers = new WeakMap<object, Map<string, Coalescer<WriteRequest, string | null>>>();
/**
 * Batches on their way at once per workspace and kind: below this, a check goes at once (no added
 * latency at light load); beyond it, checks gather. 8 + 8 fit the default pool of 10 connections.
 * PGlite runs one statement at a time: a second batch on its way would only queue inside it, where
 * later checks can no longer join it.
 */
const inFlightFor = (db: Db) => (isEmbedded(db) ? 1 : 8);
export const DEFAULT_GUARD_BATCH_SIZE = 64;

/** `VIGIL_GUARD_BATCH_SIZE`: checks per shared statement, a whole number ≥ 1 (1 = every check alone). */
export function guardBatchSizeFromEnv(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return DEFAULT_GUARD_BATCH_SIZE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`VIGIL_GUARD_BATCH_SIZE must be a whole number ≥ 1 (1 = no group commit), got "${raw}"`);
  return n;
}
// Start-up (server/runtime.ts) rejects a bad value with its name; here it never throws.
const MAX_BATCH = (() => {
  try {
    return guardBatchSizeFromEnv(process.env.VIGIL_GUARD_BATCH_SIZE);
  } catch {
    return DEFAULT_GUARD_BATCH_SIZE;
  }
})();

function readerFor(db: Db, scope: BatchScope) {
  return coalescerFor(readers, db, scope.workspaceId, () =>
    new Coalescer({ run: (items) => readInputs(db, scope, items), maxInFlight: inFlightFor(db), maxBatch: MAX_BATCH }));
}

function writerFor(db: Db, scope: BatchScope) {
  return coalescerFor(writers, db, scope.workspaceId, () =>
    new Coalescer({ run: (items) => writeChecks(db, scope, items), maxInFlight: inFlightFor(db), maxBatch: MAX_BATCH, keysOf: (w) => ["s:" + w.session_id, "e:" + w.event_id] }));
}

/** Decides a guard.check in one round trip (`assumedInputs`) or two, or returns null when the full path must run. */
export async function leanGuardCheck(db: Db, scope: BatchScope, ev: ToolCall, apiKeyId: string | null): Promise<GuardVerdict | null> {
  let mayAssume = true;
  for (let attempt = 0; attempt < 4; attempt++) {
    let configs = cachedConfigs(db, scope.workspaceId);
    // Without cached configuration the level keys are unknown: read the documents first (once).
    if (!configs) {
      const read = await readConfigs(db, db, scope.workspaceId);
      if (!read) return null;
      configs = read.configs;
    }
    let keys = guardLevelKeys(ev, configs);
    const assumed = mayAssume ? assumedInputs(db, scope, ev, keys.levelKeys, configs) : null;
    mayAssume = false; // an assumption that failed is not made twice: the next attempt reads
    const inputs = assumed ?? (await readerFor(db, scope).submit({ sessionId: ev.sessionId, eventId: ev.id, toolName: ev.toolName, levelKeys: keys.levelKeys, apiKeyId }));
    if (!inputs.keyActive) throw new ApiKeyRevokedError();
    if (!inputs.configFingerprint) return null;
    const current = cachedConfigs(db, scope.workspaceId);
    if (current && current !== configs) {
      // The configuration changed since this check looked (the read refreshed the cache, or another
      // check's did): use the new one; read again if it moves the keys.
      configs = current;
      const fresh = guardLevelKeys(ev, configs);
      if (fresh.levelKeys.join("\u0000") !== keys.levelKeys.join("\u0000")) continue;
      keys = fresh;
    }

    const stored = inputs.session;
    // Nudges wait for the session: the full path delivers them with its answer.
    if (stored?.pending_nudges) return null;
    // A hold over the session pauses this decision; the row keeps its own pause.
    const hold = applicableHold(inputs.holds, stored?.agent ?? DEFAULT_AGENT);
    const step = guardToolCallStep({
      call: ev,
      keys,
      stored,
      cachedBehaviour: inputs.cachedBehaviour,
      session: foldHold(guardSession(stored), hold),
      configs,
      states: inputs.states,
      globalPattern: inputs.globalPattern,
      duplicate: inputs.duplicate,
    });
    if (!step) return null;
    const { verdict } = step;
    if (step.duplicate) return verdict; // already recorded: answer from the current state, write nothing

    const { fields, info } = step;
    const write = writerFor(db, scope).submit({
      session_id: ev.sessionId,
      version: stored?.version ?? null,
      clock: fields.clock,
      at: step.at,
      first_event_at: fields.first_event_at,
      event_count: fields.event_count,
      call_count: fields.call_count,
      model: fields.model,
      behaviour: storedSessionBehaviour(step.behaviour),
      event_id: ev.id,
      event_ts: new Date(ev.ts).toISOString(),
      tool_name: ev.toolName,
      call_id: ev.callId,
      failure_key: info.failureKey,
      turn_index: ev.turnIndex ?? null,
      payload: step.payload,
      assumed: inputs.assumed,
      fingerprint: inputs.configFingerprint,
      level_keys: keys.levelKeys,
      api_key_id: apiKeyId,
      held: hold !== null,
    });
    // Assumed not seen before: a repeated id (a client's retry) fails the write; read, and answer as recorded.
    const written = inputs.assumed ? await write.catch((err: unknown) => (isUniqueViolation(err) ? null : Promise.reject(err))) : await write;
    if (written !== null) {
      // Settled when nobody else wrote the row since this process did (or it is new): see SessionSnapshot.
      const settled = inputs.assumed || stored === null || inputs.cachedBehaviour !== null;
      rememberSession(db, scope.workspaceId, ev.sessionId, written, { fields, behaviour: step.behaviour, settled });
      return verdict;
    }
    // The session changed between the two round trips (or an assumption failed): decide again from what is stored.
  }
  return null;
}
