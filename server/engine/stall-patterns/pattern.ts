/**
 * The shape of one stall pattern (SPEC 5): everything about a pattern lives in its own file in
 * this folder, and `index.ts` lists them. The engine (detection, nudges, configuration), the
 * settings editor, the Patterns page and the docs table all read the registry.
 */
import type { PatternSeverity, PatternThresholds } from "./severity";
import type { Tracks, ToolClasses } from "./tracks";

export { PATTERN_SEVERITIES, type PatternSeverity, type PatternThresholds } from "./severity";

/**
 * What a detector reports: the count its ladder judges, the tool the nudge names (`{tool_name}`),
 * a short redacted preview of the repeated arguments (`{args}`, "" when not about one call) and
 * the call identity it is about (for one nudge per loop step), or null.
 */
export type Found = (count: number, toolName: string, args?: string, identity?: string | null) => void;

export interface StallPattern<Name extends string = string> {
  /** The pattern's name in effects, the configuration document and the API (snake_case). */
  name: Name;
  /** What the ladder counts: the pattern's one description (docs table, Patterns page, settings editor). */
  counts: string;
  /** The built-in severity ladder (SPEC 5 table). */
  ladder: PatternThresholds;
  /**
   * Structural minimum count, whatever the configured ladder says (alternation needs A B A B, an
   * announcement must happen twice…): a workspace that lowers a minor threshold gets detection at
   * its threshold, never below this floor.
   */
  minCount: number;
  /** Nudge text per severity: `{tool_name}`, `{count}` and `{args}`; every text says what to do differently. */
  nudges: Record<PatternSeverity, string>;
  /**
   * Whether the condition holds on the session's tracks: calls `found` once with its count, or
   * not at all. A plain function called on every event: it allocates nothing of its own.
   */
  detect(s: Tracks, classes: ToolClasses, found: Found): void;
  /** The run or stretch a report belongs to: a pattern is reported again in it only when its severity rises. */
  scope(s: Tracks): string | null;
  /**
   * Optional: other nudge texts, and the count they name, for the state the pattern was detected in
   * (identical calls that keep failing are told to read the error). Asked only for the nudge sent.
   */
  nudgeInstead?(s: Tracks): { nudges: Record<PatternSeverity, string>; count: number } | null;
}

/** Declares a pattern, keeping its name's literal type for the registry. */
export function stallPattern<const Name extends string>(p: StallPattern<Name>): StallPattern<Name> {
  return p;
}
