/**
 * Nudges (SPEC 5): severity → nudge type, capped by the effective nudge level; message
 * templates; pause / resume / guidance. Pure: no clock, no I/O.
 */
import { restartDetection, upgradeSessionBehaviour, type SessionBehaviour } from "./behaviour-state";
import type { Effect, NudgeLevel, NudgeType, PatternSeverity, PatternType } from "./types";

export type PatternNudgeType = Exclude<NudgeType, "guidance">;

/** SPEC 5: minor → gentle, moderate → direct, severe → interrupt. */
export function severityToNudgeType(severity: PatternSeverity): PatternNudgeType {
  switch (severity) {
    case "minor":
      return "gentle";
    case "moderate":
      return "direct";
    case "severe":
      return "interrupt";
  }
}

const NUDGE_RANK: Record<PatternNudgeType, number> = { gentle: 1, direct: 2, interrupt: 3 };

/**
 * Caps a nudge type by the effective nudge level. `off` (or `nudgeEnabled: false`) → null:
 * the pattern is recorded but no nudge is sent. `gentle` → always gentle; `direct` → an
 * interrupt becomes direct; `interrupt` → as mapped.
 */
export function capNudgeType(type: PatternNudgeType, level: NudgeLevel, enabled = true): PatternNudgeType | null {
  if (!enabled || level === "off") return null;
  return NUDGE_RANK[type] <= NUDGE_RANK[level] ? type : level;
}

/** Severity + settings → the nudge type to send, or null for none. */
export function nudgeTypeFor(severity: PatternSeverity, level: NudgeLevel, enabled = true): PatternNudgeType | null {
  return capNudgeType(severityToNudgeType(severity), level, enabled);
}

/**
 * Message templates per pattern type and severity: `{tool_name}`, `{count}` and, for identical
 * calls, `{args}` (a short redacted preview of the repeated arguments). The texts for
 * announce_no_action and introspection_loop are the seed's NUDGE_TEMPLATES; the others are
 * written in the same voice. Every text says what to do differently (SPEC 5), not only that the
 * agent is stuck. The severity selects the text; the capped nudge type only changes how it is
 * delivered (see `nudgeMessage`).
 */
export const NUDGE_TEMPLATES: Record<PatternType, Record<PatternSeverity, string>> = {
  repetitive_calls: {
    minor:
      "You've called {tool_name} {args} {count} times with the same result. Use what it returned, or change the arguments, before calling it again.",
    moderate:
      "NOTICE: You are in a loop: {tool_name} {args} called {count} times, same result each time. Repeating it will not change the answer. Act on the result or try a different approach.",
    severe:
      "BLOCKED: {tool_name} {args} was called {count} times with the same result. The system is pausing for user intervention.",
  },
  error_retry_loop: {
    minor:
      "{tool_name} {args} failed {count} times with the same error. Read the error and change the arguments or the approach instead of retrying unchanged.",
    moderate:
      "NOTICE: You are retrying a failing call unchanged: {tool_name} {args}, {count} identical failures. Stop, fix what the error says, or use another tool.",
    severe: "BLOCKED: {count} identical failing calls to {tool_name} {args}. System pausing for user intervention.",
  },
  alternating_calls: {
    minor:
      "You are alternating between the same two calls ({tool_name}) and getting the same results. Decide what the results tell you and move on.",
    moderate:
      "NOTICE: You are going back and forth between {tool_name} ({count} calls) with unchanged results. Break the cycle: act on what you have or try something else.",
    severe: "BLOCKED: Detected {count} calls alternating between {tool_name}. System pausing for user intervention.",
  },
  introspection_loop: {
    minor: "You have the tool list. Proceed with the actual task instead of re-querying tools.",
    moderate: "NOTICE: Stop querying tool metadata. You have sufficient information. Execute the task.",
    severe: "BLOCKED: Stuck in introspection loop. System pausing for user guidance.",
  },
  read_only_loop: {
    minor:
      "You've re-read things you already read {count} times without acting (last: {tool_name}). Use what you read and make the change.",
    moderate:
      "NOTICE: {count} repeated reads and no action. Re-reading will not add information: make the change or state what is missing.",
    severe: "BLOCKED: {count} repeated reads without any action. System pausing for user guidance.",
  },
  announce_no_action: {
    minor:
      "You mentioned proceeding but haven't called an action tool yet. Please execute the planned action.",
    moderate: "NOTICE: You've announced action {count} times without executing. Call the appropriate tool NOW.",
    severe: "BLOCKED: Repeated announcements without action. System pausing for user input.",
  },
  planning_loop: {
    minor: "You've written {count} messages without calling a tool. Pick the first step of your plan and call the tool for it.",
    moderate: "NOTICE: {count} messages of planning without any tool call. Stop planning and execute the first step now.",
    severe: "BLOCKED: Stuck planning without execution ({count} messages). System pausing for user input.",
  },
  empty_response: {
    minor: "Your last response was empty. Reply with your next step: a tool call or an answer.",
    moderate: "NOTICE: {count} empty responses in a row. Call a tool or answer in plain text; do not reply with reasoning only.",
    severe: "BLOCKED: {count} empty responses in a row. System pausing for user input.",
  },
  tool_avoidance: {
    minor: "You've mentioned {tool_name} {count} times without calling it. If you intend to use it, call it.",
    moderate: "NOTICE: You keep naming {tool_name} ({count} times) but never call it. Call {tool_name} NOW or change plan.",
    severe: "BLOCKED: {tool_name} named {count} times without being called. System pausing for user input.",
  },
};

export interface TemplateVars {
  toolName: string;
  count: number;
  /** Preview of the repeated arguments; "" leaves the placeholder out. */
  args?: string;
}

/** Fills `{tool_name}`, `{count}` and `{args}` in a template. */
export function renderTemplate(template: string, vars: TemplateVars): string {
  const args = vars.args ?? "";
  return template
    .replaceAll(" {args}", args ? ` ${args}` : "")
    .replaceAll("{args}", args)
    .replaceAll("{tool_name}", vars.toolName)
    .replaceAll("{count}", String(vars.count));
}

/**
 * The message of a nudge. The template is chosen by severity; when the nudge level caps a
 * severe pattern to a non-interrupt nudge, the session is not paused, so the "BLOCKED ...
 * pausing" text would be false: the moderate text is used instead (and the gentle one when
 * capped to gentle).
 */
export function nudgeMessage(
  patternType: PatternType,
  severity: PatternSeverity,
  nudgeType: PatternNudgeType,
  vars: TemplateVars,
): string {
  let sev: PatternSeverity = severity;
  if (nudgeType === "gentle") sev = "minor";
  else if (nudgeType === "direct" && severity === "severe") sev = "moderate";
  return renderTemplate(NUDGE_TEMPLATES[patternType][sev], vars);
}

// ---------------------------------------------------------------------------
// Pause / resume / guidance
// ---------------------------------------------------------------------------

export type ResumeResult =
  | { ok: true; state: SessionBehaviour }
  | { ok: false; error: "not_paused"; message: string };

/**
 * A person resumes a paused session, optionally with guidance. Not paused → `{ ok: false,
 * error: "not_paused" }` (no throw). Resuming ends every run and starts a fresh stretch, so the loop that caused
 * the interrupt must build up again before it is reported again (otherwise a severe pattern
 * could never be re-reported in the same stretch, and the session could never pause again).
 * Open nudges stay open: they are still judged by what the agent does next.
 */
export function resumeSession(stored: SessionBehaviour, guidance: string | null | undefined, now: number): ResumeResult {
  const state = upgradeSessionBehaviour(stored, stored.sessionId);
  if (!state.paused) {
    return { ok: false, error: "not_paused", message: `session ${state.sessionId} is not paused` };
  }
  const text = typeof guidance === "string" ? guidance.trim() : "";
  return {
    ok: true,
    state: {
      ...restartDetection(state, now),
      paused: false,
      pauseReason: null,
      pausedAt: null,
      pendingGuidance: text.length > 0 ? text : null,
    },
  };
}

/**
 * Takes the pending guidance (if any) as a `guidance` nudge and clears it, so it is delivered
 * exactly once. `observeSessionEvent` calls this on every `tool.call`; the shell may call it
 * itself instead (whoever takes it first delivers it; the second call gets null).
 */
export function takePendingGuidance(state: SessionBehaviour): { state: SessionBehaviour; effect: Effect | null } {
  if (state.pendingGuidance === null) return { state, effect: null };
  return {
    state: { ...state, pendingGuidance: null },
    effect: {
      type: "nudge",
      nudgeType: "guidance",
      message: state.pendingGuidance,
      patternType: null,
      sessionId: state.sessionId,
    },
  };
}

/** Pauses a session (used by an interrupt nudge). Already paused → unchanged. */
export function pauseSession(state: SessionBehaviour, reason: string, now: number): SessionBehaviour {
  if (state.paused) return state;
  return { ...state, paused: true, pauseReason: reason, pausedAt: now };
}
