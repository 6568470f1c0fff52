/**
 * What the three CLI adapters share (SPEC 7.5): the Vigil side of a hook. Each adapter turns its
 * CLI's payload into a `HookPlan` (events to record, or a tool call to check) and turns the
 * resulting `HookVerdict` back into its CLI's answer; this module runs the plan against the
 * engine shell and collects what the agent must hear (nudges, guidance, the pause).
 */
import { createHash } from "node:crypto";
import { and, desc, eq } from "drizzle-orm";
import { perDatabase, type Db } from "@/db/client";
import { agentSession, event } from "@/db/schema";
import type { Decision, Effect } from "@/server/engine/types";
import { guardCheck, withRetry, type GuardOutput } from "@/server/ingest";
import type { CapacitySlot } from "@/server/http/capacity";
import { applyBatch, type BatchScope } from "@/server/ingest/apply";
import { transactionCommittedBehind } from "@/server/ingest/pipeline";
import { MAX_ARGS_BYTES, eventSchema, guardInputSchema, normalizeEvents, type EventInput } from "@/server/ingest/schema";

export type CliName = "claude-code" | "codex" | "gemini";

import { MAX_WAIT_SECONDS } from "./limits";
import { noteEventsWritten } from "@/server/services/planner-statistics";
import { foldHold, holdsOver } from "@/server/services/holds";
import { deliverPendingNudges } from "@/server/services/pending-nudges";
import { noteBatch } from "@/server/metrics";

/** What the request says beyond the payload: query parameters and where the dashboard lives. */
export interface HookRequestContext {
  cli: CliName;
  /** `agent` query parameter, default the CLI's name. */
  agent: string;
  /** `wait` query parameter: seconds to wait for a person on an approval (0–120). */
  waitSeconds: number;
  scope: BatchScope;
  /** Dashboard URL of a session, for "how to resume" in pause answers. */
  sessionUrl: (sessionId: string) => string;
  /** Dashboard URL of a failure key, named in ask and deny reasons (SPEC 7.5 revision 3). */
  keyUrl?: (failureKey: string) => string;
  /** Aborted when the CLI disconnects: a wait for a person ends with it. */
  signal?: AbortSignal;
  /** The request's capacity slot, given back while waiting for a person. */
  capacitySlot?: CapacitySlot;
  /**
   * Set when the request's API key came from the in-memory cache (authenticateApiKeyCached): it
   * must be checked before anything is written or shown: guard.check re-checks it in its own read
   * (`apiKeyId`), a recorded batch in its first round trip (`recheckApiKeyId`); a step without
   * either calls `ensureActive` first. Each throws ApiKeyRevokedError.
   */
  cachedKey?: { apiKeyId: string; ensureActive: () => Promise<void> };
}

/** A tool call to decide on (PreToolUse, PermissionRequest, BeforeTool). */
export interface GuardPlan {
  kind: "guard";
  sessionId: string;
  /** The session's agent and its start event (recorded once per session). */
  start: EventInput;
  eventId: string;
  callId: string;
  toolName: string;
  args: Record<string, unknown>;
  model?: string;
  /** Seconds to wait for a person when the decision is `ask`. */
  waitSeconds: number;
  /** PermissionRequest carries no call id: reuse the PreToolUse call it belongs to, if recorded. */
  matchRecordedCall?: boolean;
}

export interface RecordPlan {
  kind: "record";
  sessionId: string;
  events: EventInput[];
}

/** Nothing to record, but the answer depends on whether the session is paused (PostToolBatch). */
export interface PauseCheckPlan {
  kind: "pause-check";
  sessionId: string;
}

export type HookPlan = GuardPlan | RecordPlan | PauseCheckPlan | { kind: "ignore" };

/** Vigil's side of one hook, for the adapter to phrase in its CLI's terms. */
export interface HookVerdict {
  /** guard.check's decision (tool-call hooks only). */
  decision: Decision | null;
  reason: string | null;
  approvalId: string | null;
  /** Text for the model: nudges and resume guidance. */
  context: string[];
  /** Set when the session is paused: why, and how a person resumes it. */
  stop: string | null;
  /** What changed about a key (escalated, blocked, recovered): told to the person and the model. */
  notices: string[];
  /**
   * An ask or deny in full: the failure key, the count and window that escalated it, the recovery
   * hint and the key's dashboard link (or the policy and its reason); null for other decisions.
   */
  decisionReason: string | null;
}

export const EMPTY_VERDICT: HookVerdict = { decision: null, reason: null, approvalId: null, context: [], stop: null, notices: [], decisionReason: null };

// ---------------------------------------------------------------------------
// Reading payloads defensively: hooks send whatever their CLI version sends.
// ---------------------------------------------------------------------------

export type Payload = Record<string, unknown>;

export function str(p: Payload, key: string): string | undefined {
  const v = p[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

export function num(p: Payload, key: string): number | undefined {
  const v = p[key];
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** JSON with sorted keys, so equal payloads hash equally however their keys were ordered. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

export function digest(...parts: unknown[]): string {
  return createHash("sha256").update(canonicalJson(parts)).digest("hex").slice(0, 32);
}

/** Event ids are 1–128 characters; long CLI ids are shortened to a hash. */
export function clampId(value: string): string {
  return value.length <= 128 ? value : `${value.slice(0, 90)}~${digest(value)}`;
}

export function clampName(value: string, max = 256): string {
  return value.length <= max ? value : value.slice(0, max);
}

/**
 * The session a hook belongs to: the CLI's session, or for a subagent's events the child session
 * `<session_id>/<agent_id>` with the subagent's type as its agent (SPEC 7.5).
 */
export function sessionOf(p: Payload, ctx: HookRequestContext): { sessionId: string; agent: string } | null {
  const session = str(p, "session_id");
  if (!session) return null;
  const agentId = str(p, "agent_id");
  if (agentId) return { sessionId: clampId(`${session}/${agentId}`), agent: clampName(str(p, "agent_type") ?? ctx.agent, 200) };
  return { sessionId: clampId(session), agent: ctx.agent };
}

/** The start of a session as hooks see it: one event per session (a fixed id), so repeats are duplicates. */
export function sessionStartEvent(ctx: HookRequestContext, sessionId: string, agent: string, model?: string): EventInput {
  return { type: "session.start", id: clampId(`${ctx.cli}:start:${sessionId}`), sessionId, agent, ...(model ? { model } : {}) };
}

/**
 * Tool arguments within the 64 KiB limit of `args`: long strings (a Write tool's file content) are
 * shortened rather than the whole call being rejected. Non-object input is wrapped.
 */
export function fitArgs(input: unknown): Record<string, unknown> {
  const args = isObject(input) ? input : input === undefined ? {} : { value: input };
  if (Buffer.byteLength(JSON.stringify(args), "utf8") <= MAX_ARGS_BYTES) return args;
  for (const limit of [4096, 512, 64]) {
    const shorten = (v: unknown): unknown => {
      if (typeof v === "string") return v.length > limit ? `${v.slice(0, limit)}… [truncated by Vigil]` : v;
      if (Array.isArray(v)) return v.slice(0, 200).map(shorten);
      if (isObject(v)) return Object.fromEntries(Object.entries(v).slice(0, 200).map(([k, x]) => [k, shorten(x)]));
      return v;
    };
    const fitted = shorten(args) as Record<string, unknown>;
    if (Buffer.byteLength(JSON.stringify(fitted), "utf8") <= MAX_ARGS_BYTES) return fitted;
  }
  return { truncated: true };
}

/** A tool's output as a `result`: large outputs are cut so a huge response cannot fail the event. */
export function fitResult(output: unknown): unknown {
  if (output === undefined) return undefined;
  const json = JSON.stringify(output);
  if (json === undefined || Buffer.byteLength(json, "utf8") <= MAX_ARGS_BYTES) return output;
  return typeof output === "string" ? `${output.slice(0, 16 * 1024)}… [truncated by Vigil]` : { truncated: true, preview: json.slice(0, 16 * 1024) };
}

/** The `wait` query parameter: seconds, clamped to 0–120; anything else is 0. */
export function parseWaitSeconds(raw: string | null): number {
  if (raw === null || raw.trim() === "") return 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) return 0;
  return Math.min(MAX_WAIT_SECONDS, Math.floor(n));
}

// ---------------------------------------------------------------------------
// Running a plan.
// ---------------------------------------------------------------------------

function pauseText(reason: string | null, sessionId: string, ctx: HookRequestContext): string {
  return (
    `Vigil paused this session: ${(reason ?? "a person paused it").replace(/[.\s]+$/, "")}. ` +
    `Stop here and tell the person. To continue, a person resumes the session in Vigil (${ctx.sessionUrl(sessionId)}), ` +
    `optionally with guidance, and then continues the agent.`
  );
}

/** The messages the model should read: nudges (pattern and guidance) for the given sessions. */
function contextOf(effects: Effect[]): string[] {
  const out: string[] = [];
  for (const e of effects) {
    if (e.type === "nudge" && !out.includes(e.message)) out.push(e.message);
  }
  return out;
}

/** The messages the person and the model should read about a key's trust: escalated, blocked, recovered. */
function noticesOf(effects: Effect[]): string[] {
  const out: string[] = [];
  for (const e of effects) {
    if ((e.type === "escalated" || e.type === "blocked" || e.type === "recovered") && !out.includes(`Vigil: ${e.message}`)) out.push(`Vigil: ${e.message}`);
  }
  return out;
}

/** Why a call is asked about or denied, in full (see HookVerdict.decisionReason). */
function decisionReasonOf(out: Pick<GuardOutput, "decision" | "reason" | "failureKey" | "escalation" | "policy">, ctx: Pick<HookRequestContext, "keyUrl">): string | null {
  if (out.decision !== "ask" && out.decision !== "deny") return null;
  const sentence = (t: string) => t.trim().replace(/[.\s]+$/, "") + ".";
  if (out.policy && out.policy.decision === out.decision) return sentence(`Policy '${out.policy.name}' (${out.policy.decision}): ${out.policy.reason}`);
  const parts = [sentence(out.reason ?? "this tool call needs a person's approval")];
  const e = out.escalation;
  if (e) {
    parts.push(sentence(`Key ${out.failureKey}: ${e.failureCount} failure${e.failureCount === 1 ? "" : "s"} in ${e.window}`));
    if (e.recoveryHint) parts.push(sentence(e.recoveryHint));
  } else parts.push(sentence(`Key ${out.failureKey}`));
  if (ctx.keyUrl) parts.push(`Details: ${ctx.keyUrl(out.failureKey)}`);
  return parts.join(" ");
}

/** Records events (one transaction, like ingest.events) and reports nudges and the pause state. */
async function runRecord(db: Db, ctx: HookRequestContext, plan: RecordPlan, receivedAt: number): Promise<HookVerdict> {
  // The adapters build well-formed events; validating them anyway keeps bad data out of the store.
  const events = normalizeEvents(eventSchema.array().parse(plan.events), receivedAt);
  const result = await withRetry(() =>
    transactionCommittedBehind(db, async (tx) => {
      const batch = await applyBatch(tx, ctx.scope, events, { recheckApiKeyId: ctx.cachedKey?.apiKeyId, db });
      const stored = batch.sessions.get(plan.sessionId);
      // Sent together: nudges left for the session (delivered with this answer) and the hold over it.
      const [delivered, hold] = await Promise.all([
        batch.pendingNudgeSessions.size ? deliverPendingNudges(tx, ctx.scope.workspaceId, batch.pendingNudgeSessions) : Promise.resolve([]),
        holdsOver(tx, ctx.scope.workspaceId, stored?.agent ?? "default"),
      ]);
      const session = stored ? foldHold(stored, hold) : null;
      return { effects: [...batch.effects, ...delivered], paused: session?.paused ?? hold !== null, pauseReason: session?.pauseReason ?? hold?.reason ?? null, accepted: batch.accepted, metrics: batch.metrics };
    }),
  );
  noteEventsWritten(db, result.accepted);
  noteBatch(ctx.scope.workspaceId, result, "hooks");
  for (const e of events) if (e.type === "session.start") rememberStart(db, ctx.scope.workspaceId, e.id);
  return {
    ...EMPTY_VERDICT,
    context: contextOf(result.effects),
    notices: noticesOf(result.effects),
    stop: result.paused ? pauseText(result.pauseReason, plan.sessionId, ctx) : null,
  };
}

/**
 * PermissionRequest carries no `tool_use_id`. It follows the PreToolUse of the same call, so the
 * latest recorded call of that tool in the session without a result is that call: checking it
 * again under its own event id is a duplicate (nothing is counted twice) that still decides.
 */
async function findOpenCall(db: Db, workspaceId: string, sessionId: string, toolName: string): Promise<{ id: string; callId: string } | null> {
  const inSession = and(eq(event.workspaceId, workspaceId), eq(event.sessionId, sessionId));
  const [call] = await db
    .select({ id: event.id, callId: event.callId })
    .from(event)
    .where(and(inSession, eq(event.type, "tool.call"), eq(event.toolName, toolName)))
    .orderBy(desc(event.seq))
    .limit(1);
  if (!call?.callId) return null;
  const answered = await db
    .select({ id: event.id })
    .from(event)
    .where(and(inSession, eq(event.callId, call.callId), eq(event.type, "tool.result")))
    .limit(1);
  return answered.length ? null : { id: call.id, callId: call.callId };
}

/**
 * Session starts this instance has recorded, per database: every PreToolUse carries its session's
 * start (a fixed id), and once recorded a repeat is a duplicate that changes nothing and answers
 * nothing — yet it cost a transaction of its own (~5 round trips) before every guarded tool call.
 * Entries expire, so a start is still re-sent now and then (a database restored or purged since).
 */
const recordedStarts = new WeakMap<object, Map<string, number>>();
const START_MEMORY_MS = 10 * 60_000;
const START_MEMORY_SIZE = 50_000;
const startKey = (workspaceId: string, eventId: string) => `${workspaceId}\u0000${eventId}`;

function rememberStart(db: Db, workspaceId: string, eventId: string, now = Date.now()): void {
  const seen = perDatabase(recordedStarts, db, () => new Map<string, number>());
  if (seen.size >= START_MEMORY_SIZE) seen.clear();
  seen.set(startKey(workspaceId, eventId), now + START_MEMORY_MS);
}

/** Whether this instance recorded the session start lately (so sending it again would change nothing). */
function startRecorded(db: Db, workspaceId: string, eventId: string, now = Date.now()): boolean {
  const seen = perDatabase(recordedStarts, db, () => new Map<string, number>());
  const key = startKey(workspaceId, eventId);
  const until = seen.get(key);
  if (until === undefined) return false;
  if (until > now) return true;
  seen.delete(key);
  return false;
}

async function runGuard(db: Db, ctx: HookRequestContext, plan: GuardPlan, receivedAt: number): Promise<HookVerdict> {
  // The session's start (agent name) first: guard.check records only the call.
  const start = startRecorded(db, ctx.scope.workspaceId, plan.start.id!)
    ? EMPTY_VERDICT
    : await runRecord(db, ctx, { kind: "record", sessionId: plan.sessionId, events: [plan.start] }, receivedAt);
  let { eventId, callId } = plan;
  if (plan.matchRecordedCall) {
    const open = await findOpenCall(db, ctx.scope.workspaceId, plan.sessionId, plan.toolName);
    if (open) ({ id: eventId, callId } = open);
  }
  const out = await guardCheck(
    db,
    ctx.scope,
    guardInputSchema.parse({
      id: eventId,
      sessionId: plan.sessionId,
      callId,
      toolName: plan.toolName,
      args: plan.args,
      ...(plan.model ? { model: plan.model } : {}),
      waitForApprovalSeconds: plan.waitSeconds,
    }),
    receivedAt,
    { signal: ctx.signal, apiKeyId: ctx.cachedKey?.apiKeyId ?? null, capacitySlot: ctx.capacitySlot },
  );
  const approvalId = out.approvalId ?? null;
  return {
    decision: out.decision,
    reason: out.reason,
    approvalId,
    context: [...start.context, ...contextOf(out.effects)],
    stop: out.decision === "pause" ? pauseText(out.reason, plan.sessionId, ctx) : null,
    notices: [...start.notices, ...noticesOf(out.effects)],
    decisionReason: decisionReasonOf(out, ctx),
  };
}

async function runPauseCheck(db: Db, ctx: HookRequestContext, plan: PauseCheckPlan): Promise<HookVerdict> {
  await ctx.cachedKey?.ensureActive();
  const [row] = await db
    .select({ agent: agentSession.agent, paused: agentSession.paused, pauseReason: agentSession.pauseReason })
    .from(agentSession)
    .where(and(eq(agentSession.workspaceId, ctx.scope.workspaceId), eq(agentSession.sessionId, plan.sessionId)));
  const session = foldHold({ paused: row?.paused ?? false, pauseReason: row?.pauseReason ?? null }, await holdsOver(db, ctx.scope.workspaceId, row?.agent ?? "default"));
  return session.paused ? { ...EMPTY_VERDICT, stop: pauseText(session.pauseReason, plan.sessionId, ctx) } : EMPTY_VERDICT;
}

export async function runPlan(db: Db, ctx: HookRequestContext, plan: HookPlan, receivedAt = Date.now()): Promise<HookVerdict> {
  if (plan.kind === "ignore") return EMPTY_VERDICT;
  if (plan.kind === "pause-check") return runPauseCheck(db, ctx, plan);
  if (plan.kind === "record") return runRecord(db, ctx, plan, receivedAt);
  return runGuard(db, ctx, plan, receivedAt);
}

/** The text of an escalation for the model: Vigil's reason, attributed. */
export function decisionText(verdict: HookVerdict): string {
  const waiting = verdict.approvalId ? ` A person can approve it in Vigil (approval ${verdict.approvalId}).` : "";
  if (verdict.decisionReason) return `Vigil: ${verdict.decisionReason}${waiting}`;
  const reason = verdict.reason ?? "this tool call needs a person's approval";
  return `Vigil: ${reason}.${waiting}`.replace(/\.\./g, ".");
}
