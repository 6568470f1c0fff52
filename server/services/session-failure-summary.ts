/**
 * A session's failure summary (SPEC 7.6 `sessions.get` `failureSummary`, 8): what failed, the
 * failure groups, the keys its failures escalated, the patterns detected and how it ended.
 */
import { and, asc, eq, gte, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { failure, patternDetection, stateTransition } from "@/db/schema";
import { fingerprintError } from "@/server/engine/failure-fingerprint";
import { DOMAIN_PREFIX, TOOL_PREFIX } from "@/server/engine/key-state";

/** Failures of one session read for the summary (its counts come from all of them in SQL). */
const MAX_FAILURES_READ = 2000;

export interface SessionFailureSummary {
  /** Failed tool calls in the session. */
  failures: number;
  /** What failed: per tool and key, most failures first. */
  failed: { toolName: string; failureKey: string; count: number; lastError: string | null; lastAt: string }[];
  /** The failure groups the session's failures fall in, largest first. */
  groups: { fingerprint: string; sample: string; count: number }[];
  /** Keys (and domain or tool levels) one of the session's failures escalated or blocked. */
  escalatedKeys: { failureKey: string; toState: string; at: string; reason: string | null }[];
  /** Stall and loop patterns detected in the session, per type and severity. */
  patterns: { patternType: string; severity: string; count: number }[];
  /** How the session ended: its status, when, and its last failure. */
  outcome: { status: string; endedAt: string | null; lastFailure: { toolName: string; failureKey: string; error: string | null; at: string } | null };
}

export async function sessionFailureSummary(
  db: Db,
  workspaceId: string,
  session: { sessionId: string; status: string; endedAt: Date | null; failureCount: number },
): Promise<SessionFailureSummary> {
  const inSession = and(eq(failure.workspaceId, workspaceId), eq(failure.sessionId, session.sessionId));
  const [rows, patterns] = await Promise.all([
    db
      .select({ failureKey: failure.failureKey, toolName: failure.toolName, domain: failure.domain, ts: failure.ts, errorMessage: failure.errorMessage, fingerprint: failure.fingerprint })
      .from(failure)
      .where(inSession)
      .orderBy(asc(failure.ts), asc(failure.id))
      .limit(MAX_FAILURES_READ),
    db
      .select({ patternType: patternDetection.patternType, severity: patternDetection.severity, count: sql<number>`count(*)::int` })
      .from(patternDetection)
      .where(and(eq(patternDetection.workspaceId, workspaceId), eq(patternDetection.sessionId, session.sessionId)))
      .groupBy(patternDetection.patternType, patternDetection.severity)
      .orderBy(sql`count(*) desc`),
  ]);

  const failed = new Map<string, SessionFailureSummary["failed"][number]>();
  const groups = new Map<string, SessionFailureSummary["groups"][number]>();
  const levelKeys = new Set<string>();
  const failureTimes = new Set<number>();
  for (const r of rows) {
    const at = r.ts.toISOString();
    const f = failed.get(r.failureKey) ?? { toolName: r.toolName, failureKey: r.failureKey, count: 0, lastError: null, lastAt: at };
    f.count += 1;
    f.lastError = r.errorMessage;
    f.lastAt = at;
    failed.set(r.failureKey, f);
    const fp = r.fingerprint ? { fingerprint: r.fingerprint, sample: fingerprintError(r.errorMessage).sample } : fingerprintError(r.errorMessage);
    const g = groups.get(fp.fingerprint) ?? { fingerprint: fp.fingerprint, sample: fp.sample, count: 0 };
    g.count += 1;
    groups.set(fp.fingerprint, g);
    levelKeys.add(r.failureKey).add(`${TOOL_PREFIX}${r.toolName}`);
    if (r.domain) levelKeys.add(`${DOMAIN_PREFIX}${r.domain}`);
    failureTimes.add(r.ts.getTime());
  }

  // A failure's escalation is recorded at the failure's own time (server/engine/trust-phase.ts), on its key or a level.
  const escalations = rows.length
    ? await db
        .select({ failureKey: stateTransition.failureKey, toState: stateTransition.toState, at: stateTransition.at, reason: stateTransition.reason })
        .from(stateTransition)
        .where(
          and(
            eq(stateTransition.workspaceId, workspaceId),
            inArray(stateTransition.failureKey, [...levelKeys]),
            inArray(stateTransition.toState, ["escalated", "blocked"]),
            gte(stateTransition.at, rows[0].ts),
            lte(stateTransition.at, rows[rows.length - 1].ts),
          ),
        )
        .orderBy(asc(stateTransition.at), asc(stateTransition.id))
    : [];

  const last = rows[rows.length - 1];
  return {
    failures: Math.max(session.failureCount, rows.length),
    failed: [...failed.values()].sort((a, b) => b.count - a.count || b.lastAt.localeCompare(a.lastAt)),
    groups: [...groups.values()].sort((a, b) => b.count - a.count),
    escalatedKeys: escalations
      .filter((t) => failureTimes.has(t.at.getTime()))
      .map((t) => ({ failureKey: t.failureKey, toState: t.toState, at: t.at.toISOString(), reason: t.reason })),
    patterns,
    outcome: {
      status: session.status,
      endedAt: session.endedAt ? session.endedAt.toISOString() : null,
      lastFailure: last ? { toolName: last.toolName, failureKey: last.failureKey, error: last.errorMessage, at: last.ts.toISOString() } : null,
    },
  };
}
