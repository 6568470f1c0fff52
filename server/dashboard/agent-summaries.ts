/**
 * `patterns.summary` and `models.list` (SPEC 7.6): the Patterns and Models pages' numbers for the
 * agent API and the CLI (`vigil patterns`, `stalls`, `models`). They call the pages' own read models
 * (patterns-data.ts) with the pages' window vocabulary (time-range.ts), so a count here is the count
 * on screen. Every query is workspace-scoped and served by a (workspace, …) index; none reads the
 * event log.
 */
import { and, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession, modelToolProfile, patternDetection } from "@/db/schema";
import { successRate } from "@/server/engine/models";
import { behaviourProfiles, earliestDetectionDay, modelMatrix, patternStats, recentSuggestions } from "./patterns-data";
import { RANGE_PRESETS, readTimeWindow, windowDays, type RangePreset } from "./time-range";

export const RANGE_IDS = RANGE_PRESETS.map((p) => p.id) as [RangePreset, ...RangePreset[]];
/** The Patterns page's default window. */
const PATTERNS_DEFAULT_RANGE: RangePreset = "7d";
/** Stalled sessions listed in a summary (the total is `totals.sessions`). */
const STALLED_SESSIONS_LIMIT = 50;
/** Failure keys compared across models: as many as the Models page's heatmap. */
const MODEL_TOP_KEYS = 12;

const SEVERITY_RANK = sql`max(case ${patternDetection.severity} when 'severe' then 3 when 'moderate' then 2 when 'minor' then 1 else 0 end)`;

export async function patternSummary(db: Db, workspaceId: string, input: { range?: RangePreset; model?: string }, now = new Date()) {
  const range = input.range ?? PATTERNS_DEFAULT_RANGE;
  const window = readTimeWindow({ range }, PATTERNS_DEFAULT_RANGE, now);
  // As the Patterns page bounds "all": from the first day with a detection.
  const days = windowDays(window, now, { earliest: window.from ? null : await earliestDetectionDay(db, workspaceId), fallbackDays: 7 });
  const from = window.from ?? new Date(`${days[0]}T00:00:00Z`);
  const [stats, stalled] = await Promise.all([
    patternStats(db, { workspaceId, days, from, to: window.to, now: now.getTime(), model: input.model }),
    stalledSessions(db, workspaceId, { from, to: window.to, model: input.model }),
  ]);
  const sent = stats.effectivenessByPattern.reduce((a, r) => a + r.sent, 0);
  const effective = stats.effectivenessByPattern.reduce((a, r) => a + r.effective, 0);
  return {
    range,
    label: window.label,
    from: from.toISOString(),
    to: (window.to ?? now).toISOString(),
    model: input.model ?? null,
    totals: stats.totals,
    patterns: stats.severityByType.map((r) => ({ ...r, total: r.minor + r.moderate + r.severe })),
    nudges: {
      // Nudges answering a pattern (guidance a person sent is not judged); `totals.nudges` counts every nudge.
      sent,
      effective,
      rate: sent > 0 ? effective / sent : 1,
      byPattern: stats.effectivenessByPattern,
      byModel: stats.effectivenessByModel,
    },
    stalledSessions: stalled,
  };
}

/** The window's sessions with detections, latest detection first, with their agent and state. */
async function stalledSessions(db: Db, workspaceId: string, w: { from: Date; to?: Date; model?: string }) {
  const conds: SQL[] = [eq(patternDetection.workspaceId, workspaceId), gte(patternDetection.ts, w.from)];
  if (w.to) conds.push(lt(patternDetection.ts, w.to));
  if (w.model !== undefined) conds.push(sql`coalesce(${patternDetection.model}, 'unknown') = ${w.model}`);
  const perSession = db
    .select({
      sessionId: patternDetection.sessionId,
      detections: sql<number>`count(*)::int`.as("detections"),
      patternTypes: sql<string[]>`array_agg(distinct ${patternDetection.patternType})`.as("pattern_types"),
      worst: SEVERITY_RANK.mapWith(Number).as("worst"),
      lastDetectedAt: sql<string>`max(${patternDetection.ts})`.as("last_detected_at"),
    })
    .from(patternDetection)
    .where(and(...conds))
    .groupBy(patternDetection.sessionId)
    .as("per_session");
  const rows = await db
    .select({
      sessionId: perSession.sessionId,
      detections: perSession.detections,
      patternTypes: perSession.patternTypes,
      worst: perSession.worst,
      lastDetectedAt: perSession.lastDetectedAt,
      agent: agentSession.agent,
      model: agentSession.model,
      paused: agentSession.paused,
      endedAt: agentSession.endedAt,
    })
    .from(perSession)
    .leftJoin(agentSession, and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, perSession.sessionId)))
    .orderBy(desc(perSession.lastDetectedAt), perSession.sessionId)
    .limit(STALLED_SESSIONS_LIMIT);
  return rows.map((r) => ({
    sessionId: r.sessionId,
    agent: r.agent,
    model: r.model,
    detections: Number(r.detections),
    patternTypes: [...(r.patternTypes ?? [])].sort(),
    worstSeverity: (["minor", "moderate", "severe"] as const)[Number(r.worst) - 1] ?? null,
    lastDetectedAt: new Date(r.lastDetectedAt).toISOString(),
    paused: r.paused ?? false,
    ended: r.endedAt !== null && r.endedAt !== undefined,
  }));
}

/**
 * Every model of the workspace (all time, as the Models page's profiles): its behaviour (turns,
 * stall rate, nudges and their effectiveness, patterns) and its tool results — totals over every
 * failure key plus the keys the Models page compares models on — and the latest switch suggestions.
 */
export async function modelList(db: Db, workspaceId: string) {
  const [profiles, matrix, totals, suggestions] = await Promise.all([
    behaviourProfiles(db, workspaceId),
    modelMatrix(db, workspaceId, MODEL_TOP_KEYS),
    db
      .select({
        model: modelToolProfile.model,
        attempts: sql<number>`sum(${modelToolProfile.attempts})::int`,
        failures: sql<number>`sum(${modelToolProfile.failures})::int`,
        keys: sql<number>`count(*)::int`,
      })
      .from(modelToolProfile)
      .where(eq(modelToolProfile.workspaceId, workspaceId))
      .groupBy(modelToolProfile.model),
    recentSuggestions(db, workspaceId, 20),
  ]);
  const behaviourOf = new Map(profiles.map((p) => [p.model, p]));
  const toolsOf = new Map(totals.map((t) => [t.model, { attempts: Number(t.attempts), failures: Number(t.failures), keys: Number(t.keys) }]));
  const names = new Set([...behaviourOf.keys(), ...toolsOf.keys()]);
  const models = [...names].map((model) => {
    const profile = behaviourOf.get(model);
    const t = toolsOf.get(model) ?? { attempts: 0, failures: 0, keys: 0 };
    const cells = matrix.cells[model] ?? {};
    return {
      model,
      behaviour: profile ? withoutModel(profile) : null,
      tools: {
        attempts: t.attempts,
        failures: t.failures,
        successRate: successRate(t),
        failureKeys: t.keys,
        byKey: matrix.keys
          .filter((k) => cells[k.failureKey])
          .map((k) => {
            const c = cells[k.failureKey]!;
            return { failureKey: k.failureKey, attempts: c.attempts, failures: c.failures, successRate: c.rate, lastFailureAt: c.lastFailureAt };
          }),
      },
    };
  });
  models.sort((a, b) => (b.behaviour?.turns ?? 0) - (a.behaviour?.turns ?? 0) || b.tools.attempts - a.tools.attempts || a.model.localeCompare(b.model));
  return { models, suggestions };
}

function withoutModel<T extends { model: string }>(p: T): Omit<T, "model"> {
  const { model: _model, ...rest } = p;
  return rest;
}
