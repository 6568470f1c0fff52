/**
 * The open-call sweep (SPEC 5.1), run in every app instance: finds `tool.call`s with no
 * `tool.result` after `open_call_seconds` and raises each once as `hung_call`.
 *
 * A pass reads the candidate calls without locking; then, per session, one transaction claims the
 * session row with `FOR UPDATE SKIP LOCKED` (a session another instance is sweeping, or a request
 * is writing, is left to the next pass), lets the engine decide with the time passed in
 * (`openCallsAt`, `raiseHungCall`), and marks the calls in `open_call` with
 * `on conflict do nothing`: only the calls this transaction inserted are raised, so with any
 * number of sweepers each call is raised exactly once. The raise is a pending nudge and the
 * session's `pending_nudges` flag: the session's next answer delivers the `hung_call` pattern
 * effect and its nudge (server/services/pending-nudges.ts), and records the detection.
 *
 * Candidates: calls of the last 24 hours in sessions not ended, that were reported as `tool.call`
 * events, or allowed by guard.check in a session that reports results (a session that only calls
 * guard.check never sends results: its calls are not open calls). The background sweep reads each
 * session's calls once they come of age (SweepWatermarks), open sessions a page per statement, so a
 * pass stays small however busy the day was. Idle sessions need no sweep:
 * status is decided when read (server/engine/session-status.ts), so the next event makes the
 * session active at once.
 */
import { sql } from "drizzle-orm";
import { rowsOf, type Db, type Tx } from "@/db/client";
import { textArray } from "@/db/sql-arrays";
import { openCallsAt, raiseHungCall, type CallWithoutResult } from "@/server/engine/open-calls";
import { resolveSettings, settingValues } from "@/server/engine/settings";
import type { SessionSettingsInput } from "@/server/engine/types";
import type { WorkspaceConfigs } from "@/server/engine/batch";
import { queuePendingNudges } from "@/server/services/pending-nudges";
import { withRetry } from "./index";
import { loadConfigs } from "@/server/services/config-cache";

/**
 * How far back calls are looked for: every pass reads the tool calls of this window (the event
 * log's older partitions are not read), so it is kept to a day; a call is swept many times within
 * it, so only an `open_call_seconds` above a day is never raised.
 */
const OPEN_CALL_LOOKBACK_MS = 86_400_000;
/** The smallest `open_call_seconds` (a positive count): a younger call is never open. */
const MIN_OPEN_MS = 1000;
/** Candidate calls read per workspace of a page of sessions (oldest first); the rest wait for the next pass. */
const CANDIDATES_PER_PASS = 2000;
/** The default interval between passes. */
const OPEN_CALL_SWEEP_INTERVAL_MS = 10_000;

interface CandidateRow {
  workspace_id: string;
  session_id: string;
  call_id: string;
  tool_name: string;
  ts: string | Date;
}

interface SessionCandidates {
  workspaceId: string;
  sessionId: string;
  calls: CallWithoutResult[];
}

const tsMs = (v: string | Date) => (v instanceof Date ? v.getTime() : new Date(v).getTime());

/**
 * How far behind its watermark a sweeper reads again: a call whose event arrives late (a client
 * that sends its events in batches, OTLP traces applied as they settle) is still read. Every pass
 * reads it again, so it is kept to minutes: a pass reads this much of a busy fleet's calls.
 */
const LATE_CALL_MARGIN_MS = 5 * 60_000;
/** Open sessions read per statement: on the embedded database a statement holds the server's only thread. */
const SESSIONS_PER_STATEMENT = 50;

interface OpenSession {
  workspace_id: string;
  session_id: string;
  settings: unknown;
  /** Whether the session has reported a result: only then are its guard-allowed calls open calls. */
  reports_results: boolean;
}

/**
 * What a sweeper has looked at: per open session, the time up to which its calls were read and found
 * answered, marked or not open calls (epoch ms). A call is read once its session's
 * `open_call_seconds` have passed, so a pass reads only the calls that came of age since the last
 * one instead of the whole day's again. Kept per sweeper in memory: a new process reads the day
 * once, and the marks in `open_call` keep the raise exactly-once across sweepers.
 */
export type SweepWatermarks = Map<string, number>;

const sessionKey = (workspaceId: string, sessionId: string) => `${workspaceId}\u0001${sessionId}`;

/**
 * The open sessions after `after` (in key order), a page of them, each with whether it reports
 * results, decided once per session here rather than once per call: the session's behaviour is
 * json, parsed again for every row that asks.
 */
async function openSessionsAfter(db: Db, now: number, after: OpenSession | null): Promise<OpenSession[]> {
  return rowsOf<OpenSession>(
    await db.execute(sql`
      select s.workspace_id, s.session_id, s.settings,
        exists (
          select 1 from json_array_elements(case when json_typeof(s.behaviour->'calls') = 'array' then s.behaviour->'calls' else '[]'::json end) k
          where case json_typeof(k) when 'array' then json_array_length(k) >= 4 when 'object' then k->>'outcome' is not null else false end
        ) as reports_results
      from agent_session s
      where s.ended_at is null and s.clock >= ${now - OPEN_CALL_LOOKBACK_MS}
        ${after ? sql`and (s.workspace_id, s.session_id) > (${after.workspace_id}, ${after.session_id})` : sql``}
      order by s.workspace_id, s.session_id
      limit ${SESSIONS_PER_STATEMENT}`),
  );
}

/** A session's calls to read in this pass: those after what was read before, up to the age its `open_call_seconds` makes open. */
interface CallWindow {
  session: OpenSession;
  from: number;
  to: number;
}

/**
 * Calls with no result and not yet marked in the windows (all sessions of one workspace), by
 * session, and whether every call of the windows was read (false when the statement's limit cut it:
 * the windows are read again next pass).
 */
async function candidateCalls(db: Db, workspaceId: string, windows: CallWindow[]): Promise<{ sessions: SessionCandidates[]; complete: boolean }> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const rows = rowsOf<CandidateRow>(
    await db.execute(sql`
      select c.workspace_id, c.session_id, c.call_id, c.tool_name, c.ts
      from unnest(${textArray(windows.map((w) => w.session.session_id))}, ${textArray(windows.map((w) => iso(w.from)))}::timestamptz[],
          ${textArray(windows.map((w) => iso(w.to)))}::timestamptz[], ${textArray(windows.map((w) => String(w.session.reports_results)))}::boolean[])
        as w(session_id, from_ts, to_ts, reports_results)
      join event c on c.workspace_id = ${workspaceId} and c.session_id = w.session_id and c.type = 'tool.call'
        and c.ts > w.from_ts and c.ts <= w.to_ts
        and c.ts > ${iso(Math.min(...windows.map((w) => w.from)))}::timestamptz and c.ts <= ${iso(Math.max(...windows.map((w) => w.to)))}::timestamptz
      where c.call_id is not null and c.tool_name is not null
        and (c.payload->'guard' is null or (w.reports_results and c.payload->'guard'->>'decision' = 'allow'))
        and not exists (select 1 from open_call o where o.workspace_id = c.workspace_id and o.session_id = c.session_id and o.call_id = c.call_id)
        and not exists (select 1 from event r where r.workspace_id = c.workspace_id and r.session_id = c.session_id and r.call_id = c.call_id and r.type = 'tool.result' and r.ts >= c.ts)
      order by c.ts
      limit ${CANDIDATES_PER_PASS}`),
  );
  const bySession = new Map<string, SessionCandidates>();
  for (const r of rows) {
    let s = bySession.get(r.session_id);
    if (!s) bySession.set(r.session_id, (s = { workspaceId: r.workspace_id, sessionId: r.session_id, calls: [] }));
    // A call id sent twice (two events) is one call: the first time counts.
    if (!s.calls.some((c) => c.callId === r.call_id)) s.calls.push({ callId: r.call_id, toolName: r.tool_name, since: tsMs(r.ts) });
  }
  // One lock order across instances.
  const sessions = [...bySession.values()].sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  return { sessions, complete: rows.length < CANDIDATES_PER_PASS };
}

/** A session's settings as its own, its workspace's and its organization's resolve them. */
const sessionSettings = (own: unknown, configs: WorkspaceConfigs) => settingValues(resolveSettings(own as SessionSettingsInput, configs.workspaceDoc.settings, configs.orgDoc.settings));

/**
 * Claims one session and raises its open calls. Returns the call ids this caller raised, or null
 * when the session was not claimed (another holds it, or it ended): its calls wait for the next pass.
 */
async function sweepSession(db: Db, c: SessionCandidates, now: number): Promise<string[] | null> {
  return withRetry(() =>
    db.transaction(async (tx) => {
      const [row] = rowsOf<{ settings: unknown; model: string | null }>(
        await tx.execute(sql`
          select settings, model from agent_session
          where workspace_id = ${c.workspaceId} and session_id = ${c.sessionId} and ended_at is null
          for update skip locked`),
      );
      if (!row) return null;
      const configs = await loadConfigs(tx, c.workspaceId, db);
      const settings = sessionSettings(row.settings, configs);
      const open = openCallsAt(c.calls, settings.openCallSeconds, now);
      if (!open.length) return [];
      const marked = await markOpenCalls(tx, c, open, now);
      if (!marked.length) return [];
      await raise(tx, c, open.filter((o) => marked.includes(o.callId)), settings, row.model, now);
      return marked;
    }),
  );
}

/** Inserts the calls' marks; returns the ids this transaction inserted (another may have won some). */
async function markOpenCalls(tx: Tx, c: SessionCandidates, open: CallWithoutResult[], now: number): Promise<string[]> {
  const found = new Date(now).toISOString();
  const values = open.map((o) => sql`(${c.workspaceId}, ${c.sessionId}, ${o.callId}, ${o.toolName}, ${new Date(o.since).toISOString()}::timestamptz, ${found}::timestamptz)`);
  const rows = rowsOf<{ call_id: string }>(
    await tx.execute(sql`
      insert into open_call (workspace_id, session_id, call_id, tool_name, since, found_at)
      values ${sql.join(values, sql`, `)}
      on conflict do nothing
      returning call_id`),
  );
  return rows.map((r) => r.call_id);
}

async function raise(
  tx: Tx,
  c: SessionCandidates,
  calls: CallWithoutResult[],
  settings: ReturnType<typeof settingValues>,
  model: string | null,
  now: number,
): Promise<void> {
  const raised = calls.map((call) => raiseHungCall(c.sessionId, call, settings));
  if (raised.every((r) => r === null)) {
    // Detection off: the calls show as open, nothing is sent.
    await tx.execute(sql`
      update open_call set reported_at = ${new Date(now).toISOString()}::timestamptz
      where workspace_id = ${c.workspaceId} and session_id = ${c.sessionId} and reported_at is null`);
    return;
  }
  const at = new Date(now).toISOString();
  const day = at.slice(0, 10);
  for (const r of raised) {
    if (!r) continue;
    await tx.execute(sql`
      insert into pattern_detection (workspace_id, session_id, model, pattern_type, severity, count, tool_sequence, ts)
      values (${c.workspaceId}, ${c.sessionId}, ${model}, ${r.pattern.patternType}, ${r.pattern.severity}, ${r.pattern.count}, ${JSON.stringify(r.pattern.toolSequence)}::jsonb, ${at}::timestamptz)`);
  }
  const n = raised.filter((r) => r !== null).length;
  await tx.execute(sql`
    insert into daily_pattern_stat (workspace_id, day, pattern_type, severity, model, detections)
    values (${c.workspaceId}, ${day}, 'hung_call', 'minor', ${model ?? ""}, ${n})
    on conflict (workspace_id, day, pattern_type, severity, model) do update set detections = daily_pattern_stat.detections + excluded.detections`);
  const nudges = raised.flatMap((r) => (r?.nudge ? [r.nudge] : []));
  // Recorded as sent, as the fold's nudges are: the Patterns page counts them, the timeline shows them.
  for (const x of nudges) {
    await tx.execute(sql`
      insert into nudge (workspace_id, session_id, model, pattern_type, nudge_type, message, ts)
      values (${c.workspaceId}, ${c.sessionId}, ${model}, ${x.patternType}, ${x.nudgeType}, ${x.message}, ${at}::timestamptz)`);
  }
  for (const x of nudges) {
    const counted = x.patternType && x.nudgeType !== "guidance" ? 1 : 0;
    await tx.execute(sql`
      insert into daily_nudge_stat (workspace_id, day, pattern_type, model, nudges, interrupts, sent, effective)
      values (${c.workspaceId}, ${day}, ${x.patternType ?? ""}, ${model ?? ""}, 1, ${x.nudgeType === "interrupt" ? 1 : 0}, ${counted}, 0)
      on conflict (workspace_id, day, pattern_type, model) do update set nudges = daily_nudge_stat.nudges + 1,
        interrupts = daily_nudge_stat.interrupts + excluded.interrupts, sent = daily_nudge_stat.sent + excluded.sent`);
  }
  await queuePendingNudges(
    tx,
    c.workspaceId,
    nudges.map((x) => ({ sessionId: x.sessionId, nudgeType: x.nudgeType, patternType: x.patternType, message: x.message, source: "sweep" as const })),
  );
  // The flag makes the next answer deliver the pattern effects (open_call.reported_at) even with nudges off.
  await tx.execute(sql`
    update agent_session set pending_nudges = true, pattern_count = pattern_count + ${n}
    where workspace_id = ${c.workspaceId} and session_id = ${c.sessionId}`);
}

/** Marks of calls that are no longer open (their result arrived, their session ended or is gone), once reported. */
async function forgetClosedCalls(db: Db): Promise<number> {
  const rows = rowsOf<{ call_id: string }>(
    await db.execute(sql`
      delete from open_call o
      where o.reported_at is not null and (
        not exists (select 1 from agent_session s where s.workspace_id = o.workspace_id and s.session_id = o.session_id and s.ended_at is null)
        or exists (select 1 from event r where r.workspace_id = o.workspace_id and r.session_id = o.session_id and r.call_id = o.call_id and r.type = 'tool.result' and r.ts >= o.since))
      returning o.call_id`),
  );
  return rows.length;
}

export interface SweepResult {
  /** `sessionId/callId` of the calls this caller raised. */
  raised: string[];
  forgotten: number;
}

/**
 * One pass: raise every call that is open now and not raised yet, then forget closed ones. With
 * `watermarks` (the background sweep's), only the calls that came of age since the last pass are
 * read; without, every call of the lookback.
 */
export async function sweepOpenCalls(db: Db, now = Date.now(), watermarks?: SweepWatermarks): Promise<SweepResult> {
  const raised: string[] = [];
  const seen = new Set<string>();
  // Sessions a page at a time, in key order (one lock order across instances), each page's calls
  // per workspace: no statement reads more than a page of sessions' calls.
  for (let page = await openSessionsAfter(db, now, null); page.length > 0; page = await openSessionsAfter(db, now, page[page.length - 1])) {
    const byWorkspace = new Map<string, OpenSession[]>();
    for (const s of page) byWorkspace.set(s.workspace_id, [...(byWorkspace.get(s.workspace_id) ?? []), s]);
    for (const [workspaceId, sessions] of byWorkspace) {
      const configs = await loadConfigs(db as unknown as Tx, workspaceId, db);
      const windows: CallWindow[] = [];
      for (const session of sessions) {
        const key = sessionKey(workspaceId, session.session_id);
        seen.add(key);
        const read = watermarks?.get(key);
        const from = read === undefined ? now - OPEN_CALL_LOOKBACK_MS : Math.max(now - OPEN_CALL_LOOKBACK_MS, read - LATE_CALL_MARGIN_MS);
        // A call younger than MIN_OPEN_MS is never open; one younger than the setting is read in a later pass.
        const to = now - Math.max(MIN_OPEN_MS, sessionSettings(session.settings, configs).openCallSeconds * 1000);
        if (to > from) windows.push({ session, from, to });
      }
      if (!windows.length) continue;
      const { sessions: candidates, complete } = await candidateCalls(db, workspaceId, windows);
      const waiting = new Set<string>();
      for (const c of candidates) {
        try {
          const ids = await sweepSession(db, c, now);
          if (ids === null) waiting.add(c.sessionId);
          else for (const id of ids) raised.push(`${c.sessionId}/${id}`);
        } catch (err) {
          // One session must not stop the others: its calls stay unmarked and are tried next pass.
          waiting.add(c.sessionId);
          console.error(`[vigil] open-call sweep of session ${c.sessionId} failed:`, err);
        }
      }
      if (watermarks && complete) for (const w of windows) if (!waiting.has(w.session.session_id)) watermarks.set(sessionKey(workspaceId, w.session.session_id), w.to);
    }
    if (page.length < SESSIONS_PER_STATEMENT) break;
  }
  // Sessions that ended or went quiet for the lookback are no longer read.
  if (watermarks) for (const key of watermarks.keys()) if (!seen.has(key)) watermarks.delete(key);
  const forgotten = await forgetClosedCalls(db);
  return { raised, forgotten };
}

/** Starts the sweep in this instance; the returned function stops it (a pass under way finishes). */
export function startOpenCallSweep(db: Db, intervalMs = OPEN_CALL_SWEEP_INTERVAL_MS): () => void {
  let stopped = false;
  let running = false;
  const watermarks: SweepWatermarks = new Map();
  const tick = async () => {
    if (running || stopped) return;
    running = true;
    try {
      await sweepOpenCalls(db, Date.now(), watermarks);
    } catch (err) {
      console.error("[vigil] open-call sweep failed:", err);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
