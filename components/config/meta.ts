/**
 * Labels, hints and client-side validators for the configuration editors. The validators mirror
 * the engine's zod schema (server/engine/config.ts) so errors show next to a field before saving;
 * the whole document is validated again by the same parser on save.
 */
import { formatDuration } from "@/components/format";
import type { SnakeRule } from "@/server/engine/config";
import { SEVERITIES, type Severity } from "@/server/engine/types";

export type RuleFieldKind = "number" | "int" | "int0" | "rate" | "severities" | "bool";

export interface RuleFieldMeta {
  key: keyof SnakeRule;
  camel: string;
  label: string;
  hint: string;
  kind: RuleFieldKind;
  unit?: string;
}

export const RULE_FIELD_META: RuleFieldMeta[] = [
  { key: "count_threshold", camel: "countThreshold", label: "Count threshold", hint: "Escalate when effective (weighted, decayed) failures in the window reach this", kind: "number", unit: "failures" },
  { key: "consecutive_threshold", camel: "consecutiveThreshold", label: "Consecutive threshold", hint: "Escalate after this many failures in a row (any severity)", kind: "int", unit: "in a row" },
  { key: "rate_threshold", camel: "rateThreshold", label: "Rate threshold", hint: "Escalate when failures ÷ results in the window reach this (0–1, e.g. 0.5 = 50%)", kind: "rate" },
  { key: "rate_min_calls", camel: "rateMinCalls", label: "Rate minimum calls", hint: "The rate is only checked with at least this many results in the window", kind: "int", unit: "results" },
  { key: "window_seconds", camel: "windowSeconds", label: "Window", hint: "Failures older than this do not count", kind: "int", unit: "seconds" },
  { key: "severity_filter", camel: "severityFilter", label: "Severities counted", hint: "Only failures of these severities count towards the count threshold", kind: "severities" },
  { key: "escalation_duration_seconds", camel: "escalationDurationSeconds", label: "Escalation duration", hint: "Minimum time a key stays escalated", kind: "int0", unit: "seconds" },
  { key: "notify_user", camel: "notify", label: "Notify", hint: "Send escalation / recovery messages to the agent", kind: "bool" },
  { key: "cooldown_seconds", camel: "cooldownSeconds", label: "Cooldown", hint: "Quiet time since the last failure before recovery can start", kind: "int0", unit: "seconds" },
  { key: "success_count_to_recover", camel: "successCountToRecover", label: "Successes to recover", hint: "Successes needed in recovering before the key is trusted again", kind: "int", unit: "successes" },
  { key: "block_threshold", camel: "blockThreshold", label: "Block threshold", hint: "While escalated, block the key when effective failures since escalation reach this", kind: "number", unit: "failures" },
];

export const SEVERITY_OPTIONS: readonly Severity[] = SEVERITIES;

/** Validates the text of a numeric rule field; returns an error message or null. Empty = inherit. */
export function validateRuleNumber(kind: RuleFieldKind, text: string): { value?: number; error?: string } {
  const t = text.trim();
  if (t === "") return {};
  const n = Number(t);
  if (!Number.isFinite(n)) return { error: "Enter a number (or leave empty to inherit)" };
  switch (kind) {
    case "number":
      return n > 0 ? { value: n } : { error: "Must be greater than 0" };
    case "int":
      return Number.isInteger(n) && n >= 1 ? { value: n } : { error: "Must be a whole number of at least 1" };
    case "int0":
      return Number.isInteger(n) && n >= 0 ? { value: n } : { error: "Must be a whole number of at least 0" };
    case "rate":
      return n > 0 && n <= 1 ? { value: n } : { error: "Must be greater than 0 and at most 1 (0.5 = 50%)" };
    default:
      return { value: n };
  }
}

/** Short human summary of the fields a rule sets. */
export function ruleSummary(rule: SnakeRule | undefined): string {
  if (!rule) return "—";
  const parts: string[] = [];
  const r = rule as Record<string, unknown>;
  for (const f of RULE_FIELD_META) {
    const v = r[f.key];
    if (v === undefined) continue;
    if (Array.isArray(v)) parts.push(`${f.label.toLowerCase()}: ${v.join(", ") || "none"}`);
    else if (typeof v === "boolean") parts.push(`${f.label.toLowerCase()}: ${v ? "on" : "off"}`);
    else parts.push(`${f.label.toLowerCase()} ${f.unit === "seconds" && typeof v === "number" ? humanSeconds(v) : v}`);
  }
  return parts.length ? parts.join(" · ") : "inherits every field";
}

export function formatRuleValue(meta: RuleFieldMeta, v: unknown): string {
  if (v === undefined || v === null) return meta.key.endsWith("threshold") ? "not used" : "—";
  if (Array.isArray(v)) return v.length ? v.join(", ") : "none";
  if (typeof v === "boolean") return v ? "on" : "off";
  if (meta.kind === "rate" && typeof v === "number") return `${v} (${Math.round(v * 1000) / 10}%)`;
  if (meta.unit === "seconds" && typeof v === "number") return humanSeconds(v, true);
  return String(v);
}

/** 3600 → "1h"; with `exact`, "1h (3600 s)" where the short form hides the stored number. */
export function humanSeconds(v: number, exact = false): string {
  const short = formatDuration(v * 1000);
  return exact && v >= 60 ? `${short} (${v} s)` : short;
}

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

export type SettingSnakeKey =
  | "nudge_level"
  | "nudge_enabled"
  | "recovery_mode"
  | "model_switch_strategy"
  | "pattern_detection_enabled"
  | "blocked_decision"
  | "preferred_models";

export interface SettingMeta {
  key: SettingSnakeKey;
  camel: "nudgeLevel" | "nudgeEnabled" | "recoveryMode" | "modelSwitchStrategy" | "patternDetectionEnabled" | "blockedDecision" | "preferredModels";
  label: string;
  hint: string;
  options?: { value: string; label: string }[];
  kind: "enum" | "bool" | "list";
}

export const SETTING_META: SettingMeta[] = [
  {
    key: "nudge_level",
    camel: "nudgeLevel",
    label: "Nudge level",
    hint: "Caps nudges: off records patterns only; gentle sends everything gently; direct never pauses; interrupt pauses on severe stalls",
    kind: "enum",
    options: [
      { value: "off", label: "off" },
      { value: "gentle", label: "gentle" },
      { value: "direct", label: "direct" },
      { value: "interrupt", label: "interrupt" },
    ],
  },
  { key: "nudge_enabled", camel: "nudgeEnabled", label: "Nudges enabled", hint: "Send nudges to agents at all", kind: "bool" },
  {
    key: "recovery_mode",
    camel: "recoveryMode",
    label: "Recovery mode",
    hint: "auto: a recovered key becomes trusted by itself; ask: a person approves it in Approvals",
    kind: "enum",
    options: [
      { value: "auto", label: "auto" },
      { value: "ask", label: "ask" },
    ],
  },
  {
    key: "model_switch_strategy",
    camel: "modelSwitchStrategy",
    label: "Model switch",
    hint: "disabled, suggest a better model, or instruct the agent to switch (auto)",
    kind: "enum",
    options: [
      { value: "disabled", label: "disabled" },
      { value: "suggest", label: "suggest" },
      { value: "auto", label: "auto" },
    ],
  },
  { key: "pattern_detection_enabled", camel: "patternDetectionEnabled", label: "Pattern detection", hint: "Detect behavioural stalls in sessions", kind: "bool" },
  {
    key: "blocked_decision",
    camel: "blockedDecision",
    label: "Blocked decision",
    hint: "What guard.check answers for a blocked key: ask for approval or deny",
    kind: "enum",
    options: [
      { value: "ask", label: "ask" },
      { value: "deny", label: "deny" },
    ],
  },
  { key: "preferred_models", camel: "preferredModels", label: "Preferred models", hint: "Candidates for model switches, in order of preference (empty: every model seen)", kind: "list" },
];

export function formatSettingValue(v: unknown): string {
  if (Array.isArray(v)) return v.length ? v.join(", ") : "(any model)";
  if (typeof v === "boolean") return v ? "on" : "off";
  if (v === undefined || v === null) return "—";
  return String(v);
}

export const EXTRACTOR_KINDS = [
  { value: "path", label: "path — parent directory of a file path" },
  { value: "url", label: "url — host and first path segment" },
  { value: "command", label: "command — first word of a command" },
  { value: "mcp", label: "mcp — MCP server name" },
  { value: "hash", label: "hash — hash of all arguments" },
] as const;
