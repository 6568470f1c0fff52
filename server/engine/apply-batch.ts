/**
 * The engine owns a batch (issue 15): given the state the shell loaded and the batch's new events,
 * `applyBatch` applies every domain rule in event order — clock clamp, security
 * pre-classification, trust states (key, domain, tool), the approval lifecycle, failure history,
 * model deltas and suggestions, daily roll-ups, behaviour (patterns, nudges and their verdicts,
 * pauses) — and returns the records to write, the effects and the next states. Pure: no I/O, no
 * clock, no randomness (ids come from the caller). The shell loads, runs this, writes.
 *
 * It runs as two phases, which the shell runs apart: `applySessionPhase` (every rule that reads
 * sessions and no trust state) and `applyTrustPhase` (the trust states, over the rows the shell
 * locked after writing the session phase). `applyBatch` is both at once.
 *
 * `planBatch` is the part the shell needs before loading: which stored calls a result borrows its
 * key from, and which trust states the batch touches — with possibly-security results marking the
 * tool-level state they may create (the shell locks the whole tool for those).
 *
 * Files: the records and types in batch.ts, `planBatch` in batch-plan.ts, the phases in
 * session-phase.ts and trust-phase.ts, the roll-ups in batch-rollups.ts.
 */
import type { AgentEvent } from "./types";
import { applySessionPhase } from "./session-phase";
import { applyTrustPhase } from "./trust-phase";
import type { BatchOutcome, LoadedState } from "./batch";

/**
 * Applies the batch's new (not duplicate) events in order. `newId` names the approvals the batch
 * opens. The loaded state is not modified. The same as the session phase followed by the trust
 * phase, which is how the shell runs it (writing between the two).
 */
export function applyBatch(loaded: LoadedState, events: readonly AgentEvent[], newId: () => string): BatchOutcome {
  const outcome = applyTrustPhase(loaded, applySessionPhase(loaded, events), newId);
  if (!outcome.severityUpgrades.length) return outcome;
  const upgraded = new Map(outcome.severityUpgrades.map((u) => [u.id, u.severity]));
  const rows = outcome.records.events.map((r) => (upgraded.has(r.id) ? { ...r, severity: upgraded.get(r.id)! } : r));
  return { ...outcome, records: { ...outcome.records, events: rows } };
}
