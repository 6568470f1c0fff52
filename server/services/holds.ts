/**
 * Holds (SPEC 4.6): a person pauses one session, every session of an agent name (present and
 * future), or the whole workspace (the kill switch), and lifts them again. guard.check reads the
 * holds in the same statement as the session, on every instance, so nothing cached can answer
 * "not held" after a hold committed (server/ingest/guard-lean.ts, server/ingest/index.ts).
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { agentSession, operatorHold } from "@/db/schema";
import { storedSessionBehaviour, upgradeSessionBehaviour } from "@/server/engine/behaviour-state";
import { pauseSession as pauseBehaviour } from "@/server/engine/nudges";
import { redactString } from "@/server/engine/redact";
import { writeAudit, type Actor } from "./audit";
import { enqueueNotificationDrafts } from "@/server/notifications/outbox";
import { draftForWorkspacePaused } from "@/server/notifications/events";
import { badRequest } from "./errors";
import { queueGuidanceFor } from "./pending-nudges";
import { lockSessionRow } from "./session-lock";

export type HoldScope = "session" | "agent" | "workspace";

export interface Hold {
  scope: HoldScope;
  reason: string;
  since: string;
  by: string;
}

/** A hold row as guard.check reads it (scope workspace: target ''). */
export interface HoldRow {
  scope: "workspace" | "agent";
  target: string;
  reason: string;
  since?: string | Date | null;
  by?: string;
}

/**
 * The hold that applies to a session of `agent`, the strictest first: the workspace's, then the
 * agent's. A session's own pause is its row's `paused`.
 */
export function applicableHold<T extends HoldRow>(holds: readonly T[] | null | undefined, agent: string): T | null {
  if (!holds?.length) return null;
  return holds.find((h) => h.scope === "workspace") ?? holds.find((h) => h.scope === "agent" && h.target === agent) ?? null;
}

/** A session's pause with the holds over it folded in, as guard.check decides on it: the strictest scope's reason. */
export function foldHold<S extends { paused: boolean; pauseReason: string | null }>(session: S, hold: { scope: string; target: string; reason: string } | null): S {
  if (!hold) return session;
  const what = hold.scope === "workspace" ? "the workspace is paused" : `agent '${hold.target}' is paused`;
  return { ...session, paused: true, pauseReason: `${hold.reason} (${what})` };
}

const iso = (v: string | Date | null | undefined) => (v == null ? new Date(0).toISOString() : new Date(v).toISOString());

interface Who {
  workspaceId: string;
  organizationId: string;
  actor: Actor;
  now?: number;
}

/** Typed by a person, read by the agent and audit-logged: a pasted secret is redacted like args. */
const personText = (text: string) => redactString(text.trim());

export async function pauseSession(db: Db, input: Who & { sessionId: string; reason: string }) {
  const at = new Date(input.now ?? Date.now());
  const reason = personText(input.reason);
  return db.transaction(async (tx) => {
    const row = await lockSessionRow(tx, input.workspaceId, input.sessionId);
    if (row.endedAt) throw badRequest(`Session ${input.sessionId} has ended`, "sessionId");
    // The behaviour keeps its own pause flag (an interrupt nudge is not sent on top of a pause).
    const behaviour = row.behaviour === null ? null : storedSessionBehaviour(pauseBehaviour(upgradeSessionBehaviour(row.behaviour, input.sessionId), reason, at.getTime()));
    await tx
      .update(agentSession)
      .set({ paused: true, pauseReason: reason, pausedAt: at, pausedBy: input.actor.label, ...(behaviour ? { behaviour } : {}) })
      .where(and(eq(agentSession.workspaceId, input.workspaceId), eq(agentSession.sessionId, input.sessionId)));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      actor: input.actor,
      action: "session.pause",
      target: input.sessionId,
      before: { paused: row.paused, pauseReason: row.pauseReason },
      after: { paused: true, pauseReason: reason },
    });
    return { sessionId: input.sessionId, paused: true as const, held: { scope: "session" as const, reason, since: at.toISOString(), by: input.actor.label } };
  });
}

async function putHold(tx: Tx, input: Who & { scope: "workspace" | "agent"; target: string; reason: string }) {
  const at = new Date(input.now ?? Date.now());
  const where = and(eq(operatorHold.workspaceId, input.workspaceId), eq(operatorHold.scope, input.scope), eq(operatorHold.target, input.target));
  const [before] = await tx.select().from(operatorHold).where(where).for("update");
  // Paused again: the new reason; `since` stays when the hold began.
  const [row] = await tx
    .insert(operatorHold)
    .values({ workspaceId: input.workspaceId, scope: input.scope, target: input.target, reason: input.reason, since: at, by: input.actor.label })
    .onConflictDoUpdate({ target: [operatorHold.workspaceId, operatorHold.scope, operatorHold.target], set: { reason: input.reason, by: input.actor.label } })
    .returning();
  await writeAudit(tx, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: input.scope === "workspace" ? "workspace.pause" : "agent.pause",
    target: input.scope === "workspace" ? "workspace" : input.target,
    before: before ? { held: true, reason: before.reason } : { held: false },
    after: { held: true, reason: input.reason },
  });
  // The kill switch pulled (not a paused workspace's new reason): its channels hear it with the pause.
  if (input.scope === "workspace" && !before) await enqueueNotificationDrafts(tx, input.workspaceId, [draftForWorkspacePaused({ reason: input.reason, by: input.actor.label })], { now: at.getTime() });
  return holdOut(row);
}

function holdOut(row: typeof operatorHold.$inferSelect): Hold {
  return { scope: row.scope, reason: row.reason, since: iso(row.since), by: row.by };
}

async function liftHold(tx: Tx, input: Who & { scope: "workspace" | "agent"; target: string; guidance?: string }) {
  const [row] = await tx
    .delete(operatorHold)
    .where(and(eq(operatorHold.workspaceId, input.workspaceId), eq(operatorHold.scope, input.scope), eq(operatorHold.target, input.target)))
    .returning();
  if (!row) {
    throw input.scope === "workspace" ? badRequest("The workspace is not paused") : badRequest(`Agent '${input.target}' is not paused`, "agent");
  }
  const guidance = input.guidance?.trim() ? personText(input.guidance) : null;
  // The guidance reaches every running session the hold covered, once, on its next call.
  const sessions = guidance
    ? await queueGuidanceFor(tx, input.workspaceId, { agent: input.scope === "agent" ? input.target : null }, guidance, input.actor.label)
    : 0;
  await writeAudit(tx, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: input.scope === "workspace" ? "workspace.resume" : "agent.resume",
    target: input.scope === "workspace" ? "workspace" : input.target,
    before: { held: true, reason: row.reason, since: iso(row.since), by: row.by },
    after: { held: false, guidance, sessionsGuided: sessions },
  });
  return { resumed: true as const, guidance, sessionsGuided: sessions };
}

export function pauseAgent(db: Db, input: Who & { agent: string; reason: string }) {
  return db.transaction((tx) => putHold(tx, { ...input, scope: "agent", target: input.agent, reason: personText(input.reason) })).then((hold) => ({ agent: input.agent, ...hold }));
}

export function resumeAgent(db: Db, input: Who & { agent: string; guidance?: string }) {
  return db.transaction((tx) => liftHold(tx, { ...input, scope: "agent", target: input.agent })).then((r) => ({ agent: input.agent, ...r }));
}

export function pauseWorkspace(db: Db, input: Who & { reason: string }) {
  return db.transaction((tx) => putHold(tx, { ...input, scope: "workspace", target: "", reason: personText(input.reason) }));
}

export function resumeWorkspace(db: Db, input: Who & { guidance?: string }) {
  return db.transaction((tx) => liftHold(tx, { ...input, scope: "workspace", target: "" }));
}

/** `workspace.holds`: the kill switch and the paused agents, oldest first. */
export async function listHolds(db: Db | Tx, workspaceId: string): Promise<{ workspace: Hold | null; agents: (Hold & { agent: string })[] }> {
  const rows = await db.select().from(operatorHold).where(eq(operatorHold.workspaceId, workspaceId)).orderBy(operatorHold.since, operatorHold.target);
  const ws = rows.find((r) => r.scope === "workspace");
  return {
    workspace: ws ? holdOut(ws) : null,
    agents: rows.filter((r) => r.scope === "agent").map((r) => ({ ...holdOut(r), agent: r.target })),
  };
}

/** The holds that apply to a session of `agent` (workspace first), for views and hooks. */
export async function holdsOver(db: Db | Tx, workspaceId: string, agent: string): Promise<HoldRow | null> {
  const rows = await db
    .select({ scope: operatorHold.scope, target: operatorHold.target, reason: operatorHold.reason, since: operatorHold.since, by: operatorHold.by })
    .from(operatorHold)
    .where(and(eq(operatorHold.workspaceId, workspaceId), sql`(${operatorHold.scope} = 'workspace' or (${operatorHold.scope} = 'agent' and ${operatorHold.target} = ${agent}))`));
  return applicableHold(rows, agent);
}

/** A session's `held` (sessions.get): the workspace's hold, the agent's, or its own pause. */
export function heldOf(
  session: { paused: boolean; pauseReason: string | null; pausedAt: Date | string | null; pausedBy?: string | null },
  hold: HoldRow | null,
): Hold | null {
  if (hold) return { scope: hold.scope, reason: hold.reason, since: iso(hold.since), by: hold.by ?? "" };
  if (session.paused) return { scope: "session", reason: session.pauseReason ?? "Session paused", since: iso(session.pausedAt), by: session.pausedBy ?? "vigil" };
  return null;
}
