/**
 * Trust state machine (SPEC 4.3, 4.4). Pure: plain functions from (state, outcome, rule, now) to
 * (new state, effects). Inputs are never mutated. A state's key and construction are in
 * key-state.ts, its kept history in key-history.ts, how an escalation reads in escalation.ts.
 */
import { countFailuresInWindow, effectiveFailures } from "./decay";
import { REPEATED_AUTH_WINDOW_MS, failureWeight } from "./classify";
import { DOMAIN_PREFIX, TOOL_PREFIX, clampClock, newKeyContext } from "./key-state";
import { EMPTY_LOG_SEQ, copyKeyContext } from "./key-history";
import { SECURITY_BLOCK_REASON, blockedEffect, escalatedEffect, escalationReason, fmtCount, recoveredEffect, recoveringEffect } from "./escalation";
import type { Effect, FailureRecord, KeyContext, KeyState, ManualState, RecoveryMode, ResolvedRule, Rule, SessionTimeline, Severity } from "./types";

/** History kept in a context: the rule window, and at least 10 minutes (repeated_auth). */
export const MIN_HISTORY_MS = 10 * 60 * 1000;

/** A classified tool result, as applied to one state. */
export interface Outcome {
  failed: boolean;
  /** Required for failures (defaults to server_error when missing). */
  severity?: Severity | null;
  /** Defaults to failureWeight(severity). */
  weight?: number;
  sessionId: string;
  /** Agent name of the session; default "default". */
  agent?: string;
  /** The tool of the call (for effect messages; defaults to the state's toolName). */
  toolName?: string;
}

export interface ApplyOptions {
  /** `security` failures block this state (true for key states; false for domain states). */
  securityBlocks?: boolean;
  /**
   * The caller owns `ctx`'s history (a `copyKeyContext`), so it is changed in place and returned
   * instead of copied: a hot key under a rate rule keeps tens of thousands of results, and copying
   * them at every result made a batch quadratic in them (~2 ms per result at 36,000).
   */
  inPlace?: boolean;
}

export interface ApplyResult {
  ctx: KeyContext;
  effects: Effect[];
  /** The failure record appended by this outcome, if any (for the shell to persist). */
  failure: FailureRecord | null;
}

/**
 * A recovering key's progress, `{successes, needed}`, else null — what `reliability.status`, Tools,
 * key detail and Approvals show. Successes go past `needed` while an ask-mode recovery waits for
 * approval (SPEC 4.3); displays clamp, this keeps the engine's count.
 */
export function recoveryOf(s: KeyState): { successes: number; needed: number } | null {
  if (s.state !== "recovering" || s.recoveryNeeded <= 0) return null;
  return { successes: s.recoverySuccesses, needed: s.recoveryNeeded };
}

// ---------------------------------------------------------------------------
// The state machine
// ---------------------------------------------------------------------------

function clearEscalation(s: KeyState): void {
  s.escalatedAt = null;
  s.escalationReason = null;
  s.escalationExpires = null;
  s.escalationFailureCount = null;
  s.escalationWindowSeconds = null;
  s.escalationSeq = null;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
}

function escalate(s: KeyState, reason: string, rule: Rule, failures: readonly FailureRecord[], t: number): void {
  s.state = "escalated";
  s.escalatedAt = t;
  s.escalationReason = reason;
  s.escalationExpires = t + rule.escalationDurationSeconds * 1000;
  s.escalationWindowSeconds = rule.windowSeconds;
  s.escalationFailureCount = countFailuresInWindow(failures, rule, t, { afterSeq: s.countFromSeq });
  s.escalationSeq = s.seq;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
}

function block(s: KeyState, reason: string, t: number): void {
  s.state = "blocked";
  s.escalatedAt = s.escalatedAt ?? t;
  s.escalationReason = reason;
  s.escalationExpires = null;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
}

function trustAgain(s: KeyState): void {
  s.state = "trusted";
  s.manual = null;
  clearEscalation(s);
  s.consecutiveFailures = 0;
  s.countFromSeq = s.seq;
}

/**
 * Drops, in place, the history older than the rule's window (and 10 minutes). `failed`: the outcome
 * just applied was a failure (the failures the rule never reads are then dropped, see unreadFailure).
 */
function trimHistory(ctx: KeyContext, rule: Rule, t: number, failed: boolean): void {
  const from = t - Math.max(rule.windowSeconds * 1000, MIN_HISTORY_MS);
  const { failures, results } = ctx;
  let n = 0;
  while (n < failures.length && failures[n].ts < from) n++;
  if (n) failures.splice(0, n);
  // One pass whenever a failure came in keeps the list free of them: O(failures kept) per failure,
  // as the escalation check before it already is.
  if (failed && rule.rateThreshold === undefined) {
    let kept = 0;
    for (const f of failures) if (!unreadFailure(f, rule, t, ctx.state.countFromSeq)) failures[kept++] = f;
    failures.length = kept;
  }
  // Results only feed the failure rate: without a rate threshold they are not kept, so a hot key's
  // stored state stays small (a busy key sees thousands of results per window).
  n = rule.rateThreshold === undefined ? results.ts.length : 0;
  while (n < results.ts.length && results.ts[n] < from) n++;
  if (n) {
    results.ts.splice(0, n);
    results.firstSeq = results.ts.length ? results.firstSeq + n : EMPTY_LOG_SEQ;
  }
}

/**
 * A failure the rule in force reads no more: its severity is outside the rule's filter (SPEC 4.2
 * counts only those in it; without a rate rule nothing counts the others) or it came before the
 * state's count baseline (`countFromSeq`, after which every count starts), and it is not a
 * permission failure a later one may still be upgraded by (SPEC 3.6: three within 10 minutes;
 * kept twice as long, for results whose time is behind the key's clock). A key that keeps failing
 * outside the filter — an API answering 404 all day, an agent sent to files that do not exist —
 * stored and rewrote every such failure of the window at each batch: with 30 % of the bench's
 * results answering 404, its 45 keys' histories grew to ~40 KB each within 96,000 events and ingest
 * fell from ~4,900 to ~3,200 events/s (now flat at 6,300–8,100/s). Every failure is still
 * recorded in the failure log; only the state's own history leaves these out. Like a result log
 * without a rate rule (trimHistory), a filter widened later counts from then on.
 */
function unreadFailure(f: FailureRecord, rule: Rule, t: number, countFromSeq: number): boolean {
  const upgradesLaterOnes = f.severity === "permission" || f.severity === "repeated_auth";
  if (upgradesLaterOnes && t - f.ts <= 2 * REPEATED_AUTH_WINDOW_MS) return false;
  // Counted only after the state's count baseline (a reset, a recovery): one before it never is again.
  return f.seq <= countFromSeq || !rule.severityFilter.includes(f.severity);
}

/** SPEC 4.3: apply one tool result to one state. */
export function applyOutcome(
  ctx: KeyContext,
  outcome: Outcome,
  rule: Rule,
  recoveryMode: RecoveryMode,
  timeline: SessionTimeline,
  now: number,
  opts: ApplyOptions = {},
): ApplyResult {
  const securityBlocks = opts.securityBlocks ?? true;
  const s: KeyState = { ...ctx.state };
  const next = opts.inPlace ? ctx : copyKeyContext(ctx);
  next.state = s;
  const effects: Effect[] = [];
  const toolName = outcome.toolName ?? s.toolName;

  const t = clampClock(s.clock, now);
  s.clock = t;
  s.seq += 1;
  s.totalCalls += 1;
  if (!next.results.ts.length) next.results.firstSeq = s.seq;
  next.results.ts.push(t);
  let failure: FailureRecord | null = null;

  if (outcome.failed) {
    const severity: Severity = outcome.severity ?? "server_error";
    failure = {
      ts: t,
      severity,
      weight: outcome.weight ?? failureWeight(severity),
      sessionId: outcome.sessionId,
      agent: outcome.agent ?? "default",
      seq: s.seq,
    };
    next.failures.push(failure);
    s.totalFailures += 1;
    s.consecutiveFailures += 1;
    s.lastFailureAt = t;
    const inFilter = rule.severityFilter.includes(severity);

    if (s.state === "blocked" || s.manual) {
      // Blocked, or a state a person set: nothing changes until a person resets it.
    } else if (severity === "security" && securityBlocks) {
      block(s, SECURITY_BLOCK_REASON, t);
      effects.push(blockedEffect(s, toolName, SECURITY_BLOCK_REASON));
    } else if (s.state === "trusted") {
      const reason = escalationReason(next, rule, timeline, t);
      if (reason) {
        escalate(s, reason, rule, next.failures, t);
        if (rule.notify) effects.push(escalatedEffect(s, toolName, rule));
      }
    } else if (s.state === "escalated") {
      // Expiry is not extended.
      if (inFilter) s.escalationFailureCount = countFailuresInWindow(next.failures, rule, t, { afterSeq: s.countFromSeq });
      if (rule.blockThreshold !== undefined && s.escalationSeq !== null) {
        const since = effectiveFailures(next.failures, rule, timeline, t, {
          afterSeq: Math.max(s.escalationSeq, s.countFromSeq),
        });
        if (since >= rule.blockThreshold - 1e-9) {
          const reason = `${fmtCount(since)} failures since escalation (block threshold ${rule.blockThreshold})`;
          block(s, reason, t);
          effects.push(blockedEffect(s, toolName, reason));
        }
      }
    } else if (s.state === "recovering") {
      if (inFilter) {
        escalate(s, `${severity} failure during recovery`, rule, next.failures, t);
        if (rule.notify) effects.push(escalatedEffect(s, toolName, rule));
      } else if (s.recoverySuccesses !== 0) {
        s.recoverySuccesses = 0;
        effects.push(recoveringEffect(s));
      }
    }
  } else {
    s.consecutiveFailures = 0;
    s.lastSuccessAt = t;
    if (s.manual) {
      // A state a person set does not recover by itself.
    } else if (s.state === "escalated") {
      const expired = s.escalationExpires !== null && t >= s.escalationExpires;
      const cooled = s.lastFailureAt === null || t - s.lastFailureAt >= rule.cooldownSeconds * 1000;
      if (expired && cooled) {
        s.state = "recovering";
        s.recoverySuccesses = 1;
        s.recoveryNeeded = rule.successCountToRecover;
        s.approvalPending = false;
        completeRecovery(s, toolName, recoveryMode, effects);
      }
    } else if (s.state === "recovering") {
      s.recoverySuccesses += 1;
      completeRecovery(s, toolName, recoveryMode, effects);
    }
  }

  trimHistory(next, rule, t, failure !== null);
  return { ctx: next, effects, failure };
}

function completeRecovery(s: KeyState, toolName: string, mode: RecoveryMode, effects: Effect[]): void {
  if (s.recoverySuccesses < s.recoveryNeeded) {
    effects.push(recoveringEffect(s));
    return;
  }
  if (mode === "auto") {
    const n = s.recoverySuccesses;
    trustAgain(s);
    effects.push(recoveredEffect(s, toolName, `trusted again after ${n} successful calls`));
    return;
  }
  effects.push(recoveringEffect(s));
  if (!s.approvalPending) {
    s.approvalPending = true;
    // The shell creates the approval row and fills in its id.
    effects.push({ type: "recovery_pending", failureKey: s.failureKey, approvalId: "" });
  }
}

// ---------------------------------------------------------------------------
// Key + domain + tool levels
// ---------------------------------------------------------------------------

export interface LevelContexts {
  key: KeyContext;
  /** The `@domain:<d>` state, if one exists (created when the applicable rule is a domain rule). */
  domain?: KeyContext | null;
  /** The `@tool:<name>` state, if one exists (created on a security failure). */
  tool?: KeyContext | null;
}

export interface ToolResultApplied {
  key: KeyContext;
  domain: KeyContext | null;
  tool: KeyContext | null;
  effects: Effect[];
  /** The failure record appended to the key's history, if the result failed. */
  failure: FailureRecord | null;
}

/**
 * Apply a classified tool result to the key, to its domain-level state when the applicable rule
 * is a domain rule, and to the tool-level state (blocked on `security`). `inPlace`: the caller
 * owns the key's and the domain's contexts (see ApplyOptions).
 */
export function applyToolResult(
  states: LevelContexts,
  outcome: Outcome,
  resolution: ResolvedRule,
  recoveryMode: RecoveryMode,
  timeline: SessionTimeline,
  now: number,
  opts: Pick<ApplyOptions, "inPlace"> = {},
): ToolResultApplied {
  const toolName = outcome.toolName ?? states.key.state.toolName;
  const o: Outcome = { ...outcome, toolName };
  const keyRes = applyOutcome(states.key, o, resolution.rule, recoveryMode, timeline, now, { inPlace: opts.inPlace });
  const effects = [...keyRes.effects];

  let domain = states.domain ?? null;
  if (resolution.level === "domain" && resolution.name) {
    const dctx = domain ?? newKeyContext(DOMAIN_PREFIX + resolution.name, toolName, "domain");
    const dres = applyOutcome(dctx, o, resolution.rule, recoveryMode, timeline, now, { securityBlocks: false, inPlace: opts.inPlace });
    domain = dres.ctx;
    effects.push(...dres.effects);
  }

  let tool = states.tool ?? null;
  const isSecurity = o.failed && (o.severity ?? "server_error") === "security";
  if (tool || isSecurity) {
    const tres = applyToolLevel(tool ?? newKeyContext(TOOL_PREFIX + toolName, toolName, "tool"), o, now);
    tool = tres.ctx;
    effects.push(...tres.effects);
  }
  return { key: keyRes.ctx, domain, tool, effects, failure: keyRes.failure };
}

/** Tool-level state: counters only; a `security` failure blocks it. */
function applyToolLevel(ctx: KeyContext, outcome: Outcome, now: number): { ctx: KeyContext; effects: Effect[] } {
  const s: KeyState = { ...ctx.state };
  const effects: Effect[] = [];
  const t = clampClock(s.clock, now);
  s.clock = t;
  s.seq += 1;
  s.totalCalls += 1;
  if (outcome.failed) {
    s.totalFailures += 1;
    s.consecutiveFailures += 1;
    s.lastFailureAt = t;
    if ((outcome.severity ?? "server_error") === "security" && s.state !== "blocked" && !s.manual) {
      block(s, SECURITY_BLOCK_REASON, t);
      effects.push(blockedEffect(s, outcome.toolName ?? s.toolName, SECURITY_BLOCK_REASON));
    }
  } else {
    s.consecutiveFailures = 0;
    s.lastSuccessAt = t;
  }
  return { ctx: { state: s, failures: ctx.failures, results: ctx.results }, effects };
}

// ---------------------------------------------------------------------------
// Human actions
// ---------------------------------------------------------------------------

/** Reset (any state → trusted, counters cleared: consecutive, escalation, recovery; history no longer counts). */
export function resetKey(state: KeyState): KeyState {
  const s: KeyState = { ...state };
  trustAgain(s);
  return s;
}

/**
 * A person escalates or blocks a key, a tool or a domain by hand (SPEC 4.6): marked manual, so the
 * engine's transitions keep it (no recovery, no expiry) until a reset.
 */
export function setManualState(state: KeyState, target: "escalated" | "blocked", manual: ManualState): KeyState {
  const s: KeyState = { ...state };
  clearEscalation(s);
  s.state = target;
  s.escalatedAt = manual.at;
  s.escalationReason = manual.reason;
  s.escalationSeq = s.seq;
  s.manual = { ...manual };
  return s;
}

export interface HumanActionResult {
  state: KeyState;
  effects: Effect[];
  /** False when the state was not recovering (stale approval): nothing changed. */
  applied: boolean;
}

/** Approve a pending recovery: recovering → trusted (with a `recovered` effect). */
export function approveRecovery(state: KeyState, now: number): HumanActionResult {
  if (state.state !== "recovering") return { state, effects: [], applied: false };
  const s: KeyState = { ...state };
  s.clock = clampClock(s.clock, now);
  trustAgain(s);
  return { state: s, effects: [recoveredEffect(s, s.toolName, "recovery approved")], applied: true };
}

/** Deny a pending recovery: recovering → escalated with a fresh escalation window. */
export function denyRecovery(state: KeyState, rule: Rule, now: number): HumanActionResult {
  if (state.state !== "recovering") return { state, effects: [], applied: false };
  const s: KeyState = { ...state };
  const t = clampClock(s.clock, now);
  s.clock = t;
  s.state = "escalated";
  s.escalatedAt = t;
  s.escalationReason = "recovery denied";
  s.escalationExpires = t + rule.escalationDurationSeconds * 1000;
  s.escalationWindowSeconds = rule.windowSeconds;
  s.escalationSeq = s.seq;
  s.recoverySuccesses = 0;
  s.recoveryNeeded = 0;
  s.approvalPending = false;
  return { state: s, effects: [escalatedEffect(s, s.toolName, rule)], applied: true };
}
