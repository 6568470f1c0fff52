/** A batch's roll-ups: daily results and failures per tool and key, model deltas, behaviour counters per model. */
import type { BehaviourStats } from "./patterns";
import type { PatternType } from "./types";
import type { BatchRecords, BehaviourDelta } from "./batch";

/** The UTC day of `t` (YYYY-MM-DD), remembering the last day asked for (a batch spans one or two). */
let lastDay = { start: 0, end: 0, day: "" };

const DAY = (t: number) => {
  if (t >= lastDay.start && t < lastDay.end) return lastDay.day;
  const start = Math.floor(t / 86_400_000) * 86_400_000;
  lastDay = { start, end: start + 86_400_000, day: new Date(t).toISOString().slice(0, 10) };
  return lastDay.day;
};

export function addModelToolDelta(writes: BatchRecords, model: string, failureKey: string, failed: boolean, t: number) {
  const dk = `${model}\u0000${failureKey}`;
  const d = writes.modelToolDeltas.get(dk) ?? { model, failureKey, attempts: 0, failures: 0, lastFailureAt: null };
  d.attempts += 1;
  if (failed) {
    d.failures += 1;
    d.lastFailureAt = t;
  }
  writes.modelToolDeltas.set(dk, d);
}

export function addDailyStat(writes: BatchRecords, t: number, toolName: string, failureKey: string, failed: boolean) {
  const dayKey = `${DAY(t)}\u0000${toolName}\u0000${failureKey}`;
  const ds = writes.dailyStats.get(dayKey) ?? { day: DAY(t), toolName, failureKey, results: 0, failures: 0 };
  ds.results += 1;
  if (failed) ds.failures += 1;
  writes.dailyStats.set(dayKey, ds);
}

export function addBehaviourDelta(writes: BatchRecords, model: string, stats: BehaviourStats) {
  const any = stats.nudgesSent || stats.nudgesEffective || stats.turns || stats.stalledTurns || Object.keys(stats.patterns).length;
  if (!any) return;
  const d = behaviourDelta(writes, model);
  for (const [k, v] of Object.entries(stats.patterns)) d.patterns[k as PatternType] = (d.patterns[k as PatternType] ?? 0) + (v ?? 0);
  d.nudgesSent += stats.nudgesSent;
  d.nudgesEffective += stats.nudgesEffective;
  d.turns += stats.turns;
  d.stalledTurns += stats.stalledTurns;
}

/** The batch's behaviour counters of a model, created empty. */
export function behaviourDelta(writes: BatchRecords, model: string): BehaviourDelta {
  let d = writes.behaviourDeltas.get(model);
  if (!d) writes.behaviourDeltas.set(model, (d = { patterns: {}, nudgesSent: 0, nudgesEffective: 0, turns: 0, stalledTurns: 0 }));
  return d;
}
