/**
 * The lean guard.check (SPEC 7.2): decides and records the `tool.call` in two database round trips
 * and without a transaction held across them.
 *
 *  1. One read: the session row, the key's, domain's and tool's trust
 *     states, the global tool pattern, whether the event id was seen, whether the API key is still
 *     active, and the configuration fingerprint (documents only when the cached ones are stale).
 *  2. One write statement, atomic on its own: updates (or creates) the session only if the
 *     fields it read are unchanged, then claims the event id and inserts the event from that row. A
 *     concurrent change of the session makes it write nothing, and the check starts over; a
 *     concurrent claim of the same id fails the whole statement (unique violation), likewise.
 *
 * Anything beyond the common answer — `ask` (tool-call approvals), a behaviour effect of the call
 * (pattern, nudge, pause, guidance, verdict, turn counters) — returns null and the caller runs the
 * full transactional path, which owns those rules.
 */
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { observeSessionEvent } from "@/server/engine/patterns";
import { createSessionBehaviour, upgradeSessionBehaviour } from "@/server/engine/behaviour-state";
import { redactedPreview } from "@/server/engine/redact";
import { resolveSettings } from "@/server/engine/settings";
import type { AgentEvent, KeyContext, SessionSettingsInput } from "@/server/engine/types";
import { callInfo } from "@/server/engine/batch";
import type { BatchScope } from "./scope";
import { cachedConfigs, configDocumentsSql, configFingerprintSql, rememberConfigs, type CachedConfigs } from "./config-cache";
import { guardLevelKeys, guardVerdict, type GuardVerdict } from "./guard-verdict";
import { guardRecord } from "./guard-record";

type ToolCall = Extract<AgentEvent, { type: "tool.call" }>;

/** The API key of the request was revoked (seen in the same round trip as the decision inputs). */
export class ApiKeyRevokedError extends Error {
  constructor() {
    super("Invalid or revoked API key");
    this.name = "ApiKeyRevokedError";
  }
}

interface SessionRead {
  model: string | null;
  agent: string;
  paused: boolean;
  pause_reason: string | null;
  settings: SessionSettingsInput;
  behaviour: unknown;
  clock: number | string | null;
  first_event_at: string | null;
  event_count: number;
  call_count: number;
  /** The row version (`xmin`): any committed change of the row since it was read changes it. */
  version: string;
}

interface Inputs {
  config_fingerprint: string | null;
  configs: { ws: unknown; org: unknown } | null;
  session: SessionRead | null;
  states: { k: string; d: KeyContext }[] | null;
  global_pattern: boolean;
  duplicate: boolean;
  key_active: boolean;
}

/**
 * The write applies only if the session row is the version the decision read. Its `xmin` (the
 * transaction that wrote this version) changes with every committed update, whoever made it; comparing
 * it rather than the fields spares sending the ~5 KB behaviour back and PostgreSQL parsing and
 * comparing it as jsonb on every call. (An immutable operator, so Citus routes it like any filter.)
 */
function sessionUnchanged(stored: SessionRead) {
  return sql`s.xmin = ${stored.version}::xid`;
}

function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}
const json = <T>(v: unknown): T => (typeof v === "string" ? JSON.parse(v) : v) as T;

async function readInputs(db: Db, scope: BatchScope, ev: ToolCall, levelKeys: string[], cached: CachedConfigs | null, apiKeyId: string | null): Promise<Inputs> {
  const keys = sql.join(levelKeys.map((k) => sql`${k}`), sql`, `);
  const [row] = rowsOf<Inputs>(
    await db.execute(sql`
      with cfg as (select ${configFingerprintSql(scope.workspaceId)} as fingerprint)
      select
        cfg.fingerprint as config_fingerprint,
        case when cfg.fingerprint is distinct from ${cached?.fingerprint ?? null}::text
          then ${configDocumentsSql(scope.workspaceId)} end as configs,
        (select json_build_object(
            'model', s.model, 'agent', s.agent, 'paused', s.paused, 'pause_reason', s.pause_reason,
            'settings', s.settings, 'behaviour', s.behaviour, 'clock', s.clock, 'first_event_at', s.first_event_at,
            'event_count', s.event_count, 'call_count', s.call_count, 'version', s.xmin::text)
          from agent_session s where s.workspace_id = ${scope.workspaceId} and s.session_id = ${ev.sessionId}) as session,
        (select json_agg(json_build_object('k', k.failure_key, 'd', k.data))
          from key_state k where k.workspace_id = ${scope.workspaceId} and k.failure_key in (${keys})) as states,
        exists (select 1 from global_tool_pattern g
          where g.organization_id = ${scope.organizationId} and g.tool_name = ${ev.toolName} and g.status = 'active') as global_pattern,
        exists (select 1 from event_id e where e.workspace_id = ${scope.workspaceId} and e.id = ${ev.id}) as duplicate,
        (${apiKeyId}::text is null or exists (select 1 from api_key a
          where a.workspace_id = ${scope.workspaceId} and a.id = ${apiKeyId}::text and a.revoked_at is null)) as key_active
      from cfg`),
  );
  return {
    ...row,
    configs: row.configs ? json(row.configs) : null,
    session: row.session ? json(row.session) : null,
    states: row.states ? json(row.states) : null,
  };
}

/** Decides a guard.check in two round trips, or returns null when the full path must run. */
export async function leanGuardCheck(db: Db, scope: BatchScope, ev: ToolCall, apiKeyId: string | null): Promise<GuardVerdict | null> {
  for (let attempt = 0; attempt < 4; attempt++) {
    let configs = cachedConfigs(db, scope.workspaceId);
    // Without cached configuration the level keys are unknown: read the documents first (once).
    if (!configs) {
      const [r] = rowsOf<{ f: string | null; c: unknown }>(
        await db.execute(sql`select ${configFingerprintSql(scope.workspaceId)} as f, ${configDocumentsSql(scope.workspaceId)} as c`),
      );
      if (!r?.f) return null;
      const docs = json<{ ws: unknown; org: unknown }>(r.c);
      configs = rememberConfigs(db, scope.workspaceId, r.f, docs.ws, docs.org);
    }
    const { levelKeys } = guardLevelKeys(ev, configs);
    const inputs = await readInputs(db, scope, ev, levelKeys, configs, apiKeyId);
    if (!inputs.key_active) throw new ApiKeyRevokedError();
    if (!inputs.config_fingerprint) return null;
    if (inputs.configs) {
      // The configuration changed since it was cached: use the new one; read again if it moves the keys.
      configs = rememberConfigs(db, scope.workspaceId, inputs.config_fingerprint, inputs.configs.ws, inputs.configs.org);
      if (guardLevelKeys(ev, configs).levelKeys.join("\u0000") !== levelKeys.join("\u0000")) continue;
    }

    const stored = inputs.session;
    const session = {
      paused: stored?.paused ?? false,
      pauseReason: stored?.pause_reason ?? null,
      settings: (stored?.settings ?? {}) as SessionSettingsInput,
    };
    const states = new Map((inputs.states ?? []).map((s) => [s.k, json<KeyContext>(s.d)]));
    const verdict = guardVerdict({ call: ev, session, configs, states, globalPattern: inputs.global_pattern });
    if (verdict.decision === "ask") return null;
    if (inputs.duplicate) return verdict; // already recorded: answer from the current state, write nothing

    // The engine's step for a tool.call (same as applyBatch): clock clamp, counters, behaviour.
    const info = callInfo(ev, configs);
    const prevClock = stored?.clock == null ? null : Number(stored.clock);
    const t = prevClock === null ? ev.ts : Math.max(prevClock, ev.ts);
    const model = ev.model ?? stored?.model ?? null;
    const settings = resolveSettings(session.settings, configs.workspaceDoc.settings, configs.orgDoc.settings);
    const behaviour = stored?.behaviour ? upgradeSessionBehaviour(stored.behaviour, ev.sessionId) : createSessionBehaviour(ev.sessionId);
    const observed = observeSessionEvent(behaviour, { ...ev, failureKey: info.failureKey, argsHash: info.argsHash }, { patterns: configs.effective.patterns, settings }, t);
    const st = observed.stats;
    if (observed.effects.length || observed.verdicts.length || st.turns || st.stalledTurns || st.nudgesSent || st.nudgesEffective || Object.keys(st.patterns).length) return null;

    const firstEventAt = stored?.first_event_at ? new Date(stored.first_event_at).toISOString() : new Date(t).toISOString();
    const at = new Date(t).toISOString();
    const behaviourJson = JSON.stringify(observed.state);
    const sessionWrite = stored
      ? sql`update agent_session s set clock = ${t}, last_event_at = ${at}::timestamptz, first_event_at = ${firstEventAt}::timestamptz,
            event_count = ${stored.event_count + 1}, call_count = ${stored.call_count + 1}, model = ${model}, behaviour = ${behaviourJson}::jsonb
          where s.workspace_id = ${scope.workspaceId} and s.session_id = ${ev.sessionId} and ${sessionUnchanged(stored)}
          returning s.session_id`
      : sql`insert into agent_session (workspace_id, session_id, clock, last_event_at, first_event_at, event_count, call_count, model, behaviour)
          values (${scope.workspaceId}, ${ev.sessionId}, ${t}, ${at}::timestamptz, ${at}::timestamptz, 1, 1, ${model}, ${behaviourJson}::jsonb)
          on conflict do nothing
          returning session_id`;
    const payload = JSON.stringify({ call: info, pluginName: ev.pluginName ?? null, preview: redactedPreview(ev.args), guard: guardRecord(verdict) });
    const [written] = rowsOf<{ n: number }>(
      await db.execute(sql`
        with s as (${sessionWrite}),
        claim as (
          insert into event_id (workspace_id, id, ts) select ${scope.workspaceId}, ${ev.id}, ${new Date(ev.ts).toISOString()}::timestamptz from s returning id
        ),
        ev as (
          insert into event (workspace_id, id, session_id, type, ts, model, tool_name, call_id, failure_key, turn_index, payload)
          select ${scope.workspaceId}, claim.id, ${ev.sessionId}, 'tool.call', ${at}::timestamptz, ${model}, ${ev.toolName}, ${ev.callId},
            ${info.failureKey}, ${ev.turnIndex ?? null}::integer, ${payload}::jsonb
          from claim returning 1
        )
        select count(*)::int as n from ev`),
    );
    if (Number(written?.n) === 1) return verdict;
    // The session changed between the two round trips: decide again from its new state.
  }
  return null;
}
