/**
 * The shell around the engine's batch, in the caller's transaction: lock the sessions (and read
 * what the batch needs besides locked rows) → session phase → write it → lock the tools' levels and
 * the trust states → trust phase → write it. Locks are taken in a fixed order (sessions, tool
 * locks, trust states, shared counters); the engine (server/engine/apply-batch.ts) applies every rule;
 * nothing is read after it ran. Every writer of a workspace shares the trust-state rows, so the
 * event log and the session rows are written before those are locked: the rows are held for the
 * trust phase, its writes and the commit only.
 */
import { randomUUID } from "node:crypto";
import type { Db, Tx } from "@/db/client";
import { callRef, type BatchConfigs, type BatchPlan, type BatchSession, type StoredCall } from "@/server/engine/batch";
import { applySessionPhase } from "@/server/engine/session-phase";
import { applyTrustPhase } from "@/server/engine/trust-phase";
import { callsToLoad, planBatch } from "@/server/engine/batch-plan";
import type { ModelToolProfile } from "@/server/engine/models";
import { cachedConfigs, loadConfigs } from "@/server/services/config-cache";
import { lockSessions, lockToolLevels, queueSharedToolLocks, type SessionRow } from "@/server/services/workspace-locks";
import type { AgentEvent, Effect } from "@/server/engine/types";
import { enabledChannels, enqueueNotifications, type NotificationChannel } from "@/server/notifications/outbox";
import {
  apiKeyStillActive,
  claimEventIds,
  loadModelProfiles,
  loadStoredCalls,
  lockKeyStates,
  type EndedSessions,
} from "./load";
import { postgresJs } from "./pipeline";
import { errorCode } from "./sql-errors";
import { ApiKeyRevokedError } from "./api-key-revoked";
import { writeTrustPhase, writeSessionPhase, writeSharedCounters } from "./persist";
import { rememberSessions } from "./row-version-cache";
import type { BatchScope } from "./scope";
import { batchMetrics, type BatchMetrics } from "@/server/metrics";

export type { BatchScope } from "./scope";

export interface BatchResult {
  accepted: number;
  duplicates: number;
  effects: Effect[];
  /** The batch's new events, in the order they were applied (the events given, less duplicates). */
  applied: readonly AgentEvent[];
  /** For each of `effects`, the index in `applied` of the event that produced it. */
  effectEvents: number[];
  /** State after the batch, for guard.check's decision. */
  sessions: Map<string, BatchSession>;
  configs: BatchConfigs;
  keyInfoByEventId: Map<string, StoredCall>;
  /** The applied (clamped) time of each event this batch recorded; duplicates are not in it. */
  recordedAt: Map<string, Date>;
  /** The batch's sessions with nudges not delivered yet (deliverPendingNudges, in the same transaction). */
  pendingNudgeSessions: ReadonlySet<string>;
  /** The workspace's enabled notification channels, read with the batch's first reads (for the caller's own effects). */
  notificationChannels: readonly NotificationChannel[];
  /**
   * With `deferSharedCounters`: writes the model profiles and daily roll-ups. The caller MUST run it,
   * as the last statement of its transaction (see writeSharedCounters).
   */
  writeSharedCounters: () => Promise<void>;
  /** What the metrics count once the transaction committed (noteBatch); absent when nothing was new. */
  metrics?: BatchMetrics;
}

export interface ApplyOptions {
  /** Leave the shared counters to the caller, who has more statements to run in the transaction. */
  deferSharedCounters?: boolean;
  /**
   * The request's API key came from the in-memory cache: re-check it in the batch's first round
   * trip and throw ApiKeyRevokedError (nothing is written) when it was revoked meanwhile.
   */
  recheckApiKeyId?: string | null;
  /** The database handle under the transaction: its configuration and key-context caches are used (server/services/config-cache.ts, row-version-cache.ts). */
  db?: Db;
  /**
   * Claim the event ids with a plain insert: an id claimed before fails the transaction with a
   * unique violation (23505) instead of being skipped, and the caller retries without this (as
   * withRetry does). For callers whose batches are rarely re-sent.
   */
  claimsFailOnDuplicates?: boolean;
}

const nothingToWrite = async () => {};

export async function applyBatch(tx: Tx, scope: BatchScope, events: AgentEvent[], options: ApplyOptions = {}): Promise<BatchResult> {
  const { workspaceId } = scope;
  // On PostgreSQL the session locks, the event-id claims and the reads (configuration, API key,
  // notification channels, stored calls, model profiles) go out together (one round trip): the two
  // locking statements are queued on the connection at once, in this order (the lock order), and
  // the reads behind them.
  const pipelined = postgresJs(tx) !== null;
  const sessionsLocked = lockSessions(tx, workspaceId, events.map((e) => e.sessionId));
  if (!pipelined) await sessionsLocked;
  // Duplicates: ids claimed by earlier batches (a concurrent claim of the same id waits for the
  // other transaction) and repeats within this one. Claiming is the idempotency record itself.
  const claimsMade = claimEventIds(tx, workspaceId, events, { failOnDuplicates: options.claimsFailOnDuplicates ?? false });
  if (!pipelined) await claimsMade;
  const configsLoaded = loadConfigs(tx, workspaceId, options.db ?? tx);
  const keyActive = options.recheckApiKeyId ? apiKeyStillActive(tx, workspaceId, options.recheckApiKeyId) : Promise.resolve(true);
  // Read now, not once the trust states are locked (see enabledChannels).
  const channelsLoaded = enabledChannels(tx, workspaceId);
  const ahead = readAhead(tx, workspaceId, events, options.db ?? tx);
  // The first statement to fail is the cause; the others then only saw an aborted transaction
  // (25P02) — the session read goes out behind the claims, so it is not the first in the list.
  await allOrFirstCause([sessionsLocked, claimsMade, configsLoaded, keyActive, channelsLoaded, ahead.calls, ahead.profiles]);
  const { sessions, versions, pendingNudges: pendingNudgeSessions } = await sessionsLocked;
  const begun = new Set([...sessions.values()].filter((s) => s.eventCount === 0).map((s) => s.sessionId));
  const claimed = await claimsMade;
  const configs = await configsLoaded;
  const notificationChannels = await channelsLoaded;
  if (!(await keyActive)) throw new ApiKeyRevokedError();
  const fresh = events.filter((e) => claimed.delete(e.id));
  const duplicates = events.length - fresh.length;
  if (!fresh.length) return { accepted: 0, duplicates, effects: [], applied: fresh, effectEvents: [], sessions, configs, keyInfoByEventId: new Map(), recordedAt: new Map(), pendingNudgeSessions, notificationChannels, writeSharedCounters: nothingToWrite };

  const { storedCalls, plan, profiles } = await completeReadAhead(tx, workspaceId, ahead, fresh, duplicates, configs);
  const sessionPhase = applySessionPhase({ workspaceId, configs, sessions, profiles, storedCalls, plan }, fresh);
  // On PostgreSQL the session phase's writes are sent at once and the lock statements queue right
  // behind them on the connection: no round trip between the two.
  const sessionWritten = writeSessionPhase(tx, scope, sessionPhase);
  sessionWritten.catch(() => {}); // awaited below; a failure is reported there
  if (!postgresJs(tx)) await sessionWritten;
  // The tool locks, then the key locks (the lock order); in the common case both go out at once.
  const toolsQueued = queueSharedToolLocks(tx, workspaceId, plan.createKeys, plan.toolKeys);
  const toolsLocked = toolsQueued ?? lockToolLevels(tx, workspaceId, plan.createKeys, plan.toolKeys);
  const keysLocked = (toolsQueued ? Promise.resolve() : toolsLocked).then(() =>
    lockKeyStates(tx, workspaceId, plan.createKeys, [...plan.toolKeys], endedSessions(sessions), options.db ?? tx),
  );
  // A failed write is the cause: the lock statements behind it only saw an aborted transaction.
  await allOrFirstCause([sessionWritten, toolsLocked, keysLocked]);
  const locked = await keysLocked;
  const { contexts, created } = locked;
  // The engine creates what did not exist before this batch itself (placeholders are not history).
  for (const k of created) contexts.delete(k);
  // Session decay needs the sessions of the failures in history and later starts of their agents:
  // the engine makes its timeline of the rows (a timeline built here would be copied there).
  const outcome = applyTrustPhase({ workspaceId, configs, sessions, contexts, timeline: locked.timeline }, sessionPhase, randomUUID);

  // Without deferSharedCounters, the shared counters are sent last in writeTrustPhase's pipeline.
  await writeTrustPhase(tx, scope, configs, outcome, { sharedCounters: !options.deferSharedCounters, before: contexts, cacheOwner: options.db ?? tx });
  // Held as written, for guard.check's next decision (an agent's next PreToolUse after this result).
  rememberSessions(options.db ?? tx, workspaceId, outcome.sessions, versions, begun);
  await enqueueNotifications(tx, workspaceId, outcome.effects, { channels: notificationChannels });
  const counters = () => writeSharedCounters(tx, scope, outcome);
  return {
    accepted: fresh.length,
    duplicates,
    effects: outcome.effects,
    applied: fresh,
    effectEvents: outcome.effectEvents,
    sessions: outcome.sessions,
    configs,
    keyInfoByEventId: outcome.keyInfoByEventId,
    recordedAt: new Map(sessionPhase.records.events.map((r) => [r.id, r.ts])),
    pendingNudgeSessions,
    notificationChannels,
    writeSharedCounters: options.deferSharedCounters ? counters : nothingToWrite,
    metrics: batchMetrics(outcome),
  };
}

/**
 * Waits for statements sent together; when some failed, throws the cause: the first to fail made
 * the others see only an aborted transaction (25P02).
 */
async function allOrFirstCause(statements: Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(statements);
  const failures = settled.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (failures.length) throw failures.find((err) => errorCode(err) !== "25P02") ?? failures[0];
}

/**
 * What the engine's batch reads besides the locked rows — the stored calls of results whose call
 * is not in the batch and the model profiles of the failure keys the results touch — read in the
 * batch's first round trip, behind the session locks and the claims, instead of in two more after
 * it (each ~4–5 ms with 4 writers). The keys come from the batch planned under the cached
 * configuration (planBatch) before the claims are known; completeReadAhead keeps that plan when
 * nothing moved, and reads what the final plan needs beyond it.
 */
interface ReadAhead {
  /** The calls asked for, by callRef. */
  callsAsked: Set<string>;
  calls: Promise<Map<string, StoredCall>>;
  /** Null without a cached configuration (nothing planned, no profiles read). */
  planned: { configs: BatchConfigs; plan: BatchPlan; keys: Set<string> } | null;
  profiles: Promise<Map<string, ModelToolProfile[]>>;
}

function readAhead(tx: Tx, workspaceId: string, events: AgentEvent[], cacheOwner: Db | Tx): ReadAhead {
  const wanted = callsToLoad(events);
  const calls = loadStoredCalls(tx, workspaceId, wanted);
  const callsAsked = new Set(wanted.map((w) => callRef(w.sessionId, w.callId)));
  const configs = cachedConfigs(cacheOwner, workspaceId);
  if (!configs) return { callsAsked, calls, planned: null, profiles: Promise.resolve(new Map()) };
  // Results whose call is stored are planned without it here; the keys they need are read later.
  const plan = planBatch(events, configs, new Map());
  const keys = profileKeys(plan);
  // Model profiles are counters every session adds to (atomic increments, read unlocked).
  return { callsAsked, calls, planned: { configs, plan, keys }, profiles: loadModelProfiles(tx, workspaceId, [...keys]) };
}

/** The batch's plan for its new events, its stored calls and model profiles: those read ahead, and any more the plan needs. */
async function completeReadAhead(tx: Tx, workspaceId: string, ahead: ReadAhead, fresh: AgentEvent[], duplicates: number, configs: BatchConfigs) {
  const storedCalls = await ahead.calls;
  // A result whose call came in this batch as a duplicate: its call is stored (not asked for above).
  const moreCalls = callsToLoad(fresh).filter((w) => !ahead.callsAsked.has(callRef(w.sessionId, w.callId)));
  if (moreCalls.length) for (const [ref, call] of await loadStoredCalls(tx, workspaceId, moreCalls)) storedCalls.set(ref, call);
  const planned = ahead.planned;
  const samePlan =
    planned !== null && duplicates === 0 && storedCalls.size === 0 && moreCalls.length === 0 &&
    planned.configs.effective === configs.effective && planned.configs.workspaceDoc === configs.workspaceDoc && planned.configs.orgDoc === configs.orgDoc;
  const plan = samePlan ? planned.plan : planBatch(fresh, configs, storedCalls);
  const profiles = await ahead.profiles;
  // The plan kept needs no more than it read ahead.
  const moreKeys = samePlan ? [] : [...profileKeys(plan)].filter((k) => !planned?.keys.has(k));
  if (moreKeys.length) for (const [k, list] of await loadModelProfiles(tx, workspaceId, moreKeys)) profiles.set(k, list);
  return { storedCalls, plan, profiles };
}

const profileKeys = (plan: BatchPlan) => new Set([...plan.resultInfo.values()].map((i) => i.failureKey));

/**
 * A batch session that already ended may still send results: they are decayed by the later starts
 * of its agent, which must be loaded whether or not they came in this batch.
 */
function endedSessions(sessions: Map<string, SessionRow>): EndedSessions {
  const agents = new Set<string>();
  let since: number | null = null;
  for (const s of sessions.values()) {
    if (s.endedAt === null) continue;
    agents.add(s.agent);
    since = since === null ? s.endedAt : Math.min(since, s.endedAt);
  }
  return { agents: [...agents], since };
}
