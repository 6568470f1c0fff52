/**
 * Manual trust (SPEC 4.6): a person escalates or blocks a key, a tool (`@tool:<name>`) or a domain
 * (`@domain:<name>`) by hand, with a reason. The state is marked manual (the trust document's
 * `manual` and the row's `manual` column) and the engine's transitions leave it until a reset
 * (server/engine/trust.ts); `keys.reset` returns it to trusted.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { approval, keyState, stateTransition } from "@/db/schema";
import { setManualState } from "@/server/engine/trust";
import { DOMAIN_PREFIX, TOOL_PREFIX, levelOfKey, newKeyContext } from "@/server/engine/key-state";
import { historyOf } from "@/server/engine/key-history";
import { redactString } from "@/server/engine/redact";
import { refreshEffectiveStates, writeTrustState } from "./key-state-writer";
import { lockToolLevels } from "./workspace-locks";
import { writeAudit, type Actor } from "./audit";
import { badRequest } from "./errors";

export interface SetKeyStateInput {
  workspaceId: string;
  organizationId: string;
  failureKey: string;
  state: "escalated" | "blocked";
  reason: string;
  actor: Actor;
  now?: number;
}

/** The tool and domain a failure key names: `@tool:x` → tool x; `@domain:d` → domain d; `tool|…` → its tool. */
function subjectOfKey(failureKey: string): { level: "key" | "tool" | "domain"; toolName: string; domain: string | null } {
  const level = levelOfKey(failureKey);
  if (level === "tool") return { level, toolName: failureKey.slice(TOOL_PREFIX.length), domain: null };
  if (level === "domain") return { level, toolName: failureKey.slice(DOMAIN_PREFIX.length), domain: failureKey.slice(DOMAIN_PREFIX.length) };
  const bar = failureKey.indexOf("|");
  return { level, toolName: bar < 0 ? failureKey : failureKey.slice(0, bar), domain: null };
}

export async function setKeyState(db: Db, input: SetKeyStateInput) {
  const failureKey = input.failureKey.trim();
  const subject = subjectOfKey(failureKey);
  if (!subject.toolName) throw badRequest(`failureKey: '${failureKey}' names no tool or domain`, "failureKey");
  if (failureKey.startsWith("@") && subject.level === "key") throw badRequest("failureKey: a level key is @tool:<name> or @domain:<name>", "failureKey");
  const reason = redactString(input.reason.trim());
  if (!reason) throw badRequest("reason: must not be blank", "reason");
  const now = input.now ?? Date.now();
  return db.transaction(async (tx) => {
    // A tool-level state is created under the tool's lock, as ingest creates it (lockToolLevels):
    // batches of the tool's keys then see it, and none holds keys whose effective state it changes.
    if (subject.level === "tool") await lockToolLevels(tx, input.workspaceId, [{ failureKey }], []);
    const where = and(eq(keyState.workspaceId, input.workspaceId), eq(keyState.failureKey, failureKey));
    const [row] = await tx.select({ state: keyState.state, trust: keyState.trust }).from(keyState).where(where).for("update");
    const ctx = row ? null : newKeyContext(failureKey, subject.toolName, subject.level);
    const before = row?.trust ?? ctx!.state;
    const next = setManualState(before, input.state, { by: input.actor.label, reason, at: now });
    await writeTrustState(tx, {
      workspaceId: input.workspaceId,
      failureKey,
      trust: next,
      at: new Date(now),
      effectiveState: next.state,
      create: row ? undefined : { domain: subject.domain, data: historyOf(ctx!) },
    });
    const fromState = row?.state ?? "trusted";
    if (fromState !== next.state || !before.manual) {
      await tx.insert(stateTransition).values({
        workspaceId: input.workspaceId,
        failureKey,
        fromState,
        toState: next.state,
        reason: `set by hand: ${reason}`,
        actor: input.actor.label,
        at: new Date(now),
      });
    }
    // Keys under a level state answer as it; a key's own row as the stricter of it and its levels.
    await refreshEffectiveStates(tx, input.workspaceId, subject.level === "key" ? [] : [failureKey], subject.level === "key" ? [failureKey] : []);
    // A recovery waiting for approval is moot: the state is a person's now.
    await tx
      .update(approval)
      .set({ status: "denied", resolvedAt: new Date(now), resolvedBy: input.actor.label, comment: `Superseded: the key was ${next.state} by hand` })
      .where(and(eq(approval.workspaceId, input.workspaceId), eq(approval.status, "pending"), eq(approval.kind, "recovery"), eq(approval.failureKey, failureKey)));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      actor: input.actor,
      action: "failure_key.set_state",
      target: failureKey,
      before: { state: fromState, manual: Boolean(before.manual) },
      after: { state: next.state, manual: true, reason },
    });
    return { failureKey, state: next.state, manual: true as const, reason, by: input.actor.label, at: new Date(now).toISOString() };
  });
}
