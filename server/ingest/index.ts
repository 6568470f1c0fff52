/**
 * Agent-facing entry points of the engine shell: `ingest.events` and `guard.check`.
 * One transaction per request; a request either applies completely or writes nothing.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { jsonValue, type Db, type Tx } from "@/db/client";
import { agentSession, globalToolPattern, keyState } from "@/db/schema";
import type { AgentEvent, Decision, Effect, KeyState, TrustState } from "@/server/engine/types";
import type { EscalationInfo } from "@/server/engine/escalation";
import type { PolicyHit } from "@/server/engine/policies";
import { awaitToolCallDecision, settleAsk } from "@/server/services/tool-call-approvals";
import { enqueueNotificationDrafts, enqueueNotifications } from "@/server/notifications/outbox";
import { draftForBudgetExhausted, draftForPolicyDenied } from "@/server/notifications/events";
import { applyBatch, type BatchResult, type BatchScope } from "./apply";
import { Coalescer, coalescerFor } from "./coalescer";
import { errorCode, isUniqueViolation } from "./sql-errors";
import { transactionCommittedBehind } from "./pipeline";
import { guardAnswer, guardLevelKeys, guardRecord, guardVerdict, type GuardVerdict } from "@/server/engine/guard";
import { leanGuardCheck } from "./guard-lean";
import { recordGuardDecision } from "./guard-record";
import { normalizeEvents, type EventInput, type GuardInput } from "./schema";
import { noteEventsWritten } from "@/server/services/planner-statistics";
import type { CapacitySlot } from "@/server/http/capacity";
import { foldHold, type HoldRow } from "@/server/services/holds";
import { deliverPendingNudges } from "@/server/services/pending-nudges";
import { metricCause, noteApprovalWait, noteBatch, noteGuardCheck, type BatchMetrics } from "@/server/metrics";

/**
 * Retries a transaction that lost a race on a unique insert or (defensively) a deadlock. `fn` gets
 * the attempt's number, from 1.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn(i);
    } catch (err) {
      const code = errorCode(err);
      if (i < attempts && (isUniqueViolation(err) || code === "40P01" || code === "40001")) continue;
      throw err;
    }
  }
}

export interface IngestOutput {
  accepted: number;
  duplicates: number;
  effects: Effect[];
}

export async function ingestEvents(
  db: Db,
  scope: BatchScope,
  events: EventInput[],
  receivedAt = Date.now(),
  options: { /** A key from the in-memory cache, re-checked in the batch's first round trip (ApiKeyRevokedError). */ recheckApiKeyId?: string | null } = {},
): Promise<IngestOutput> {
  // Bad input is refused here, alone: only valid requests join a group.
  const normalized = normalizeEvents(events, receivedAt);
  const recheckApiKeyId = options.recheckApiKeyId ?? null;
  const lane = coalescerFor(ingestLanes, db, `${scope.workspaceId}\u0000${recheckApiKeyId ?? ""}`, () =>
    new Coalescer<AgentEvent[], IngestOutput>({ run: (requests) => ingestGroup(db, scope, requests, recheckApiKeyId), maxInFlight: INGEST_GROUPS_IN_FLIGHT, maxBatch: INGEST_GROUP_REQUESTS, fillWhileBusy: INGEST_GROUP_FILL }),
  );
  const out = await lane.submit(normalized);
  noteEventsWritten(db, out.accepted);
  return out;
}

/**
 * Group commit for ingest: the `ingest.events` requests of one workspace (and API key) that arrive
 * while its earlier ones are being applied go together, as one batch in one transaction — their
 * events in the order the requests arrived, which is one of the orders they could have been
 * applied in one by one. Most of a batch's cost is per batch, not per event: the locks and rows
 * of the trust states, sessions, model profiles and daily roll-ups it touches, and its statements
 * and commit. Concurrent writers of a fleet touch largely the same keys, so a group pays that once,
 * and fewer transactions queue on the trust-state locks each of them holds to its commit. Each
 * request still gets its own answer — its accepted events, duplicates and the effects its events
 * produced — and is atomic: a group that fails is applied again request by request (Coalescer), so
 * one request's error is its own.
 */
async function ingestGroup(db: Db, scope: BatchScope, requests: AgentEvent[][], recheckApiKeyId: string | null): Promise<IngestOutput[]> {
  const events = requests.length === 1 ? requests[0] : requests.flat();
  let counted: { accepted: number; metrics?: BatchMetrics } = { accepted: 0 };
  const shares = await withRetry((attempt) =>
    transactionCommittedBehind(db, async (tx) => {
      // A re-sent batch fails its first try at the claims (a unique violation) and is applied again,
      // its repeated ids skipped: most batches are new, and a plain insert costs PostgreSQL less.
      const r = await applyBatch(tx, scope, events, { recheckApiKeyId, db, claimsFailOnDuplicates: attempt === 1 });
      counted = r;
      const shares = requestShares(requests, r);
      // Nudges a person (or OTLP) left for these sessions: each in the answer of the first request of its session.
      if (r.pendingNudgeSessions.size) {
        for (const nudge of await deliverPendingNudges(tx, scope.workspaceId, r.pendingNudgeSessions)) {
          const i = requests.findIndex((events) => events.some((e) => e.sessionId === nudge.sessionId));
          shares[Math.max(0, i)].effects.push(nudge);
        }
      }
      return shares;
    }),
  );
  noteBatch(scope.workspaceId, counted, "trpc");
  return shares;
}

/** Each request's part of a group's batch: its events applied (the rest were duplicates) and the effects they produced. */
function requestShares(requests: AgentEvent[][], batch: BatchResult): IngestOutput[] {
  if (requests.length === 1) return [{ accepted: batch.accepted, duplicates: batch.duplicates, effects: batch.effects }];
  const requestOf = new Map<AgentEvent, number>();
  requests.forEach((events, i) => {
    for (const e of events) requestOf.set(e, i);
  });
  const out = requests.map((events): IngestOutput => ({ accepted: 0, duplicates: events.length, effects: [] }));
  for (const e of batch.applied) {
    const share = out[requestOf.get(e)!];
    share.accepted++;
    share.duplicates--;
  }
  batch.effects.forEach((effect, k) => out[requestOf.get(batch.applied[batch.effectEvents[k]])!].effects.push(effect));
  return out;
}

/** Ingest groups per database, workspace and API key (coalescerFor). */
const ingestLanes = new WeakMap<object, Map<string, Coalescer<AgentEvent[], IngestOutput>>>();
/**
 * Groups of one workspace applied at once: two, so that one group's statements are at the database
 * while the server works on the other's.
 */
const INGEST_GROUPS_IN_FLIGHT = 2;
/** Requests per group: at most 4 × 1,000 events (the largest batch a request may send). */
const INGEST_GROUP_REQUESTS = 4;
/**
 * Beside a group in flight, the next waits up to 40 ms for its share of the writers (fillWhileBusy
 * in coalescer.ts): with 4 writers the groups go in twos (1.7–1.9 requests a group, against 1.4–1.6
 * when a group waited 5 ms for any second request), ~5 % more events/s (medians of 4 alternated
 * rounds); 2 and 8 writers as before. A writer not back within 40 ms of its answer is not waited for.
 */
const INGEST_GROUP_FILL = { maxWaitMs: 40 };

export interface GuardOutput {
  decision: Decision;
  failureKey: string;
  state: TrustState;
  reason: string | null;
  escalation: EscalationInfo | null;
  /** The tool-call approval this answer comes from or waits on (SPEC 7.2), else null. */
  approvalId: string | null;
  effects: Effect[];
  /** The policy or built-in risk rule that matched the call (SPEC 4.5). */
  policy: PolicyHit | null;
  /** Watch mode: what enforcement would have answered (SPEC 4.6); null when enforcing. */
  wouldDecide: Decision | null;
}

export interface GuardOptions {
  /** Ends a wait for a person early (the client went away). */
  signal?: AbortSignal;
  /**
   * The API key the request was authenticated with from the in-memory cache: re-checked (still
   * active) in the same round trip as the decision's inputs; a revoked key gets ApiKeyRevokedError.
   */
  apiKeyId?: string | null;
  /** The request's capacity slot: given back while the check waits for a person (it holds no connection then). */
  capacitySlot?: CapacitySlot | null;
}

/**
 * `guard.check`: records the call and decides in one transaction; when the answer is `ask` and
 * `waitForApprovalSeconds > 0`, then waits for a person's decision with nothing held (SPEC 7.2).
 */
export async function guardCheck(db: Db, scope: BatchScope, input: GuardInput, receivedAt = Date.now(), options: GuardOptions = {}): Promise<GuardOutput> {
  const started = performance.now();
  const { waitFor, cause, agent, batch, ...out } = await decideGuard(db, scope, input, receivedAt, options.apiKeyId ?? null);
  const decidedIn = (performance.now() - started) / 1000;
  noteEventsWritten(db, 1);
  if (batch) noteBatch(scope.workspaceId, batch);
  if (!waitFor) {
    noteGuardCheck(scope.workspaceId, agent, input.toolName, out.decision, metricCause(cause), decidedIn);
    return out;
  }
  const deadline = receivedAt + (input.waitForApprovalSeconds ?? 0) * 1000;
  const waitStarted = performance.now();
  const decided = await awaitToolCallDecision(db, scope.workspaceId, waitFor, deadline, options.signal, options.capacitySlot ?? null);
  noteApprovalWait(scope.workspaceId, !decided ? "timeout" : decided.decision === "deny" ? "denied" : "approved", (performance.now() - waitStarted) / 1000);
  const answer = decided ? { ...out, ...decided } : out;
  noteGuardCheck(scope.workspaceId, agent, input.toolName, answer.decision, metricCause(cause), decidedIn);
  return answer;
}

/** What decideGuard hands guardCheck besides the answer: for the wait and the metrics. */
interface GuardDecided {
  waitFor: string | null;
  cause: GuardVerdict["cause"];
  agent: string;
  /** The full path's batch, counted once committed. */
  batch: BatchResult | null;
}

async function decideGuard(db: Db, scope: BatchScope, input: GuardInput, receivedAt: number, apiKeyId: string | null): Promise<GuardOutput & GuardDecided> {
  const { waitForApprovalSeconds = 0, ...call } = input;
  const [ev] = normalizeEvents([{ ...call, type: "tool.call" }], receivedAt, []) as Extract<AgentEvent, { type: "tool.call" }>[];
  // The common answer (no person to ask, no behaviour effect) in two round trips; else the full path.
  const lean = await withRetry(() => leanGuardCheck(db, scope, ev, apiKeyId));
  if (lean) return { ...guardAnswer(lean, { approvalId: null, effects: [] }), waitFor: null, cause: lean.cause, agent: lean.agent, batch: null };
  return withRetry(() =>
    transactionCommittedBehind(db, async (tx) => {
      // The lean path may have decided from memory without checking the key: the batch checks it (same round trip).
      const batch = await applyBatch(tx, scope, [ev], { deferSharedCounters: true, db, recheckApiKeyId: apiKeyId });
      const stored = batch.sessions.get(ev.sessionId)!;
      const keys = guardLevelKeys(ev, batch.configs);
      // Sent together: one round trip on PostgreSQL.
      const inputs = loadDecisionInputs(tx, scope, keys.levelKeys, ev.toolName, stored.agent);
      const pending = batch.pendingNudgeSessions.has(ev.sessionId) ? deliverPendingNudges(tx, scope.workspaceId, [ev.sessionId]) : Promise.resolve([]);
      const [{ states, global, hold }, delivered] = await Promise.all([inputs, pending]);
      // A hold over the session (its agent's, the workspace's) pauses it for this decision (SPEC 4.6).
      const session = foldHold(stored, hold);
      const verdict = guardVerdict({ call: ev, keys, session, configs: batch.configs, states, globalPattern: global });
      const settled =
        verdict.decision === "ask"
          ? await settleAsk(tx, {
              workspaceId: scope.workspaceId,
              sessionId: ev.sessionId,
              callId: ev.callId,
              failureKey: verdict.failureKey,
              toolName: ev.toolName,
              args: ev.args,
              agent: session.agent,
              model: ev.model ?? session.model,
              reason: verdict.reason,
              sessionEndedAt: session.endedAt,
              waitForApprovalSeconds,
              now: receivedAt,
            })
          : null;
      if (settled?.effects.length) await enqueueNotifications(tx, scope.workspaceId, settled.effects, { now: receivedAt, channels: batch.notificationChannels });
      // A repeated call (same event id) was recorded with its answer the first time: write nothing, as the lean path.
      const recordedAt = batch.recordedAt.get(ev.id);
      if (recordedAt) await recordGuardDecision(tx, scope.workspaceId, { id: ev.id, recordedAt }, guardRecord({ ...verdict, decision: settled?.decision ?? verdict.decision, reason: settled ? settled.reason : verdict.reason }));
      // The call that spends the tool-call budget pauses the session (SPEC 4.6); a person resumes it.
      const budgetPause = verdict.pausesSession !== null && !stored.paused && recordedAt ? await pauseForBudget(tx, scope, ev.sessionId, verdict.pausesSession, receivedAt) : [];
      // Notified once, with the call that spent the budget or met the deny policy (a repeated call has no recordedAt).
      const drafts = [
        ...(budgetPause.length ? [draftForBudgetExhausted({ sessionId: ev.sessionId, reason: verdict.pausesSession!, toolName: ev.toolName })] : []),
        ...(recordedAt && verdict.cause === "policy" && verdict.decision === "deny"
          ? [draftForPolicyDenied({ sessionId: ev.sessionId, toolName: ev.toolName, failureKey: verdict.failureKey, policy: verdict.policy?.name ?? null, reason: verdict.reason })]
          : []),
      ];
      if (drafts.length) await enqueueNotificationDrafts(tx, scope.workspaceId, drafts, { now: receivedAt, channels: batch.notificationChannels });
      await batch.writeSharedCounters();
      const answer = guardAnswer(
        { ...verdict, decision: settled?.decision ?? verdict.decision, reason: settled ? settled.reason : verdict.reason },
        { approvalId: settled?.approvalId ?? null, effects: [...batch.effects, ...delivered, ...budgetPause, ...(settled?.effects ?? [])] },
      );
      return { ...answer, waitFor: settled?.waitFor ?? null, cause: verdict.cause, agent: verdict.agent, batch };
    }),
  );
}

/** Pauses the session whose tool-call budget this call spent; its `paused` effect. */
async function pauseForBudget(tx: Tx, scope: BatchScope, sessionId: string, reason: string, now: number): Promise<Effect[]> {
  await tx
    .update(agentSession)
    .set({ paused: true, pauseReason: reason, pausedAt: new Date(now) })
    .where(and(eq(agentSession.workspaceId, scope.workspaceId), eq(agentSession.sessionId, sessionId)));
  return [{ type: "paused", sessionId, reason }];
}

/** The key, domain- and tool-level states, the global-pattern flag and the hold over the session's agent, in one round trip. */
async function loadDecisionInputs(tx: Tx, scope: BatchScope, keys: string[], toolName: string, agent: string) {
  const global = sql<boolean>`exists (select 1 from ${globalToolPattern} where ${globalToolPattern.organizationId} = ${scope.organizationId} and ${globalToolPattern.toolName} = ${toolName} and ${globalToolPattern.status} = 'active')`;
  const hold = sql<unknown>`(select json_build_object('scope', h.scope, 'target', h.target, 'reason', h.reason) from operator_hold h
    where h.workspace_id = ${scope.workspaceId} and (h.scope = 'workspace' or (h.scope = 'agent' and h.target = ${agent}))
    order by h.scope = 'workspace' desc limit 1)`;
  const rows = await tx
    .select({ failureKey: keyState.failureKey, state: keyState.trust, global, hold })
    .from(sql`(select 1) as one`)
    .leftJoin(keyState, and(eq(keyState.workspaceId, scope.workspaceId), inArray(keyState.failureKey, keys)));
  const states = new Map<string, KeyState>();
  for (const r of rows) if (r.failureKey && r.state) states.set(r.failureKey, r.state);
  const held = rows.find((r) => r.hold)?.hold;
  return { states, global: rows.some((r) => r.global), hold: held ? jsonValue<HoldRow>(held) : null };
}
