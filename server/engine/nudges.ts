/**
 * Nudges (SPEC 5): severity → nudge type, capped by the effective nudge level; message
 * templates; pause / resume / guidance. Pure: no clock, no I/O.
 */
import { restartDetection, upgradeSessionBehaviour, type SessionBehaviour } from "./behaviour-state";
import { STALL_PATTERNS } from "./stall-patterns";
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
 * Message templates per pattern type and severity, each pattern's own (server/engine/stall-patterns/):
 * `{tool_name}`, `{count}` and, for identical calls, `{args}` (a short redacted preview of the
 * repeated arguments). The severity selects the text; the capped nudge type only changes how it
 * is delivered (see `nudgeMessage`).
 */
export const NUDGE_TEMPLATES = Object.fromEntries(STALL_PATTERNS.map((p) => [p.name, p.nudges])) as Record<
  PatternType,
  Record<PatternSeverity, string>
>;

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
  templates: Record<PatternSeverity, string> = NUDGE_TEMPLATES[patternType],
): string {
  let sev: PatternSeverity = severity;
  if (nudgeType === "gentle") sev = "minor";
  else if (nudgeType === "direct" && severity === "severe") sev = "moderate";
  return renderTemplate(templates[sev], vars);
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
