/**
 * The registry of every setting (SPEC 6), model-switch threshold (SPEC 6) and rule field
 * (SPEC 4.1): one entry each, from which everything else is derived — the TypeScript value types
 * (types.ts), the built-in defaults, the camelCase API schema (settings.ts), the snake_case
 * document schema and key mapping (config.ts) and the dashboard editors' labels, help, units and
 * ranges (components/config/meta.ts). Adding a setting is one entry here (plus the README).
 * Plain data + zod; pure.
 */
import { z } from "zod";
import { fieldSchema, type FieldSpec, type ValueOf } from "./field-spec";
import { NUDGE_LEVELS } from "./vocabulary";

/** What the dashboard shows next to a field. */
export interface FieldLabels {
  label: string;
  /** One sentence under / beside the field. */
  help: string;
  /** Unit shown after the value ("seconds", "failures"). */
  unit?: string;
}

export interface RegistryEntry<N extends string = string, S extends FieldSpec = FieldSpec> extends FieldLabels {
  /** The key in the snake_case document (`.jaato/reliability.json`); the registry key is the camelCase name. */
  snake: N;
  spec: S;
}

export interface SettingEntry<N extends string = string, S extends FieldSpec = FieldSpec> extends RegistryEntry<N, S> {
  default: ValueOf<S>;
}

export interface RuleFieldEntry<N extends string = string, S extends FieldSpec = FieldSpec> extends RegistryEntry<N, S> {
  /** The built-in default rule's value; absent: unset (a threshold that is not used). */
  builtin?: ValueOf<S>;
}

// `const` type parameters keep enum values and snake names literal, so the types below are exact.
function setting<const N extends string, const S extends FieldSpec>(e: SettingEntry<N, S>): SettingEntry<N, S> {
  return e;
}
function ruleField<const N extends string, const S extends FieldSpec>(e: RuleFieldEntry<N, S>): RuleFieldEntry<N, S> {
  return e;
}

const positiveCount = { kind: "number", int: true, min: 1 } as const;
const seconds = { kind: "number", int: true, min: 0 } as const;

// ---------------------------------------------------------------------------
// Settings (SPEC 6): session > workspace > organization > default
// ---------------------------------------------------------------------------

export const SETTINGS = {
  nudgeLevel: setting({
    snake: "nudge_level",
    label: "Nudge level",
    help: "Caps nudges: off records patterns only; gentle sends everything gently; direct never pauses; interrupt pauses on severe stalls",
    spec: { kind: "enum", values: NUDGE_LEVELS },
    default: "interrupt",
  }),
  nudgeEnabled: setting({
    snake: "nudge_enabled",
    label: "Nudges enabled",
    help: "Send nudges to agents at all",
    spec: { kind: "bool" },
    default: true,
  }),
  recoveryMode: setting({
    snake: "recovery_mode",
    label: "Recovery mode",
    help: "auto: a recovered key becomes trusted by itself; ask: a person approves it in Approvals",
    spec: { kind: "enum", values: ["auto", "ask"] },
    default: "auto",
  }),
  modelSwitchStrategy: setting({
    snake: "model_switch_strategy",
    label: "Model switch",
    help: "disabled, suggest a better model, or instruct the agent to switch (auto)",
    spec: { kind: "enum", values: ["disabled", "suggest", "auto"] },
    default: "suggest",
  }),
  patternDetectionEnabled: setting({
    snake: "pattern_detection_enabled",
    label: "Pattern detection",
    help: "Detect behavioural stalls in sessions",
    spec: { kind: "bool" },
    default: true,
  }),
  blockedDecision: setting({
    snake: "blocked_decision",
    label: "Blocked decision",
    help: "What guard.check answers for a blocked key: ask for approval or deny",
    spec: { kind: "enum", values: ["ask", "deny"] },
    default: "ask",
  }),
  enforcement: setting({
    snake: "enforcement",
    label: "Enforcement",
    help: "enforce: guard.check answers as decided; watch: it always answers allow and reports what it would have decided (wouldDecide)",
    spec: { kind: "enum", values: ["enforce", "watch"] },
    default: "enforce",
  }),
  maxToolCallsPerSession: setting({
    snake: "max_tool_calls_per_session",
    label: "Tool-call budget",
    help: "Tool calls a session may make; the call beyond it pauses the session (empty: no budget)",
    unit: "calls",
    spec: { kind: "number", int: true, min: 1, nullable: true },
    default: null,
  }),
  openCallSeconds: setting({
    snake: "open_call_seconds",
    label: "Open call after",
    help: "A tool call without a result for this long shows as an open call",
    unit: "seconds",
    spec: positiveCount,
    default: 600,
  }),
  sessionIdleMinutes: setting({
    snake: "session_idle_minutes",
    label: "Idle after",
    help: "A session with no event for this long shows as idle",
    unit: "minutes",
    spec: positiveCount,
    default: 30,
  }),
  preferredModels: setting({
    snake: "preferred_models",
    label: "Preferred models",
    help: "Candidates for model switches, in order of preference (empty: every model seen)",
    spec: { kind: "names", noun: "model names", maxLength: 256, maxItems: 100 },
    default: [],
  }),
};

export type SettingName = keyof typeof SETTINGS;
export type RegistrySettingValues = { [K in SettingName]: ValueOf<(typeof SETTINGS)[K]["spec"]> };
export type SnakeSettings = { [K in SettingName as (typeof SETTINGS)[K]["snake"]]?: RegistrySettingValues[K] };

// ---------------------------------------------------------------------------
// Model-switch thresholds (SPEC 6 "Model switch"): workspace > organization > default
// ---------------------------------------------------------------------------

export const MODEL_SWITCH_FIELDS = {
  failureThreshold: setting({
    snake: "failure_threshold",
    label: "Failure threshold",
    help: "Failures of the current model on a key before a switch is considered",
    unit: "failures",
    spec: positiveCount,
    default: 3,
  }),
  minSuccessRateDiff: setting({
    snake: "min_success_rate_diff",
    label: "Minimum success-rate gain",
    help: "How much better the candidate must be",
    spec: { kind: "number", int: false, min: 0, max: 1 },
    default: 0.3,
  }),
  minAttempts: setting({
    snake: "min_attempts",
    label: "Minimum attempts",
    help: "Attempts a candidate needs on the key to be trusted",
    unit: "attempts",
    spec: positiveCount,
    default: 3,
  }),
};

export type ModelSwitchField = keyof typeof MODEL_SWITCH_FIELDS;
export type RegistryModelSwitchConfig = { [K in ModelSwitchField]: ValueOf<(typeof MODEL_SWITCH_FIELDS)[K]["spec"]> };
export type SnakeModelSwitch = {
  [K in ModelSwitchField as (typeof MODEL_SWITCH_FIELDS)[K]["snake"]]?: RegistryModelSwitchConfig[K];
};

// ---------------------------------------------------------------------------
// Rule fields (SPEC 4.1): tool > domain > plugin > workspace default > organization default > built-in
// ---------------------------------------------------------------------------

export const RULE_FIELD_REGISTRY = {
  countThreshold: ruleField({
    snake: "count_threshold",
    label: "Count threshold",
    help: "Escalate when effective (weighted, decayed) failures in the window reach this",
    unit: "failures",
    spec: { kind: "number", int: false, min: 0, minExclusive: true },
    builtin: 3,
  }),
  consecutiveThreshold: ruleField({
    snake: "consecutive_threshold",
    label: "Consecutive threshold",
    help: "Escalate after this many failures in a row (any severity)",
    unit: "in a row",
    spec: positiveCount,
  }),
  rateThreshold: ruleField({
    snake: "rate_threshold",
    label: "Rate threshold",
    help: "Escalate when failures ÷ results in the window reach this (0–1, e.g. 0.5 = 50%)",
    spec: { kind: "number", int: false, min: 0, minExclusive: true, max: 1 },
  }),
  rateMinCalls: ruleField({
    snake: "rate_min_calls",
    label: "Rate minimum calls",
    help: "The rate is only checked with at least this many results in the window",
    unit: "results",
    spec: positiveCount,
    builtin: 4,
  }),
  windowSeconds: ruleField({
    snake: "window_seconds",
    label: "Window",
    help: "Failures older than this do not count",
    unit: "seconds",
    spec: positiveCount,
    builtin: 3600,
  }),
  severityFilter: ruleField({
    snake: "severity_filter",
    label: "Severities counted",
    help: "Only failures of these severities count towards the count threshold",
    spec: { kind: "severities" },
    builtin: ["server_error", "crash", "security"],
  }),
  escalationDurationSeconds: ruleField({
    snake: "escalation_duration_seconds",
    label: "Escalation duration",
    help: "Minimum time a key stays escalated",
    unit: "seconds",
    spec: seconds,
    builtin: 1800,
  }),
  notify: ruleField({
    snake: "notify_user",
    label: "Notify",
    help: "Send escalation / recovery messages to the agent",
    spec: { kind: "bool" },
    builtin: true,
  }),
  cooldownSeconds: ruleField({
    snake: "cooldown_seconds",
    label: "Cooldown",
    help: "Quiet time since the last failure before recovery can start",
    unit: "seconds",
    spec: seconds,
    builtin: 900,
  }),
  successCountToRecover: ruleField({
    snake: "success_count_to_recover",
    label: "Successes to recover",
    help: "Successes needed in recovering before the key is trusted again",
    unit: "successes",
    spec: positiveCount,
    builtin: 3,
  }),
  blockThreshold: ruleField({
    snake: "block_threshold",
    label: "Block threshold",
    help: "While escalated, block the key when effective failures since escalation reach this",
    unit: "failures",
    spec: { kind: "number", int: false, min: 0, minExclusive: true },
  }),
};

export type RuleFieldName = keyof typeof RULE_FIELD_REGISTRY;
/** A rule as written at one level: every field optional (unset = inherit). */
export type RegistryRuleInput = { [K in RuleFieldName]?: ValueOf<(typeof RULE_FIELD_REGISTRY)[K]["spec"]> };
export type SnakeRule = { [K in RuleFieldName as (typeof RULE_FIELD_REGISTRY)[K]["snake"]]?: RegistryRuleInput[K] };

// ---------------------------------------------------------------------------
// Derivations shared by settings.ts and config.ts
// ---------------------------------------------------------------------------

type AnyRegistry = Record<string, RegistryEntry>;

/** The registry's camelCase names, in registry order. */
export function namesOf<R extends AnyRegistry>(registry: R): Array<keyof R & string> {
  return Object.keys(registry) as Array<keyof R & string>;
}

/** [snake_case, camelCase] key pairs for converting documents. */
export function snakeCamelPairs<R extends AnyRegistry>(registry: R): Array<readonly [string, keyof R & string]> {
  return namesOf(registry).map((camel) => [registry[camel]!.snake, camel] as const);
}

/** Every entry's default value (`default` for settings, `builtin` for rule fields that have one). */
export function defaultsOf<R extends Record<string, SettingEntry>>(registry: R): { [K in keyof R]: R[K]["default"] } {
  const out: Record<string, unknown> = {};
  for (const name of namesOf(registry)) out[name] = copyValue(registry[name]!.default);
  return out as { [K in keyof R]: R[K]["default"] };
}

/**
 * A strict zod object over the registry: keys camelCase (`"camel"`, messages name the camelCase
 * field) or snake_case (`"snake"`, messages start with "must be" and the document parser prefixes
 * the path). `wrap` makes each field optional / nullable as the caller needs.
 */
export function registryObjectSchema<R extends AnyRegistry>(
  registry: R,
  keys: "camel" | "snake",
  wrap: (field: z.ZodType) => z.ZodType,
  params?: Parameters<typeof z.strictObject>[1],
) {
  const shape: Record<string, z.ZodType> = {};
  for (const camel of namesOf(registry)) {
    const entry = registry[camel]!;
    shape[keys === "camel" ? camel : entry.snake] = wrap(fieldSchema(entry.spec, keys === "camel" ? camel : undefined));
  }
  return z.strictObject(shape, params);
}

function copyValue<V>(v: V): V {
  return (Array.isArray(v) ? [...v] : v) as V;
}
