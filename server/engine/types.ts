/**
 * Shared vocabulary of the pure engine (SPEC sections 2–6).
 *
 * Everything here is plain data: JSON-serialisable, no Dates (times are epoch
 * milliseconds), no I/O. The shell (server/ingest) loads these shapes from the
 * database, hands them to the engine together with the event and `now`, and
 * writes back what the engine returns.
 */

import type { RegistryModelSwitchConfig, RegistryRuleInput, RegistrySettingValues } from "./registry";
import type { PatternSeverity, PatternThresholds as StallPatternThresholds, PatternType } from "./stall-patterns";
import type { ToolClasses } from "./stall-patterns/tracks";

export { SEVERITIES, NUDGE_LEVELS, type Severity, type TrustState, type NudgeLevel, type NudgeType, type Decision } from "./vocabulary";
import type { Severity, TrustState, NudgeLevel, NudgeType, Decision } from "./vocabulary";

/** The stall patterns' names (SPEC 5 table order) and severities: server/engine/stall-patterns/. */
export { PATTERN_SEVERITIES, PATTERN_TYPES, type PatternSeverity, type PatternType } from "./stall-patterns";


export type RecoveryMode = SettingValues["recoveryMode"];
export type ModelSwitchStrategy = SettingValues["modelSwitchStrategy"];
export type BlockedDecision = SettingValues["blockedDecision"];

export type ExtractorKind = "path" | "url" | "command" | "mcp" | "hash";

// ---------------------------------------------------------------------------
// Events (SPEC 7.1), already validated by zod and normalised: `ts` is epoch ms.
// ---------------------------------------------------------------------------

interface EventBase {
  id: string;
  sessionId: string;
  ts: number;
  model?: string;
}

export type JsonObject = { [key: string]: unknown };

export type AgentEvent =
  | (EventBase & { type: "session.start"; agent?: string; settings?: SessionSettingsInput })
  | (EventBase & { type: "session.end" })
  | (EventBase & { type: "turn.start"; turnIndex: number })
  | (EventBase & {
      type: "tool.call";
      callId: string;
      toolName: string;
      pluginName?: string;
      args: JsonObject;
      turnIndex?: number;
    })
  | (EventBase & {
      type: "tool.result";
      callId: string;
      toolName: string;
      pluginName?: string;
      args?: JsonObject;
      success?: boolean;
      error?: string | JsonObject;
      result?: unknown;
      httpStatus?: number;
      severity?: Severity;
      domain?: string;
      service?: string;
      retryCount?: number;
      transient?: boolean;
      durationMs?: number;
      turnIndex?: number;
    })
  | (EventBase & { type: "model.text"; text: string; reasoningOnly?: boolean; turnIndex?: number })
  /**
   * A person spoke to the agent: ends every run and the stretch (SPEC 5). `automated`: a message the
   * framework sent by itself ("Please continue"), which resets nothing (SPEC 5.1).
   */
  | (EventBase & { type: "user.message"; text?: string; automated?: boolean; turnIndex?: number })
  /** The model's API call failed (rate limit, bad request, overload): counted per model, never against a tool (SPEC 7.6). */
  | (EventBase & { type: "model.error"; error: string })
  | (EventBase & {
      type: "permission.resolved";
      callId: string;
      toolName: string;
      granted: boolean;
      method: string;
    });

export type ToolCallEvent = Extract<AgentEvent, { type: "tool.call" }>;
export type ToolResultEvent = Extract<AgentEvent, { type: "tool.result" }>;

// ---------------------------------------------------------------------------
// Configuration (SPEC 4.1, 6, 7.2 "Workspace configuration document"), camelCase.
// The snake_case document <-> this shape conversion lives in engine/config.ts.
// ---------------------------------------------------------------------------

/** A rule as written at one level: every field optional (unset = inherit). Fields: engine/registry.ts. */
export type RuleInput = RegistryRuleInput;

/** A fully resolved rule: defaults filled in. Thresholds stay optional (unset = not used). */
export interface Rule {
  countThreshold?: number;
  consecutiveThreshold?: number;
  rateThreshold?: number;
  rateMinCalls: number;
  windowSeconds: number;
  severityFilter: Severity[];
  escalationDurationSeconds: number;
  notify: boolean;
  cooldownSeconds: number;
  successCountToRecover: number;
  blockThreshold?: number;
}

export type RuleLevel = "tool" | "domain" | "plugin" | "default";

export interface ResolvedRule {
  rule: Rule;
  level: RuleLevel;
  /** tool name / domain / plugin name of the matching rule; null for default. */
  name: string | null;
}

export interface Extractor {
  tool: string; // glob
  kind: ExtractorKind;
  field: string;
}

export type PatternThresholds = StallPatternThresholds;

/** The tool classes and phrases, and one severity ladder per pattern. */
export interface PatternConfig extends ToolClasses {
  thresholds: Record<PatternType, PatternThresholds>;
}

/** Every setting's value; the settings themselves are listed in engine/registry.ts. */
export type SettingValues = RegistrySettingValues;
export type SettingName = keyof SettingValues;
export type SessionSettingsInput = { [K in SettingName]?: SettingValues[K] | null };
export type SettingSource = "session" | "workspace" | "organization" | "default";
export type EffectiveSettings = { [K in SettingName]: { value: SettingValues[K]; source: SettingSource } };

export type ModelSwitchConfig = RegistryModelSwitchConfig;

/**
 * One level's configuration document (workspace or organization), camelCase.
 * Every field optional: an unset field inherits from the level above.
 */
export interface ConfigDocument {
  defaultRule?: RuleInput;
  pluginRules?: Record<string, RuleInput>;
  toolRules?: Record<string, RuleInput>;
  domainRules?: Record<string, RuleInput>;
  settings?: Partial<SettingValues>;
  modelSwitch?: Partial<ModelSwitchConfig>;
  patterns?: {
    introspectionTools?: string[];
    readOnlyTools?: string[];
    actionTools?: string[];
    announcePhrases?: string[];
    volatileArgFields?: string[];
    thresholds?: Partial<Record<PatternType, Partial<PatternThresholds>>>;
  };
  extractors?: Extractor[];
  securityPatterns?: string[];
  retentionDays?: number;
  /** SPEC 4.5 (shapes in policies.ts). */
  policies?: Policy[];
  riskRules?: RiskRulesConfig;
}

/** Workspace config merged over organization config merged over built-ins. */
export interface EffectiveConfig {
  workspace: ConfigDocument;
  organization: ConfigDocument;
  extractors: Extractor[];
  securityPatterns: string[];
  patterns: PatternConfig;
  modelSwitch: ModelSwitchConfig;
  retentionDays: number;
}

// ---------------------------------------------------------------------------
// Effects (SPEC 7.3)
// ---------------------------------------------------------------------------

export type Effect =
  | { type: "escalated"; failureKey: string; toolName: string; reason: string; expiresAt: string; message: string }
  | { type: "blocked"; failureKey: string; toolName: string; reason: string; message: string }
  | { type: "recovering"; failureKey: string; successes: number; needed: number }
  | { type: "recovered"; failureKey: string; toolName: string; message: string }
  | { type: "recovery_pending"; failureKey: string; approvalId: string }
  | { type: "approval_pending"; approvalId: string; failureKey: string; callId: string; sessionId: string; toolName: string; reason: string | null }
  | {
      type: "pattern";
      patternType: PatternType;
      severity: PatternSeverity;
      count: number;
      sessionId: string;
      toolSequence: string[];
    }
  | { type: "nudge"; nudgeType: NudgeType; message: string; patternType: PatternType | null; sessionId: string }
  | { type: "paused"; sessionId: string; reason: string }
  | {
      type: "model_suggestion";
      strategy: "suggest" | "auto";
      currentModel: string;
      suggestedModel: string;
      failureKey: string;
      currentSuccessRate: number;
      suggestedSuccessRate: number;
    };

// ---------------------------------------------------------------------------
// Trust engine state (SPEC 4), owned by engine/trust.ts, key-state.ts, key-history.ts and decay.ts.
// Plain JSON data; the shell stores it in rows / jsonb.
// ---------------------------------------------------------------------------

/** One recorded failure of a key (or of a domain-level state). */
export interface FailureRecord {
  /** Applied time (epoch ms, after clock clamping). */
  ts: number;
  severity: Severity;
  /** 0.5 for invalid_input, 1 otherwise. */
  weight: number;
  sessionId: string;
  /** Agent name of the session (`session.start.agent`, default "default"). */
  agent: string;
  /** Per-state sequence number of the outcome (KeyState.seq after applying it). */
  seq: number;
}

/**
 * The results (successes and failures) of a state inside its kept history, for the failure rate
 * (SPEC 4.2). Every outcome applied to a state is one result and takes the next seq, and the clock
 * clamp keeps their times in order, so times alone are kept: the result at `ts[i]` has seq
 * `firstSeq + i`, and it failed when a FailureRecord has that seq. A hot key under a rate rule
 * keeps tens of thousands of results per window; ~14 bytes each stored, instead of ~46 as records.
 */
export interface ResultLog {
  /** seq of the result at `ts[0]`; EMPTY_LOG_SEQ (never read) while `ts` is empty. */
  firstSeq: number;
  /** Applied time (epoch ms) of each result, oldest first. */
  ts: number[];
}

export interface SessionInfo {
  sessionId: string;
  agent: string;
  startedAt: number | null;
  endedAt: number | null;
}

/** Sessions known to the workspace, for session decay (SPEC 4.2). */
export interface SessionTimeline {
  sessions: Record<string, SessionInfo>;
  /** Start times of the sessions of each agent name. */
  startsByAgent: Record<string, number[]>;
}

export type StateLevel = "key" | "domain" | "tool";

/** The trust state of one failure key, `@domain:<d>` or `@tool:<name>`. */
export interface KeyState {
  failureKey: string;
  toolName: string;
  level: StateLevel;
  state: TrustState;
  consecutiveFailures: number;
  totalCalls: number;
  totalFailures: number;
  lastFailureAt: number | null;
  lastSuccessAt: number | null;
  /** Last applied event time (SPEC 4.4): never goes backwards. */
  clock: number | null;
  /** Number of outcomes applied so far (seq of the last result and its FailureRecord, if it failed). */
  seq: number;
  /** Records with seq ≤ countFromSeq are ignored for counting (set by reset and recovery). */
  countFromSeq: number;
  escalatedAt: number | null;
  escalationReason: string | null;
  escalationExpires: number | null;
  /** Failures (unweighted, in the rule's filter and window) when escalated; grows while escalated. */
  escalationFailureCount: number | null;
  escalationWindowSeconds: number | null;
  /** seq at escalation: failures with a larger seq are "since escalation" (blockThreshold). */
  escalationSeq: number | null;
  recoverySuccesses: number;
  recoveryNeeded: number;
  /** An ask-mode recovery approval was requested for the current recovery. */
  approvalPending: boolean;
  /**
   * Set by a person (keys.setState, SPEC 4.6): the state is theirs, and the engine's transitions
   * leave it as it is until a reset. Absent in states stored before manual states existed.
   */
  manual?: ManualState | null;
}

export interface ManualState {
  by: string;
  reason: string;
  at: number;
}

/** A state with its recent history (at least the rule window and 10 minutes), oldest first. */
export interface KeyContext {
  state: KeyState;
  failures: FailureRecord[];
  results: ResultLog;
}

/**
 * A ResultLog as stored (`key_state.data.results`): each time as its gap from the one before, the
 * first from 0. JSON writes a gap of a busy key in 2–4 digits instead of 13, so a hot key's 36,000
 * results are ~110 KB of text instead of ~500 KB, written by every batch that touches the key.
 * Times that are not whole milliseconds stay a ResultLog (gaps between them would not add up exactly).
 */
export interface StoredResultLog {
  firstSeq: number;
  gaps: number[];
}

/**
 * What a context keeps in `key_state.data` (its state is `.trust`, each failure a `key_failure` row,
 * its result log `key_result_chunk` rows): where the result log begins (EMPTY_LOG_SEQ when empty).
 * Rows in the older whole-log form hold the whole log here instead (`results`), read until the key's
 * next batch rewrites it as chunks.
 */
export type KeyHistory = { resultsFrom: number } | { results: StoredResultLog | ResultLog };

/** A part of a result log as stored: the results whose seqs fall in one chunk (RESULT_CHUNK_SIZE) of the seq range. */
export interface ResultChunk {
  chunk: number;
  log: StoredResultLog | ResultLog;
}

// ---------------------------------------------------------------------------
// Policies (SPEC 4.5): the configuration document's `policies` and `risk_rules`
// ---------------------------------------------------------------------------

export type PolicyDecision = "allow" | "ask" | "deny";

/** An argument pattern: a glob, `{ regex }` (JavaScript syntax, run in linear time) or `{ equals }` (a JSON value). */
export type ArgPattern = string | { regex: string } | { equals: unknown };

export interface Policy {
  name: string;
  /** Case-insensitive glob on the tool name (`*`, `?`). */
  tool: string;
  /** Argument path (dot-separated) → pattern; every listed path must match. */
  args?: Record<string, ArgPattern>;
  decision: PolicyDecision;
  reason?: string;
}

/** `risk_rules` of a configuration document (camelCase). */
export interface RiskRulesConfig {
  enabled?: boolean;
  disabled?: string[];
  shellTools?: string[];
  fileTools?: string[];
}
