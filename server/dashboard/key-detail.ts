/** Read-only queries for one failure key's detail page. */
import { withThresholdsInForce } from "@/server/services/thresholds-in-force";
import { and, desc, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { approval, failure, keyState, keyStateSummary, modelToolProfile, stateTransition } from "@/db/schema";
import type { ManualState } from "@/server/engine/types";
import { toKeyRow, type KeyRow } from "./tools";
import { levelReach, type LevelReach } from "./level-reach";
import { iso } from "./util";
import { timeToRecover } from "@/server/services/time-to-recover";

export interface KeyDetail {
  key: KeyRow | null;
  /** Set when a person escalated or blocked the key by hand (keys.setState): kept until a reset. */
  manual: ManualState | null;
  /** For a domain- or tool-level key: what it covers and stops. */
  reach: LevelReach | null;
  /** The domain- and tool-level states that apply to this key (their strictness feeds the effective state). */
  levels: (KeyRow & { manual: ManualState | null; reach: LevelReach })[];
  transitions: { id: number; fromState: string; toState: string; reason: string | null; actor: string | null; at: string }[];
  models: { model: string; attempts: number; failures: number; successRate: number | null; lastFailureAt: string | null }[];
  pendingApprovalId: string | null;
  /** Mean time to recover (escalated → trusted), all time: the key's and its tool's; null before a first recovery. */
  meanTimeToRecover: { keySeconds: number | null; keyRecoveries: number; toolSeconds: number | null };
}

/** Key state, its level states, timeline (latest 100) and per-model profile. Null when the key is unknown. */
export async function getKeyDetail(db: Db, workspaceId: string, failureKey: string, window: { from?: Date; to?: Date } = {}): Promise<KeyDetail | null> {
  const [stateRow] = await db
    .select(keyStateSummary)
    .from(keyState)
    .where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, failureKey)));
  const toolName = stateRow?.toolName ?? failureKey.split("|")[0];
  const levelKeys = [`@tool:${toolName}`, ...(stateRow?.domain ? [`@domain:${stateRow.domain}`] : [])].filter((k) => k !== failureKey);
  const [levels, transitions, models, pending, [anyFailure]] = await Promise.all([
    stateRow?.level === "key"
      ? db.select(keyStateSummary).from(keyState).where(and(eq(keyState.workspaceId, workspaceId), inArray(keyState.failureKey, levelKeys)))
      : Promise.resolve([]),
    db
      .select()
      .from(stateTransition)
      // transition_ws_key_idx (workspace_id, failure_key, at) serves the window.
      .where(
        and(
          eq(stateTransition.workspaceId, workspaceId),
          eq(stateTransition.failureKey, failureKey),
          ...(window.from ? [gte(stateTransition.at, window.from)] : []),
          ...(window.to ? [lt(stateTransition.at, window.to)] : []),
        ),
      )
      .orderBy(desc(stateTransition.at), desc(stateTransition.id))
      .limit(100),
    db
      .select()
      .from(modelToolProfile)
      .where(and(eq(modelToolProfile.workspaceId, workspaceId), eq(modelToolProfile.failureKey, failureKey)))
      .orderBy(desc(modelToolProfile.attempts)),
    db
      .select({ id: approval.id })
      .from(approval)
      .where(and(eq(approval.workspaceId, workspaceId), eq(approval.failureKey, failureKey), eq(approval.kind, "recovery"), eq(approval.status, "pending")))
      .limit(1),
    stateRow
      ? Promise.resolve([{ one: 1 }])
      : db
          .select({ one: sql<number>`1` })
          .from(failure)
          .where(and(eq(failure.workspaceId, workspaceId), eq(failure.failureKey, failureKey)))
          .limit(1),
  ]);
  if (!stateRow && !anyFailure && transitions.length === 0 && !window.from && !window.to) return null;
  // Thresholds of the rule in force now, for the key and its levels (one configuration read).
  const shown = await withThresholdsInForce(db, workspaceId, stateRow ? [stateRow, ...levels] : levels);
  const levelRows = stateRow ? shown.slice(1) : shown;
  const [reaches, mttr] = await Promise.all([Promise.all(levelRows.map((l) => levelReach(db, workspaceId, l))), timeToRecover(db, workspaceId, { toolName })]);
  return {
    key: stateRow ? toKeyRow(shown[0]) : null,
    manual: stateRow?.trust.manual ?? null,
    reach: stateRow && stateRow.level !== "key" ? await levelReach(db, workspaceId, stateRow) : null,
    levels: levelRows.map((l, i) => ({ ...toKeyRow(l), manual: l.trust.manual ?? null, reach: reaches[i] })),
    transitions: transitions.map((t) => ({ id: Number(t.id), fromState: t.fromState, toState: t.toState, reason: t.reason, actor: t.actor, at: t.at.toISOString() })),
    models: models.map((m) => ({
      model: m.model,
      attempts: m.attempts,
      failures: m.failures,
      successRate: m.attempts > 0 ? (m.attempts - m.failures) / m.attempts : null,
      lastFailureAt: iso(m.lastFailureAt),
    })),
    pendingApprovalId: pending[0]?.id ?? null,
    meanTimeToRecover: { keySeconds: mttr.byKey.get(failureKey) ?? null, keyRecoveries: mttr.recoveries.get(failureKey) ?? 0, toolSeconds: mttr.byTool.get(toolName) ?? null },
  };
}
