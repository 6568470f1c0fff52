/**
 * Mean time to recover (SPEC 8): per key, the mean time from a key leaving trusted (escalated or
 * blocked) to its return to trusted, read from the recorded state transitions. A key still out of
 * trusted has an open episode, not counted until it recovers.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { keyState, stateTransition } from "@/db/schema";

/** Transitions read per question: enough for years of escalations on a busy workspace. */
const MAX_TRANSITIONS = 100_000;

export interface TransitionPoint {
  failureKey: string;
  toState: string;
  at: Date;
}

/** Recovery durations (ms) per key, from its transitions in time order. */
function recoveryDurations(transitions: readonly TransitionPoint[]): Map<string, number[]> {
  const openSince = new Map<string, number>();
  const out = new Map<string, number[]>();
  for (const t of transitions) {
    const at = t.at.getTime();
    if (t.toState === "escalated" || t.toState === "blocked") {
      if (!openSince.has(t.failureKey)) openSince.set(t.failureKey, at);
    } else if (t.toState === "trusted") {
      const since = openSince.get(t.failureKey);
      if (since === undefined) continue;
      openSince.delete(t.failureKey);
      const list = out.get(t.failureKey) ?? [];
      list.push(Math.max(0, at - since));
      out.set(t.failureKey, list);
    }
  }
  return out;
}

const meanSeconds = (ms: readonly number[]): number | null => (ms.length ? Math.round(ms.reduce((a, b) => a + b, 0) / ms.length / 1000) : null);

export interface TimeToRecover {
  /** Mean seconds per key that recovered at least once. */
  byKey: Map<string, number>;
  /** Mean seconds over every recovery of the tool's keys (its key, domain and tool levels). */
  byTool: Map<string, number>;
  /** Recoveries counted per key. */
  recoveries: Map<string, number>;
}

/** MTTR of the given keys (or every key of the workspace), with their tools' means. */
export async function timeToRecover(db: Db, workspaceId: string, opts: { failureKeys?: string[]; toolName?: string } = {}): Promise<TimeToRecover> {
  const keyFilter = opts.toolName
    ? inArray(stateTransition.failureKey, db.select({ k: keyState.failureKey }).from(keyState).where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.toolName, opts.toolName))))
    : opts.failureKeys
      ? inArray(stateTransition.failureKey, opts.failureKeys.length ? opts.failureKeys : [""])
      : undefined;
  const [transitions, tools] = await Promise.all([
    db
      .select({ failureKey: stateTransition.failureKey, toState: stateTransition.toState, at: stateTransition.at })
      .from(stateTransition)
      .where(and(eq(stateTransition.workspaceId, workspaceId), inArray(stateTransition.toState, ["escalated", "blocked", "trusted"]), keyFilter))
      .orderBy(asc(stateTransition.failureKey), asc(stateTransition.at), asc(stateTransition.id))
      .limit(MAX_TRANSITIONS),
    db
      .select({ failureKey: keyState.failureKey, toolName: keyState.toolName })
      .from(keyState)
      .where(
        and(
          eq(keyState.workspaceId, workspaceId),
          opts.toolName ? eq(keyState.toolName, opts.toolName) : opts.failureKeys ? inArray(keyState.failureKey, opts.failureKeys.length ? opts.failureKeys : [""]) : sql`true`,
        ),
      ),
  ]);
  const durations = recoveryDurations(transitions);
  const toolOf = new Map(tools.map((t) => [t.failureKey, t.toolName]));
  const byKey = new Map<string, number>();
  const recoveries = new Map<string, number>();
  const perTool = new Map<string, number[]>();
  for (const [key, ms] of durations) {
    byKey.set(key, meanSeconds(ms)!);
    recoveries.set(key, ms.length);
    const tool = toolOf.get(key);
    if (tool) perTool.set(tool, [...(perTool.get(tool) ?? []), ...ms]);
  }
  const byTool = new Map([...perTool].map(([t, ms]) => [t, meanSeconds(ms)!]));
  return { byKey, byTool, recoveries };
}
