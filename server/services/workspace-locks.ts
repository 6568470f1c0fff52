/**
 * The row locks a batch and the services take, in the fixed lock order (sessions, then tool
 * locks, then trust states): a service that changes what a batch changes takes the same locks the
 * same way, so the two serialize instead of deadlocking.
 */
import { and, eq, sql } from "drizzle-orm";
import { jsonValue, msOf, postgresJs, type Tx } from "@/db/client";
import { anyOf, textArrayLiteral } from "@/db/sql-arrays";
import { fixedStatement } from "@/db/fixed-statement";
import { toolLock } from "@/db/schema";
import { TOOL_PREFIX } from "@/server/engine/key-state";
import type { SessionSettingsInput } from "@/server/engine/types";
import type { BatchSession } from "@/server/engine/batch";
import { upgradeSessionBehaviour } from "@/server/engine/behaviour-state";

/** In-memory copy of an agent_session row while a batch is applied. */
export type SessionRow = BatchSession;

export interface LockedSessions {
  sessions: Map<string, SessionRow>;
  /**
   * Each row's version (`xmin`) once locked: the lock rewrote the row in this transaction, and the
   * transaction's later writes of it keep that version (row-version-cache.ts, SessionSnapshot).
   */
  versions: Map<string, string>;
  /** Sessions with nudges not delivered yet (server/services/pending-nudges.ts). */
  pendingNudges: Set<string>;
}

/**
 * The session lock: the upsert creates missing rows and row-locks existing ones (ON CONFLICT DO
 * UPDATE locks like FOR UPDATE), in session-id order. Array parameters: one statement text
 * (prepared once) whatever the number of sessions.
 */
const LOCK_SESSIONS = fixedStatement(["ws", "ids"], (p) => sql`
  insert into agent_session (workspace_id, session_id)
  select ${p.ws}, u.id from unnest(${p.ids}::text[]) as u(id) order by u.id
  on conflict (workspace_id, session_id) do update set agent = agent_session.agent`);

/** The locked sessions' rows (text built once: drizzle's select builder was rebuilt per batch). */
const READ_SESSIONS = fixedStatement(["ws", "ids"], (p) => sql`
  select session_id, agent, model, started_at, ended_at, first_event_at, last_event_at, clock, paused, pause_reason,
    paused_at, settings, behaviour, event_count, call_count, failure_count, pattern_count, pending_nudges, xmin::text as version
  from agent_session where workspace_id = ${p.ws} and session_id = any(${p.ids}::text[])`);

interface SessionDbRow {
  session_id: string;
  agent: string;
  model: string | null;
  started_at: unknown;
  ended_at: unknown;
  first_event_at: unknown;
  last_event_at: unknown;
  clock: number | string | null;
  paused: boolean;
  pause_reason: string | null;
  paused_at: unknown;
  settings: unknown;
  behaviour: unknown;
  event_count: number;
  call_count: number;
  failure_count: number;
  pattern_count: number;
  pending_nudges: boolean;
  version: string;
}

/** Creates missing session rows and locks all of them, in session-id order (deadlock-free). */
export async function lockSessions(tx: Tx, workspaceId: string, sessionIds: string[]): Promise<LockedSessions> {
  const ids = [...new Set(sessionIds)].sort();
  const out = new Map<string, SessionRow>();
  const versions = new Map<string, string>();
  const pendingNudges = new Set<string>();
  if (!ids.length) return { sessions: out, versions, pendingNudges };
  // One round trip on PostgreSQL: the read goes out right behind the lock and sees its rows.
  const values = { ws: workspaceId, ids: textArrayLiteral(ids) };
  const locked = LOCK_SESSIONS.runIn(tx, values);
  if (!postgresJs(tx)) await locked;
  const [, rows] = await Promise.all([locked, READ_SESSIONS.runIn<SessionDbRow>(tx, values)]);
  for (const r of rows) {
    versions.set(r.session_id, r.version);
    if (r.pending_nudges) pendingNudges.add(r.session_id);
    const behaviour = r.behaviour === null ? null : jsonValue<unknown>(r.behaviour);
    out.set(r.session_id, {
      sessionId: r.session_id,
      agent: r.agent,
      model: r.model,
      startedAt: msOf(r.started_at),
      endedAt: msOf(r.ended_at),
      firstEventAt: msOf(r.first_event_at),
      lastEventAt: msOf(r.last_event_at),
      clock: r.clock === null ? null : Number(r.clock),
      paused: r.paused,
      pauseReason: r.pause_reason,
      pausedAt: msOf(r.paused_at),
      settings: (jsonValue<SessionSettingsInput | null>(r.settings) ?? {}) as SessionSettingsInput,
      // Stored by any version of the engine: upgraded in place (sessions in flight keep working).
      behaviour: behaviour ? upgradeSessionBehaviour(behaviour, r.session_id) : null,
      eventCount: r.event_count,
      callCount: r.call_count,
      failureCount: r.failure_count,
      patternCount: r.pattern_count,
      dirty: false,
    });
  }
  return { sessions: out, versions, pendingNudges };
}

/** Tools whose `tool_lock` row this process has seen (rows are never deleted): skips the insert. */
const knownToolLocks = new Set<string>();
/** A tool of a workspace, as knownToolLocks holds it. */
const toolLockRef = (workspaceId: string, toolName: string) => `${workspaceId}\u0000${toolName}`;
/** The tools of the tool-level keys among `keys`, each once, in name order (the lock order). */
const toolsOf = (keys: Iterable<string>) => [...new Set([...keys].filter((k) => k.startsWith(TOOL_PREFIX)).map((k) => k.slice(TOOL_PREFIX.length)))].sort();

/** The common case of lockToolLevels: every tool in key-share mode, in name order (text built once). */
const LOCK_TOOLS_SHARED = fixedStatement(["ws", "tools"], (p) => sql`
  select tool_name as t from tool_lock where workspace_id = ${p.ws} and tool_name = any(${p.tools}::text[])
  order by tool_name for key share`);

/**
 * lockToolLevels' common case sent at once, for the key locks to go out right behind it (one round
 * trip less inside the batch): on PostgreSQL, when no result may create a `@tool:` state and this
 * process has seen every tool's `tool_lock` row, the FOR KEY SHARE lock is queued on the connection
 * now, ahead of whatever the caller sends next, and the promise checks its answer. Null otherwise:
 * the caller awaits lockToolLevels before it locks the keys.
 */
export function queueSharedToolLocks(tx: Tx, workspaceId: string, create: { failureKey: string }[], existingOnly: Iterable<string>): Promise<void> | null {
  if (!postgresJs(tx) || create.some((c) => c.failureKey.startsWith(TOOL_PREFIX))) return null;
  const tools = toolsOf(existingOnly);
  if (!tools.length) return Promise.resolve();
  if (tools.some((t) => !knownToolLocks.has(toolLockRef(workspaceId, t)))) return null;
  return LOCK_TOOLS_SHARED.runIn<{ t: string }>(tx, { ws: workspaceId, tools: textArrayLiteral(tools) }).then(async (locked) => {
    if (locked.length === tools.length) return;
    // A row this process believed present is gone (a recreated database). The key locks went out
    // before it is created and locked here, against the lock order: a deadlock this rare case may
    // meet is detected by PostgreSQL, and the batch retried (withRetry).
    const have = new Set(locked.map((r) => r.t));
    for (const t of tools) if (!have.has(t)) knownToolLocks.delete(toolLockRef(workspaceId, t));
    await lockToolLevels(tx, workspaceId, [], tools.filter((t) => !have.has(t)).map((t) => TOOL_PREFIX + t));
  });
}

/**
 * Serializes a batch that may create or change a tool's `@tool:` state with the batches that touch
 * the tool, and with nothing else.
 *
 * Keys of a tool lock the `@tool:<name>` row only if it exists; a concurrent batch creating it (a
 * security failure) holds an uncommitted row the others cannot see, and its refresh of effective
 * states skips the key rows they hold — so those keys would stay effectively `trusted` under a
 * blocked tool. The tool's `tool_lock` row closes the gap: FOR UPDATE for a batch with a
 * possibly-security result of the tool, FOR KEY SHARE otherwise (shared locks never wait for each
 * other, so writers on different keys of one tool run side by side). Taken after the session rows
 * and before the key rows, in tool-name order, like every other lock (no deadlock). Missing rows
 * are inserted first, in the same order; in the steady state this is one round trip.
 */
export async function lockToolLevels(
  tx: Tx,
  workspaceId: string,
  create: { failureKey: string }[],
  existingOnly: Iterable<string>,
): Promise<void> {
  const exclusive = new Set(create.map((c) => c.failureKey).filter((k) => k.startsWith(TOOL_PREFIX)));
  const tools = toolsOf([...exclusive, ...existingOnly]);
  if (!tools.length) return;
  const ref = (t: string) => toolLockRef(workspaceId, t);
  const insertMissing = async (names: string[]) => {
    if (!names.length) return;
    await tx.insert(toolLock).values(names.map((toolName) => ({ workspaceId, toolName }))).onConflictDoNothing();
    if (knownToolLocks.size > 50_000) knownToolLocks.clear();
    for (const t of names) knownToolLocks.add(ref(t));
  };
  await insertMissing(tools.filter((t) => !knownToolLocks.has(ref(t))));
  const where = (names: string[]) => and(eq(toolLock.workspaceId, workspaceId), anyOf(toolLock.toolName, names));
  if (!exclusive.size) {
    const locked = await LOCK_TOOLS_SHARED.runIn<{ t: string }>(tx, { ws: workspaceId, tools: textArrayLiteral(tools) });
    if (locked.length === tools.length) return;
    // A row this process believed present is gone (a recreated database): create and lock it.
    const have = new Set(locked.map((r) => r.t));
    const missing = tools.filter((t) => !have.has(t));
    await insertMissing(missing);
    await tx.select({ t: toolLock.toolName }).from(toolLock).where(where(missing)).orderBy(toolLock.toolName).for("key share");
    return;
  }
  // A possibly-security batch (rare): one tool at a time, in order, each in its own mode.
  for (const t of tools) {
    const q = tx.select({ t: toolLock.toolName }).from(toolLock).where(where([t]));
    const locked = exclusive.has(TOOL_PREFIX + t) ? await q.for("update") : await q.for("key share");
    if (!locked.length) {
      await insertMissing([t]);
      if (exclusive.has(TOOL_PREFIX + t)) await tx.select({ t: toolLock.toolName }).from(toolLock).where(where([t])).for("update");
      else await tx.select({ t: toolLock.toolName }).from(toolLock).where(where([t])).for("key share");
    }
  }
}
