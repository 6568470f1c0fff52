/**
 * The engine's shared words, each declared once: failure severities, trust states and their order,
 * nudge levels, decisions. Plain constants with no imports, so every engine file (and the registry
 * the types derive from) can use them without a circle. The stall patterns' names and severities
 * are declared by their registry (server/engine/stall-patterns/) and re-exported by types.ts.
 */

/** Failure severities (SPEC 3), from the mildest. */
export const SEVERITIES = [
  "transient",
  "not_found",
  "invalid_input",
  "permission",
  "validation",
  "timeout",
  "server_error",
  "crash",
  "corruption",
  "security",
  "repeated_auth",
] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The trust states (SPEC 4.3) in the order the SPEC names them. */
const TRUST_STATES = ["trusted", "escalated", "recovering", "blocked"] as const;
export type TrustState = (typeof TRUST_STATES)[number];

/** The trust states from the mildest to the strictest: how pages list them and which wins as the effective state. */
export const TRUST_STATE_ORDER = ["trusted", "recovering", "escalated", "blocked"] as const satisfies readonly TrustState[];

/** A state's place in TRUST_STATE_ORDER (blocked > escalated > recovering > trusted). */
export const TRUST_STATE_RANK = Object.fromEntries(TRUST_STATE_ORDER.map((s, i) => [s, i])) as Record<TrustState, number>;

/** How strongly an agent is nudged (SPEC 5), from none. */
export const NUDGE_LEVELS = ["off", "gentle", "direct", "interrupt"] as const;
export type NudgeLevel = (typeof NUDGE_LEVELS)[number];
export type NudgeType = "gentle" | "direct" | "interrupt" | "guidance";

/** A guard decision (SPEC 7.3). */
const DECISIONS = ["allow", "ask", "deny", "pause"] as const;
export type Decision = (typeof DECISIONS)[number];
