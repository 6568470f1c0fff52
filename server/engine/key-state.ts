/**
 * A trust state's key and level (SPEC 4.3: key, `@domain:`, `@tool:`), a fresh state, the clock
 * clamp (SPEC 4.4), and the strictest of several states (what guard.check reads).
 */
import { TRUST_STATE_RANK } from "./vocabulary";
import { EMPTY_LOG_SEQ } from "./key-history";
import type { KeyContext, KeyState, StateLevel, TrustState } from "./types";

export const DOMAIN_PREFIX = "@domain:";

export const TOOL_PREFIX = "@tool:";

export function levelOfKey(failureKey: string): StateLevel {
  if (failureKey.startsWith(DOMAIN_PREFIX)) return "domain";
  if (failureKey.startsWith(TOOL_PREFIX)) return "tool";
  return "key";
}

export function newKeyState(failureKey: string, toolName: string, level: StateLevel = levelOfKey(failureKey)): KeyState {
  return {
    failureKey,
    toolName,
    level,
    state: "trusted",
    consecutiveFailures: 0,
    totalCalls: 0,
    totalFailures: 0,
    lastFailureAt: null,
    lastSuccessAt: null,
    clock: null,
    seq: 0,
    countFromSeq: 0,
    escalatedAt: null,
    escalationReason: null,
    escalationExpires: null,
    escalationFailureCount: null,
    escalationWindowSeconds: null,
    escalationSeq: null,
    recoverySuccesses: 0,
    recoveryNeeded: 0,
    approvalPending: false,
  };
}

export function newKeyContext(failureKey: string, toolName: string, level?: StateLevel): KeyContext {
  return { state: newKeyState(failureKey, toolName, level), failures: [], results: { firstSeq: EMPTY_LOG_SEQ, ts: [] } };
}

/** SPEC 4.4: per-key/per-session clocks never go backwards (the one clamp: trust states, a batch's sessions, guard.check). */
export function clampClock(clock: number | null | undefined, ts: number): number {
  return clock === null || clock === undefined ? ts : Math.max(clock, ts);
}

const STATE_RANK = TRUST_STATE_RANK;

/** The strictest of several states (blocked > escalated > recovering > trusted); trusted for none. */
export function effectiveState(states: ReadonlyArray<TrustState | KeyState | null | undefined>): TrustState {
  let best: TrustState = "trusted";
  for (const s of states) {
    if (!s) continue;
    const st = typeof s === "string" ? s : s.state;
    if (STATE_RANK[st] > STATE_RANK[best]) best = st;
  }
  return best;
}

/** The strictest state object among the key, its domain-level and its tool-level state (first wins ties). */
export function strictestState(states: ReadonlyArray<KeyState | null | undefined>): KeyState | null {
  let best: KeyState | null = null;
  for (const s of states) {
    if (!s) continue;
    if (!best || STATE_RANK[s.state] > STATE_RANK[best.state]) best = s;
  }
  return best;
}
