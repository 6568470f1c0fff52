/**
 * Read models for the Sessions pages (dashboard part 2): the paginated session list and a
 * session's timeline (events, pattern detections and nudges interleaved by time, paged from the
 * newest backwards by event `seq`). Every query filters by workspace_id and uses the
 * (workspace_id, …) indexes, so it stays fast with a large event log.
 */
import { and, asc, count, desc, eq, gte, ilike, isNotNull, lt, or, sql, type SQL } from "drizzle-orm";
import { createHash } from "node:crypto";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Db } from "@/db/client";
import { agentSession, approval, auditLog, event, nudge, patternDetection, pendingNudge } from "@/db/schema";
import { textArray } from "@/db/sql-arrays";
import { listHolds, type Hold } from "@/server/services/holds";
import { effectiveSettingsFor } from "@/server/services/workspace-config";
import { likeEscape } from "./util";

import { SESSION_STATUSES, type SessionStatus } from "@/server/engine/session-status";
export { SESSION_STATUSES, type SessionStatus };
export const SESSION_SORT_KEYS = ["last", "started", "events", "failures", "patterns"] as const;
export type SessionSortKey = (typeof SESSION_SORT_KEYS)[number];

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export interface SessionRow {
  sessionId: string;
  agent: string;
  model: string | null;
  startedAt: string | null;
  endedAt: string | null;
  lastEventAt: string | null;
  paused: boolean;
  pauseReason: string | null;
  pausedAt: string | null;
  /** What holds the session: its own pause, its agent's hold or the kill switch (SPEC 7.6 `held`). */
  held: Hold | null;
  eventCount: number;
  callCount: number;
  failureCount: number;
  patternCount: number;
  status: SessionStatus;
}

/**
 * What the list needs to tell a session's status as sessions.get does (SPEC 7.6): the holds over
 * the workspace's agents and when a session turns idle (`session_idle_minutes`).
 */
export interface SessionControlContext {
  workspaceHold: Hold | null;
  agentHolds: Map<string, Hold>;
  /** A running session whose last event is older than this is idle. */
  idleBefore: Date;
}

/** Without a `session_idle_minutes` setting, a session is idle after this long without events (as sessions.get). */
const DEFAULT_IDLE_MINUTES = 30;

export async function loadSessionControl(db: Db, workspaceId: string, now = Date.now()): Promise<SessionControlContext> {
  const [holds, settings] = await Promise.all([listHolds(db, workspaceId), effectiveSettingsFor(db, workspaceId, {})]);
  const idle = (settings as Record<string, { value?: unknown } | undefined>).sessionIdleMinutes?.value;
  const minutes = typeof idle === "number" && idle > 0 ? idle : DEFAULT_IDLE_MINUTES;
  return {
    workspaceHold: holds.workspace,
    agentHolds: new Map(holds.agents.map(({ agent, ...h }) => [agent, h])),
    idleBefore: new Date(now - minutes * 60_000),
  };
}

const NO_CONTROL: SessionControlContext = { workspaceHold: null, agentHolds: new Map(), idleBefore: new Date(0) };

function heldOf(r: { agent: string; paused: boolean; pauseReason: string | null; pausedAt: Date | null; pausedBy: string | null }, c: SessionControlContext): Hold | null {
  if (c.workspaceHold) return c.workspaceHold;
  const agent = c.agentHolds.get(r.agent);
  if (agent) return agent;
  if (r.paused) return { scope: "session", reason: r.pauseReason ?? "Session paused", since: iso(r.pausedAt) ?? new Date(0).toISOString(), by: r.pausedBy ?? "vigil" };
  return null;
}

/** Ended first, then held, then idle, as sessions.get answers. */
function statusOf(r: { endedAt: Date | null; lastEventAt: Date | null }, held: Hold | null, c: SessionControlContext): SessionStatus {
  if (r.endedAt) return "ended";
  if (held) return "paused";
  return r.lastEventAt && r.lastEventAt < c.idleBefore ? "idle" : "active";
}

/** The same status in SQL, for the list's filter and counts. */
function statusSql(c: SessionControlContext): SQL {
  const agents = [...c.agentHolds.keys()];
  const held = c.workspaceHold
    ? sql`true`
    : agents.length
      ? sql`(${agentSession.paused} or ${agentSession.agent} = any(${textArray(agents)}))`
      : sql`${agentSession.paused}`;
  return sql`case when ${agentSession.endedAt} is not null then 'ended' when ${held} then 'paused'
    when ${agentSession.lastEventAt} < ${c.idleBefore.toISOString()}::timestamptz then 'idle' else 'active' end`;
}

/** What a session's row in the list needs: not its behaviour state, a few KB per session. */
export const ROW_COLUMNS = {
  sessionId: agentSession.sessionId,
  agent: agentSession.agent,
  model: agentSession.model,
  startedAt: agentSession.startedAt,
  firstEventAt: agentSession.firstEventAt,
  endedAt: agentSession.endedAt,
  lastEventAt: agentSession.lastEventAt,
  paused: agentSession.paused,
  pauseReason: agentSession.pauseReason,
  pausedAt: agentSession.pausedAt,
  pausedBy: agentSession.pausedBy,
  eventCount: agentSession.eventCount,
  callCount: agentSession.callCount,
  failureCount: agentSession.failureCount,
  patternCount: agentSession.patternCount,
};

export function toRow(r: Pick<typeof agentSession.$inferSelect, keyof typeof ROW_COLUMNS>, control: SessionControlContext = NO_CONTROL): SessionRow {
  const held = heldOf(r, control);
  return {
    sessionId: r.sessionId,
    agent: r.agent,
    model: r.model,
    startedAt: iso(r.startedAt ?? r.firstEventAt),
    endedAt: iso(r.endedAt),
    lastEventAt: iso(r.lastEventAt),
    paused: r.paused,
    pauseReason: r.pauseReason,
    pausedAt: iso(r.pausedAt),
    held,
    eventCount: r.eventCount,
    callCount: r.callCount,
    failureCount: r.failureCount,
    patternCount: r.patternCount,
    status: statusOf(r, held, control),
  };
}

/** Which sessions a list shows besides its status: the time window and the id search. */
export interface SessionScope {
  /** Sessions with activity in [from, to): last event at or after `from`, started before `to`. */
  from?: Date;
  to?: Date;
  /** Part of a session id (case-insensitive). */
  q?: string | null;
  /** Only sessions with a detection of this pattern type ("any": of any type) inside the window. */
  pattern?: string | null;
}

function scopeConds(workspaceId: string, scope: SessionScope): SQL[] {
  // session_ws_active_minute_idx serves the lower bound (the minute of `from`, then the exact
  // time); the rest filters the workspace's rows in range.
  const conds: SQL[] = [eq(agentSession.workspaceId, workspaceId)];
  if (scope.from) conds.push(gte(agentSession.activeMinute, Math.floor(scope.from.getTime() / 60_000)), gte(agentSession.lastEventAt, scope.from));
  if (scope.to) conds.push(sql`coalesce(${agentSession.startedAt}, ${agentSession.firstEventAt}) < ${scope.to.toISOString()}::timestamptz`);
  if (scope.q) conds.push(ilike(agentSession.sessionId, `%${likeEscape(scope.q)}%`));
  if (scope.pattern) {
    // pattern_ws_session_idx (workspace_id, session_id, ts) answers each probe.
    // Qualified by hand: drizzle writes bare column names inside a sql template.
    conds.push(sql`exists (select 1 from pattern_detection pd where pd.workspace_id = "agent_session"."workspace_id" and pd.session_id = "agent_session"."session_id"
      ${scope.pattern === "any" ? sql`` : sql`and pd.pattern_type = ${scope.pattern}`}
      ${scope.from ? sql`and pd.ts >= ${scope.from.toISOString()}::timestamptz` : sql``}
      ${scope.to ? sql`and pd.ts < ${scope.to.toISOString()}::timestamptz` : sql``})`);
  }
  return conds;
}

/** The session list's conditions (the page and its export). */
export function sessionListWhere(
  input: { workspaceId: string; status?: SessionStatus | null; agent?: string | null } & SessionScope,
  control: SessionControlContext = NO_CONTROL,
): SQL {
  const conds: SQL[] = scopeConds(input.workspaceId, input);
  if (input.status) conds.push(sql`${statusSql(control)} = ${input.status}`);
  if (input.agent) conds.push(eq(agentSession.agent, input.agent));
  return and(...conds)!;
}

/** A sort column, how its values compare in SQL, and its place in the walk. */
interface SortPart {
  col: PgColumn;
  type: "bigint" | "timestamptz" | "integer";
  dir: "asc" | "desc";
  nullsFirst: boolean;
}

function sortParts(sort: { key: SessionSortKey; dir: "asc" | "desc" }): SortPart[] {
  // By last event: the indexed minute first, then the exact time within it (an incremental sort).
  const cols: Array<[PgColumn, SortPart["type"]]> = {
    last: [[agentSession.activeMinute, "bigint"], [agentSession.lastEventAt, "timestamptz"]] as Array<[PgColumn, SortPart["type"]]>,
    started: [[agentSession.startedAt, "timestamptz"]] as Array<[PgColumn, SortPart["type"]]>,
    events: [[agentSession.eventCount, "integer"]] as Array<[PgColumn, SortPart["type"]]>,
    failures: [[agentSession.failureCount, "integer"]] as Array<[PgColumn, SortPart["type"]]>,
    patterns: [[agentSession.patternCount, "integer"]] as Array<[PgColumn, SortPart["type"]]>,
  }[sort.key];
  return cols.map(([col, type]) => ({ col, type, dir: sort.dir, nullsFirst: sort.dir === "asc" }));
}

/** The same walk backwards (for a page before a cursor). */
const reversed = (parts: SortPart[]): SortPart[] => parts.map((p) => ({ ...p, dir: p.dir === "asc" ? "desc" : "asc", nullsFirst: !p.nullsFirst }));

function orderOf(parts: SortPart[], idDir: "asc" | "desc"): SQL[] {
  return [
    ...parts.map((p) => sql`${p.col} ${sql.raw(p.dir)} ${sql.raw(p.nullsFirst ? "nulls first" : "nulls last")}`),
    idDir === "asc" ? asc(agentSession.sessionId) : desc(agentSession.sessionId),
  ];
}

/** A session's place in the list: its sort values as PostgreSQL prints them (exact to the microsecond) and its id. */
interface SessionPlace {
  values: (string | null)[];
  sessionId: string;
}

/**
 * Rows strictly after `at` in the walk `parts` (then session id): for each sort column in turn,
 * beyond its value — nulls sort at one end — or equal to it and after on the next column.
 */
function afterPlace(parts: SortPart[], idDir: "asc" | "desc", at: SessionPlace, from = 0): SQL {
  if (from === parts.length) return idDir === "asc" ? sql`${agentSession.sessionId} > ${at.sessionId}` : sql`${agentSession.sessionId} < ${at.sessionId}`;
  const p = parts[from];
  const v = at.values[from];
  const next = afterPlace(parts, idDir, at, from + 1);
  if (v === null) return p.nullsFirst ? or(sql`${p.col} is not null`, and(sql`${p.col} is null`, next))! : and(sql`${p.col} is null`, next)!;
  const typed = sql`${v}::${sql.raw(p.type)}`;
  const beyond = p.dir === "asc" ? sql`${p.col} > ${typed}` : sql`${p.col} < ${typed}`;
  return or(beyond, and(sql`${p.col} = ${typed}`, next), ...(p.nullsFirst ? [] : [sql`${p.col} is null`]))!;
}

/**
 * The part of afterPlace an index can start from: past a non-null first value, the rows on its
 * side of it (nulls read apart, by nullsAfter); past a null, nothing to bound.
 */
function firstBound(parts: SortPart[], at: SessionPlace): SQL | undefined {
  const v = at.values[0];
  if (v === null) return undefined;
  const typed = sql`${v}::${sql.raw(parts[0].type)}`;
  return parts[0].dir === "asc" ? sql`${parts[0].col} >= ${typed}` : sql`${parts[0].col} <= ${typed}`;
}

/** A cursor is valid only for the list it was made for: its sort and filters (the window moves with time and is left out). */
function listTag(input: { status?: string | null; agent?: string | null; q?: string | null; pattern?: string | null }, sort: { key: string; dir: string }): string {
  return createHash("sha256")
    .update(JSON.stringify([sort.key, sort.dir, input.status ?? null, input.agent ?? null, input.q ?? null, input.pattern ?? null]))
    .digest("base64url")
    .slice(0, 10);
}

function sessionCursor(tag: string, place: SessionPlace): string {
  return Buffer.from(JSON.stringify([tag, place.values, place.sessionId])).toString("base64url");
}

function readSessionCursor(cursor: string | null | undefined, tag: string, width: number): SessionPlace | null {
  if (!cursor || cursor.length > 2048) return null;
  try {
    const [t, values, sessionId] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (t !== tag || typeof sessionId !== "string" || !Array.isArray(values) || values.length !== width) return null;
    if (!values.every((v) => v === null || (typeof v === "string" && v.length <= 64))) return null;
    return { values: values as (string | null)[], sessionId };
  } catch {
    return null;
  }
}

/**
 * One page of sessions plus the total. With a cursor (`after` / `before`: nextCursor / prevCursor of
 * an earlier page), the page is the rows after (or before) that session's place in the sort, then
 * session id — sessions that arrive meanwhile neither repeat nor push rows past a page. Without one,
 * the first page (or limit/offset by `page`). A cursor from another sort or filter reads as none.
 */
export async function listSessions(
  db: Db,
  input: {
    workspaceId: string;
    status?: SessionStatus | null;
    agent?: string | null;
    sort?: { key: SessionSortKey; dir: "asc" | "desc" };
    page?: number;
    pageSize: number;
    after?: string | null;
    before?: string | null;
    /** Holds and the idle cut-off (loadSessionControl); without it only a session's own pause counts. */
    control?: SessionControlContext;
  } & SessionScope,
): Promise<{ rows: SessionRow[]; total: number; page: number; nextCursor: string | null; prevCursor: string | null }> {
  const control = input.control ?? NO_CONTROL;
  const where = sessionListWhere(input, control);
  const sort = input.sort ?? { key: "last", dir: "desc" };
  const parts = sortParts(sort);
  const tag = listTag(input, sort);
  const after = readSessionCursor(input.after, tag, parts.length);
  const before = after ? null : readSessionCursor(input.before, tag, parts.length);
  const page = after || before ? 0 : Math.max(1, input.page ?? 1);
  const limit = input.pageSize + 1;
  // Each row's place, as text: a timestamp's microseconds survive the round trip through the URL.
  const placeCols = Object.fromEntries(parts.map((p, i) => [`k${i}`, sql<string | null>`${p.col}::text`]));
  const select = () => db.select({ ...ROW_COLUMNS, ...placeCols }).from(agentSession);

  const walk = async (ps: SortPart[], idDir: "asc" | "desc", at: SessionPlace) => {
    const cond = afterPlace(ps, idDir, at);
    const bound = firstBound(ps, at);
    // Non-null first values from the index's place; rows with a null first value (at the walk's end) only if the page is not full yet.
    const main = await select().where(and(where, cond, bound)).orderBy(...orderOf(ps, idDir)).limit(limit);
    if (!bound || ps[0].nullsFirst || main.length >= limit) return main;
    const nulls = await select().where(and(where, cond, sql`${ps[0].col} is null`)).orderBy(...orderOf(ps, idDir)).limit(limit - main.length);
    return [...main, ...nulls];
  };

  const [fetched, [{ n }]] = await Promise.all([
    after
      ? walk(parts, "asc", after)
      : before
        ? walk(reversed(parts), "desc", before)
        : select().where(where).orderBy(...orderOf(parts, "asc")).limit(limit).offset((page - 1) * input.pageSize),
    db.select({ n: count() }).from(agentSession).where(where),
  ]);
  const more = fetched.length > input.pageSize;
  const shown = before ? fetched.slice(0, input.pageSize).reverse() : fetched.slice(0, input.pageSize);
  const placeOf = (r: (typeof shown)[number]): SessionPlace => ({ values: parts.map((_, i) => (r as unknown as Record<string, string | null>)[`k${i}`]), sessionId: r.sessionId });
  // Later rows exist past the last shown; earlier ones before the first (always, after a cursor).
  const hasLater = before ? true : more;
  const hasEarlier = after ? true : before ? more : page > 1;
  return {
    rows: shown.map((r) => toRow(r, control)),
    total: Number(n),
    page,
    nextCursor: hasLater && shown.length ? sessionCursor(tag, placeOf(shown[shown.length - 1])) : null,
    prevCursor: hasEarlier && shown.length ? sessionCursor(tag, placeOf(shown[0])) : null,
  };
}

export async function sessionStatusCounts(
  db: Db,
  workspaceId: string,
  scope: SessionScope = {},
  control: SessionControlContext = NO_CONTROL,
): Promise<Record<SessionStatus | "all", number>> {
  const status = statusSql(control);
  const [r] = await db
    .select({
      all: count(),
      paused: sql<number>`count(*) filter (where ${status} = 'paused')`,
      idle: sql<number>`count(*) filter (where ${status} = 'idle')`,
      ended: sql<number>`count(*) filter (where ${status} = 'ended')`,
    })
    .from(agentSession)
    .where(and(...scopeConds(workspaceId, scope)));
  const all = Number(r?.all ?? 0);
  const paused = Number(r?.paused ?? 0);
  const idle = Number(r?.idle ?? 0);
  const ended = Number(r?.ended ?? 0);
  return { all, paused, idle, ended, active: all - paused - idle - ended };
}

export interface AgentSummary {
  agent: string;
  /** Sessions not ended. */
  running: number;
  lastEventAt: string | null;
  /** The agent's own hold (agents.pause); the kill switch is shown by the workspace banner. */
  hold: Hold | null;
}

/**
 * The workspace's agents for the Sessions page's pause/resume row: held agents first (a hold may
 * name an agent with no session yet), then those with running sessions, the most recent first.
 */
export async function listAgentSummaries(db: Db, workspaceId: string, control: SessionControlContext, limit = 50): Promise<AgentSummary[]> {
  const rows = await db
    .select({
      agent: agentSession.agent,
      running: sql<number>`count(*) filter (where ${agentSession.endedAt} is null)`,
      last: sql<Date | string | null>`max(${agentSession.lastEventAt})`,
    })
    .from(agentSession)
    .where(eq(agentSession.workspaceId, workspaceId))
    .groupBy(agentSession.agent)
    .orderBy(sql`max(${agentSession.lastEventAt}) desc nulls last`, asc(agentSession.agent))
    .limit(200);
  const byAgent = new Map<string, AgentSummary>();
  for (const [agent, hold] of control.agentHolds) byAgent.set(agent, { agent, running: 0, lastEventAt: null, hold });
  for (const r of rows) {
    const held = byAgent.get(r.agent);
    byAgent.set(r.agent, { agent: r.agent, running: Number(r.running), lastEventAt: r.last ? new Date(r.last).toISOString() : null, hold: held?.hold ?? null });
  }
  return [...byAgent.values()]
    .sort((a, b) => Number(!!b.hold) - Number(!!a.hold) || Number(b.running > 0) - Number(a.running > 0) || (b.lastEventAt ?? "").localeCompare(a.lastEventAt ?? ""))
    .slice(0, limit);
}

export interface SessionMessage {
  id: number;
  text: string;
  by: string | null;
  queuedAt: string;
  deliveredAt: string | null;
}

/** A person's messages to the session (sessions.message), newest first, with when each reached the agent. */
export async function sessionMessages(db: Db, workspaceId: string, sessionId: string, limit = 20): Promise<SessionMessage[]> {
  const rows = await db
    .select()
    .from(pendingNudge)
    .where(and(eq(pendingNudge.workspaceId, workspaceId), eq(pendingNudge.sessionId, sessionId), eq(pendingNudge.source, "message")))
    .orderBy(desc(pendingNudge.id))
    .limit(limit);
  return rows.map((r) => ({ id: Number(r.id), text: r.message, by: r.createdBy, queuedAt: r.createdAt.toISOString(), deliveredAt: iso(r.deliveredAt) }));
}

export async function listSessionAgents(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ agent: agentSession.agent })
    .from(agentSession)
    .where(eq(agentSession.workspaceId, workspaceId))
    .orderBy(asc(agentSession.agent))
    .limit(200);
  return rows.map((r) => r.agent);
}

export async function getSessionRow(db: Db, workspaceId: string, sessionId: string, control?: SessionControlContext) {
  const [r] = await db
    .select({ ...ROW_COLUMNS, settings: agentSession.settings })
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, sessionId)));
  if (!r) return null;
  return { ...toRow(r, control), settings: (r.settings ?? {}) as Record<string, unknown>, firstEventAt: iso(r.firstEventAt) };
}

// ---------------------------------------------------------------------------
// Timeline
// ---------------------------------------------------------------------------

export type TimelineItem =
  | {
      kind: "event";
      key: string;
      ts: string;
      seq: number;
      id: string;
      type: string;
      model: string | null;
      toolName: string | null;
      callId: string | null;
      failureKey: string | null;
      failed: boolean | null;
      severity: string | null;
      turnIndex: number | null;
      payload: Record<string, unknown>;
    }
  | {
      kind: "pattern";
      key: string;
      ts: string;
      patternType: string;
      severity: string;
      count: number;
      toolSequence: string[];
      model: string | null;
    }
  | { kind: "nudge"; key: string; ts: string; nudgeType: string; patternType: string | null; message: string }
  /** A person resumed the session (from the audit log); guidance reaches the agent on its next call. */
  | { kind: "resume"; key: string; ts: string; actor: string; guidance: string | null }
  /** A tool call waiting on a person (guard.check answered ask), then the person's answer. */
  | {
      kind: "approval";
      key: string;
      ts: string;
      phase: "requested" | "resolved";
      approvalId: string;
      toolName: string;
      failureKey: string;
      callId: string | null;
      status: "pending" | "approved" | "denied";
      scope: "once" | "session" | null;
      resolvedBy: string | null;
      comment: string | null;
      reason: string | null;
    };

export interface TimelinePage {
  items: TimelineItem[];
  /** Pass as `before` to load the next (older) page; null when this page reaches the start. */
  nextCursor: { seq: number; ts: string } | null;
}

const RANK = { event: 0, pattern: 1, nudge: 2, resume: 3, approval: 4 } as const;

/**
 * One page of a session's timeline, oldest first. Events are paged by `seq` (newest first);
 * detections and nudges are attached to the page whose time range holds them:
 * [oldest event ts of this page, oldest event ts of the newer page) — so each shows once.
 */
export async function sessionTimeline(
  db: Db,
  input: { workspaceId: string; sessionId: string; before?: { seq: number; ts: string } | null; limit?: number },
): Promise<TimelinePage> {
  const limit = Math.min(Math.max(input.limit ?? 150, 10), 500);
  const conds: SQL[] = [eq(event.workspaceId, input.workspaceId), eq(event.sessionId, input.sessionId)];
  if (input.before) conds.push(lt(event.seq, input.before.seq));
  const events = await db
    .select()
    .from(event)
    .where(and(...conds))
    .orderBy(desc(event.seq))
    .limit(limit + 1);
  const more = events.length > limit;
  const page = more ? events.slice(0, limit) : events;

  const upper = input.before ? new Date(input.before.ts) : null;
  const lower = more && page.length ? page[page.length - 1].ts : null;
  const range = (tsCol: typeof patternDetection.ts | typeof nudge.ts) => {
    const r: SQL[] = [];
    if (lower) r.push(gte(tsCol, lower));
    if (upper) r.push(lt(tsCol, upper));
    return r;
  };
  // When paging back, events sharing the boundary timestamp may sit on both sides; keep the rule simple
  // and exact for detections/nudges: [lower, upper).
  const inPage = (col: typeof approval.createdAt | typeof approval.resolvedAt) => [...(lower ? [gte(col, lower)] : []), ...(upper ? [lt(col, upper)] : [])];
  const [patterns, nudges, resumes, approvals] = await Promise.all([
    db
      .select()
      .from(patternDetection)
      .where(and(eq(patternDetection.workspaceId, input.workspaceId), eq(patternDetection.sessionId, input.sessionId), ...range(patternDetection.ts)))
      .orderBy(asc(patternDetection.ts))
      .limit(2000),
    db
      .select()
      .from(nudge)
      .where(and(eq(nudge.workspaceId, input.workspaceId), eq(nudge.sessionId, input.sessionId), ...range(nudge.ts)))
      .orderBy(asc(nudge.ts))
      .limit(2000),
    db
      .select({ id: auditLog.id, at: auditLog.createdAt, actor: auditLog.actorLabel, after: auditLog.after })
      .from(auditLog)
      .where(
        and(
          eq(auditLog.workspaceId, input.workspaceId),
          eq(auditLog.action, "session.resume"),
          eq(auditLog.target, input.sessionId),
          ...(lower ? [gte(auditLog.createdAt, lower)] : []),
          ...(upper ? [lt(auditLog.createdAt, upper)] : []),
        ),
      )
      .orderBy(asc(auditLog.createdAt))
      .limit(500),
    // Tool-call approvals of the session (approval_ws_session_call_idx): requested or answered in this page's range.
    db
      .select()
      .from(approval)
      .where(
        and(
          eq(approval.workspaceId, input.workspaceId),
          eq(approval.kind, "tool_call"),
          eq(approval.sessionId, input.sessionId),
          lower || upper ? sql`((${and(sql`true`, ...inPage(approval.createdAt))}) or (${and(isNotNull(approval.resolvedAt), ...inPage(approval.resolvedAt))}))` : sql`true`,
        ),
      )
      .orderBy(asc(approval.createdAt))
      .limit(500),
  ]);

  const items: (TimelineItem & { _t: number; _r: number; _o: number })[] = [];
  for (const e of page) {
    items.push({
      kind: "event",
      key: `e:${e.id}`,
      ts: e.ts.toISOString(),
      seq: e.seq,
      id: e.id,
      type: e.type,
      model: e.model,
      toolName: e.toolName,
      callId: e.callId,
      failureKey: e.failureKey,
      failed: e.failed,
      severity: e.severity,
      turnIndex: e.turnIndex,
      payload: (e.payload && typeof e.payload === "object" ? e.payload : {}) as Record<string, unknown>,
      _t: e.ts.getTime(),
      _r: RANK.event,
      _o: e.seq,
    });
  }
  for (const p of patterns) {
    items.push({
      kind: "pattern",
      key: `p:${p.id}`,
      ts: p.ts.toISOString(),
      patternType: p.patternType,
      severity: p.severity,
      count: p.count,
      toolSequence: Array.isArray(p.toolSequence) ? (p.toolSequence as unknown[]).map(String) : [],
      model: p.model,
      _t: p.ts.getTime(),
      _r: RANK.pattern,
      _o: p.id,
    });
  }
  for (const n of nudges) {
    items.push({
      kind: "nudge",
      key: `n:${n.id}`,
      ts: n.ts.toISOString(),
      nudgeType: n.nudgeType,
      patternType: n.patternType,
      message: n.message,
      _t: n.ts.getTime(),
      _r: RANK.nudge,
      _o: n.id,
    });
  }
  for (const r of resumes) {
    const guidance = (r.after as { guidance?: unknown } | null)?.guidance;
    items.push({
      kind: "resume",
      key: `a:${r.id}`,
      ts: r.at.toISOString(),
      actor: r.actor,
      guidance: typeof guidance === "string" ? guidance : null,
      _t: r.at.getTime(),
      _r: RANK.resume,
      _o: r.id,
    });
  }
  const within = (t: Date) => (!lower || t >= lower) && (!upper || t < upper);
  approvals.forEach((a, i) => {
    const base = {
      kind: "approval" as const,
      approvalId: a.id,
      toolName: a.toolName,
      failureKey: a.failureKey,
      callId: a.callId,
      status: a.status,
      scope: a.scope ?? null,
      resolvedBy: a.resolvedBy,
      comment: a.comment,
      reason: a.reason,
    };
    if (within(a.createdAt))
      items.push({ ...base, key: `q:${a.id}`, ts: a.createdAt.toISOString(), phase: "requested", _t: a.createdAt.getTime(), _r: RANK.approval, _o: i * 2 });
    if (a.resolvedAt && a.status !== "pending" && within(a.resolvedAt))
      items.push({ ...base, key: `r:${a.id}`, ts: a.resolvedAt.toISOString(), phase: "resolved", _t: a.resolvedAt.getTime(), _r: RANK.approval, _o: i * 2 + 1 });
  });
  items.sort((a, b) => a._t - b._t || a._r - b._r || a._o - b._o);
  const last = page[page.length - 1];
  return {
    items: items.map(({ _t, _r, _o, ...rest }) => rest as TimelineItem),
    nextCursor: more && last ? { seq: last.seq, ts: last.ts.toISOString() } : null,
  };
}

/** Detections of one session by type (for the session header). */
export async function sessionPatternSummary(db: Db, workspaceId: string, sessionId: string) {
  const rows = await db
    .select({ patternType: patternDetection.patternType, n: count(), last: sql<string>`max(${patternDetection.ts})` })
    .from(patternDetection)
    .where(and(eq(patternDetection.workspaceId, workspaceId), eq(patternDetection.sessionId, sessionId)))
    .groupBy(patternDetection.patternType)
    .orderBy(desc(count()));
  return rows.map((r) => ({ patternType: r.patternType, count: Number(r.n) }));
}

