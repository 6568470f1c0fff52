/**
 * Applies stored OTLP traces (SPEC 7.4 revision 2) and ends idle OTLP sessions.
 *
 * A due trace (root arrived, or quiet for the settle time) is claimed with
 * `FOR UPDATE SKIP LOCKED`, so with several app instances each trace is applied by one of them;
 * it is mapped as a whole (every stored span, applied or not) and its events go through the
 * ingest shell (those applied before are duplicates by event id) — claim, apply, mark applied in ONE transaction, so a crash
 * anywhere leaves the trace due for the next run. Late spans of an applied trace make it due
 * again and are applied as a follow-up batch. A tool span whose requesting inference span has not
 * arrived yet (exports of one trace race each other) is held back until it arrives or the trace
 * settles, so its model is the requesting step's and not the session's latest.
 */
import { and, asc, eq, isNull, lt, lte, notInArray, notLike, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { event, otlpSession, otlpSpan, otlpTrace } from "@/db/schema";
import { applyBatch } from "@/server/ingest/apply";
import { queueOtlpNudges } from "@/server/services/pending-nudges";
import { withRetry } from "@/server/ingest";
import { normalizeEvents } from "@/server/ingest/schema";
import { mapTrace, OTEL_ID_PREFIX } from "./map";
import { spanFromJson, type StoredSpanJson } from "./store";
import { noteEventsWritten } from "@/server/services/planner-statistics";
import { noteBatch, type BatchMetrics } from "@/server/metrics";

/** The default of `VIGIL_OTLP_TRACE_SETTLE_SECONDS`, in ms. */
const DEFAULT_SETTLE_MS = 10_000;

export interface OtlpTiming {
  settleMs: number;
  idleMs: number;
}

/** `VIGIL_OTLP_TRACE_SETTLE_SECONDS` (default 10) and `VIGIL_OTLP_SESSION_IDLE_MINUTES` (default 30). */
export function otlpTimingFromEnv(env: Record<string, string | undefined> = process.env): OtlpTiming {
  const num = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0 (got "${raw}")`);
    return n;
  };
  return { settleMs: num("VIGIL_OTLP_TRACE_SETTLE_SECONDS", DEFAULT_SETTLE_MS / 1000) * 1000, idleMs: num("VIGIL_OTLP_SESSION_IDLE_MINUTES", 30) * 60_000 };
}

export interface TraceRef {
  workspaceId: string;
  traceId: string;
}

/**
 * Applies one trace if it is due and not being applied elsewhere. Returns the number of new
 * events applied, or null when the trace was not claimed (not due, nothing pending, or locked).
 */
export async function applyTrace(db: Db, ref: TraceRef, now = Date.now(), settleMs = DEFAULT_SETTLE_MS): Promise<number | null> {
  let counted: { accepted: number; metrics?: BatchMetrics } = { accepted: 0 };
  const applied = await withRetry(() =>
    db.transaction(async (tx) => {
      const [trace] = await tx
        .select()
        .from(otlpTrace)
        .where(and(eq(otlpTrace.workspaceId, ref.workspaceId), eq(otlpTrace.traceId, ref.traceId), eq(otlpTrace.pending, true), lte(otlpTrace.dueAt, new Date(now))))
        .for("update", { skipLocked: true });
      if (!trace) return null;
      const rows = await tx
        .select({ spanId: otlpSpan.spanId, span: otlpSpan.span, appliedAt: otlpSpan.appliedAt })
        .from(otlpSpan)
        .where(and(eq(otlpSpan.workspaceId, ref.workspaceId), eq(otlpSpan.traceId, ref.traceId)));
      const settleAt = trace.lastSpanAt.getTime() + settleMs;
      const mapped = mapTrace(
        rows.map((r) => spanFromJson(r.span as StoredSpanJson)),
        now,
        { settled: now >= settleAt },
      );
      // All the trace's events: those applied before are duplicates by id and skipped by the
      // shell, so a follow-up batch adds exactly what is new — including events that only exist
      // now that more of the trace is known (a functionId's session.start once its root arrived).
      const events = mapped.events.map((e) => e.event);
      let accepted = 0;
      if (events.length) {
        const batch = await applyBatch(tx, { workspaceId: trace.workspaceId, organizationId: trace.organizationId }, normalizeEvents(events, now), { db });
        accepted = batch.accepted;
        counted = batch;
        // An OTLP answer carries no effects: the nudges wait for the session's next check or hook answer (SPEC 4.6).
        await queueOtlpNudges(tx, trace.workspaceId, batch.effects);
      }
      const at = new Date(now);
      await tx
        .update(otlpSpan)
        .set({ appliedAt: at })
        .where(
          and(
            eq(otlpSpan.workspaceId, ref.workspaceId),
            eq(otlpSpan.traceId, ref.traceId),
            isNull(otlpSpan.appliedAt),
            mapped.held.length ? notInArray(otlpSpan.spanId, mapped.held) : undefined,
          ),
        );
      // Held spans keep the trace pending: due again when a span arrives, at the latest once it settles.
      const held = mapped.held.length > 0;
      await tx
        .update(otlpTrace)
        .set({ pending: held, appliedAt: at, ...(held ? { dueAt: new Date(settleAt) } : {}) })
        .where(and(eq(otlpTrace.workspaceId, ref.workspaceId), eq(otlpTrace.traceId, ref.traceId)));
      // The sessions this trace fed, for the idle end. Sorted: one lock order across instances.
      const sessions = [...mapped.sessions].sort(([a], [b]) => (a < b ? -1 : 1));
      for (const [sessionId, lastMs] of sessions) {
        const last = new Date(Math.max(lastMs, 0));
        await tx
          .insert(otlpSession)
          .values({ workspaceId: trace.workspaceId, sessionId, organizationId: trace.organizationId, lastSpanAt: last })
          .onConflictDoUpdate({
            target: [otlpSession.workspaceId, otlpSession.sessionId],
            set: { lastSpanAt: sql`greatest(${otlpSession.lastSpanAt}, excluded.last_span_at)`, endedAt: sql`null` },
          });
      }
      return accepted;
    }),
  );
  noteEventsWritten(db, applied ?? 0);
  noteBatch(ref.workspaceId, counted, "otlp");
  return applied;
}

const RETRY_MS = 60_000;

/** Applies every due trace, oldest first, in batches. Returns the trace ids this caller applied. */
export async function applyDueTraces(db: Db, now = Date.now(), limit = 100, settleMs = DEFAULT_SETTLE_MS): Promise<string[]> {
  const applied: string[] = [];
  for (;;) {
    const due = await db
      .select({ workspaceId: otlpTrace.workspaceId, traceId: otlpTrace.traceId })
      .from(otlpTrace)
      .where(and(eq(otlpTrace.pending, true), lte(otlpTrace.dueAt, new Date(now))))
      .orderBy(asc(otlpTrace.dueAt))
      .limit(limit);
    let progressed = false;
    for (const ref of due) {
      try {
        const n = await applyTrace(db, ref, now, settleMs);
        if (n !== null) {
          applied.push(ref.traceId);
          progressed = true;
        }
      } catch (err) {
        // One bad trace must not stop the others: it stays pending and is retried a minute later.
        console.error(`[vigil] OTLP trace ${ref.traceId} could not be applied (retried in 60 s):`, err);
        await db
          .update(otlpTrace)
          .set({ dueAt: new Date(now + RETRY_MS) })
          .where(and(eq(otlpTrace.workspaceId, ref.workspaceId), eq(otlpTrace.traceId, ref.traceId)))
          .catch(() => {});
      }
    }
    if (due.length < limit || !progressed) return applied;
  }
}

/**
 * Ends sessions fed only by OTLP after the idle time without spans: a `session.end` (so session
 * decay, SPEC 4.2, applies). A later span reopens the row, and the next idle period ends it again.
 */
export async function endIdleSessions(db: Db, idleMs: number, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - idleMs);
  const idle = await db
    .select({ workspaceId: otlpSession.workspaceId, sessionId: otlpSession.sessionId })
    .from(otlpSession)
    .where(and(isNull(otlpSession.endedAt), lt(otlpSession.lastSpanAt, cutoff)))
    .limit(500);
  let ended = 0;
  for (const ref of idle) {
    const done = await withRetry(() =>
      db.transaction(async (tx) => {
        const [row] = await tx
          .select()
          .from(otlpSession)
          .where(and(eq(otlpSession.workspaceId, ref.workspaceId), eq(otlpSession.sessionId, ref.sessionId), isNull(otlpSession.endedAt), lt(otlpSession.lastSpanAt, cutoff)))
          .for("update", { skipLocked: true });
        if (!row) return false;
        // Only sessions fed by OTLP alone: one the agent API also feeds is the agent's to end.
        const [agentEvent] = await tx
          .select({ id: event.id })
          .from(event)
          .where(and(eq(event.workspaceId, row.workspaceId), eq(event.sessionId, row.sessionId), notLike(event.id, `${OTEL_ID_PREFIX}%`)))
          .limit(1);
        if (agentEvent) {
          await tx
            .update(otlpSession)
            .set({ endedAt: new Date(now) })
            .where(and(eq(otlpSession.workspaceId, row.workspaceId), eq(otlpSession.sessionId, row.sessionId)));
          return false;
        }
        const endTs = Math.min(row.lastSpanAt.getTime() + idleMs, now);
        const id = `${OTEL_ID_PREFIX}end:${row.sessionId.slice(0, 80)}:${row.lastSpanAt.getTime()}`;
        await applyBatch(tx, { workspaceId: row.workspaceId, organizationId: row.organizationId }, normalizeEvents([{ type: "session.end", id, sessionId: row.sessionId, ts: endTs }], now), { db });
        await tx
          .update(otlpSession)
          .set({ endedAt: new Date(endTs) })
          .where(and(eq(otlpSession.workspaceId, row.workspaceId), eq(otlpSession.sessionId, row.sessionId)));
        return true;
      }),
    );
    if (done) ended += 1;
  }
  return ended;
}

/** One pass of the background work: due traces, then idle sessions. */
export async function runOtlpApplier(db: Db, timing: OtlpTiming, now = Date.now()) {
  const traces = await applyDueTraces(db, now, 100, timing.settleMs);
  const sessions = await endIdleSessions(db, timing.idleMs, now);
  return { traces: traces.length, sessions };
}

/** Starts the background applier: picks up what a crash left, settles traces, ends idle sessions. */
export function startOtlpApplier(db: Db, timing: OtlpTiming, intervalMs = 1000): () => void {
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    runOtlpApplier(db, timing)
      .catch((err) => console.error("[vigil] OTLP applier failed:", err))
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return () => clearInterval(timer);
}
