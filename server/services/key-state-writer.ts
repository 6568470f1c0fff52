/**
 * The writes of `key_state` rows outside the batch. A person's change of one trust state (a state
 * set by hand, a reset, a recovery approved or denied) goes through `writeTrustState`, which writes
 * the columns that mirror the trust document from the document; effective states are recomputed by
 * `refreshEffectiveStates`. The batch's own write is a multi-row upsert kept in
 * `server/ingest/persist.ts` (writeTrustPhase, statement made once, on the hot path), its
 * first-sight placeholders in `lockKeyStates` (`server/ingest/load.ts`). This module sits in
 * services, below ingest, so both import it.
 */
import { and, eq, sql } from "drizzle-orm";
import { rowsOf, type Tx } from "@/db/client";
import { keyState } from "@/db/schema";
import { DOMAIN_PREFIX, TOOL_PREFIX, effectiveState } from "@/server/engine/key-state";
import type { KeyHistory, KeyState, TrustState } from "@/server/engine/types";

export interface TrustStateWrite {
  workspaceId: string;
  failureKey: string;
  /** The trust document as the engine left it: the state, counters, escalation and manual mark are written from it. */
  trust: KeyState;
  at: Date;
  /** The row's effective state when the caller sets it (refreshEffectiveStates settles keys under a level); else left as stored. */
  effectiveState?: TrustState;
  /** The decayed failure count when the change clears it; else left as stored. */
  effectiveFailures?: number;
  /** The state has no row yet: insert one with this domain and history document. */
  create?: { domain: string | null; data: KeyHistory };
}

/** Writes one trust state changed by a person (the caller holds its row's lock, or knows it has none). */
export async function writeTrustState(tx: Tx, change: TrustStateWrite): Promise<void> {
  const { trust } = change;
  const values = {
    state: trust.state,
    effectiveState: change.effectiveState,
    effectiveFailures: change.effectiveFailures,
    consecutiveFailures: trust.consecutiveFailures,
    escalationExpires: trust.escalationExpires === null ? null : new Date(trust.escalationExpires),
    trust,
    manual: trust.manual != null,
    updatedAt: change.at,
  };
  if (change.create) {
    await tx.insert(keyState).values({
      workspaceId: change.workspaceId,
      failureKey: change.failureKey,
      toolName: trust.toolName,
      level: trust.level,
      domain: change.create.domain,
      data: change.create.data,
      ...values,
      effectiveState: change.effectiveState ?? trust.state,
    });
    return;
  }
  await tx.update(keyState).set(values).where(and(eq(keyState.workspaceId, change.workspaceId), eq(keyState.failureKey, change.failureKey)));
}

const textList = (values: string[]) => sql.join(values.length ? values.map((v) => sql`${v}`) : [sql`null`], sql`, `);

/**
 * Effective state (SPEC 4.3): a key is as strict as the strictest of itself, its domain-level and
 * its tool-level state. The rule is the engine's `effectiveState`; this is the one place that
 * applies it to stored key rows, for ingest, approvals and resets alike.
 *
 * Recomputes the effective state of the keys under the given domain-/tool-level states and of
 * `explicitKeys`; a level row's own effective state is its state. Key rows another transaction
 * holds are skipped: that transaction writes their effective state itself from the level states
 * it holds (lockToolLevels orders it after a batch that creates a tool-level state), so nothing is
 * left stale.
 */
export async function refreshEffectiveStates(tx: Tx, workspaceId: string, levelKeys: string[], explicitKeys: string[] = []): Promise<void> {
  const domains = levelKeys.filter((k) => k.startsWith(DOMAIN_PREFIX)).map((k) => k.slice(DOMAIN_PREFIX.length));
  const tools = levelKeys.filter((k) => k.startsWith(TOOL_PREFIX)).map((k) => k.slice(TOOL_PREFIX.length));
  const rows = rowsOf<{ failure_key: string; level: string; state: TrustState; effective_state: string; domain_state: TrustState | null; tool_state: TrustState | null }>(
    await tx.execute(sql`
      with targets as (
        select failure_key from key_state
        where workspace_id = ${workspaceId}
          and ((level = 'key' and (domain in (${textList(domains)}) or tool_name in (${textList(tools)})))
            or failure_key in (${textList([...levelKeys, ...explicitKeys])}))
        order by failure_key
        for update skip locked
      )
      select k.failure_key, k.level, k.state, k.effective_state, d.state as domain_state, t.state as tool_state
      from key_state k
      join targets using (failure_key)
      left join key_state d on k.level = 'key' and d.workspace_id = k.workspace_id and d.failure_key = '@domain:' || k.domain
      left join key_state t on k.level = 'key' and t.workspace_id = k.workspace_id and t.failure_key = '@tool:' || k.tool_name
      where k.workspace_id = ${workspaceId}`),
  );
  const changed = rows
    .map((r) => ({ fk: r.failure_key, eff: r.level === "key" ? effectiveState([r.state, r.domain_state, r.tool_state]) : r.state, was: r.effective_state }))
    .filter((r) => r.eff !== r.was)
    .map(({ fk, eff }) => ({ fk, eff }));
  if (!changed.length) return;
  await tx.execute(sql`
    update key_state set effective_state = v.eff
    from json_to_recordset(${JSON.stringify(changed)}::json) as v(fk text, eff text)
    where key_state.workspace_id = ${workspaceId} and key_state.failure_key = v.fk`);
}
