/**
 * The configuration editors' view of the registry (server/engine/registry.ts): labels, help,
 * units, ranges and input kinds of every rule field, setting and model-switch threshold, and the
 * client-side validators — the registry's own zod schemas, so an error shows next to a field
 * before saving with the server's rule. The whole document is validated again on save.
 */
import { formatDuration } from "@/components/format";
import { fieldSchema, type FieldSpec } from "@/server/engine/field-spec";
import {
  MODEL_SWITCH_FIELDS,
  RULE_FIELD_REGISTRY,
  SETTINGS,
  namesOf,
  type ModelSwitchField,
  type RegistryEntry,
  type RuleFieldName,
  type SettingName,
  type SnakeModelSwitch,
  type SnakeRule,
  type SnakeSettings,
} from "@/server/engine/registry";
import { SEVERITIES, type Severity } from "@/server/engine/types";

/** How the editor shows a field: a select of options, on/off, a number box, a list box, severity checkboxes. */
export type FieldKind = "enum" | "bool" | "number" | "list" | "severities";

export interface EditorFieldMeta<K extends string = string, C extends string = string> {
  /** snake_case document key. */
  key: K;
  /** camelCase name (API, engine). */
  camel: C;
  label: string;
  hint: string;
  unit?: string;
  kind: FieldKind;
  spec: FieldSpec;
  /** Number fields: the accepted range and the input's step. */
  min?: number;
  max?: number;
  step?: number;
  /** A number between 0 and 1 shown with its percentage. */
  ratio?: boolean;
  /** Enum fields. */
  options?: { value: string; label: string }[];
}

const KIND_OF: Record<FieldSpec["kind"], FieldKind> = { enum: "enum", bool: "bool", number: "number", names: "list", severities: "severities" };

/** Editor metadata of one registry entry. */
function editorMeta<C extends string>(camel: C, entry: RegistryEntry): EditorFieldMeta<string, C> {
  const spec = entry.spec;
  const meta: EditorFieldMeta<string, C> = { key: entry.snake, camel, label: entry.label, hint: entry.help, unit: entry.unit, kind: KIND_OF[spec.kind], spec };
  if (spec.kind === "number") {
    meta.min = spec.min;
    meta.max = spec.max;
    meta.ratio = !spec.int && spec.max === 1;
    meta.step = spec.int ? 1 : meta.ratio ? 0.05 : 0.5;
  }
  if (spec.kind === "enum") meta.options = spec.values.map((v) => ({ value: v, label: v }));
  return meta;
}

export type RuleFieldMeta = EditorFieldMeta<keyof SnakeRule & string, RuleFieldName>;
export type SettingMeta = EditorFieldMeta<keyof SnakeSettings & string, SettingName>;
export type ModelSwitchMeta = EditorFieldMeta<keyof SnakeModelSwitch & string, ModelSwitchField>;

export const RULE_FIELD_META = namesOf(RULE_FIELD_REGISTRY).map((n) => editorMeta(n, RULE_FIELD_REGISTRY[n])) as RuleFieldMeta[];
export const SETTING_META = namesOf(SETTINGS).map((n) => editorMeta(n, SETTINGS[n])) as SettingMeta[];
export const MODEL_SWITCH_META = namesOf(MODEL_SWITCH_FIELDS).map((n) => editorMeta(n, MODEL_SWITCH_FIELDS[n])) as ModelSwitchMeta[];

export const SEVERITY_OPTIONS: readonly Severity[] = SEVERITIES;

/**
 * Validates the text of a number field with the field's own schema; empty = inherit (no value,
 * no error). The message is the schema's ("Must be greater than 0").
 */
export function validateNumberText(meta: EditorFieldMeta, text: string): { value?: number; error?: string } {
  const t = text.trim();
  if (t === "") return {};
  const n = Number(t);
  if (!Number.isFinite(n)) return { error: "Enter a number (or leave empty to inherit)" };
  const error = fieldError(meta, n);
  return error ? { error } : { value: n };
}

/**
 * Ratio fields (0–1, `meta.ratio`) that an editor shows as a percentage: the stored value stays a
 * fraction. 0.3 → "30"; no value → "".
 */
export function ratioToPercentText(v: number | undefined): string {
  return v === undefined ? "" : String(Math.round(v * 1e6) / 1e4);
}

/** The text of a percent input → the fraction to store ("30" → 0.3), checked with the field's own schema. */
export function validatePercentText(meta: EditorFieldMeta, text: string): { value?: number; error?: string } {
  const t = text.trim();
  if (t === "") return {};
  const n = Number(t);
  if (!Number.isFinite(n)) return { error: "Enter a percentage (or leave empty to inherit)" };
  const value = Math.round(n * 1e4) / 1e6;
  return fieldError(meta, value) ? { error: `Enter a percentage from ${(meta.min ?? 0) * 100} to ${(meta.max ?? 1) * 100}` } : { value };
}

/** The field's schema error for a value ("Must be greater than 0"), or null when it is valid. */
export function fieldError(meta: EditorFieldMeta, value: unknown): string | null {
  const r = fieldSchema(meta.spec).safeParse(value);
  if (r.success) return null;
  const message = r.error.issues[0]?.message ?? "Invalid value";
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/** Digits shown for a field without an upper bound: a ten-digit count. */
const UNBOUNDED_DIGITS = 10;

/**
 * How many characters a number field's input must show: its largest allowed value's, from the
 * registry's range (a percentage field: up to 100 with two decimals), with room for a fraction
 * when the value need not be whole; a field without a maximum gets ten digits.
 */
export function numberFieldChars(meta: EditorFieldMeta): number {
  if (meta.kind !== "number") return 0;
  if (meta.ratio) return String(Math.round((meta.max ?? 1) * 100)).length + 3;
  const whole = meta.max !== undefined ? String(Math.trunc(meta.max)).length : UNBOUNDED_DIGITS;
  const negative = (meta.min ?? 0) < 0 ? 1 : 0;
  const spec = meta.spec;
  return whole + negative + (spec.kind === "number" && !spec.int ? 3 : 0);
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
  if (meta.ratio && typeof v === "number") return `${v} (${Math.round(v * 1000) / 10}%)`;
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
