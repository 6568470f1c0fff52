/** Agent sessions: their view for agents (sessions.get), setting overrides, and resume by a person. */
import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { agentSession } from "@/db/schema";
import { activePatterns, storedSessionBehaviour, upgradeSessionBehaviour } from "@/server/engine/behaviour-state";
import { resumeSession as resumeBehaviour } from "@/server/engine/nudges";
import { redactString } from "@/server/engine/redact";
import { sessionStatus } from "@/server/engine/session-status";
import { applySettingsPatch, parseSessionSettings, resolveSettings } from "@/server/engine/settings";
import type { SessionSettingsInput } from "@/server/engine/types";
import { loadConfigs } from "./config-cache";
import { lockSessions } from "./workspace-locks";
import { writeAudit, type Actor } from "./audit";
import { FieldIssuesError, badRequest, notFound } from "./errors";
import { heldOf, holdsOver } from "./holds";
import { openCallsOf } from "./open-calls";
import { sessionFailureSummary } from "./session-failure-summary";
import { lockSessionRow } from "./session-lock";

export async function getSessionView(db: Db, workspaceId: string, sessionId: string, now = Date.now()) {
  const [row] = await db
    .select()
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, workspaceId), eq(agentSession.sessionId, sessionId)));
  if (!row) throw notFound(`Session ${sessionId}`);
  const [configs, hold, openCalls] = await Promise.all([
    loadConfigs(db as never, workspaceId),
    holdsOver(db, workspaceId, row.agent),
    openCallsOf(db, workspaceId, [sessionId]),
  ]);
  const behaviour = upgradeSessionBehaviour(row.behaviour, sessionId);
  const effectiveSettings = resolveSettings(row.settings as SessionSettingsInput, configs.workspaceDoc.settings, configs.orgDoc.settings);
  const held = heldOf(row, hold);
  const status = sessionStatus(
    { ended: row.endedAt !== null, held: held !== null, lastEventAt: row.lastEventAt ? row.lastEventAt.getTime() : null },
    effectiveSettings.sessionIdleMinutes.value,
    now,
  );
  return {
    sessionId,
    agent: row.agent,
    model: row.model,
    // A hold over the session pauses it as its own pause does (SPEC 4.6).
    paused: held !== null,
    pauseReason: held?.reason ?? null,
    status,
    held,
    // Calls the sweep found without a result after open_call_seconds, until it arrives (SPEC 5.1).
    openCalls: openCalls.get(sessionId) ?? [],
    effectiveSettings,
    activePatterns: activePatterns(behaviour).map((p) => ({ ...p, detectedAt: new Date(p.detectedAt).toISOString() })),
    failureSummary: await sessionFailureSummary(db, workspaceId, { sessionId, status, endedAt: row.endedAt, failureCount: row.failureCount }),
  };
}

/** Session overrides (null clears one); the session is created if it is new. */
export async function setSessionSettings(db: Db, input: { workspaceId: string; sessionId: string; settings: unknown }) {
  const parsed = parseSessionSettings(input.settings);
  if (!parsed.ok) throw new FieldIssuesError(parsed.errors.map((e) => ({ path: ["settings", ...e.path.split(".").filter(Boolean)], message: e.message })));
  return db.transaction(async (tx) => {
    const { sessions } = await lockSessions(tx, input.workspaceId, [input.sessionId]);
    const s = sessions.get(input.sessionId)!;
    const settings = applySettingsPatch(s.settings, parsed.value);
    await tx
      .update(agentSession)
      .set({ settings })
      .where(and(eq(agentSession.workspaceId, input.workspaceId), eq(agentSession.sessionId, input.sessionId)));
    const configs = await loadConfigs(tx, input.workspaceId);
    return resolveSettings(settings, configs.workspaceDoc.settings, configs.orgDoc.settings);
  });
}

export interface ResumeSessionInput {
  workspaceId: string;
  organizationId: string;
  sessionId: string;
  guidance?: string;
  actor: Actor;
  now?: number;
}

/** Resume a paused session; guidance (if any) reaches the agent once, on its next call. */
export async function resumeSession(db: Db, input: ResumeSessionInput) {
  const now = input.now ?? Date.now();
  return db.transaction(async (tx) => {
    const row = await lockSessionRow(tx, input.workspaceId, input.sessionId);
    if (!row.paused) throw badRequest(`Session ${input.sessionId} is not paused`, "sessionId");
    const behaviour = upgradeSessionBehaviour(row.behaviour, input.sessionId);
    // Typed by a person, read by the agent and audit-logged: a pasted secret is redacted like args.
    const guidance = input.guidance?.trim() ? redactString(input.guidance.trim()) : null;
    const resumed = resumeBehaviour({ ...behaviour, paused: true }, guidance, now);
    const nextBehaviour = resumed.ok ? resumed.state : { ...behaviour, paused: false, pendingGuidance: guidance };
    await tx
      .update(agentSession)
      .set({ paused: false, pauseReason: null, pausedAt: null, pausedBy: null, behaviour: storedSessionBehaviour(nextBehaviour) })
      .where(and(eq(agentSession.workspaceId, input.workspaceId), eq(agentSession.sessionId, input.sessionId)));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      actor: input.actor,
      action: "session.resume",
      target: input.sessionId,
      before: { paused: true, pauseReason: row.pauseReason },
      after: { paused: false, guidance },
    });
    return { sessionId: input.sessionId, paused: false, guidance };
  });
}
