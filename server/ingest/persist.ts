/** Writing a batch's outcome: bulk inserts and multi-row upserts, one statement per table. */
import { and, eq, getTableColumns, getTableName, inArray, sql, type SQL } from "drizzle-orm";
import { randomInt } from "node:crypto";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { dialect, drizzleWrite, leaveInFlight, runWrites, type Write } from "./pipeline";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { PATTERN_TYPES, type KeyContext } from "@/server/engine/types";
import { keyContexts, trustStates } from "./row-version-cache";
import { storableJson } from "@/db/storable";
import { inlineParams } from "@/db/fixed-statement";
import { textArray } from "@/db/sql-arrays";
import {
  agentSession,
  approval,
  dailyKeyStat,
  dailyKeyTotal,
  dailyNudgeStat,
  dailyPatternStat,
  dailyToolStat,
  event,
  failure,
  keyFailure,
  keyResultChunk,
  keyState,
  modelBehaviourProfile,
  modelSuggestion,
  modelToolProfile,
  nudge,
  patternDetection,
  stateTransition,
} from "@/db/schema";
import { DOMAIN_PREFIX, TOOL_PREFIX, effectiveState } from "@/server/engine/key-state";
import { failureChanges, historyOf, resultChanges } from "@/server/engine/key-history";
import { storedSessionBehaviour } from "@/server/engine/behaviour-state";
import { storedDomain, type BatchConfigs, type BatchOutcome, type BatchRecords, type BatchSession, type SessionPhaseOutcome } from "@/server/engine/batch";
import type { BatchScope } from "./scope";
import { resultLogsStoredWhole, type WorkspaceConfigs } from "./load";
import { refreshPromotion } from "./promotion";
import { PROMOTION_MIN_WORKSPACES } from "@/server/engine/promotion";
import { refreshEffectiveStates } from "@/server/services/key-state-writer";
import { failureGroupRollupWrites } from "@/server/services/failure-group-rollup";

/** The engine's records of a batch (server/engine/batch.ts), written as they are. */
export type BatchWrites = BatchRecords;

const CHUNK = 1000;
const chunksOf = <T>(rows: T[]): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
};

const date = (ms: number | null) => (ms === null ? null : new Date(ms));

/** A conflict rule of rowsWrite: keep it a module constant, its statements are made once per rule. */
export interface OnConflict<T extends PgTable> {
  target: PgColumn[];
  /** Column property → SQL expression (`excluded.x`, `${table.col} + excluded.x`); no parameters. */
  set: Partial<Record<keyof T["$inferInsert"], SQL>>;
}

/**
 * A multi-row insert/upsert with the rows as one JSON document: one `JSON.stringify` of the rows as
 * the engine made them (Dates become ISO times, jsonb columns nest), a statement text that stays the
 * same for a table (prepared once), and none of drizzle's per-value builder work nor the driver's
 * per-element array escaping — which together were a fifth of the server's time per ingested event.
 *
 * Each row travels as an array of its values in column order (`jsonb_array_elements`, then `r->>i`),
 * not as an object, and the workspace, the same in every row, as a parameter of its own: PostgreSQL
 * parses the document into jsonb before a row is taken from it, and objects cost it a key string per
 * column per row and a sort of their keys (an event row: 430 bytes instead of 595, and about half
 * PostgreSQL's time for the insert). Rows must all set the same columns, as the batch writers build
 * them; others go through drizzle.
 */
function rowsWrite<T extends PgTable>(tx: Tx, table: T, rows: T["$inferInsert"][], onConflict?: OnConflict<T>, returning?: Returning): Write[] {
  if (!rows.length) return [];
  const columns = getTableColumns(table) as unknown as Record<string, PgColumn>;
  const first = rows[0] as Record<string, unknown>;
  const props = Object.keys(first).filter((p) => p in columns);
  const uniform = rows.every((r) => Object.keys(r as object).length === Object.keys(first).length);
  if (!uniform)
    return chunksOf(rows).map((part) => {
      const q = tx.insert(table).values(part as never);
      return drizzleWrite(tx, onConflict ? q.onConflictDoUpdate({ target: onConflict.target, set: onConflict.set as never }) : q);
    });
  const workspaceId = "workspaceId" in first && rows.every((r) => (r as { workspaceId?: unknown }).workspaceId === first.workspaceId) ? (first.workspaceId as string) : null;
  const carried = props.filter((p) => !(workspaceId !== null && p === "workspaceId"));
  const statement = rowsStatement(table, props, workspaceId !== null, onConflict, returning);
  return [
    (pg) => {
      const doc = storableJson(rows.map((r) => carried.map((p) => columnValue((r as Record<string, unknown>)[p]))));
      const params = workspaceId === null ? [doc] : [doc, workspaceId];
      const written = pg ? pg.unsafe(statement, params as never).execute() : tx.execute(inlineParams(statement, params));
      return returning ? written.then((result) => returning.onRows(rowsOf(result))) : written;
    },
  ];
}

/**
 * A column's value as rowsWrite's document carries it. A Date becomes its ISO time here, not in
 * JSON.stringify: a document with Date objects in it leaves stringify's fast path, and an event
 * row then cost ~5.8 µs instead of ~3.1 (a trust-state row ~18 instead of ~10; ~3 % of the
 * server's time per ingested event). An invalid Date is null, as its toJSON gives.
 */
function columnValue(v: unknown): unknown {
  if (!(v instanceof Date)) return v;
  return Number.isNaN(v.getTime()) ? null : v.toISOString();
}

/** rowsWrite's statements, made once per table (or conflict rule) and set of columns. */
const rowsStatements = new WeakMap<object, Map<string, string>>();

/** The statement of rowsWrite: the document is $1 and, with `workspaceParam`, the workspace $2. */
function rowsStatement<T extends PgTable>(table: T, props: string[], workspaceParam: boolean, onConflict?: OnConflict<T>, returning?: Returning): string {
  let made = rowsStatements.get(onConflict ?? table);
  if (!made) rowsStatements.set(onConflict ?? table, (made = new Map()));
  const signature = `${props.join(",")}|${workspaceParam}|${returning?.columns ?? ""}`;
  const known = made.get(signature);
  if (known) return known;
  const columns = getTableColumns(table) as unknown as Record<string, PgColumn>;
  const carried = props.filter((p) => !(workspaceParam && p === "workspaceId"));
  const q = (n: string) => `"${n.replaceAll('"', '""')}"`;
  const valueOf = (p: string) => {
    if (workspaceParam && p === "workspaceId") return "$2::text";
    const at = carried.indexOf(p);
    const type = columns[p].getSQLType();
    // A JSON null is SQL NULL in a jsonb column too, as jsonb_to_recordset read it.
    return type === "jsonb" ? `nullif(r->${at}, 'null'::jsonb)` : `(r->>${at})::${type}`;
  };
  // The statement around the document ($1) and the workspace ($2): `${head}$1::jsonb${tail}`.
  const head = `insert into ${q(getTableName(table))} (${props.map((p) => q(columns[p].name)).join(", ")}) select ${props.map(valueOf).join(", ")} from jsonb_array_elements(`;
  let tail = `) as r`;
  if (onConflict) {
    const sets = Object.entries(onConflict.set as Record<string, SQL>).map(([prop, expr]) => {
      const rendered = dialect.sqlToQuery(expr);
      if (rendered.params.length) throw new Error("rowsWrite: conflict expressions cannot take parameters");
      return `${q(columns[prop].name)} = ${rendered.sql}`;
    });
    tail += ` on conflict (${onConflict.target.map((c) => q(c.name)).join(", ")}) do update set ${sets.join(", ")}`;
  }
  if (returning) tail += ` returning ${returning.columns}`;
  const statement = `${head}$1::jsonb${tail}`;
  made.set(signature, statement);
  return statement;
}

/** What a rowsWrite statement returns (SQL column expressions), and what receives those rows. */
interface Returning {
  columns: string;
  onRows: (rows: Record<string, unknown>[]) => void;
}

/** Trust-state rows: the batch's state, metrics and where its result log begins. */
const KEY_STATE_UPSERT: OnConflict<typeof keyState> = {
  target: [keyState.workspaceId, keyState.failureKey],
  set: {
    toolName: sql`excluded.tool_name`,
    domain: sql`coalesce(excluded.domain, ${keyState.domain})`,
    pluginName: sql`coalesce(excluded.plugin_name, ${keyState.pluginName})`,
    state: sql`excluded.state`,
    effectiveState: sql`excluded.effective_state`,
    effectiveFailures: sql`excluded.effective_failures`,
    threshold: sql`excluded.threshold`,
    consecutiveFailures: sql`excluded.consecutive_failures`,
    totalCalls: sql`excluded.total_calls`,
    totalFailures: sql`excluded.total_failures`,
    lastFailureAt: sql`excluded.last_failure_at`,
    lastEventAt: sql`excluded.last_event_at`,
    escalationExpires: sql`excluded.escalation_expires`,
    trust: sql`excluded.trust`,
    data: sql`excluded.data`,
    updatedAt: sql`excluded.updated_at`,
  },
};

/** A state's failure rows: a seq taken again (a state recreated under it) holds the new record. */
const KEY_FAILURE_UPSERT: OnConflict<typeof keyFailure> = {
  target: [keyFailure.workspaceId, keyFailure.failureKey, keyFailure.seq],
  set: { record: sql`excluded.record` },
};

/** A result-log chunk: written whole, over the stored one. */
const KEY_RESULT_CHUNK_UPSERT: OnConflict<typeof keyResultChunk> = {
  target: [keyResultChunk.workspaceId, keyResultChunk.failureKey, keyResultChunk.chunk],
  set: { log: sql`excluded.log` },
};

/** Session rows: every column the batch sets. */
const SESSION_UPSERT: OnConflict<typeof agentSession> = {
  target: [agentSession.workspaceId, agentSession.sessionId],
  set: Object.fromEntries(
    [
      "agent", "model", "started_at", "ended_at", "first_event_at", "last_event_at", "clock", "paused",
      "pause_reason", "paused_at", "settings", "behaviour", "event_count", "call_count", "failure_count", "pattern_count",
    ].map((c) => [camel(c), sql.raw(`excluded.${c}`)]),
  ),
};

/** Model profiles: increments. */
const MODEL_TOOL_PROFILE_INCREMENT: OnConflict<typeof modelToolProfile> = {
  target: [modelToolProfile.workspaceId, modelToolProfile.model, modelToolProfile.failureKey],
  set: {
    attempts: sql`${modelToolProfile.attempts} + excluded.attempts`,
    failures: sql`${modelToolProfile.failures} + excluded.failures`,
    lastFailureAt: sql`coalesce(excluded.last_failure_at, ${modelToolProfile.lastFailureAt})`,
  },
};

/** Daily roll-ups: increments. */
const DAILY_STAT_INCREMENT: OnConflict<typeof dailyToolStat> = {
  target: [dailyToolStat.workspaceId, dailyToolStat.day, dailyToolStat.toolName, dailyToolStat.failureKey],
  set: { results: sql`${dailyToolStat.results} + excluded.results`, failures: sql`${dailyToolStat.failures} + excluded.failures` },
};

/**
 * Writes the session phase of a batch (server/engine/session-phase.ts): the event log, patterns, nudges and
 * their verdicts, and the sessions — rows this transaction alone writes (its sessions are locked),
 * sent before the trust-state rows every writer shares are locked.
 */
export async function writeSessionPhase(tx: Tx, scope: BatchScope, phase: SessionPhaseOutcome): Promise<void> {
  const { workspaceId } = scope;
  const writes = phase.records;
  const statements: Write[] = [...rowsWrite(tx, event, writes.events), ...rowsWrite(tx, patternDetection, writes.patterns)];
  // Verdicts on stored nudges before this batch's nudges are written: a verdict never refers to a
  // nudge of its own batch (those carry theirs), even one sent within the same millisecond.
  if (writes.nudgeVerdicts.length) {
    statements.push(drizzleWrite(tx, sql`
      update nudge set effective = v.effective
      from json_to_recordset(${JSON.stringify(writes.nudgeVerdicts.map((v) => ({ ...v, sentAt: new Date(v.sentAt).toISOString() })))}::json)
        as v("sessionId" text, "patternType" text, "sentAt" timestamptz, effective boolean)
      where nudge.workspace_id = ${workspaceId} and nudge.session_id = v."sessionId" and nudge.pattern_type = v."patternType"
        and nudge.ts = v."sentAt" and nudge.effective is null`));
  }
  statements.push(...rowsWrite(tx, nudge, writes.nudges));
  statements.push(...sessionWrites(tx, workspaceId, phase.sessions));
  await runWrites(tx, statements);
}

/**
 * Writes the trust phase of a batch: failures, transitions, severity upgrades of the event rows
 * written before, trust states, approvals and (unless the caller defers them) the shared counters —
 * set-based, one statement per table, rows in key order; no reads (the configuration is the one
 * the engine ran with).
 */
export interface TrustPhaseWriteOptions {
  sharedCounters: boolean;
  /** The contexts the batch locked, as the engine got them: their failures and result logs are the stored rows the batch's changes apply to. */
  before: ReadonlyMap<string, KeyContext>;
  /** The database handle whose key-context cache (row-version-cache.ts) learns the written rows' versions. */
  cacheOwner: Db | Tx;
}

export async function writeTrustPhase(tx: Tx, scope: BatchScope, configs: WorkspaceConfigs, outcome: BatchOutcome, options: TrustPhaseWriteOptions): Promise<void> {
  const { workspaceId } = scope;
  const { records: writes, contexts, keyDomains, keyPlugins, keyMetrics } = outcome;

  const statements: Write[] = [...rowsWrite(tx, failure, writes.failures), ...rowsWrite(tx, stateTransition, writes.transitions)];
  if (outcome.severityUpgrades.length) {
    statements.push(drizzleWrite(tx, sql`
      update event set severity = v.severity
      from json_to_recordset(${JSON.stringify(outcome.severityUpgrades)}::json) as v(id text, ts timestamptz, severity text)
      where event.workspace_id = ${workspaceId} and event.id = v.id and event.ts = v.ts`));
  }

  // Trust states: the key rows carry their own state + metrics, and the effective state.
  if (writes.touchedKeys.size) {
    // The contexts as written, by key: what the key-context cache holds once the rows' versions are known.
    const written = new Map<string, KeyContext>();
    // The state's failure rows as the batch leaves them: the added ones, and the dropped ones (by
    // key, every row below a seq; and single rows) — see failureChanges.
    const addedFailures: (typeof keyFailure.$inferInsert)[] = [];
    const droppedBelow = perKey();
    const droppedRows = perKey();
    // And its result-log chunks: the ones the batch's results fall in, and per key the chunk below which none is read (resultChanges).
    const chunksWritten: (typeof keyResultChunk.$inferInsert)[] = [];
    const chunksBelow = perKey();
    // The metrics are the engine's, taken at each key's last result (BatchOutcome.keyMetrics).
    const rows = [...writes.touchedKeys].sort().map((k) => {
      const ctx = contexts.get(k)!;
      const st = ctx.state;
      const loaded = options.before.get(k);
      written.set(k, ctx);
      const results = resultChanges(loaded, ctx, loaded !== undefined && resultLogsStoredWhole.has(loaded));
      for (const c of results.write) chunksWritten.push({ workspaceId, failureKey: k, chunk: c.chunk, log: c.log });
      if (results.deleteBelow !== null) addPerKey(chunksBelow, k, results.deleteBelow);
      const changes = failureChanges(loaded, ctx);
      for (const f of changes.added) addedFailures.push({ workspaceId, failureKey: k, seq: f.seq, record: f });
      if (changes.droppedBelow !== null) addPerKey(droppedBelow, k, changes.droppedBelow);
      for (const seq of changes.dropped) addPerKey(droppedRows, k, seq);
      const domain = storedDomain(k, st.level, keyDomains);
      const metrics = keyMetrics.get(k)!;
      const levelStates =
        st.level === "key"
          ? [contexts.get(TOOL_PREFIX + st.toolName)?.state, domain ? contexts.get(DOMAIN_PREFIX + domain)?.state : undefined]
          : [];
      return {
        workspaceId,
        failureKey: k,
        toolName: st.toolName,
        level: st.level,
        domain,
        pluginName: keyPlugins.get(k) ?? null,
        state: st.state,
        effectiveState: effectiveState([st, ...levelStates]),
        effectiveFailures: metrics.effectiveFailures,
        threshold: metrics.threshold,
        consecutiveFailures: st.consecutiveFailures,
        totalCalls: st.totalCalls,
        totalFailures: st.totalFailures,
        lastFailureAt: date(st.lastFailureAt),
        lastEventAt: date(st.clock),
        escalationExpires: date(st.escalationExpires),
        trust: st,
        data: historyOf(ctx),
        updatedAt: new Date(),
      };
    });
    const { cacheOwner } = options;
    const learnVersions: Returning = {
      columns: "failure_key, xmin::text as version",
      onRows: (versions) => {
        for (const r of versions as { failure_key: string; version: string }[]) {
          const ctx = written.get(r.failure_key)!;
          keyContexts.remember(cacheOwner as Db, workspaceId, r.failure_key, r.version, ctx);
          trustStates.remember(cacheOwner as Db, workspaceId, r.failure_key, r.version, ctx.state);
        }
      },
    };
    statements.push(...rowsWrite(tx, keyState, rows, KEY_STATE_UPSERT, learnVersions));
    statements.push(...failureRowWrites(tx, workspaceId, addedFailures, droppedBelow, droppedRows));
    statements.push(...deleteBelow(tx, keyResultChunk, keyResultChunk.chunk, workspaceId, chunksBelow));
    statements.push(...rowsWrite(tx, keyResultChunk, chunksWritten, KEY_RESULT_CHUNK_UPSERT));
  }

  // Approvals.
  if (writes.approvalsSuperseded.length) {
    statements.push(drizzleWrite(tx, tx
      .update(approval)
      .set({ status: "denied", resolvedAt: new Date(), resolvedBy: "system", comment: "Superseded: the key failed again and was re-escalated" })
      .where(and(eq(approval.workspaceId, workspaceId), eq(approval.kind, "recovery"), eq(approval.status, "pending"), inArray(approval.failureKey, writes.approvalsSuperseded)))));
  }
  if (writes.approvalsCreated.length) statements.push(drizzleWrite(tx, tx.insert(approval).values(writes.approvalsCreated).onConflictDoNothing()));

  // The shared counters go last (see writeSharedCounters): sent after everything else, their row
  // locks are held for the rest of this pipeline and the commit.
  if (options.sharedCounters) statements.push(...sharedCounterWrites(tx, scope, outcome));
  const written = runWrites(tx, statements);

  // Promotion needs three workspaces in the organization (counted with the configuration).
  const promote = writes.escalatedTools.size > 0 && (configs.organizationWorkspaces ?? PROMOTION_MIN_WORKSPACES) >= PROMOTION_MIN_WORKSPACES;
  // Nothing to read back (the common case): the transaction may commit right behind these writes.
  if (!writes.changedLevelStates.size && !promote) return leaveInFlight(tx, written);
  // These read what was just written (key rows under changed level states, escalated tools): after it.
  await written;
  if (writes.changedLevelStates.size) await refreshEffectiveStates(tx, workspaceId, [...writes.changedLevelStates]);
  if (promote) await refreshPromotion(tx, scope, [...writes.escalatedTools]);
}

/** Numbers by trust-state key, as two parallel lists (a statement's array parameters). */
interface PerKey {
  keys: string[];
  values: number[];
}
const perKey = (): PerKey => ({ keys: [], values: [] });
const addPerKey = (list: PerKey, key: string, value: number) => {
  list.keys.push(key);
  list.values.push(value);
};

/**
 * Deletes, per key, the rows of a key's history table whose `column` is below the key's bound (a
 * range of the primary key). Only rows of keys whose key_state rows the batch holds: no other
 * transaction writes them meanwhile. Per key the bound as a filter, not a join, so the statement
 * stays a single-shard one on Citus (as lockKeyStates' lock).
 */
function deleteBelow(tx: Tx, table: typeof keyFailure | typeof keyResultChunk, column: PgColumn, workspaceId: string, below: PerKey): Write[] {
  if (!below.keys.length) return [];
  const keys = textArray(below.keys);
  return [
    drizzleWrite(tx, sql`
      delete from ${table}
      where ${table.workspaceId} = ${workspaceId} and ${table.failureKey} = any(${keys})
        and ${column} < (${`{${below.values.join(",")}}`}::bigint[])[array_position(${keys}, ${table.failureKey})]`),
  ];
}

/** A batch's changes to the `key_failure` rows (failureChanges), which then hold exactly the failures each state keeps. */
function failureRowWrites(tx: Tx, workspaceId: string, added: (typeof keyFailure.$inferInsert)[], droppedBelow: PerKey, droppedRows: PerKey): Write[] {
  const writes = deleteBelow(tx, keyFailure, keyFailure.seq, workspaceId, droppedBelow);
  if (droppedRows.keys.length) {
    // Single rows dropped from further in than the front (rarely): by key and seq.
    writes.push(drizzleWrite(tx, sql`
      delete from ${keyFailure}
      where ${keyFailure.workspaceId} = ${workspaceId} and ${keyFailure.failureKey} = any(${textArray(droppedRows.keys)})
        and ${keyFailure.seq} = any(${`{${droppedRows.values.join(",")}}`}::bigint[])
        and ${keyFailure.failureKey} || ' ' || ${keyFailure.seq} = any(${textArray(droppedRows.keys.map((k, i) => `${k} ${droppedRows.values[i]}`))})`));
  }
  writes.push(...rowsWrite(tx, keyFailure, added, KEY_FAILURE_UPSERT));
  return writes;
}

/** Upserts of the sessions a batch changed, in session order. */
function sessionWrites(tx: Tx, workspaceId: string, sessions: Map<string, BatchSession>): Write[] {
  const dirty = [...sessions.values()].filter((s) => s.dirty).sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
  return rowsWrite(
    tx,
    agentSession,
    dirty.map((s) => ({
      workspaceId,
      sessionId: s.sessionId,
      agent: s.agent,
      model: s.model,
      startedAt: date(s.startedAt),
      endedAt: date(s.endedAt),
      firstEventAt: date(s.firstEventAt),
      lastEventAt: date(s.lastEventAt),
      clock: s.clock,
      paused: s.paused,
      pauseReason: s.pauseReason,
      pausedAt: date(s.pausedAt),
      settings: s.settings,
      behaviour: s.behaviour && storedSessionBehaviour(s.behaviour),
      eventCount: s.eventCount,
      callCount: s.callCount,
      failureCount: s.failureCount,
      patternCount: s.patternCount,
    })),
    SESSION_UPSERT,
  );
}

/**
 * The batch's increments of rows every session shares — model profiles (one row per model and
 * workspace, so every session of that model writes it) and daily roll-ups. An upsert holds its row
 * lock until commit, so the caller runs this as the last statements of its transaction: the lock
 * is held for one round trip and the commit, not for the rest of the request. (Written here right
 * after the rest, 64 sessions of one model queued ~400 ms each on the profile row.)
 */
export async function writeSharedCounters(tx: Tx, scope: BatchScope, outcome: BatchOutcome): Promise<void> {
  await leaveInFlight(tx, runWrites(tx, sharedCounterWrites(tx, scope, outcome)));
}

/**
 * Rows a model's behaviour counters are spread over (db/schema.ts): batches of one model on their
 * way at once mostly add to different rows instead of queueing on one. 64 sessions of one model
 * detecting a pattern at once waited ~200–400 ms for each other on the single row.
 */
const MODEL_PROFILE_SHARDS = 8;

function sharedCounterWrites(tx: Tx, scope: BatchScope, outcome: BatchOutcome): Write[] {
  const { workspaceId } = scope;
  const writes = outcome.records;
  // Model profiles: increments (atomic upserts, rows in key order).
  const toolDeltas = [...writes.modelToolDeltas.values()].sort((a, b) => cmp(a.model, b.model) || cmp(a.failureKey, b.failureKey));
  const statements = rowsWrite(
    tx,
    modelToolProfile,
    toolDeltas.map((d) => ({ workspaceId, model: d.model, failureKey: d.failureKey, attempts: d.attempts, failures: d.failures, lastFailureAt: date(d.lastFailureAt) })),
    MODEL_TOOL_PROFILE_INCREMENT,
  );
  const behaviourDeltas = [...writes.behaviourDeltas.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  // One shard for all of the batch's models: its rows are still taken in model order.
  const shard = randomInt(MODEL_PROFILE_SHARDS);
  statements.push(...rowsWrite(
    tx,
    modelBehaviourProfile,
    behaviourDeltas.map(([model, d]) => ({ workspaceId, model, shard, patternCounts: d.patterns, nudgesSent: d.nudgesSent, nudgesEffective: d.nudgesEffective, turns: d.turns, stalledTurns: d.stalledTurns, modelErrors: d.modelErrors ?? 0 })),
    MODEL_BEHAVIOUR_INCREMENT,
  ));
  if (writes.suggestions.length) statements.push(drizzleWrite(tx, tx.insert(modelSuggestion).values(writes.suggestions).onConflictDoNothing()));

  const stats = [...writes.dailyStats.values()].sort((a, b) => cmp(a.day, b.day) || cmp(a.toolName, b.toolName) || cmp(a.failureKey, b.failureKey));
  statements.push(...rowsWrite(
    tx,
    dailyToolStat,
    stats.map((d) => ({ workspaceId, ...d })),
    DAILY_STAT_INCREMENT,
  ));
  const keyStats = dailyKeyStats(workspaceId, writes);
  statements.push(...rowsWrite(tx, dailyKeyStat, keyStats, DAILY_KEY_STAT_INCREMENT));
  statements.push(...rowsWrite(tx, dailyKeyTotal, dailyKeyTotals(keyStats), DAILY_KEY_TOTAL_INCREMENT));
  statements.push(...rowsWrite(tx, dailyPatternStat, dailyPatternStats(workspaceId, writes), DAILY_PATTERN_STAT_INCREMENT));
  statements.push(...rowsWrite(tx, dailyNudgeStat, dailyNudgeStats(workspaceId, writes), DAILY_NUDGE_STAT_INCREMENT));
  statements.push(...failureGroupRollupWrites(workspaceId, writes.failures).map((q) => drizzleWrite(tx, q)));
  return statements;
}

const UTC_DAY = (d: Date) => d.toISOString().slice(0, 10);
const laterOf = (a: Date | null, b: Date) => (a === null || b > a ? b : a);

/** The batch's tool results (by the event's model) and failure rows (by the failure's model) per day, key and model, in key order. */
function dailyKeyStats(workspaceId: string, writes: BatchOutcome["records"]): (typeof dailyKeyStat.$inferInsert)[] {
  type Row = { workspaceId: string; day: string; failureKey: string; model: string; toolName: string; results: number; failed: number; lastFailedAt: Date | null; failures: number; lastFailureAt: Date | null };
  const rows = new Map<string, Row>();
  const rowOf = (ts: Date, failureKey: string, model: string | null | undefined, toolName: string) => {
    const day = UTC_DAY(ts);
    const id = `${day}\u0000${failureKey}\u0000${model ?? ""}`;
    let r = rows.get(id);
    if (!r) rows.set(id, (r = { workspaceId, day, failureKey, model: model ?? "", toolName, results: 0, failed: 0, lastFailedAt: null, failures: 0, lastFailureAt: null }));
    return r;
  };
  for (const e of writes.events) {
    if (e.type !== "tool.result" || !e.failureKey) continue;
    const r = rowOf(e.ts, e.failureKey, e.model, e.toolName ?? e.failureKey.split("|")[0]);
    r.results += 1;
    if (e.failed) {
      r.failed += 1;
      r.lastFailedAt = laterOf(r.lastFailedAt, e.ts);
    }
  }
  for (const f of writes.failures) {
    const r = rowOf(f.ts, f.failureKey, f.model, f.toolName);
    r.failures += 1;
    r.lastFailureAt = laterOf(r.lastFailureAt, f.ts);
  }
  return [...rows.values()].sort((a, b) => cmp(a.day, b.day) || cmp(a.failureKey, b.failureKey) || cmp(a.model, b.model));
}

/** The batch's daily_key_stat rows summed over models: a row per day and key, in key order (as the rows come). */
function dailyKeyTotals(keyStats: (typeof dailyKeyStat.$inferInsert)[]): (typeof dailyKeyTotal.$inferInsert)[] {
  const totals = new Map<string, typeof dailyKeyTotal.$inferInsert>();
  for (const { model: _model, ...r } of keyStats) {
    const id = `${r.day}\u0000${r.failureKey}`;
    const t = totals.get(id);
    if (!t) {
      totals.set(id, { ...r });
      continue;
    }
    if (r.toolName > t.toolName) t.toolName = r.toolName;
    t.results! += r.results!;
    t.failed! += r.failed!;
    t.lastFailedAt = laterOrNull(t.lastFailedAt, r.lastFailedAt);
    t.failures! += r.failures!;
    t.lastFailureAt = laterOrNull(t.lastFailureAt, r.lastFailureAt);
  }
  return [...totals.values()];
}

const laterOrNull = (a: Date | null | undefined, b: Date | null | undefined) => (b && (!a || b > a) ? b : (a ?? null));

/** The batch's detections per day, pattern, severity and model, in key order. */
function dailyPatternStats(workspaceId: string, writes: BatchOutcome["records"]): (typeof dailyPatternStat.$inferInsert)[] {
  const rows = new Map<string, typeof dailyPatternStat.$inferInsert & { detections: number }>();
  for (const p of writes.patterns) {
    const day = UTC_DAY(p.ts);
    const model = p.model ?? "";
    const id = `${day}\u0000${p.patternType}\u0000${p.severity}\u0000${model}`;
    const r = rows.get(id) ?? { workspaceId, day, patternType: p.patternType, severity: p.severity, model, detections: 0 };
    r.detections += 1;
    rows.set(id, r);
  }
  return [...rows.values()].sort((a, b) => cmp(a.day, b.day) || cmp(a.patternType, b.patternType) || cmp(a.severity, b.severity) || cmp(a.model!, b.model!));
}

/**
 * The batch's nudges per day, pattern and model, and its verdicts on earlier nudges (added to the
 * day the nudge was sent, under the session's model), in key order.
 */
function dailyNudgeStats(workspaceId: string, writes: BatchOutcome["records"]): (typeof dailyNudgeStat.$inferInsert)[] {
  type Row = { workspaceId: string; day: string; patternType: string; model: string; nudges: number; interrupts: number; sent: number; effective: number };
  const rows = new Map<string, Row>();
  const rowOf = (ts: Date, patternType: string | null, model: string | null) => {
    const day = UTC_DAY(ts);
    const id = `${day}\u0000${patternType ?? ""}\u0000${model ?? ""}`;
    let r = rows.get(id);
    if (!r) rows.set(id, (r = { workspaceId, day, patternType: patternType ?? "", model: model ?? "", nudges: 0, interrupts: 0, sent: 0, effective: 0 }));
    return r;
  };
  for (const n of writes.nudges) {
    const r = rowOf(n.ts, n.patternType, n.model);
    r.nudges += 1;
    if (n.nudgeType === "interrupt") r.interrupts += 1;
    // As the Patterns page counts effectiveness: pattern nudges, not a person's guidance.
    if (n.patternType && n.nudgeType !== "guidance") {
      r.sent += 1;
      if (n.effective) r.effective += 1;
    }
  }
  for (const v of writes.nudgeVerdicts) if (v.effective) rowOf(new Date(v.sentAt), v.patternType, v.model).effective += 1;
  return [...rows.values()].sort((a, b) => cmp(a.day, b.day) || cmp(a.patternType, b.patternType) || cmp(a.model, b.model));
}

const DAILY_NUDGE_STAT_INCREMENT: OnConflict<typeof dailyNudgeStat> = {
  target: [dailyNudgeStat.workspaceId, dailyNudgeStat.day, dailyNudgeStat.patternType, dailyNudgeStat.model],
  set: {
    nudges: sql`${dailyNudgeStat.nudges} + excluded.nudges`,
    interrupts: sql`${dailyNudgeStat.interrupts} + excluded.interrupts`,
    sent: sql`${dailyNudgeStat.sent} + excluded.sent`,
    effective: sql`${dailyNudgeStat.effective} + excluded.effective`,
  },
};

/** A key's day counters added to the stored row's (daily_key_stat and daily_key_total alike). */
const addKeyDayCounts = (t: typeof dailyKeyStat | typeof dailyKeyTotal) => ({
  results: sql`${t.results} + excluded.results`,
  failed: sql`${t.failed} + excluded.failed`,
  lastFailedAt: sql`greatest(${t.lastFailedAt}, excluded.last_failed_at)`,
  failures: sql`${t.failures} + excluded.failures`,
  lastFailureAt: sql`greatest(${t.lastFailureAt}, excluded.last_failure_at)`,
});

const DAILY_KEY_STAT_INCREMENT: OnConflict<typeof dailyKeyStat> = {
  target: [dailyKeyStat.workspaceId, dailyKeyStat.day, dailyKeyStat.failureKey, dailyKeyStat.model],
  set: addKeyDayCounts(dailyKeyStat),
};

const DAILY_KEY_TOTAL_INCREMENT: OnConflict<typeof dailyKeyTotal> = {
  target: [dailyKeyTotal.workspaceId, dailyKeyTotal.day, dailyKeyTotal.failureKey],
  set: addKeyDayCounts(dailyKeyTotal),
};

const DAILY_PATTERN_STAT_INCREMENT: OnConflict<typeof dailyPatternStat> = {
  target: [dailyPatternStat.workspaceId, dailyPatternStat.day, dailyPatternStat.patternType, dailyPatternStat.severity, dailyPatternStat.model],
  set: { detections: sql`${dailyPatternStat.detections} + excluded.detections` },
};

/**
 * `pattern_counts` plus the batch's counts, key by key, over every pattern type: one statement text
 * for all batches, whichever patterns they counted (a type the batch did not count adds nothing).
 * Citus (SPEC 9) allows neither a subquery inside INSERT nor a function that is not IMMUTABLE in
 * DO UPDATE SET (jsonb_build_object, to_jsonb are STABLE), hence jsonb_set on '{}'. The keys are
 * the engine's own pattern names, written into the text as literals.
 */
function addPatternCounts(): SQL {
  const stored = sql`${modelBehaviourProfile.patternCounts}`;
  const added = PATTERN_TYPES.map((type) => {
    if (!/^[a-z_]+$/.test(type)) throw new Error(`addPatternCounts: unexpected pattern type ${type}`);
    const key = sql.raw(`'${type}'::text`);
    const sum = sql`(coalesce((${stored}->>${key})::int, 0) + (excluded.pattern_counts->>${key})::int)::text::jsonb`;
    return sql`case when excluded.pattern_counts ? ${key} then jsonb_set('{}'::jsonb, array[${key}], ${sum}) else '{}'::jsonb end`;
  });
  return sql.join([stored, ...added], sql` || `);
}

/** Model behaviour counters: increments (see addPatternCounts). */
const MODEL_BEHAVIOUR_INCREMENT: OnConflict<typeof modelBehaviourProfile> = {
  target: [modelBehaviourProfile.workspaceId, modelBehaviourProfile.model, modelBehaviourProfile.shard],
  set: {
    patternCounts: addPatternCounts(),
    nudgesSent: sql`${modelBehaviourProfile.nudgesSent} + excluded.nudges_sent`,
    nudgesEffective: sql`${modelBehaviourProfile.nudgesEffective} + excluded.nudges_effective`,
    turns: sql`${modelBehaviourProfile.turns} + excluded.turns`,
    stalledTurns: sql`${modelBehaviourProfile.stalledTurns} + excluded.stalled_turns`,
    modelErrors: sql`${modelBehaviourProfile.modelErrors} + excluded.model_errors`,
  },
};

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function camel(c: string) {
  return c.replace(/_([a-z])/g, (_, x: string) => x.toUpperCase());
}
