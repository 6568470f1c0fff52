/**
 * The tracks a session's behaviour keeps for the stall detectors (SPEC 5, revision 2): the run of
 * identical calls, the failure run, the alternation, the counted runs and the stretch. The
 * behaviour fold (patterns.ts) updates them; each pattern's detector reads them. Plain JSON,
 * part of the stored state (behaviour-state.ts).
 */
import type { PatternSeverity } from "./severity";

/** One tool call of the session, as the engine identified it. */
export interface StretchCall {
  callId: string;
  toolName: string;
  /** Call identity hash: args without the volatile fields (SPEC 5). */
  argsHash: string;
  /** Outcome identity of its result, once known. */
  outcome?: string;
}

/** A run of identical calls (same call identity, same outcome so far). */
export interface CallRun {
  toolName: string;
  argsHash: string;
  /** Short redacted preview of the repeated arguments, for the nudge text. */
  preview: string;
  length: number;
  /** Outcome identity of the run's results so far; null while none is known. */
  outcome: string | null;
  /** Event sequence number at which the run started: a new run starts clean. */
  start: number;
  /** Highest severity nudged for this run (by repetitive_calls or error_retry_loop): one nudge per loop step. */
  nudged: PatternSeverity | null;
}

/** Consecutive results that failed for one call identity with one outcome. */
export interface FailureRun {
  toolName: string;
  argsHash: string;
  preview: string;
  outcome: string;
  count: number;
  start: number;
}

/** Calls alternating between exactly two call identities A B A B … with unchanged outcomes. */
export interface AlternatingRun {
  /** The two identities (`toolName argsHash`), in order of first appearance. */
  pair: [string, string];
  names: [string, string];
  /** Known outcome per identity; a different outcome ends the run. */
  outcomes: Record<string, string>;
  length: number;
  start: number;
}

/** Consecutive successful results of one tool with different call identities and one outcome (result_loop). */
export interface ResultRun {
  toolName: string;
  outcome: string;
  /** The argument hashes of the run's calls (one tool, so they are its call identities; bounded): a repeat is repetitive_calls', not counted here. */
  identities: string[];
  count: number;
  start: number;
}

/** A simple counted run (introspection calls, model texts, empty responses). */
export interface CountRun {
  count: number;
  start: number;
}

/**
 * The stretch: the session's events since its last productive action, `user.message` or resume.
 * Counters are incremental so the state stays bounded however long the stretch is.
 */
export interface Stretch {
  /** Increments every time a new stretch starts. */
  id: number;
  startedAt: number | null;
  /** Tool calls in the stretch (unbounded counter). */
  callCount: number;
  /** `toolName argsHash|outcome` of the stretch's results, including the productive one that opened it (bounded). */
  seenResults: string[];
  /** Read-only call identities of the stretch (bounded). */
  readIdentities: string[];
  /** The other call identities of the stretch (bounded): with `readIdentities`, what it has already called. */
  callIdentities: string[];
  /** Read-only calls that repeated an earlier read-only identity of the stretch. */
  rereads: number;
  lastReread: string | null;
  /**
   * Announcements of the stretch that brought nothing new (SPEC 5.1): followed by no call before the
   * next text, or only by calls that repeat a call identity of the stretch or are introspection.
   */
  announcements: number;
  /**
   * The latest announcement while its calls are coming in: `open` before any call, `counted` once a
   * call brought nothing new (a later new call before the next text takes it back); null when
   * resolved as progress or when the latest text announced nothing.
   */
  announcement: "open" | "counted" | null;
  /** Per action tool (lower-cased name): texts naming it since it was last called. */
  mentions: Record<string, { toolName: string; count: number }>;
}

/** What a detector reads of a session's behaviour state. */
export interface Tracks {
  /** The most recent calls, oldest first (bounded). */
  calls: StretchCall[];
  stretch: Stretch;
  run: CallRun | null;
  failureRun: FailureRun | null;
  alternating: AlternatingRun | null;
  introspectionRun: CountRun | null;
  /** Model texts in a row (no tool call or result between); identical texts count double. */
  textRun: (CountRun & { hashes: string[] }) | null;
  emptyRun: CountRun | null;
  /** Results of one tool, differently called, returning the same thing; absent in states stored before it. */
  resultRun?: ResultRun | null;
}

/** The tool classes and phrases of the configuration's `patterns` (SPEC 5). */
export interface ToolClasses {
  introspectionTools: string[];
  readOnlyTools: string[];
  actionTools: string[];
  announcePhrases: string[];
  /** Top-level argument fields left out of a call's identity (SPEC 5 "volatile argument fields"). */
  volatileArgFields: string[];
}

/** A call identity: tool name and the hash of its arguments without the volatile fields. */
export const identityOf = (toolName: string, hash: string) => `${toolName} ${hash}`;

/** Whether an outcome identity is a failure's (`F:` + hash of the error; see outcomeIdentity in patterns.ts). */
export const isFailedOutcome = (outcome: string | null | undefined) => outcome != null && outcome.startsWith("F:");

/** The session's last call, if any. */
export function lastCall(s: Tracks): StretchCall | undefined {
  return s.calls[s.calls.length - 1];
}

/** Tool classes' names, lower-cased once per list (a configuration version keeps its lists). */
const toolClassSets = new WeakMap<readonly string[], Set<string>>();

/** Whether a tool is in a tool class: names compare case-insensitively (SPEC 4.5: `bash` covers `Bash`). */
export function inToolClass(list: readonly string[], toolName: string): boolean {
  let set = toolClassSets.get(list);
  if (!set) toolClassSets.set(list, (set = new Set(list.map((t) => t.toLowerCase()))));
  return set.has(toolName.toLowerCase());
}
