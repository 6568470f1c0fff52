/**
 * How an escalation reads (SPEC 4.3, 7.2): the reason a threshold gives, what a state covers, the
 * effects' messages, and guard.check's `escalation` field.
 */
import { effectiveFailures, failureRate } from "./decay";
import { DOMAIN_PREFIX } from "./key-state";
import type { Effect, KeyContext, KeyState, RecoveryMode, Rule, SessionTimeline } from "./types";

export const SECURITY_BLOCK_REASON = "security concern detected";

function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** "3", "2.5", "1.73" */
export function fmtCount(n: number): string {
  return String(Number(n.toFixed(2)));
}

/** Human description of what a state covers, e.g. "domain=api.example.com, path_prefix=v1". */
function describeSubject(state: Pick<KeyState, "failureKey" | "toolName" | "level">): string {
  if (state.level === "domain") return `domain: ${state.failureKey.slice(DOMAIN_PREFIX.length)}`;
  if (state.level === "tool") return "every call of the tool";
  const idx = state.failureKey.indexOf("|");
  if (idx < 0) return state.failureKey;
  return state.failureKey
    .slice(idx + 1)
    .split("|")
    .join(", ");
}

function subjectName(state: KeyState, toolName: string): string {
  if (state.level === "domain") return `Domain '${state.failureKey.slice(DOMAIN_PREFIX.length)}'`;
  return `Tool '${toolName}'`;
}

function subjectSuffix(state: KeyState, toolName: string): string {
  if (state.level === "domain") return ` (last failure: tool '${toolName}')`;
  if (state.level === "tool") return "";
  return ` (${describeSubject(state)})`;
}

export function escalatedEffect(s: KeyState, toolName: string, rule: Rule): Effect {
  const expires = s.escalationExpires ?? s.escalatedAt ?? 0;
  return {
    type: "escalated",
    failureKey: s.failureKey,
    toolName,
    reason: s.escalationReason ?? "",
    expiresAt: isoTime(expires),
    message:
      `⚠️ ${subjectName(s, toolName)} escalated to require approval${subjectSuffix(s, toolName)}. ` +
      `Reason: ${s.escalationReason}. Until ${isoTime(expires)}. ` +
      `Recovery: ${rule.successCountToRecover} successful calls after cooldown.`,
  };
}

export function blockedEffect(s: KeyState, toolName: string, reason: string): Effect {
  const what = reason === SECURITY_BLOCK_REASON ? "security concern" : reason;
  return {
    type: "blocked",
    failureKey: s.failureKey,
    toolName,
    reason,
    message:
      s.level === "tool"
        ? `🛑 Tool '${toolName}' blocked - ${what}. Every '${toolName}' call needs approval until a person resets it.`
        : `🛑 ${subjectName(s, toolName)} blocked - ${what}${subjectSuffix(s, toolName)}. Blocked until a person resets it.`,
  };
}

export function recoveredEffect(s: KeyState, toolName: string, how: string): Effect {
  return {
    type: "recovered",
    failureKey: s.failureKey,
    toolName,
    message: `✓ ${subjectName(s, toolName)} recovered${subjectSuffix(s, toolName)}: ${how}.`,
  };
}

export function recoveringEffect(s: KeyState): Effect {
  return { type: "recovering", failureKey: s.failureKey, successes: s.recoverySuccesses, needed: s.recoveryNeeded };
}

/** Escalation check of SPEC 4.3 for a trusted state: the first threshold reached (count, consecutive, rate). */
export function escalationReason(
  ctx: KeyContext,
  rule: Rule,
  timeline: SessionTimeline,
  now: number,
): string | null {
  const s = ctx.state;
  if (rule.countThreshold !== undefined) {
    const eff = effectiveFailures(ctx.failures, rule, timeline, now, { afterSeq: s.countFromSeq });
    if (eff >= rule.countThreshold - 1e-9) return `${fmtCount(eff)} failures in ${rule.windowSeconds}s`;
  }
  if (rule.consecutiveThreshold !== undefined && s.consecutiveFailures >= rule.consecutiveThreshold) {
    return `${s.consecutiveFailures} consecutive failures`;
  }
  if (rule.rateThreshold !== undefined) {
    const rate = failureRate(ctx.results, ctx.failures, rule, now, { afterSeq: s.countFromSeq });
    if (rate !== null && rate >= rule.rateThreshold) return `${Math.round(rate * 100)}% failure rate`;
  }
  return null;
}

// guard.check helpers

export interface EscalationInfo {
  reason: string;
  failureCount: number;
  window: string;
  recoveryHint: string;
  expiresAt: string | null;
}

/** The `escalation` field of guard.check for the state that decides (null when trusted). */
export function escalationInfo(
  state: KeyState | null | undefined,
  rule?: Rule,
  recoveryMode: RecoveryMode = "auto",
  now?: number,
): EscalationInfo | null {
  if (!state || state.state === "trusted") return null;
  const windowSeconds = state.escalationWindowSeconds ?? rule?.windowSeconds ?? 3600;
  let hint: string;
  if (state.manual) {
    hint = `${state.state === "blocked" ? "Blocked" : "Escalated"} by ${state.manual.by}: only a person's reset restores trust.`;
  } else if (state.state === "blocked") {
    hint = "Blocked: only a person can reset it in the dashboard.";
  } else if (state.state === "recovering") {
    hint = state.approvalPending
      ? `Recovery complete (${state.recoverySuccesses}/${state.recoveryNeeded} successful calls); waiting for a person to approve.`
      : `Recovering: ${state.recoverySuccesses}/${state.recoveryNeeded} successful calls` +
        (recoveryMode === "ask" ? ", then a person approves." : ".");
  } else {
    const needed = rule?.successCountToRecover ?? 3;
    const cooldown = rule?.cooldownSeconds ?? 900;
    const expires = state.escalationExpires;
    let wait = "";
    if (expires !== null && now !== undefined) {
      const cooldownEnd = (state.lastFailureAt ?? 0) + cooldown * 1000;
      const readyAt = Math.max(expires, cooldownEnd);
      if (readyAt > now) wait = ` (in ${Math.ceil((readyAt - now) / 60000)} min)`;
    }
    hint =
      `Escalation lasts until ${expires !== null ? isoTime(expires) : "reset"}; after that and ${cooldown}s without failures${wait}, ` +
      `${needed} successful calls restore trust` +
      (recoveryMode === "ask" ? " once a person approves." : ".");
  }
  return {
    reason: state.escalationReason ?? "",
    failureCount: state.escalationFailureCount ?? state.consecutiveFailures,
    window: `${windowSeconds}s`,
    recoveryHint: hint,
    expiresAt: state.escalationExpires !== null ? isoTime(state.escalationExpires) : null,
  };
}
