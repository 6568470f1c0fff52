/**
 * The workspace/organization configuration document (SPEC 7.2): the seed's
 * `.jaato/reliability.json` format (snake_case) <-> ConfigDocument (camelCase), its zod v4 schema
 * and the merge into an EffectiveConfig. Pure.
 */
import { z } from "zod";
import { DEFAULT_SECURITY_PATTERNS } from "./classify";
import { POLICY_DECISIONS, type ArgPattern, type Policy, type RiskRulesConfig } from "./policies";
import { RISK_RULE_NAMES } from "./risk-rules";
import { MAX_REGEX_LENGTH, checkRegexSafe, compileGlob } from "./safe-pattern";
import { STALL_PATTERNS } from "./stall-patterns";
import {
  MODEL_SWITCH_FIELDS,
  RULE_FIELD_REGISTRY,
  SETTINGS,
  defaultsOf,
  registryObjectSchema,
  snakeCamelPairs,
  type SnakeModelSwitch,
  type SnakeRule,
  type SnakeSettings,
} from "./registry";
import {
  PATTERN_TYPES,
  type ConfigDocument,
  type EffectiveConfig,
  type Extractor,
  type ModelSwitchConfig,
  type PatternConfig,
  type PatternThresholds,
  type PatternType,
  type RuleInput,
  type SettingValues,
} from "./types";

// ---------------------------------------------------------------------------
// Built-in defaults
// ---------------------------------------------------------------------------

/** SPEC 5 (revision 2) defaults: tool classes, announce phrases, volatile argument fields, severity ladders. */
export const DEFAULT_PATTERN_CONFIG: PatternConfig = {
  introspectionTools: ["list_tools", "get_tool_schemas", "askPermission"],
  readOnlyTools: [
    "readFile", "list_tools", "get_tool_schemas", "glob", "grep",
    "Read", "Glob", "Grep", "LS", "read_file", "list_files", "search_files",
  ],
  actionTools: [
    "writeFile", "updateFile", "bash", "removeFile", "Write", "Edit", "MultiEdit", "Bash",
    "execute_bash", "terminal", "execute_command", "write_to_file", "replace_in_file", "str_replace_editor",
  ],
  announcePhrases: ["proceeding now", "let me", "i'll now", "executing", "running", "starting", "proceeding"],
  volatileArgFields: ["description", "task_progress", "timeout", "request_id"],
  // Each pattern's built-in ladder, in table order (server/engine/stall-patterns/).
  thresholds: Object.fromEntries(STALL_PATTERNS.map((p) => [p.name, { ...p.ladder }])) as Record<PatternType, PatternThresholds>,
};

export const DEFAULT_MODEL_SWITCH: ModelSwitchConfig = defaultsOf(MODEL_SWITCH_FIELDS);
export const DEFAULT_RETENTION_DAYS = 30;

// ---------------------------------------------------------------------------
// Schema (snake_case document)
// ---------------------------------------------------------------------------

const positiveInt = z.number().int().positive();

/** One rule (snake_case), every field optional; fields and ranges come from the registry. */
const ruleSchema = registryObjectSchema(RULE_FIELD_REGISTRY, "snake", (f) => f.optional()) as unknown as z.ZodType<SnakeRule>;

const name = z.string().min(1).max(256);
const ruleMap = z.record(name, ruleSchema);

/** camelCase views of the same fields (a stored ConfigDocument's rules and model-switch values). */
export const ruleInputSchema = registryObjectSchema(RULE_FIELD_REGISTRY, "camel", (f) => f.optional()) as unknown as z.ZodType<RuleInput>;
export const modelSwitchInputSchema = registryObjectSchema(MODEL_SWITCH_FIELDS, "camel", (f) => f.optional()) as unknown as z.ZodType<
  Partial<ModelSwitchConfig>
>;

const settingsSchema = registryObjectSchema(SETTINGS, "snake", (f) => f.optional()) as unknown as z.ZodType<SnakeSettings>;

const modelSwitchSchema = registryObjectSchema(MODEL_SWITCH_FIELDS, "snake", (f) => f.optional()) as unknown as z.ZodType<SnakeModelSwitch>;

const ladderSchema = z
  .object({ minor: positiveInt.optional(), moderate: positiveInt.optional(), severe: positiveInt.optional() })
  .strict()
  .superRefine((l, ctx) => {
    // Non-decreasing (SPEC 5.1): equal levels reach the higher severity directly; a decrease is refused.
    if (l.minor !== undefined && l.moderate !== undefined && l.minor > l.moderate)
      ctx.addIssue({ code: "custom", path: ["moderate"], message: "moderate must be at least minor" });
    if (l.moderate !== undefined && l.severe !== undefined && l.moderate > l.severe)
      ctx.addIssue({ code: "custom", path: ["severe"], message: "severe must be at least moderate" });
    if (l.minor !== undefined && l.severe !== undefined && l.moderate === undefined && l.minor > l.severe)
      ctx.addIssue({ code: "custom", path: ["severe"], message: "severe must be at least minor" });
  });

const toolList = z.array(z.string().min(1).max(256));

const patternsShape: Record<string, z.ZodType> = {
  introspection_tools: toolList.optional(),
  read_only_tools: toolList.optional(),
  action_tools: toolList.optional(),
  announce_phrases: z.array(z.string().min(1).max(256)).optional(),
  volatile_arg_fields: z.array(z.string().min(1).max(256)).max(100).optional(),
};
for (const p of PATTERN_TYPES) patternsShape[p] = ladderSchema.optional();
const patternsSchema = z.object(patternsShape).strict();

const extractorSchema = z
  .object({
    tool: z.string().min(1).max(256),
    kind: z.enum(["path", "url", "command", "mcp", "hash"]),
    field: z.string().max(256),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.kind !== "hash" && e.field.trim() === "")
      ctx.addIssue({ code: "custom", path: ["field"], message: `field is required for kind '${e.kind}'` });
  });

/** Most security patterns one document may hold: each is a pass over a failed command. */
const MAX_SECURITY_PATTERNS = 64;

// Checked at save time for what linear-time matching runs (safe-pattern.ts): valid JavaScript
// syntax, no lookaround or backreference, at most 512 characters.
const securityPatternsSchema = z
  .array(z.string().min(1))
  .max(MAX_SECURITY_PATTERNS)
  .superRefine((arr, ctx) => {
    arr.forEach((p, i) => {
      const problem = checkRegexSafe(p);
      if (problem !== null) ctx.addIssue({ code: "custom", path: [i], message: `security_patterns[${i}] ${problem}` });
    });
  });

/** SPEC 4.5: the longest glob or regular expression a policy may hold. */
const MAX_POLICY_PATTERN_LENGTH = MAX_REGEX_LENGTH;

function globProblem(glob: string): string | null {
  try {
    compileGlob(glob, { star: "path" });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why a policy's regular expression cannot be used (invalid, or beyond linear-time matching), else null. */
function regexProblem(source: string): string | null {
  try {
    return checkRegexSafe(source);
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * An argument pattern: a glob string, `{ "regex": … }` or `{ "equals": <JSON> }`. Checked by hand
 * rather than as a union so that an issue names the exact field (`…args.command.regex`).
 */
const argPatternSchema = z.unknown().superRefine((v, ctx) => {
  const tooLong = `must be at most ${MAX_POLICY_PATTERN_LENGTH} characters`;
  if (typeof v === "string") {
    if (v.length === 0) ctx.addIssue({ code: "custom", message: "must be a non-empty glob" });
    else if (v.length > MAX_POLICY_PATTERN_LENGTH) ctx.addIssue({ code: "custom", message: tooLong });
    else {
      const problem = globProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: `is not a valid glob: ${problem}` });
    }
    return;
  }
  const keys = v && typeof v === "object" && !Array.isArray(v) ? Object.keys(v) : null;
  if (keys?.length === 1 && keys[0] === "regex") {
    const source = (v as { regex: unknown }).regex;
    if (typeof source !== "string" || source.length === 0) ctx.addIssue({ code: "custom", path: ["regex"], message: "must be a non-empty regular expression" });
    else if (source.length > MAX_POLICY_PATTERN_LENGTH) ctx.addIssue({ code: "custom", path: ["regex"], message: tooLong });
    else {
      const problem = regexProblem(source);
      if (problem) ctx.addIssue({ code: "custom", path: ["regex"], message: problem });
    }
    return;
  }
  if (keys?.length === 1 && keys[0] === "equals") return;
  ctx.addIssue({ code: "custom", message: 'must be a glob string, { "regex": "…" } or { "equals": <JSON value> }' });
}) as unknown as z.ZodType<ArgPattern>;

const argPathSchema = z
  .string()
  .min(1)
  .max(256)
  .refine((p) => p.split(".").every((seg) => seg !== ""), "must be dot-separated names (no empty part)");

const policySchema = z
  .object({
    name: z.string().regex(/^[a-z0-9_.-]{1,64}$/, "must be 1–64 characters of a-z, 0-9, _ . -"),
    tool: z
      .string()
      .min(1)
      .max(256)
      .superRefine((g, ctx) => {
        const problem = globProblem(g);
        if (problem) ctx.addIssue({ code: "custom", message: `is not a valid glob: ${problem}` });
      }),
    args: z.record(argPathSchema, argPatternSchema).optional(),
    decision: z.enum(POLICY_DECISIONS),
    reason: z.string().min(1).max(1000).optional(),
  })
  .strict();

const policiesSchema = z
  .array(policySchema)
  .max(500)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((p, i) => {
      if (seen.has(p.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `policy name '${p.name}' is used twice (names are unique in a document)` });
      seen.add(p.name);
    });
  });

const riskRulesSchema = z
  .object({
    enabled: z.boolean().optional(),
    disabled: z.array(z.enum(RISK_RULE_NAMES as [string, ...string[]])).max(100).optional(),
    shell_tools: toolList.max(200).optional(),
    file_tools: toolList.max(200).optional(),
  })
  .strict();

const configDocumentSchema = z
  .object({
    default_rule: ruleSchema.optional(),
    plugin_rules: ruleMap.optional(),
    tool_rules: ruleMap.optional(),
    domain_rules: ruleMap.optional(),
    settings: settingsSchema.optional(),
    model_switch: modelSwitchSchema.optional(),
    patterns: patternsSchema.optional(),
    extractors: z.array(extractorSchema).max(200).optional(),
    security_patterns: securityPatternsSchema.optional(),
    retention_days: z.number().int().min(1).max(3650).optional(),
    policies: policiesSchema.optional(),
    risk_rules: riskRulesSchema.optional(),
    // The seed's own global settings (its ReliabilityConfig): accepted so its file imports as it is.
    enable_auto_recovery: z.boolean().optional(),
    persist_across_sessions: z.boolean().optional(),
    max_history_entries: z.number().int().min(0).optional(),
  })
  .strict();

export type { SnakeRule } from "./registry";
export interface SnakeConfigDocument {
  default_rule?: SnakeRule;
  plugin_rules?: Record<string, SnakeRule>;
  tool_rules?: Record<string, SnakeRule>;
  domain_rules?: Record<string, SnakeRule>;
  settings?: SnakeSettings;
  model_switch?: SnakeModelSwitch;
  patterns?: {
    introspection_tools?: string[];
    read_only_tools?: string[];
    action_tools?: string[];
    announce_phrases?: string[];
    volatile_arg_fields?: string[];
  } & { [K in PatternType]?: Partial<PatternThresholds> };
  extractors?: Extractor[];
  security_patterns?: string[];
  retention_days?: number;
  policies?: Policy[];
  risk_rules?: { enabled?: boolean; disabled?: string[]; shell_tools?: string[]; file_tools?: string[] };
  /** Seed fields, read on import and not stored (see seedFieldWarnings). */
  enable_auto_recovery?: boolean;
  persist_across_sessions?: boolean;
  max_history_entries?: number;
}

export interface ConfigIssue {
  /** Display path (`tool_rules.bash.rate_threshold`, `extractors[0].field`). */
  path: string;
  message: string;
  /** The same path as segments (a rule name may contain dots: `domain_rules`, `api.example.com`). */
  segments?: (string | number)[];
  /** zod's issue code, or `custom`. */
  code?: string;
}
/** `warnings`: fields accepted but not used as they are (the seed's own settings), present only when there are some. */
export type ParseConfigResult = { ok: true; doc: ConfigDocument; warnings?: ConfigIssue[] } | { ok: false; issues: ConfigIssue[] };

/** Display path of segments: numbers are list indexes (`extractors[0].field`). */
export function pathString(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** Validates a snake_case document (unknown fields are errors naming their path). */
export function parseConfigDocument(json: unknown): ParseConfigResult {
  // "__proto__" cannot be kept as a plain-object key (zod drops it silently): refuse it by name.
  if (json && typeof json === "object") {
    for (const map of ["plugin_rules", "tool_rules", "domain_rules"]) {
      const m = (json as Record<string, unknown>)[map];
      if (m && typeof m === "object" && Object.prototype.hasOwnProperty.call(m, "__proto__")) {
        return {
          ok: false,
          issues: [{ path: `${map}.__proto__`, message: `${map}.__proto__: "__proto__" is not allowed as a rule name`, segments: [map, "__proto__"], code: "custom" }],
        };
      }
    }
  }
  const r = configDocumentSchema.safeParse(json);
  if (!r.success) {
    const issues: ConfigIssue[] = [];
    for (const issue of r.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const k of issue.keys) {
          const segments = [...issue.path, k].map((x) => (typeof x === "number" ? x : String(x)));
          const p = pathString(segments);
          issues.push({ path: p, message: `Unknown field '${p}'`, segments, code: issue.code });
        }
      } else {
        const segments = issue.path.map((x) => (typeof x === "number" ? x : String(x)));
        const p = pathString(segments);
        issues.push({ path: p, message: p ? `${p}: ${issue.message}` : issue.message, segments, code: issue.code });
      }
    }
    return { ok: false, issues };
  }
  const data = r.data as SnakeConfigDocument;
  const warnings = seedFieldWarnings(data);
  return warnings.length ? { ok: true, doc: toCamelDocument(data), warnings } : { ok: true, doc: toCamelDocument(data) };
}

/**
 * The seed's global settings: `enable_auto_recovery` becomes `settings.recovery_mode` (in
 * toCamelDocument); `persist_across_sessions` and `max_history_entries` have no equivalent and
 * are ignored, each with a warning.
 */
function seedFieldWarnings(s: SnakeConfigDocument): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const warn = (field: string, message: string) => out.push({ path: field, segments: [field], message: `${field}: ${message}`, code: "ignored" });
  if (s.enable_auto_recovery !== undefined && s.settings?.recovery_mode !== undefined && s.settings.recovery_mode !== (s.enable_auto_recovery ? "auto" : "ask"))
    warn("enable_auto_recovery", `ignored: settings.recovery_mode ('${s.settings.recovery_mode}') is set and wins`);
  if (s.persist_across_sessions !== undefined)
    warn("persist_across_sessions", "ignored: Vigil always keeps trust states across sessions (history ages out after retention_days)");
  if (s.max_history_entries !== undefined)
    warn("max_history_entries", "ignored: failure history is kept by age, not by count — set retention_days (days, default 30) instead");
  return out;
}

// ---------------------------------------------------------------------------
// snake <-> camel
// ---------------------------------------------------------------------------

const RULE_KEYS = snakeCamelPairs(RULE_FIELD_REGISTRY);
const SETTING_KEYS = snakeCamelPairs(SETTINGS);
const MODEL_SWITCH_KEYS = snakeCamelPairs(MODEL_SWITCH_FIELDS);

const PATTERN_LIST_KEYS: Array<[string, "introspectionTools" | "readOnlyTools" | "actionTools" | "announcePhrases" | "volatileArgFields"]> = [
  ["introspection_tools", "introspectionTools"],
  ["read_only_tools", "readOnlyTools"],
  ["action_tools", "actionTools"],
  ["announce_phrases", "announcePhrases"],
  ["volatile_arg_fields", "volatileArgFields"],
];

const RISK_RULE_KEYS: Array<[string, keyof RiskRulesConfig]> = [
  ["enabled", "enabled"],
  ["disabled", "disabled"],
  ["shell_tools", "shellTools"],
  ["file_tools", "fileTools"],
];

function copy<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

function mapKeys(src: Record<string, unknown>, pairs: ReadonlyArray<readonly [string, string]>, reverse: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [a, b] of pairs) {
    const from = reverse ? b : a;
    const to = reverse ? a : b;
    if (src[from] !== undefined) out[to] = copy(src[from]);
  }
  return out;
}

function ruleToCamel(r: SnakeRule): RuleInput {
  return mapKeys(r as Record<string, unknown>, RULE_KEYS, false) as RuleInput;
}
function ruleToSnake(r: RuleInput): SnakeRule {
  return mapKeys(r as Record<string, unknown>, RULE_KEYS, true) as SnakeRule;
}
function mapRecord<A, B>(rec: Record<string, A>, f: (a: A) => B): Record<string, B> {
  const out: Record<string, B> = {};
  for (const [k, v] of Object.entries(rec)) {
    // defineProperty: a rule named "__proto__" stays an own property.
    Object.defineProperty(out, k, { value: f(v), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** snake_case document (already validated) → ConfigDocument. */
export function toCamelDocument(s: SnakeConfigDocument): ConfigDocument {
  const d: ConfigDocument = {};
  if (s.default_rule !== undefined) d.defaultRule = ruleToCamel(s.default_rule);
  if (s.plugin_rules !== undefined) d.pluginRules = mapRecord(s.plugin_rules, ruleToCamel);
  if (s.tool_rules !== undefined) d.toolRules = mapRecord(s.tool_rules, ruleToCamel);
  if (s.domain_rules !== undefined) d.domainRules = mapRecord(s.domain_rules, ruleToCamel);
  if (s.settings !== undefined) d.settings = mapKeys(s.settings, SETTING_KEYS, false) as Partial<SettingValues>;
  // The seed's enable_auto_recovery is recovery mode auto (true) or ask (false, a person approves).
  if (s.enable_auto_recovery !== undefined && d.settings?.recoveryMode === undefined)
    d.settings = { ...d.settings, recoveryMode: s.enable_auto_recovery ? "auto" : "ask" };
  if (s.model_switch !== undefined)
    d.modelSwitch = mapKeys(s.model_switch, MODEL_SWITCH_KEYS, false) as Partial<ModelSwitchConfig>;
  if (s.patterns !== undefined) {
    const p = s.patterns as Record<string, unknown>;
    const out = mapKeys(p, PATTERN_LIST_KEYS, false) as NonNullable<ConfigDocument["patterns"]>;
    const thresholds: Partial<Record<PatternType, Partial<PatternThresholds>>> = {};
    let any = false;
    for (const t of PATTERN_TYPES) {
      if (p[t] !== undefined) {
        thresholds[t] = copy(p[t] as Partial<PatternThresholds>);
        any = true;
      }
    }
    if (any) out.thresholds = thresholds;
    d.patterns = out;
  }
  if (s.extractors !== undefined) d.extractors = copy(s.extractors);
  if (s.security_patterns !== undefined) d.securityPatterns = [...s.security_patterns];
  if (s.retention_days !== undefined) d.retentionDays = s.retention_days;
  if (s.policies !== undefined) d.policies = copy(s.policies);
  if (s.risk_rules !== undefined) d.riskRules = mapKeys(s.risk_rules, RISK_RULE_KEYS, false) as RiskRulesConfig;
  return d;
}

/** ConfigDocument → snake_case document (the exact inverse of toCamelDocument). */
export function toSnakeDocument(d: ConfigDocument): SnakeConfigDocument {
  const s: SnakeConfigDocument = {};
  if (d.defaultRule !== undefined) s.default_rule = ruleToSnake(d.defaultRule);
  if (d.pluginRules !== undefined) s.plugin_rules = mapRecord(d.pluginRules, ruleToSnake);
  if (d.toolRules !== undefined) s.tool_rules = mapRecord(d.toolRules, ruleToSnake);
  if (d.domainRules !== undefined) s.domain_rules = mapRecord(d.domainRules, ruleToSnake);
  if (d.settings !== undefined) s.settings = mapKeys(d.settings, SETTING_KEYS, true) as SnakeConfigDocument["settings"];
  if (d.modelSwitch !== undefined)
    s.model_switch = mapKeys(d.modelSwitch, MODEL_SWITCH_KEYS, true) as SnakeConfigDocument["model_switch"];
  if (d.patterns !== undefined) {
    const out = mapKeys(d.patterns as Record<string, unknown>, PATTERN_LIST_KEYS, true) as Record<string, unknown>;
    for (const t of PATTERN_TYPES) {
      const v = d.patterns.thresholds?.[t];
      if (v !== undefined) out[t] = copy(v);
    }
    s.patterns = out as SnakeConfigDocument["patterns"];
  }
  if (d.extractors !== undefined) s.extractors = copy(d.extractors);
  if (d.securityPatterns !== undefined) s.security_patterns = [...d.securityPatterns];
  if (d.retentionDays !== undefined) s.retention_days = d.retentionDays;
  if (d.policies !== undefined) s.policies = copy(d.policies);
  if (d.riskRules !== undefined) s.risk_rules = mapKeys(d.riskRules as Record<string, unknown>, RISK_RULE_KEYS, true) as SnakeConfigDocument["risk_rules"];
  return s;
}

// ---------------------------------------------------------------------------
// Merge
// ---------------------------------------------------------------------------

/**
 * Workspace over organization over built-ins. Lists (extractors, security patterns, tool classes,
 * announce phrases) are replaced as a whole by the most specific level that sets them; ladders and
 * model-switch values merge per field (ladders are then made non-decreasing). Rules stay in the two
 * documents and are resolved per call by rules.ts.
 */
export function mergeEffectiveConfig(
  workspaceDoc: ConfigDocument | null | undefined,
  orgDoc: ConfigDocument | null | undefined,
): EffectiveConfig {
  const ws = workspaceDoc ?? {};
  const org = orgDoc ?? {};
  const list = <T>(a: T[] | undefined, b: T[] | undefined, dflt: readonly T[]): T[] => [...(a ?? b ?? dflt)];

  const thresholds = {} as Record<PatternType, PatternThresholds>;
  for (const t of PATTERN_TYPES) {
    const w = ws.patterns?.thresholds?.[t] ?? {};
    const o = org.patterns?.thresholds?.[t] ?? {};
    const dflt = DEFAULT_PATTERN_CONFIG.thresholds[t];
    const minor = w.minor ?? o.minor ?? dflt.minor;
    // Levels may set parts of a ladder. A level set by a document may equal the one below it (that
    // severity is reached directly, SPEC 5.1); a built-in step below a configured one moves above it,
    // so raising only `minor` never turns a nudge into a pause.
    const setModerate = w.moderate ?? o.moderate;
    const moderate = setModerate !== undefined ? Math.max(minor, setModerate) : Math.max(minor + 1, dflt.moderate);
    const setSevere = w.severe ?? o.severe;
    const severe = setSevere !== undefined ? Math.max(moderate, setSevere) : Math.max(moderate + 1, dflt.severe);
    thresholds[t] = { minor, moderate, severe };
  }

  return {
    workspace: ws,
    organization: org,
    extractors: (ws.extractors ?? org.extractors ?? []).map((e) => ({ ...e })),
    securityPatterns: list(ws.securityPatterns, org.securityPatterns, DEFAULT_SECURITY_PATTERNS),
    patterns: {
      introspectionTools: list(ws.patterns?.introspectionTools, org.patterns?.introspectionTools, DEFAULT_PATTERN_CONFIG.introspectionTools),
      readOnlyTools: list(ws.patterns?.readOnlyTools, org.patterns?.readOnlyTools, DEFAULT_PATTERN_CONFIG.readOnlyTools),
      actionTools: list(ws.patterns?.actionTools, org.patterns?.actionTools, DEFAULT_PATTERN_CONFIG.actionTools),
      announcePhrases: list(ws.patterns?.announcePhrases, org.patterns?.announcePhrases, DEFAULT_PATTERN_CONFIG.announcePhrases),
      volatileArgFields: list(ws.patterns?.volatileArgFields, org.patterns?.volatileArgFields, DEFAULT_PATTERN_CONFIG.volatileArgFields),
      thresholds,
    },
    modelSwitch: {
      failureThreshold: ws.modelSwitch?.failureThreshold ?? org.modelSwitch?.failureThreshold ?? DEFAULT_MODEL_SWITCH.failureThreshold,
      minSuccessRateDiff:
        ws.modelSwitch?.minSuccessRateDiff ?? org.modelSwitch?.minSuccessRateDiff ?? DEFAULT_MODEL_SWITCH.minSuccessRateDiff,
      minAttempts: ws.modelSwitch?.minAttempts ?? org.modelSwitch?.minAttempts ?? DEFAULT_MODEL_SWITCH.minAttempts,
    },
    retentionDays: ws.retentionDays ?? org.retentionDays ?? DEFAULT_RETENTION_DAYS,
  };
}
