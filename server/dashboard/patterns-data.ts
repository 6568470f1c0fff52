/**
 * Read models for the Patterns (stall charts) and Models pages (dashboard part 2).
 * Day buckets are UTC dates. All queries filter by workspace_id and a time range on indexed columns.
 */
import { and, asc, count, desc, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import { clientOf, rowsOf, type Db } from "@/db/client";
import { pglitePriorityGate } from "@/db/pglite-priority";
import { textArray } from "@/db/sql-arrays";
import { edgeRead, rollupDays, splitByDay, type DaySplit } from "./day-split";
import { dailyKeyStat, dailyKeyTotal, dailyNudgeStat, dailyPatternStat, event, modelBehaviourProfile, modelSuggestion, modelToolProfile, nudge, patternDetection } from "@/db/schema";
import { applyBehaviourStats, mostCommonPattern, nudgeEffectiveness, stallRate, successRate, type ModelBehaviourProfile } from "@/server/engine/models";
import type { PatternType } from "@/server/engine/types";

const DAY_MS = 86_400_000;

export function dayList(days: number, now: number): string[] {
  const end = Math.floor(now / DAY_MS) * DAY_MS;
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) out.push(new Date(end - i * DAY_MS).toISOString().slice(0, 10));
  return out;
}

export interface PatternStats {
  days: string[];
  totals: { detections: number; sessions: number; nudges: number; interrupts: number };
  byType: Array<{ day: string } & Record<string, number | string>>;
  types: string[];
  byModel: Array<{ day: string } & Record<string, number | string>>;
  models: string[];
  severityByType: Array<{ patternType: string; minor: number; moderate: number; severe: number }>;
  effectivenessByModel: Array<{ model: string; sent: number; effective: number; rate: number }>;
  effectivenessByPattern: Array<{ patternType: string; sent: number; effective: number; rate: number }>;
}

/** The earliest detection's UTC day (for an "all time" chart), or null. */
export async function earliestDetectionDay(db: Db, workspaceId: string): Promise<string | null> {
  const [r] = await db.select({ ts: patternDetection.ts }).from(patternDetection).where(eq(patternDetection.workspaceId, workspaceId)).orderBy(asc(patternDetection.ts)).limit(1);
  return r ? r.ts.toISOString().slice(0, 10) : null;
}

/**
 * Detections and nudges of a window. `days` is the chart's UTC days (a count of days back from
 * now, or the list from `windowDays`); `from`/`to` bound every count (default: the days' span), so
 * the totals, the daily charts and the effectiveness charts cover the same window.
 */
export async function patternStats(
  db: Db,
  input: {
    workspaceId: string;
    days: number | string[];
    from?: Date;
    to?: Date;
    now?: number;
    /** Only this model's detections and nudges (`unknown`: those without a model, as the charts label them). */
    model?: string;
    /** Unused since effectiveness is stored with the nudge; kept for callers. */ actionTools?: string[];
  },
): Promise<PatternStats> {
  const now = input.now ?? Date.now();
  const days = typeof input.days === "number" ? dayList(input.days, now) : input.days;
  const since = input.from ?? new Date(`${days[0]}T00:00:00.000Z`);
  const until = input.to;
  const ws = input.workspaceId;
  const window = (col: typeof patternDetection.ts | typeof nudge.ts): SQL[] => [gte(col, since), ...(until ? [lt(col, until)] : [])];
  // The model is a residual filter on the (workspace, ts) index range; null models are labelled `unknown`.
  const ofModel = (col: typeof patternDetection.model | typeof nudge.model): SQL[] =>
    input.model === undefined ? [] : [sql`coalesce(${col}, 'unknown') = ${input.model}`];
  const inRange = and(eq(patternDetection.workspaceId, ws), ...window(patternDetection.ts), ...ofModel(patternDetection.model));

  const [detectionRows, totalsRow, nudgeRows] = await Promise.all([
    detectionsByDay(db, ws, { from: since, to: until }, input.model),
    // Distinct sessions do not add up over days: counted from pattern_ws_time_idx.
    db
      .select({ sessions: sql<number>`count(distinct ${patternDetection.sessionId})` })
      .from(patternDetection)
      .where(inRange),
    nudgesByPatternAndModel(db, ws, { from: since, to: until }, input.model),
  ]);

  const sumBy = (key: (r: DetectionRow) => string) => {
    const m = new Map<string, DetectionRow>();
    for (const r of detectionRows) {
      const k = key(r);
      const e = m.get(k);
      if (e) e.n += r.n;
      else m.set(k, { ...r });
    }
    return [...m.values()];
  };
  const typeRows = sumBy((r) => `${r.day}\u0000${r.t}`);
  const modelRows = sumBy((r) => `${r.day}\u0000${r.m}`);
  const sevRows = sumBy((r) => `${r.t}\u0000${r.s}`);
  const detections = detectionRows.reduce((a, r) => a + r.n, 0);
  const typeSet = new Map<string, number>();
  const byTypeMap = new Map<string, Record<string, number | string>>(days.map((d) => [d, { day: d }]));
  for (const r of typeRows) {
    const row = byTypeMap.get(r.day);
    if (!row) continue;
    row[r.t] = Number(r.n);
    typeSet.set(r.t, (typeSet.get(r.t) ?? 0) + Number(r.n));
  }
  const types = [...typeSet.entries()].sort((a, b) => b[1] - a[1]).map(([t]) => t);

  const modelSet = new Map<string, number>();
  const byModelMap = new Map<string, Record<string, number | string>>(days.map((d) => [d, { day: d }]));
  for (const r of modelRows) {
    const row = byModelMap.get(r.day);
    if (!row) continue;
    row[r.m] = Number(r.n);
    modelSet.set(r.m, (modelSet.get(r.m) ?? 0) + Number(r.n));
  }
  const models = [...modelSet.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
  for (const row of [...byTypeMap.values()]) for (const t of types) row[t] ??= 0;
  for (const row of [...byModelMap.values()]) for (const m of models) row[m] ??= 0;

  const sev = new Map<string, { patternType: string; minor: number; moderate: number; severe: number }>();
  for (const r of sevRows) {
    const e = sev.get(r.t) ?? { patternType: r.t, minor: 0, moderate: 0, severe: 0 };
    if (r.s === "minor" || r.s === "moderate" || r.s === "severe") e[r.s] += Number(r.n);
    sev.set(r.t, e);
  }

  // Effectiveness per model (of the window's nudges, not the all-time profiles) and per pattern:
  // the engine decides a nudge's effectiveness once (SPEC 5); guidance and pattern-less nudges have none.
  const effectiveness = (key: (r: NudgeRow) => string) => {
    const m = new Map<string, { key: string; sent: number; effective: number }>();
    for (const r of nudgeRows) {
      if (!r.sent) continue;
      const e = m.get(key(r)) ?? { key: key(r), sent: 0, effective: 0 };
      e.sent += r.sent;
      e.effective += r.effective;
      m.set(e.key, e);
    }
    return [...m.values()].sort((a, b) => b.sent - a.sent || (a.key < b.key ? -1 : 1));
  };
  const rows = effectiveness((r) => r.p).map(({ key, ...r }) => ({ patternType: key, ...r }));
  const perModel = effectiveness((r) => r.m).map(({ key, ...r }) => ({ model: key, ...r }));
  return {
    days,
    totals: {
      detections,
      sessions: Number(totalsRow[0]?.sessions ?? 0),
      nudges: nudgeRows.reduce((a, r) => a + r.nudges, 0),
      interrupts: nudgeRows.reduce((a, r) => a + r.interrupts, 0),
    },
    byType: days.map((d) => byTypeMap.get(d)!) as PatternStats["byType"],
    types,
    byModel: days.map((d) => byModelMap.get(d)!) as PatternStats["byModel"],
    models,
    severityByType: [...sev.values()].sort((a, b) => b.minor + b.moderate + b.severe - (a.minor + a.moderate + a.severe)),
    effectivenessByModel: perModel.map((r) => ({
      model: r.model,
      sent: Number(r.sent),
      effective: Number(r.effective),
      rate: Number(r.sent) > 0 ? Number(r.effective) / Number(r.sent) : 1,
    })),
    effectivenessByPattern: rows.map((r) => ({
      patternType: r.patternType,
      sent: Number(r.sent),
      effective: Number(r.effective),
      rate: Number(r.sent) > 0 ? Number(r.effective) / Number(r.sent) : 1,
    })),
  };
}


/** A row's model as the pages name it: roll-ups store none as '', raw rows as null; both read `unknown`. */
const ROLLUP_MODEL = sql`case when model = '' then 'unknown' else model end`;
const RAW_MODEL = sql`coalesce(model, 'unknown')`;
/** `and <model> = …` when the page filters by model. */
const onModel = (expr: SQL, model: string | undefined) => (model === undefined ? sql`` : sql`and ${expr} = ${model}`);

interface DetectionRow {
  day: string;
  t: string;
  s: string;
  m: string;
  n: number;
}

/**
 * Detections of a window per day, pattern, severity and model (`unknown` for none): whole days
 * from daily_pattern_stat, the partial edge days from pattern_ws_time_idx.
 */
async function detectionsByDay(db: Db, workspaceId: string, window: { from?: Date; to?: Date }, model?: string): Promise<DetectionRow[]> {
  const split = splitByDay(window);
  const parts: SQL[] = [];
  if (split.days)
    parts.push(sql`
      select day, pattern_type as t, severity as s, ${ROLLUP_MODEL} as m, detections as n
      from ${dailyPatternStat}
      where workspace_id = ${workspaceId} ${rollupDays(split.days)} ${onModel(ROLLUP_MODEL, model)}`);
  for (const e of split.edges)
    parts.push(sql`
      select to_char(ts at time zone 'UTC', 'YYYY-MM-DD') as day, pattern_type as t, severity as s, ${RAW_MODEL} as m, count(*) as n
      from ${patternDetection}
      where workspace_id = ${workspaceId} and ts >= ${e.from.toISOString()}::timestamptz and ts < ${e.to.toISOString()}::timestamptz
        ${onModel(RAW_MODEL, model)}
      group by 1, 2, 3, 4`);
  if (!parts.length) return [];
  const rows = rowsOf<DetectionRow>(await db.execute(sql`
    select day, t, s, m, sum(n)::int as n from (${sql.join(parts, sql` union all `)}) r group by 1, 2, 3, 4`));
  return rows.map((r) => ({ ...r, n: Number(r.n) }));
}

interface NudgeRow {
  /** Pattern type, '' for a nudge without one. */
  p: string;
  /** Model, `unknown` for none. */
  m: string;
  nudges: number;
  interrupts: number;
  /** Pattern nudges other than guidance: those the engine gives a verdict. */
  sent: number;
  effective: number;
}

/**
 * Nudges of a window per pattern and model: whole days from daily_nudge_stat, the partial edge
 * days from nudge_ws_time_idx with the roll-up's definitions.
 */
async function nudgesByPatternAndModel(db: Db, workspaceId: string, window: { from?: Date; to?: Date }, model?: string): Promise<NudgeRow[]> {
  const split = splitByDay(window);
  const parts: SQL[] = [];
  if (split.days)
    parts.push(sql`
      select pattern_type as p, ${ROLLUP_MODEL} as m, nudges, interrupts, sent, effective
      from ${dailyNudgeStat}
      where workspace_id = ${workspaceId} ${rollupDays(split.days)} ${onModel(ROLLUP_MODEL, model)}`);
  const counted = sql`pattern_type is not null and nudge_type <> 'guidance'`;
  for (const e of split.edges)
    parts.push(sql`
      select coalesce(pattern_type, '') as p, ${RAW_MODEL} as m, count(*) as nudges,
        count(*) filter (where nudge_type = 'interrupt') as interrupts, count(*) filter (where ${counted}) as sent,
        count(*) filter (where effective and ${counted}) as effective
      from ${nudge}
      where workspace_id = ${workspaceId} and ts >= ${e.from.toISOString()}::timestamptz and ts < ${e.to.toISOString()}::timestamptz
        ${onModel(RAW_MODEL, model)}
      group by 1, 2`);
  if (!parts.length) return [];
  const rows = rowsOf<NudgeRow>(await db.execute(sql`
    select p, m, sum(nudges)::int as nudges, sum(interrupts)::int as interrupts, sum(sent)::int as sent, sum(effective)::int as effective
    from (${sql.join(parts, sql` union all `)}) r group by 1, 2`));
  return rows.map((r) => ({ p: r.p, m: r.m, nudges: Number(r.nudges), interrupts: Number(r.interrupts), sent: Number(r.sent), effective: Number(r.effective) }));
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

export interface ModelMatrix {
  models: string[];
  keys: Array<{ failureKey: string; attempts: number; failures: number }>;
  cells: Record<string, Record<string, { attempts: number; failures: number; rate: number; lastFailureAt: string | null }>>;
}

/**
 * Success rate per model and failure key. Without a window: the stored profiles (all time). With
 * one: counted from the window's tool.result events (event_ws_time_idx), so the heatmap follows the
 * page's time range.
 */
export async function modelMatrix(db: Db, workspaceId: string, topKeys = 12, window: { from?: Date; to?: Date } = {}): Promise<ModelMatrix> {
  if (window.from || window.to) return modelMatrixIn(db, workspaceId, topKeys, window);
  // Top keys by failures (then attempts): the ones worth comparing models on.
  const keyRows = await db
    .select({
      failureKey: modelToolProfile.failureKey,
      attempts: sql<number>`sum(${modelToolProfile.attempts})::int`,
      failures: sql<number>`sum(${modelToolProfile.failures})::int`,
    })
    .from(modelToolProfile)
    .where(eq(modelToolProfile.workspaceId, workspaceId))
    .groupBy(modelToolProfile.failureKey)
    .orderBy(desc(sql`sum(${modelToolProfile.failures})`), desc(sql`sum(${modelToolProfile.attempts})`), asc(modelToolProfile.failureKey))
    .limit(topKeys);
  const keys = keyRows.map((k) => ({ failureKey: k.failureKey, attempts: Number(k.attempts), failures: Number(k.failures) }));
  if (keys.length === 0) return { models: [], keys: [], cells: {} };
  const cellsRows = await db
    .select()
    .from(modelToolProfile)
    .where(and(eq(modelToolProfile.workspaceId, workspaceId), inArray(modelToolProfile.failureKey, keys.map((k) => k.failureKey))));
  const cells: ModelMatrix["cells"] = {};
  const modelAttempts = new Map<string, number>();
  for (const c of cellsRows) {
    (cells[c.model] ??= {})[c.failureKey] = {
      attempts: c.attempts,
      failures: c.failures,
      rate: successRate(c),
      lastFailureAt: c.lastFailureAt ? c.lastFailureAt.toISOString() : null,
    };
    modelAttempts.set(c.model, (modelAttempts.get(c.model) ?? 0) + c.attempts);
  }
  const models = [...modelAttempts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m);
  return { models, keys, cells };
}

type MatrixRow = { failureKey: string; model: string; attempts: number; failures: number; lastFailureAt: string | Date | null };
type KeyTotal = { failureKey: string; attempts: number; failures: number };

const byFailuresThenAttempts = (a: KeyTotal, b: KeyTotal) => b.failures - a.failures || b.attempts - a.attempts || a.failureKey.localeCompare(b.failureKey);

/**
 * A partial edge day's cells per key and model (failure_key, model, attempts, failures, last), for
 * every key, as one statement of the embedded database's turns: read once, both to rank the keys
 * and to fill the shown keys' cells. Its own raw rows (event_ws_time_idx), or the day's
 * daily_key_stat rows less the raw rows of the day before the window (edgeRead) in the same
 * statement, so a late batch between turns cannot be taken off a roll-up row read before it. The
 * day's last failure is the edge's when it falls inside the edge; a cell whose results all fall
 * before the window drops out.
 */
function edgeCells(workspaceId: string, edge: { from: Date; to: Date }): SQL {
  const results = (range: { from: Date; to: Date }) => sql`workspace_id = ${workspaceId} and ts >= ${range.from.toISOString()}::timestamptz and ts < ${range.to.toISOString()}::timestamptz
        and type = 'tool.result' and failure_key is not null`;
  const read = edgeRead(edge);
  if ("raw" in read)
    return sql`
      select failure_key, ${RAW_MODEL} as model, count(*)::int as attempts, (count(*) filter (where failed))::int as failures, max(ts) filter (where failed) as last
      from ${event}
      where ${results(read.raw)}
      group by 1, 2`;
  return sql`
      select failure_key, model, sum(attempts)::int as attempts, sum(failures)::int as failures, max(last) as last from (
        select failure_key, ${ROLLUP_MODEL} as model, results as attempts, failed as failures,
          case when last_failed_at >= ${edge.from.toISOString()}::timestamptz then last_failed_at end as last
        from ${dailyKeyStat}
        where workspace_id = ${workspaceId} and day = ${read.day} and results > 0
        union all
        select failure_key, ${RAW_MODEL} as model, -count(*)::int as attempts, -(count(*) filter (where failed))::int as failures, null::timestamptz as last
        from ${event}
        where ${results(read.less)}
        group by 1, 2
      ) day_less_before
      group by 1, 2
      having sum(attempts) > 0`;
}

/** The whole days' cells of `keys` per model, from daily_key_stat (daily_key_stat_key_day_idx). */
const rollupCells = (workspaceId: string, days: NonNullable<DaySplit["days"]>, keys: SQL, last = sql`last_failed_at`) => sql`
      select failure_key, ${ROLLUP_MODEL} as model, results as attempts, failed as failures, ${last} as last
      from ${dailyKeyStat}
      where workspace_id = ${workspaceId} and failure_key = any(${keys}) ${rollupDays(days)} and results > 0`;

/** The whole days' totals per key, from daily_key_total (a row per day and key). */
const rollupTotals = (workspaceId: string, onDays: SQL) => sql`
      select failure_key, results as attempts, failed as failures
      from ${dailyKeyTotal}
      where workspace_id = ${workspaceId} and results > 0 ${onDays}`;

/**
 * The window's cells in one statement: the raw rows of its edges read once, in one scan (a CTE) —
 * an edge read as its day's roll-up less the day's part before the window (edgeRead) adds that day
 * to the whole days and counts that part's rows negative — then the keys ranked over
 * daily_key_total's whole days plus the raw cells, and the cells of the keys ranked within the top
 * `topKeys` by failures and attempts (ties at the last place included; the name breaks them in
 * `modelMatrixIn`, as everywhere).
 */
async function matrixInOneStatement(db: Db, workspaceId: string, topKeys: number, split: DaySplit): Promise<MatrixRow[]> {
  let days = split.days;
  const ranges: Array<{ from: Date; to: Date }> = [];
  let lessBefore: Date | undefined;
  for (const e of split.edges) {
    const read = edgeRead(e);
    if ("raw" in read) {
      ranges.push(read.raw);
      continue;
    }
    ranges.push(read.less);
    lessBefore = e.from;
    const next = new Date(Date.parse(`${read.day}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
    days = days ? { ...days, from: read.day } : { from: read.day, to: next };
  }
  // The raw ranges in one scan, each row once: a row before the window is taken off its day's roll-up row.
  const sign = lessBefore ? sql`case when ts < ${lessBefore.toISOString()}::timestamptz then -1 else 1 end` : sql`1`;
  const inRanges = sql.join(
    ranges.map((r) => sql`(ts >= ${r.from.toISOString()}::timestamptz and ts < ${r.to.toISOString()}::timestamptz)`),
    sql` or `,
  );
  const edgeCellsCte = sql`
      select failure_key, ${RAW_MODEL} as model, sum(${sign})::int as attempts, coalesce(sum(${sign}) filter (where failed), 0)::int as failures,
        max(ts) filter (where failed ${lessBefore ? sql`and ts >= ${lessBefore.toISOString()}::timestamptz` : sql``}) as last
      from ${event}
      where workspace_id = ${workspaceId} and (${inRanges}) and type = 'tool.result' and failure_key is not null
      group by 1, 2`;
  // A day read less its part before the window: its last failure is the window's only when inside it.
  const last = lessBefore ? sql`case when last_failed_at >= ${lessBefore.toISOString()}::timestamptz then last_failed_at end` : sql`last_failed_at`;
  const hasRaw = ranges.length > 0;
  const totals = [...(days ? [rollupTotals(workspaceId, rollupDays(days))] : []), ...(hasRaw ? [sql`select failure_key, attempts, failures from edge_cells`] : [])];
  const top = sql`array(select failure_key from top_keys)`;
  const cells = [
    ...(days ? [rollupCells(workspaceId, days, top, last)] : []),
    ...(hasRaw ? [sql`select failure_key, model, attempts, failures, last from edge_cells where failure_key = any(${top})`] : []),
  ];
  if (!totals.length) return [];
  const rows = rowsOf<MatrixRow>(
    await db.execute(sql`
      with ${hasRaw ? sql`edge_cells as materialized (${edgeCellsCte}),` : sql``}
      top_keys as (
        select failure_key from (
          select failure_key, rank() over (order by sum(failures) desc, sum(attempts) desc) as place
          from (${sql.join(totals, sql` union all `)}) r
          group by failure_key
          having sum(attempts) > 0
        ) ranked where place <= ${topKeys}
      )
      select failure_key as "failureKey", model, sum(attempts)::int as attempts, sum(failures)::int as failures, max(last) as "lastFailureAt"
      from (${sql.join(cells, sql` union all `)}) r
      group by failure_key, model
      having sum(attempts) > 0`),
  );
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts), failures: Number(r.failures) }));
}

/**
 * The window's cells on the embedded database, a part per statement (db/pglite-priority.ts): a
 * 30-day window in one statement held PGlite's only thread for its whole length, and an agent's
 * statement can go between two of these. Each edge's cells are read once, the keys ranked over
 * daily_key_total a day at a time plus the edges, then the top keys' whole-day cells.
 */
async function matrixInTurns(db: Db, workspaceId: string, topKeys: number, split: DaySplit): Promise<MatrixRow[]> {
  const days = split.days;
  const edgeRows: MatrixRow[] = [];
  for (const e of split.edges)
    edgeRows.push(
      ...rowsOf<MatrixRow>(
        await db.execute(sql`
          select failure_key as "failureKey", model, attempts, failures, last as "lastFailureAt" from (${edgeCells(workspaceId, e)}) e`),
      ),
    );
  const perKey = new Map<string, KeyTotal>();
  const addTotal = (failureKey: string, attempts: number, failures: number) => {
    const t = perKey.get(failureKey) ?? { failureKey, attempts: 0, failures: 0 };
    t.attempts += attempts;
    t.failures += failures;
    perKey.set(failureKey, t);
  };
  if (days) {
    const [span] = rowsOf<{ first: string | null; last: string | null }>(
      await db.execute(sql`select min(day) as first, max(day) as last from ${dailyKeyTotal} where workspace_id = ${workspaceId} ${rollupDays(days)}`),
    );
    if (span?.first && span.last)
      for (let ms = Date.parse(`${span.first}T00:00:00Z`); ms <= Date.parse(`${span.last}T00:00:00Z`); ms += DAY_MS) {
        const onDay = rollupTotals(workspaceId, sql`and day = ${new Date(ms).toISOString().slice(0, 10)}`);
        const rows = rowsOf<KeyTotal>(await db.execute(sql`select failure_key as "failureKey", sum(attempts)::int as attempts, sum(failures)::int as failures from (${onDay}) r group by failure_key`));
        for (const r of rows) addTotal(r.failureKey, Number(r.attempts), Number(r.failures));
      }
  }
  for (const r of edgeRows) addTotal(r.failureKey, Number(r.attempts), Number(r.failures));
  const top = new Set([...perKey.values()].sort(byFailuresThenAttempts).slice(0, topKeys).map((k) => k.failureKey));
  if (!top.size) return [];
  const merged = new Map<string, MatrixRow>();
  const add = (r: MatrixRow) => {
    const id = `${r.failureKey}\u0000${r.model}`;
    const seen = merged.get(id);
    if (!seen) {
      merged.set(id, { ...r, attempts: Number(r.attempts), failures: Number(r.failures) });
      return;
    }
    seen.attempts += Number(r.attempts);
    seen.failures += Number(r.failures);
    if (r.lastFailureAt !== null && (seen.lastFailureAt === null || new Date(r.lastFailureAt).getTime() > new Date(seen.lastFailureAt).getTime())) seen.lastFailureAt = r.lastFailureAt;
  };
  if (days)
    for (const r of rowsOf<MatrixRow>(
      await db.execute(sql`
        select failure_key as "failureKey", model, sum(attempts)::int as attempts, sum(failures)::int as failures, max(last) as "lastFailureAt"
        from (${rollupCells(workspaceId, days, textArray([...top]))}) r
        group by failure_key, model`),
    ))
      add(r);
  for (const r of edgeRows) if (top.has(r.failureKey)) add(r);
  return [...merged.values()];
}

async function modelMatrixIn(db: Db, workspaceId: string, topKeys: number, window: { from?: Date; to?: Date }): Promise<ModelMatrix> {
  // Keys ranked over daily_key_total's whole days (a row per day and key), then the shown keys'
  // cells per model from daily_key_stat (daily_key_stat_key_day_idx); the partial edge days read
  // once (edgeCells).
  const split = splitByDay(window);
  if (!split.days && !split.edges.length) return { models: [], keys: [], cells: {} };
  const inTurns = Boolean(pglitePriorityGate(clientOf(db)));
  const rows = inTurns ? await matrixInTurns(db, workspaceId, topKeys, split) : await matrixInOneStatement(db, workspaceId, topKeys, split);
  const perKey = new Map<string, KeyTotal>();
  for (const r of rows) {
    const k = perKey.get(r.failureKey) ?? { failureKey: r.failureKey, attempts: 0, failures: 0 };
    k.attempts += Number(r.attempts);
    k.failures += Number(r.failures);
    perKey.set(r.failureKey, k);
  }
  const keys = [...perKey.values()].sort(byFailuresThenAttempts).slice(0, topKeys);
  const shown = new Set(keys.map((k) => k.failureKey));
  const cells: ModelMatrix["cells"] = {};
  const modelAttempts = new Map<string, number>();
  for (const r of rows) {
    if (!shown.has(r.failureKey)) continue;
    const attempts = Number(r.attempts);
    const failures = Number(r.failures);
    (cells[r.model] ??= {})[r.failureKey] = {
      attempts,
      failures,
      rate: successRate({ attempts, failures }),
      lastFailureAt: r.lastFailureAt ? new Date(r.lastFailureAt).toISOString() : null,
    };
    modelAttempts.set(r.model, (modelAttempts.get(r.model) ?? 0) + attempts);
  }
  const models = [...modelAttempts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([m]) => m);
  return { models, keys, cells };
}

/** Every model's behaviour counters in the workspace — the sum of its rows (one per shard, db/schema.ts) — most turns first. */
export async function modelBehaviourTotals(db: Db, workspaceId: string): Promise<(ModelBehaviourProfile & { modelErrors: number })[]> {
  const rows = await db.select().from(modelBehaviourProfile).where(eq(modelBehaviourProfile.workspaceId, workspaceId));
  const byModel = new Map<string, ModelBehaviourProfile>();
  const errors = new Map<string, number>();
  for (const r of rows) {
    const patterns = (r.patternCounts ?? {}) as Partial<Record<PatternType, number>>;
    byModel.set(r.model, applyBehaviourStats(byModel.get(r.model), r.model, { ...r, patterns }));
    errors.set(r.model, (errors.get(r.model) ?? 0) + r.modelErrors);
  }
  return [...byModel.values()].map((p) => ({ ...p, modelErrors: errors.get(p.model) ?? 0 })).sort((a, b) => b.turns - a.turns || a.model.localeCompare(b.model));
}

export async function behaviourProfiles(db: Db, workspaceId: string) {
  return (await modelBehaviourTotals(db, workspaceId)).map((p) => {
    const patternCounts = p.patternCounts;
    const total = Object.values(patternCounts).reduce<number>((a, b) => a + (Number(b) || 0), 0);
    return {
      model: p.model,
      turns: p.turns,
      stalledTurns: p.stalledTurns,
      stallRate: stallRate(p),
      nudgesSent: p.nudgesSent,
      nudgesEffective: p.nudgesEffective,
      nudgeEffectiveness: nudgeEffectiveness(p),
      mostCommonPattern: mostCommonPattern({ patternCounts }),
      patternCounts,
      totalPatterns: total,
      /** Failed model API calls (`model.error`): the model's, never counted against a tool. */
      modelErrors: p.modelErrors,
    };
  });
}

/**
 * One row per switch (failure key, current model, suggested model): the latest suggestion with the
 * number of sessions it was made in. Each session records its own suggestion, so listing them raw
 * repeated the same advice once per session.
 */
export async function recentSuggestions(db: Db, workspaceId: string, limit = 50, window: { from?: Date; to?: Date } = {}) {
  const latest = db
    .selectDistinctOn([modelSuggestion.failureKey, modelSuggestion.currentModel, modelSuggestion.suggestedModel], {
      sessionId: modelSuggestion.sessionId,
      failureKey: modelSuggestion.failureKey,
      currentModel: modelSuggestion.currentModel,
      suggestedModel: modelSuggestion.suggestedModel,
      strategy: modelSuggestion.strategy,
      currentSuccessRate: modelSuggestion.currentSuccessRate,
      suggestedSuccessRate: modelSuggestion.suggestedSuccessRate,
      ts: modelSuggestion.ts,
      sessions: sql<number>`(count(*) over (partition by ${modelSuggestion.failureKey}, ${modelSuggestion.currentModel}, ${modelSuggestion.suggestedModel}))::int`.as("sessions"),
    })
    .from(modelSuggestion)
    // model_suggestion_ws_time_idx serves the window.
    .where(
      and(
        eq(modelSuggestion.workspaceId, workspaceId),
        ...(window.from ? [gte(modelSuggestion.ts, window.from)] : []),
        ...(window.to ? [lt(modelSuggestion.ts, window.to)] : []),
      ),
    )
    .orderBy(modelSuggestion.failureKey, modelSuggestion.currentModel, modelSuggestion.suggestedModel, desc(modelSuggestion.ts))
    .as("latest_suggestion");
  const rows = await db.select().from(latest).orderBy(desc(latest.ts)).limit(limit);
  return rows.map((s) => ({ ...s, ts: new Date(s.ts).toISOString() }));
}
