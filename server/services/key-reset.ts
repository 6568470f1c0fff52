/** Reset of failure keys by a person (SPEC 4.3): any state → trusted, counters cleared. */
import { and, eq, inArray, ne } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { approval, keyState, stateTransition } from "@/db/schema";
import { resetKey } from "@/server/engine/trust";
import { refreshEffectiveStates, writeTrustState } from "./key-state-writer";
import { writeAudit, type Actor } from "./audit";
import { notFound } from "./errors";

export interface ResetKeysInput {
  workspaceId: string;
  organizationId: string;
  target: { failureKey: string } | { all: true };
  actor: Actor;
}

export async function resetKeys(db: Db, input: ResetKeysInput): Promise<{ reset: string[] }> {
  return db.transaction((tx) => resetKeysInTx(tx, input));
}

/** The reset inside a transaction of the caller's (an approved reset request resets its key in the approval's own). */
export async function resetKeysInTx(tx: Tx, input: ResetKeysInput): Promise<{ reset: string[] }> {
  const where =
    "failureKey" in input.target
      ? and(eq(keyState.workspaceId, input.workspaceId), eq(keyState.failureKey, input.target.failureKey))
      : and(eq(keyState.workspaceId, input.workspaceId), ne(keyState.state, "trusted"));
  // Lock in key order, like the ingest path, so resets and batches never deadlock.
  const rows = await tx
    .select({ failureKey: keyState.failureKey, state: keyState.state, trust: keyState.trust })
    .from(keyState)
    .where(where)
    .orderBy(keyState.failureKey)
    .for("update");
  if ("failureKey" in input.target && !rows.length) throw notFound(`Failure key ${input.target.failureKey}`);
  const now = new Date();
  for (const r of rows) {
    // Effective state trusted first: a reset level state (domain/tool) then frees the keys under it (refreshEffectiveStates below).
    await writeTrustState(tx, { workspaceId: input.workspaceId, failureKey: r.failureKey, trust: resetKey(r.trust), at: now, effectiveState: "trusted", effectiveFailures: 0 });
    if (r.state !== "trusted") {
      await tx.insert(stateTransition).values({ workspaceId: input.workspaceId, failureKey: r.failureKey, fromState: r.state, toState: "trusted", reason: "reset", actor: input.actor.label, at: now });
    }
  }
  const keys = rows.map((r) => r.failureKey);
  if (keys.length) {
    await refreshEffectiveStates(tx, input.workspaceId, keys.filter((k) => k.startsWith("@")), keys.filter((k) => !k.startsWith("@")));
    await tx
      .update(approval)
      .set({ status: "denied", resolvedAt: now, resolvedBy: input.actor.label, comment: "Superseded: the key was reset" })
      .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.status, "pending"), inArray(approval.failureKey, keys)));
  }
  await writeAudit(tx, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: "failure_key.reset",
    target: "failureKey" in input.target ? input.target.failureKey : "all",
    before: { states: Object.fromEntries(rows.map((r) => [r.failureKey, r.state])) },
    after: { state: "trusted", count: rows.length },
  });
  return { reset: keys };
}
