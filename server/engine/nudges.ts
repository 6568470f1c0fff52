/**
 * Nudges (SPEC 5): severity → nudge type, capped by the effective nudge level; message
 * templates; pause / resume / guidance. Pure: no clock, no I/O.
 */
import { newStretch, type SessionBehaviour } from "./behaviour-state";
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
 * Message templates per pattern type and severity (`{tool_name}`, `{count}`). The texts for
 * repetitive_calls, announce_no_action and introspection_loop are the seed's NUDGE_TEMPLATES;
 * the others are written in the same voice. The severity selects the text; the capped nudge
 * type only changes how it is delivered (see `nudgeMessage`).
 */
export const NUDGE_TEMPLATES: Record<PatternType, Record<PatternSeverity, string>> = {
  repetitive_calls: {
    minor: "You've called {tool_name} {count} times. Consider if you have the information needed to proceed.",
    moderate:
      "NOTICE: You are in a loop calling {tool_name} repeatedly. Stop and take action on what you've learned.",
    severe: "BLOCKED: Detected {count}x repeated calls to {tool_name}. The system is pausing for user intervention.",
  },
  announce_no_action: {
    minor:
      "You mentioned proceeding but haven't called an action tool yet. Please execute the planned action.",
    moderate: "NOTICE: You've announced action {count} times without executing. Call the appropriate tool NOW.",
    severe: "BLOCKED: Repeated announcements without action. System pausing for user input.",
  },
  introspection_loop: {
    minor: "You have the tool list. Proceed with the actual task instead of re-querying tools.",
    moderate: "NOTICE: Stop querying tool metadata. You have sufficient information. Execute the task.",
    severe: "BLOCKED: Stuck in introspection loop. System pausing for user guidance.",
  },
  read_only_loop: {
    minor:
      "You've made {count} read-only calls without changing anything. Consider if you have enough context to act.",
    moderate:
      "NOTICE: {count} read-only calls and no action yet. Stop gathering information and make the change.",
    severe: "BLOCKED: {count} read-only calls without any action. System pausing for user guidance.",
  },
  error_retry_loop: {
    minor:
      "{tool_name} has failed {count} times with the same arguments. Change your approach instead of retrying unchanged.",
    moderate:
      "NOTICE: You are retrying a failing {tool_name} call unchanged ({count} failures). Stop and try a different approach.",
    severe: "BLOCKED: {count} identical failing calls to {tool_name}. System pausing for user intervention.",
  },
  planning_loop: {
    minor: "You've written {count} messages without calling a tool. Consider starting on the plan.",
    moderate: "NOTICE: {count} messages of planning without any tool call. Stop planning and execute the first step.",
    severe: "BLOCKED: Stuck planning without execution ({count} messages). System pausing for user input.",
  },
  alternating_calls: {
    minor:
      "You are alternating between the same two calls ({tool_name}). Consider if you have what you need to proceed.",
    moderate:
      "NOTICE: You are going back and forth between {tool_name} ({count} calls). Break the cycle and take action.",
    severe: "BLOCKED: Detected {count} calls alternating between {tool_name}. System pausing for user intervention.",
  },
  tool_avoidance: {
    minor: "You've mentioned {tool_name} {count} times without calling it. If you intend to use it, call it.",
    moderate: "NOTICE: You keep naming {tool_name} ({count} times) but never call it. Call {tool_name} NOW or change plan.",
    severe: "BLOCKED: {tool_name} named {count} times without being called. System pausing for user input.",
  },
};

/** Fills `{tool_name}` and `{count}` in a template. */
export function renderTemplate(template: string, vars: { toolName: string; count: number }): string {
  return template.replaceAll("{tool_name}", vars.toolName).replaceAll("{count}", String(vars.count));
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
  vars: { toolName: string; count: number },
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
 * error: "not_paused" }` (no throw). Resuming starts a fresh stretch, so the loop that caused
 * the interrupt must build up again before it is reported again (otherwise a severe pattern
 * could never be re-reported in the same stretch, and the session could never pause again).
 * Open nudges stay open: they are still judged by what the agent does next.
 */
export function resumeSession(state: SessionBehaviour, guidance: string | null | undefined, now: number): ResumeResult {
  if (!state.paused) {
    return { ok: false, error: "not_paused", message: `session ${state.sessionId} is not paused` };
  }
  const text = typeof guidance === "string" ? guidance.trim() : "";
  return {
    ok: true,
    state: {
      ...state,
      paused: false,
      pauseReason: null,
      pausedAt: null,
      pendingGuidance: text.length > 0 ? text : null,
      stretch: newStretch(state.stretch.id + 1, now),
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
