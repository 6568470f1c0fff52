/**
 * Walks the registry (server/engine/registry.ts): for every setting, model-switch threshold and rule
 * field, both schemas — camelCase API and snake_case document — accept its default, reject values
 * out of range (naming the field), the document round-trips, the editors have its metadata and
 * docs/configuration.md documents it. A new entry is covered without touching this file.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MODEL_SWITCH_META, RULE_FIELD_META, SETTING_META, fieldError, validateNumberText, type EditorFieldMeta } from "@/components/config/meta";
import { DEFAULT_MODEL_SWITCH, modelSwitchInputSchema, parseConfigDocument, ruleInputSchema, toCamelDocument, toSnakeDocument } from "@/server/engine/config";
import type { FieldSpec } from "@/server/engine/field-spec";
import { MODEL_SWITCH_FIELDS, RULE_FIELD_REGISTRY, SETTINGS, namesOf, type RegistryEntry } from "@/server/engine/registry";
import { BUILTIN_RULE } from "@/server/engine/rules";
import { DEFAULT_SETTINGS, parseSessionSettings, settingsLevelSchema } from "@/server/engine/settings";

/** A value the field accepts (used where the registry has no default, e.g. an optional threshold). */
function validSample(spec: FieldSpec): unknown {
  switch (spec.kind) {
    case "enum":
      return spec.values[spec.values.length - 1];
    case "bool":
      return false;
    case "number":
      return spec.max ?? (spec.minExclusive ? spec.min + 1 : spec.min);
    case "names":
      return ["a", "x".repeat(spec.maxLength)];
    case "severities":
      return ["crash"];
  }
}

/** Values of the wrong type or just outside the accepted range. */
function invalidSamples(spec: FieldSpec): unknown[] {
  switch (spec.kind) {
    case "enum":
      return ["__not_an_option__", spec.values[0].toUpperCase() + "!", 1, true, [spec.values[0]]];
    case "bool":
      return ["true", 1, 0, [true]];
    case "number": {
      const out: unknown[] = [String(spec.min + 1), true, [spec.min + 1]];
      out.push(spec.minExclusive ? spec.min : spec.min - (spec.int ? 1 : 0.001));
      if (spec.max !== undefined) out.push(spec.max + (spec.int ? 1 : 0.001));
      if (spec.int) out.push(spec.min + 1.5);
      return out;
    }
    case "names":
      return [
        "a",
        [""],
        ["x".repeat(spec.maxLength + 1)],
        [1],
        ...(spec.maxItems !== undefined ? [Array.from({ length: spec.maxItems + 1 }, (_, i) => `m${i}`)] : []),
      ];
    case "severities":
      return ["crash", ["__not_a_severity__"], [1]];
  }
}

type Registry = Record<string, RegistryEntry>;
const defaultOf = (entry: RegistryEntry): unknown =>
  "default" in entry ? (entry as { default: unknown }).default : "builtin" in entry ? (entry as { builtin: unknown }).builtin : undefined;

interface Surface {
  name: string;
  registry: Registry;
  /** camelCase API: parses `{ [camel]: value }`; returns the issue paths and messages. */
  camel: (value: Record<string, unknown>) => { ok: boolean; issues: { path: string; message: string }[] };
  /** Wraps one snake_case level into a whole document. */
  document: (level: Record<string, unknown>) => Record<string, unknown>;
  /** The document path prefix of the surface's fields. */
  prefix: string;
  editor: EditorFieldMeta[];
  /** The engine's default object for the surface (built from the registry). */
  defaults: Record<string, unknown>;
}

const zodIssues = (r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) => ({
  ok: r.success,
  issues: (r.error?.issues ?? []).map((i) => ({ path: i.path.map(String).join("."), message: i.message })),
});

const SURFACES: Surface[] = [
  {
    name: "settings",
    registry: SETTINGS,
    camel: (v) => {
      // Both camelCase schemas: the session input (nullable) and a stored level.
      const session = parseSessionSettings(v);
      const level = zodIssues(settingsLevelSchema.safeParse(v));
      expect(session.ok).toBe(level.ok);
      return session.ok ? { ok: true, issues: [] } : { ok: false, issues: session.errors };
    },
    document: (level) => ({ settings: level }),
    prefix: "settings",
    editor: SETTING_META,
    defaults: DEFAULT_SETTINGS as unknown as Record<string, unknown>,
  },
  {
    name: "model switch",
    registry: MODEL_SWITCH_FIELDS,
    camel: (v) => zodIssues(modelSwitchInputSchema.safeParse(v)),
    document: (level) => ({ model_switch: level }),
    prefix: "model_switch",
    editor: MODEL_SWITCH_META,
    defaults: DEFAULT_MODEL_SWITCH as unknown as Record<string, unknown>,
  },
  {
    name: "rule fields",
    registry: RULE_FIELD_REGISTRY,
    camel: (v) => zodIssues(ruleInputSchema.safeParse(v)),
    document: (level) => ({ default_rule: level, tool_rules: { bash: level } }),
    prefix: "default_rule",
    editor: RULE_FIELD_META,
    defaults: BUILTIN_RULE as unknown as Record<string, unknown>,
  },
];

const CONFIGURATION_DOC = readFileSync(path.resolve(import.meta.dirname, "../../docs/configuration.md"), "utf8");

describe.each(SURFACES)("registry: $name", (s) => {
  const names = namesOf(s.registry);

  it("has entries with distinct camelCase and snake_case names", () => {
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names.map((n) => s.registry[n]!.snake)).size).toBe(names.length);
  });

  it.each(names)("%s: both schemas accept the default (or a valid value) and the document round-trips", (name) => {
    const entry = s.registry[name]!;
    const value = defaultOf(entry) ?? validSample(entry.spec);
    expect(s.camel({ [name]: value })).toEqual({ ok: true, issues: [] });
    const doc = s.document({ [entry.snake]: value });
    const parsed = parseConfigDocument(doc);
    expect(parsed).toMatchObject({ ok: true });
    if (!parsed.ok) return;
    expect(toSnakeDocument(parsed.doc)).toEqual(doc);
    expect(toCamelDocument(doc as never)).toEqual(parsed.doc);
    // The engine's defaults object is built from the registry.
    expect(s.defaults[name]).toEqual(defaultOf(entry));
  });

  it.each(names)("%s: both schemas reject out-of-range and mistyped values, naming the field", (name) => {
    const entry = s.registry[name]!;
    for (const bad of invalidSamples(entry.spec)) {
      const camel = s.camel({ [name]: bad });
      expect(camel.ok, `${name} = ${JSON.stringify(bad)?.slice(0, 60)} (camelCase)`).toBe(false);
      expect(camel.issues[0]!.path.split(".")[0]).toBe(name);
      expect(camel.issues[0]!.message).toContain(name);

      const snake = parseConfigDocument(s.document({ [entry.snake]: bad }));
      expect(snake.ok, `${entry.snake} = ${JSON.stringify(bad)?.slice(0, 60)} (document)`).toBe(false);
      if (snake.ok) continue;
      const fieldPath = `${s.prefix}.${entry.snake}`;
      const issue = snake.issues.find((i) => i.path.startsWith(fieldPath));
      expect(issue, `issues: ${JSON.stringify(snake.issues)}`).toBeDefined();
      expect(issue!.message).toContain(fieldPath);
    }
  });

  it.each(names)("%s: the editor has its metadata and docs/configuration.md documents it", (name) => {
    const entry = s.registry[name]!;
    const meta = s.editor.find((m) => m.camel === name);
    expect(meta).toBeDefined();
    expect(meta!.key).toBe(entry.snake);
    expect(meta!.label.trim()).not.toBe("");
    expect(meta!.hint.trim()).not.toBe("");
    const spec = entry.spec;
    if (spec.kind === "enum") expect(meta!.options?.map((o) => o.value)).toEqual([...spec.values]);
    if (spec.kind === "number") {
      expect(meta!.kind).toBe("number");
      expect(meta!.min).toBe(spec.min);
      expect(meta!.max).toBe(spec.max);
      // The editor's validator is the field's own schema: out-of-range text shows an error, valid text a value.
      for (const bad of invalidSamples(spec).filter((v): v is number => typeof v === "number")) {
        expect(validateNumberText(meta!, String(bad)).error).toMatch(/^Must be /);
      }
      expect(validateNumberText(meta!, String(validSample(spec)))).toEqual({ value: validSample(spec) });
      expect(validateNumberText(meta!, "")).toEqual({});
    } else {
      expect(fieldError(meta!, validSample(spec))).toBeNull();
    }
    expect(CONFIGURATION_DOC).toMatch(new RegExp(`\`[a-z_.]*\\b${entry.snake}\``));
  });

  it("the editor lists exactly the registry's fields, in order", () => {
    expect(s.editor.map((m) => m.camel)).toEqual(names);
  });
});
