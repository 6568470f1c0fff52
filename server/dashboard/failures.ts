/** Read-only queries for failure history (the Failures page and a key's failure history). */
import { and, asc, desc, eq, gte, ilike, isNull, lt, sql, type SQL } from "drizzle-orm";
import { likeEscape } from "./util";
import { rollupDays, splitByDay, type DaySplit } from "./day-split";
import { rowsOf, type Db } from "@/db/client";
import { textArray } from "@/db/sql-arrays";
import { dailyFailureGroup, dailyFailureGroupMember, dailyKeyTotal, dailyToolStat, failure, modelToolProfile } from "@/db/schema";
import { fingerprintError } from "@/server/engine/failure-fingerprint";

// One list of severities: the engine's (SPEC 3).
export { SEVERITIES } from "@/server/engine/types";

export const TIME_RANGES = { "1h": 3600_000, "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 } as const;
export type TimeRange = keyof typeof TIME_RANGES | "all";

export interface FailureQuery {
  tool?: string;
  severity?: string;
  /** A model name, or "" / "(none)" for failures without a model. */
  model?: string;
  failureKey?: string;
  /** Part of the error message (case-insensitive). */
  text?: string;
  /** A failure group (failure-fingerprint.ts). */
  fingerprint?: string;
  from?: Date;
  to?: Date;
  page?: number;
  pageSize?: number;
  /** Keyset cursors (failureCursor): the page of rows older than `after`, or newer than `before`. */
  after?: string;
  before?: string;
}

/** A row's place in the list (ts desc, id desc), as the URL carries it: `<ISO time>_<id>`. */
export function failureCursor(row: { ts: string; id: number }): string {
  return `${row.ts}_${row.id}`;
}

function readCursor(c: string | undefined): { ts: Date; id: number } | null {
  const m = c ? /^(\d{4}-\d{2}-\d{2}T[\d:.]+Z)_(\d+)$/.exec(c) : null;
  if (!m) return null;
  const ts = new Date(m[1]);
  return Number.isNaN(ts.getTime()) ? null : { ts, id: Number(m[2]) };
}

export interface FailureRow {
  id: number;
  eventId: string;
  failureKey: string;
  toolName: string;
  domain: string | null;
  severity: string;
  weight: number;
  ts: string;
  sessionId: string;
  agent: string;
  model: string | null;
  errorMessage: string | null;
  httpStatus: number | null;
}

export const NO_MODEL = "(none)";

/** The Failures page's conditions (its list, groups and export). */
export function failureFilters(workspaceId: string, q: FailureQuery): SQL {
  const conds: SQL[] = [eq(failure.workspaceId, workspaceId)];
  if (q.failureKey) conds.push(eq(failure.failureKey, q.failureKey));
  if (q.tool) conds.push(eq(failure.toolName, q.tool));
  if (q.fingerprint) conds.push(eq(failure.fingerprint, q.fingerprint));
  if (q.severity) conds.push(eq(failure.severity, q.severity));
  if (q.model === NO_MODEL) conds.push(isNull(failure.model));
  else if (q.model) conds.push(eq(failure.model, q.model));
  if (q.from) conds.push(gte(failure.ts, q.from));
  if (q.to) conds.push(lt(failure.ts, q.to));
  // A filter on the rows the indexed conditions above select (no text index: the window bounds the scan).
  if (q.text) conds.push(ilike(failure.errorMessage, `%${likeEscape(q.text)}%`));
  return and(...conds)!;
}

/**
 * One page of failures, newest first, plus the total. Every filter combination starts from an
 * index with workspace_id first (key/tool/time). With a cursor, the page is the rows after (or
 * before) it on (ts desc, id desc) — read from the index where the cursor is, however deep; without
 * one, limit/offset by `page`. The total: countFailures.
 */
export async function listFailures(db: Db, workspaceId: string, q: FailureQuery = {}) {
  const pageSize = Math.min(200, Math.max(1, q.pageSize ?? 50));
  const after = readCursor(q.after);
  const before = after ? null : readCursor(q.before);
  const page = after || before ? 0 : Math.max(1, q.page ?? 1);
  const where = failureFilters(workspaceId, q);
  const columns = {
    id: failure.id,
    eventId: failure.eventId,
    failureKey: failure.failureKey,
    toolName: failure.toolName,
    domain: failure.domain,
    severity: failure.severity,
    weight: failure.weight,
    ts: failure.ts,
    sessionId: failure.sessionId,
    agent: failure.agent,
    model: failure.model,
    errorMessage: failure.errorMessage,
    httpStatus: failure.httpStatus,
  };
  const at = (c: { ts: Date; id: number }) => sql`(${c.ts.toISOString()}::timestamptz, ${c.id}::bigint)`;
  const pageRows = after
    ? db.select(columns).from(failure).where(and(where, sql`(${failure.ts}, ${failure.id}) < ${at(after)}`)).orderBy(desc(failure.ts), desc(failure.id)).limit(pageSize + 1)
    : before
      ? db.select(columns).from(failure).where(and(where, sql`(${failure.ts}, ${failure.id}) > ${at(before)}`)).orderBy(asc(failure.ts), asc(failure.id)).limit(pageSize + 1)
      : db.select(columns).from(failure).where(where).orderBy(desc(failure.ts), desc(failure.id)).limit(pageSize + 1).offset((page - 1) * pageSize);
  const [total, fetched] = await Promise.all([countFailures(db, workspaceId, q, where), pageRows]);
  const more = fetched.length > pageSize;
  const shown = (before ? fetched.slice(0, pageSize).reverse() : fetched.slice(0, pageSize)).map((r): FailureRow => ({ ...r, id: Number(r.id), ts: r.ts.toISOString() }));
  // Older rows exist past the last shown; newer ones before the first (always, after a cursor).
  const hasOlder = before ? true : more;
  const hasNewer = after ? true : before ? more : page > 1;
  return {
    total,
    page,
    pageSize,
    rows: shown,
    nextCursor: hasOlder && shown.length ? failureCursor(shown[shown.length - 1]) : null,
    prevCursor: hasNewer && shown.length ? failureCursor(shown[0]) : null,
  };
}

/**
 * The list's total. Filtered by the window alone (or a tool in it): whole days summed from
 * daily_key_total, the edge days counted raw — a window's failures at 2M events are ~120k index
 * entries, its key totals a day's keys per day. Any other filter counts the rows it selects.
 */
async function countFailures(db: Db, workspaceId: string, q: FailureQuery, where: SQL): Promise<number> {
  const rawCount = (w: SQL) => db.select({ total: sql<number>`count(*)::int` }).from(failure).where(w).then(([r]) => Number(r.total));
  if (q.failureKey || q.fingerprint || q.severity || q.model || q.text) return rawCount(where);
  const split = splitByDay({ from: q.from, to: q.to });
  const tool = q.tool ? sql`and tool_name = ${q.tool}` : sql``;
  const [days, ...edges] = await Promise.all([
    split.days
      ? db.execute(sql`select coalesce(sum(failures), 0)::int as n from ${dailyKeyTotal} where workspace_id = ${workspaceId} and failures > 0 ${rollupDays(split.days)} ${tool}`).then((r) => Number(rowsOf<{ n: number }>(r)[0]?.n ?? 0))
      : Promise.resolve(0),
    ...split.edges.map((e) => rawCount(failureFilters(workspaceId, { tool: q.tool, from: e.from, to: e.to }))),
  ]);
  return days + edges.reduce((a, b) => a + b, 0);
}

/** Choices for the filters: tool names (from the daily roll-up) and models (from model profiles). */
export async function getFailureFilterOptions(db: Db, workspaceId: string): Promise<{ tools: string[]; models: string[] }> {
  const [tools, models] = await Promise.all([
    db
      .selectDistinct({ toolName: dailyToolStat.toolName })
      .from(dailyToolStat)
      .where(and(eq(dailyToolStat.workspaceId, workspaceId), sql`${dailyToolStat.failures} > 0`))
      .orderBy(asc(dailyToolStat.toolName))
      .limit(500),
    db
      .selectDistinct({ model: modelToolProfile.model })
      .from(modelToolProfile)
      .where(eq(modelToolProfile.workspaceId, workspaceId))
      .orderBy(asc(modelToolProfile.model))
      .limit(200),
  ]);
  return { tools: tools.map((t) => t.toolName), models: models.map((m) => m.model) };
}

/** Resolves a range preset (or explicit ISO bounds) to dates. */
export function resolveTimeRange(range: string | undefined, fromIso?: string, toIso?: string, now = new Date()): { range: TimeRange | "custom"; from?: Date; to?: Date } {
  const parse = (s?: string) => {
    if (!s) return undefined;
    const d = new Date(s);
    return Number.isNaN(d.getTime()) ? undefined : d;
  };
  const from = parse(fromIso);
  const to = parse(toIso);
  if (from || to) return { range: "custom", from, to };
  if (range && range in TIME_RANGES) return { range: range as TimeRange, from: new Date(now.getTime() - TIME_RANGES[range as keyof typeof TIME_RANGES]) };
  return { range: "all" };
}

/** One failure group (SPEC 7.6 `failures.groups`, 8): failures whose messages normalize alike. */
export interface FailureGroup {
  fingerprint: string;
  /** The normalized message (ids, numbers, paths… as placeholders). */
  sample: string;
  count: number;
  toolNames: string[];
  failureKeys: string[];
  /** Distinct failure keys (failureKeys lists at most MAX_GROUP_NAMES). */
  keyCount: number;
  /** Distinct sessions the group's failures happened in. */
  sessions: number;
  agents: string[];
  firstSeen: string;
  lastSeen: string;
  /** With `withDaily`: the group's failures per bucket of the window, oldest first (the sparkline). */
  daily?: number[];
  /** The sparkline's bucket: a day (or several) for a week or more, under a day for shorter windows. */
  trendBucketMs?: number;
}

/** Most groups returned; most names listed per group (the counts stay exact). */
export const MAX_GROUPS = 100;
export const MAX_GROUP_NAMES = 20;

/** A group's aggregate before its names are cut to MAX_GROUP_NAMES. */
interface GroupAggregate {
  fingerprint: string;
  message: string | null;
  count: number;
  toolNames: string[];
  failureKeys: string[];
  keyCount: number;
  agents: string[];
  sessions: number;
  firstSeen: Date | string;
  lastSeen: Date | string;
}

type GroupQuery = { from?: Date; to?: Date; toolName?: string; severity?: string; model?: string; text?: string; limit?: number; withDaily?: boolean; now?: Date };

/** Only the window narrows the groups: the failure-group roll-ups answer for its whole days. */
const windowOnly = (q: Pick<FailureQuery, "tool" | "severity" | "model" | "text">) => !q.tool && !q.severity && !q.model && !q.text;

/**
 * Failure groups of a window, largest first (ties: the latest failure first). Filtered by tool,
 * severity, model or text, one aggregate over the failure rows (failure_ws_time_idx or the tool's
 * index); by the window alone, its whole days from the failure-group roll-ups and its partial edge
 * days from the rows. Failures recorded before fingerprints were stored have none and are left out.
 */
export async function listFailureGroups(db: Db, workspaceId: string, q: GroupQuery = {}): Promise<FailureGroup[]> {
  const filters = { tool: q.toolName, severity: q.severity, model: q.model, text: q.text, from: q.from, to: q.to };
  const limit = Math.min(MAX_GROUPS, Math.max(1, q.limit ?? MAX_GROUPS));
  const rows = windowOnly(filters) ? await groupsFromRollups(db, workspaceId, filters, limit) : await groupsFromRows(db, workspaceId, filters, limit);
  const date = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();
  const groups = rows.map((r) => ({
    fingerprint: r.fingerprint,
    sample: fingerprintError(r.message).sample,
    count: r.count,
    toolNames: r.toolNames.slice(0, MAX_GROUP_NAMES),
    failureKeys: r.failureKeys.slice(0, MAX_GROUP_NAMES),
    sessions: r.sessions,
    agents: r.agents.slice(0, MAX_GROUP_NAMES),
    keyCount: r.keyCount,
    firstSeen: date(r.firstSeen),
    lastSeen: date(r.lastSeen),
  }));
  if (!q.withDaily || groups.length === 0) return groups;
  const now = q.now ?? new Date();
  const to = q.to && q.to < now ? q.to : now;
  const earliest = groups.reduce((min, g) => Math.min(min, Date.parse(g.firstSeen)), to.getTime());
  // "All": from the oldest group's first failure, and a week at least, so a young workspace's bars stay narrow.
  const from = q.from ?? new Date(Math.min(earliest, to.getTime() - DAILY_FROM_MS));
  const { buckets, bucketMs } = await groupBuckets(db, workspaceId, groups.map((g) => g.fingerprint), { ...filters, from, to });
  return groups.map((g) => ({ ...g, daily: buckets.get(g.fingerprint) ?? buckets.get("")!, trendBucketMs: bucketMs }));
}

/** The groups as one aggregate of the window's failure rows. */
async function groupsFromRows(db: Db, workspaceId: string, filters: FailureQuery, limit: number): Promise<GroupAggregate[]> {
  const rows = await db
    .select({
      fingerprint: sql<string>`${failure.fingerprint}`,
      message: sql<string | null>`max(${failure.errorMessage})`,
      count: sql<number>`count(*)::int`,
      toolNames: sql<string[]>`array_agg(distinct ${failure.toolName})`,
      failureKeys: sql<string[]>`array_agg(distinct ${failure.failureKey})`,
      keyCount: sql<number>`count(distinct ${failure.failureKey})::int`,
      agents: sql<string[]>`array_agg(distinct ${failure.agent})`,
      sessions: sql<number>`count(distinct ${failure.sessionId})::int`,
      firstSeen: sql<Date>`min(${failure.ts})`,
      lastSeen: sql<Date>`max(${failure.ts})`,
    })
    .from(failure)
    .where(and(failureFilters(workspaceId, filters), sql`${failure.fingerprint} is not null`))
    .groupBy(failure.fingerprint)
    .orderBy(sql`count(*) desc`, sql`max(${failure.ts}) desc`, failure.fingerprint)
    .limit(limit);
  return rows;
}

/** `and ts >= … and ts < …` on the failure rows for one raw edge of a day split. */
const edgeTime = (e: { from: Date; to: Date }) => sql`and ts >= ${e.from.toISOString()}::timestamptz and ts < ${e.to.toISOString()}::timestamptz`;

/**
 * The groups of a window from daily_failure_group (whole days) and the edge days' failure rows,
 * ranked as the raw aggregate ranks them; then the ranked groups' names and distinct counts
 * (groupMembers).
 */
async function groupsFromRollups(db: Db, workspaceId: string, window: { from?: Date; to?: Date }, limit: number): Promise<GroupAggregate[]> {
  const split = splitByDay(window);
  const parts: SQL[] = [];
  if (split.days)
    parts.push(sql`
      select fingerprint, failures as n, first_at, last_at, error_message
      from ${dailyFailureGroup}
      where workspace_id = ${workspaceId} ${rollupDays(split.days)}`);
  for (const e of split.edges)
    parts.push(sql`
      select fingerprint, count(*) as n, min(ts) as first_at, max(ts) as last_at, max(error_message) as error_message
      from ${failure}
      where workspace_id = ${workspaceId} and fingerprint is not null ${edgeTime(e)}
      group by 1`);
  if (!parts.length) return [];
  const ranked = rowsOf<{ fingerprint: string; message: string | null; count: number; first_seen: Date | string; last_seen: Date | string }>(
    await db.execute(sql`
      select fingerprint, max(error_message) as message, sum(n)::int as count, min(first_at) as first_seen, max(last_at) as last_seen
      from (${sql.join(parts, sql` union all `)}) g
      group by fingerprint
      order by 3 desc, 5 desc, 1
      limit ${limit}`),
  );
  if (!ranked.length) return [];
  // An edge none of the ranked groups has a failure in (by their first and last) adds no member.
  const spans = ranked.map((r) => [new Date(r.first_seen).getTime(), new Date(r.last_seen).getTime()]);
  const edges = split.edges.filter((e) => spans.some(([first, last]) => first < e.to.getTime() && last >= e.from.getTime()));
  const members = await groupMembers(db, workspaceId, { ...split, edges }, ranked.map((r) => r.fingerprint));
  const byFingerprint = new Map(members.map((m) => [m.fingerprint, m]));
  return ranked.map((r) => {
    const m = byFingerprint.get(r.fingerprint);
    return {
      fingerprint: r.fingerprint,
      message: r.message,
      count: Number(r.count),
      toolNames: m?.tool_names ?? [],
      failureKeys: m?.failure_keys ?? [],
      keyCount: Number(m?.key_count ?? 0),
      agents: m?.agents ?? [],
      sessions: Number(m?.sessions ?? 0),
      firstSeen: r.first_seen,
      lastSeen: r.last_seen,
    };
  });
}

/**
 * The groups' distinct keys, tools, agents and sessions over a window, made distinct over it, not
 * summed per day (a session across midnight counts once), per group and kind: the whole days'
 * values from daily_failure_group_member — a window of a few days reads its days' rows (primary
 * key), a longer one the group's values of the kind in order (daily_failure_group_member_group_idx):
 * a name list reads its first MAX_GROUP_NAMES values (array_agg(distinct)'s order) and stops, a
 * count passes over the values once without a sort — and the edge days' values from the failure
 * rows, added to each (a hashed union) once per group.
 */
async function groupMembers(db: Db, workspaceId: string, split: DaySplit, fingerprints: string[]) {
  const days = split.days ? rollupDays(split.days) : null;
  const names = sql.raw(String(MAX_GROUP_NAMES));
  const edges = split.edges.map(
    (e) => sql`
      select f.fingerprint, v.kind, v.value
      from ${failure} f cross join lateral (values ('key', f.failure_key), ('tool', f.tool_name), ('agent', f.agent), ('session', f.session_id)) as v(kind, value)
      where f.workspace_id = ${workspaceId} and f.fingerprint = any(${textArray(fingerprints)}) ${edgeTime(e)}`,
  );
  // The edges' distinct values of each group, one array per kind.
  const edgeValues = sql`with edge as (
      select fingerprint,
        array_agg(value) filter (where kind = 'tool') as tools,
        array_agg(value) filter (where kind = 'key') as keys,
        array_agg(value) filter (where kind = 'agent') as agents,
        array_agg(value) filter (where kind = 'session') as sessions
      from (select distinct fingerprint, kind, value from (${sql.join(edges, sql` union all `)}) u) e
      group by fingerprint)`;
  /** A group's distinct values of a kind over the window (the days' first names alone, when asked). */
  const values = (kind: "tool" | "key" | "agent" | "session", firstNames: boolean) => {
    const parts: SQL[] = [];
    if (days)
      parts.push(sql`(select distinct value from ${dailyFailureGroupMember}
        where workspace_id = ${workspaceId} and fingerprint = g.fp and kind = ${kind} ${days}
        ${firstNames ? sql`order by value limit ${names}` : sql``})`);
    if (edges.length) parts.push(sql`select unnest(edge.${sql.raw(`${kind}s`)})`);
    return sql.join(parts, sql` union `);
  };
  const nameList = (kind: "tool" | "key" | "agent") => sql`array(select value from (${values(kind, true)}) n(value) order by value limit ${names})`;
  const count = (kind: "key" | "session") => sql`(select count(*)::int from (${values(kind, false)}) n)`;
  return rowsOf<{ fingerprint: string; tool_names: string[] | null; failure_keys: string[] | null; agents: string[] | null; key_count: number; sessions: number }>(
    await db.execute(sql`
      ${edges.length ? edgeValues : sql``}
      select g.fp as fingerprint,
        ${nameList("tool")} as tool_names,
        ${nameList("key")} as failure_keys,
        ${nameList("agent")} as agents,
        ${count("key")} as key_count,
        ${count("session")} as sessions
      from unnest(${textArray(fingerprints)}) as g(fp)
      ${edges.length ? sql`left join edge on edge.fingerprint = g.fp` : sql``}`),
  );
}

/** Most points of a sparkline: a window longer than this many days counts several days per point. */
export const MAX_SPARK_POINTS = 60;
const DAY_MS = 86_400_000;
/** A window shorter than this is drawn in steps under a day (a 1 h or 24 h range is not one bar). */
const DAILY_FROM_MS = 7 * DAY_MS;
const SUB_DAY_STEPS = [5 * 60_000, 15 * 60_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000];

/**
 * A window's sparkline buckets, aligned to UTC: whole days from the window's first day (several per
 * bucket past MAX_SPARK_POINTS days); under a week, the smallest step of SUB_DAY_STEPS that fits.
 */
export function sparkBuckets(from: Date, to: Date): { start: number; bucketMs: number; count: number } {
  const span = Math.max(1, to.getTime() - from.getTime());
  if (span < DAILY_FROM_MS) {
    const step = SUB_DAY_STEPS.find((ms) => Math.ceil(span / ms) + 1 <= MAX_SPARK_POINTS) ?? DAY_MS;
    const start = Math.floor(from.getTime() / step) * step;
    return { start, bucketMs: step, count: Math.max(1, Math.ceil((to.getTime() - start) / step)) };
  }
  const start = Math.floor(from.getTime() / DAY_MS) * DAY_MS;
  const days = Math.max(1, Math.ceil((to.getTime() - start) / DAY_MS));
  const perBucket = Math.ceil(days / MAX_SPARK_POINTS);
  return { start, bucketMs: perBucket * DAY_MS, count: Math.ceil(days / perBucket) };
}

/**
 * Failures per bucket for each fingerprint; "" holds the zeros. Buckets of whole days with the window
 * as the only filter: the whole days from daily_failure_group, the edge days from the rows; else
 * one aggregate of the rows (failure_ws_fingerprint_time_idx).
 */
async function groupBuckets(db: Db, workspaceId: string, fingerprints: string[], q: FailureQuery & { from: Date; to: Date }): Promise<{ buckets: Map<string, number[]>; bucketMs: number }> {
  const { start, bucketMs, count } = sparkBuckets(q.from, q.to);
  const bucket = sql`floor((extract(epoch from ts) * 1000 - ${start}) / ${bucketMs})::int`;
  const parts: SQL[] = [];
  if (windowOnly(q) && bucketMs % DAY_MS === 0) {
    const split = splitByDay(q);
    const startDay = new Date(start).toISOString().slice(0, 10);
    if (split.days)
      parts.push(sql`
        select fingerprint, (day::date - ${startDay}::date) / ${bucketMs / DAY_MS}::int as bucket, sum(failures) as n
        from ${dailyFailureGroup}
        where workspace_id = ${workspaceId} ${rollupDays(split.days)} and fingerprint = any(${textArray(fingerprints)})
        group by 1, 2`);
    for (const e of split.edges)
      parts.push(sql`
        select fingerprint, ${bucket} as bucket, count(*) as n
        from ${failure}
        where workspace_id = ${workspaceId} and fingerprint = any(${textArray(fingerprints)}) ${edgeTime(e)}
        group by 1, 2`);
  } else {
    parts.push(sql`
      select fingerprint, ${bucket} as bucket, count(*) as n
      from ${failure}
      where ${and(failureFilters(workspaceId, q), sql`fingerprint = any(${textArray(fingerprints)})`)}
      group by 1, 2`);
  }
  const out = new Map<string, number[]>([["", new Array<number>(count).fill(0)]]);
  if (!parts.length) return { buckets: out, bucketMs };
  const rows = rowsOf<{ fingerprint: string | null; bucket: number; n: number | string }>(await db.execute(sql.join(parts, sql` union all `)));
  for (const r of rows) {
    const b = Number(r.bucket);
    if (!r.fingerprint || b < 0 || b >= count) continue;
    let series = out.get(r.fingerprint);
    if (!series) out.set(r.fingerprint, (series = new Array<number>(count).fill(0)));
    series[b] += Number(r.n);
  }
  return { buckets: out, bucketMs };
}
