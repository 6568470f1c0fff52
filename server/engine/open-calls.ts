/**
 * Open calls (SPEC 5.1): a `tool.call` with no `tool.result` after `open_call_seconds` is open. The
 * sweep (server/ingest/open-call-sweep.ts) hands in a session's calls without a result and the
 * time; this decides which are open and what raising one sends: a `hung_call` pattern effect
 * (minor, once per call) and its nudge as the nudge level allows. Pure: no clock, no I/O.
 */
import { hungCall } from "./stall-patterns/hung-call";
import { nudgeMessage, nudgeTypeFor } from "./nudges";
import type { Effect, NudgeLevel } from "./types";

export interface CallWithoutResult {
  callId: string;
  toolName: string;
  /** The call's time, epoch ms. */
  since: number;
}

/** The calls that are open at `now`: no result for `openCallSeconds` or longer, oldest first. */
export function openCallsAt<C extends CallWithoutResult>(calls: readonly C[], openCallSeconds: number, now: number): C[] {
  const before = now - openCallSeconds * 1000;
  return calls.filter((c) => c.since <= before).sort((a, b) => a.since - b.since || (a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0));
}

export interface HungCallSettings {
  patternDetectionEnabled: boolean;
  nudgeEnabled: boolean;
  nudgeLevel: NudgeLevel;
}

export type HungCallRaise = {
  pattern: Extract<Effect, { type: "pattern" }>;
  nudge: Extract<Effect, { type: "nudge" }> | null;
};

/**
 * Raising one open call: its `hung_call` pattern effect (minor, count 1, the call's tool) and the
 * minor nudge unless nudges are off. Null when pattern detection is off: the call still shows as
 * open, nothing is sent.
 */
export function raiseHungCall(sessionId: string, call: CallWithoutResult, settings: HungCallSettings): HungCallRaise | null {
  if (!settings.patternDetectionEnabled) return null;
  const severity = "minor" as const;
  const pattern = { type: "pattern" as const, patternType: hungCall.name, severity, count: 1, sessionId, toolSequence: [call.toolName] };
  const nudgeType = nudgeTypeFor(severity, settings.nudgeLevel, settings.nudgeEnabled);
  const nudge = nudgeType
    ? { type: "nudge" as const, nudgeType, patternType: hungCall.name, sessionId, message: nudgeMessage(hungCall.name, severity, nudgeType, { toolName: call.toolName, count: 1 }, hungCall.nudges) }
    : null;
  return { pattern, nudge };
}
