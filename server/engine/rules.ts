/**
 * Escalation rules and hierarchical resolution (SPEC 4.1). Pure.
 *
 * Level precedence: tool > domain > plugin > default. At each level a workspace rule of that name
 * wins over an organization rule of the same name (no merging between the two). The chosen rule's
 * unset fields inherit from the workspace default rule, then the organization default rule, then
 * the built-in values.
 */
import { RULE_FIELD_REGISTRY, namesOf, type RuleFieldName } from "./registry";
import type { ConfigDocument, ResolvedRule, Rule, RuleInput, RuleLevel } from "./types";

export const RULE_FIELDS: readonly RuleFieldName[] = namesOf(RULE_FIELD_REGISTRY);
export type RuleField = RuleFieldName;

// A resolved Rule has exactly the registry's fields (a new rule field fails to compile until Rule has it).
type SameKeys<A, B> = [Exclude<keyof A, B>, Exclude<B, keyof A>] extends [never, never] ? true : false;
const ruleMatchesRegistry: SameKeys<Rule, RuleFieldName> = true;
void ruleMatchesRegistry;

/** The built-in default rule: every registry field's `builtin` value (thresholds without one stay unset). */
export const BUILTIN_RULE: Readonly<Rule> = Object.freeze(
  Object.fromEntries(
    RULE_FIELDS.flatMap((f) => {
      const v = RULE_FIELD_REGISTRY[f].builtin;
      return v === undefined ? [] : [[f, Array.isArray(v) ? [...v] : v]];
    }),
  ) as unknown as Rule,
);

export interface RuleQuery {
  toolName: string;
  pluginName?: string | null;
  domain?: string | null;
}

export type RuleScope = "workspace" | "organization";

export type FieldOrigin =
  | { from: "rule"; level: Exclude<RuleLevel, "default">; name: string; scope: RuleScope }
  | { from: "workspace_default" }
  | { from: "organization_default" }
  | { from: "builtin" }
  | { from: "unset" };

export interface RuleResolutionExplanation extends ResolvedRule {
  /** Where the matching specific rule lives; null when the default applies. */
  scope: RuleScope | null;
  /** Every level considered, in precedence order, and whether it matched. */
  checked: Array<{ level: RuleLevel; name: string | null; matched: boolean; scope: RuleScope | null }>;
  /** Every field's value and origin. */
  fields: { [K in RuleField]: { value: Rule[K] | undefined; origin: FieldOrigin } };
  /** Human-readable lines for the dashboard's "which rule applies" preview. */
  summary: string[];
}

/** The rule of that name in one map: the exact name first, then (tool rules) any case of it. */
function ruleNamed(rules: Record<string, RuleInput> | undefined, name: string, anyCase: boolean): { rule: RuleInput; name: string } | null {
  if (!rules) return null;
  if (Object.prototype.hasOwnProperty.call(rules, name)) return { rule: rules[name], name };
  if (!anyCase) return null;
  const lower = name.toLowerCase();
  for (const k of Object.keys(rules)) if (k.toLowerCase() === lower) return { rule: rules[k], name: k };
  return null;
}

function lookup(
  ws: Record<string, RuleInput> | undefined,
  org: Record<string, RuleInput> | undefined,
  name: string | null | undefined,
  anyCase = false,
): { rule: RuleInput; scope: RuleScope; name: string } | null {
  if (name === null || name === undefined || name === "") return null;
  const inWs = ruleNamed(ws, name, anyCase);
  if (inWs) return { ...inWs, scope: "workspace" };
  const inOrg = ruleNamed(org, name, anyCase);
  return inOrg ? { ...inOrg, scope: "organization" } : null;
}

function findSpecific(
  ws: ConfigDocument,
  org: ConfigDocument,
  q: RuleQuery,
): {
  found: { level: Exclude<RuleLevel, "default">; name: string; rule: RuleInput; scope: RuleScope } | null;
  checked: RuleResolutionExplanation["checked"];
} {
  const checked: RuleResolutionExplanation["checked"] = [];
  const levels: Array<{ level: Exclude<RuleLevel, "default">; name: string | null | undefined; ws?: Record<string, RuleInput>; org?: Record<string, RuleInput> }> = [
    { level: "tool", name: q.toolName, ws: ws.toolRules, org: org.toolRules },
    { level: "domain", name: q.domain, ws: ws.domainRules, org: org.domainRules },
    { level: "plugin", name: q.pluginName, ws: ws.pluginRules, org: org.pluginRules },
  ];
  let found: ReturnType<typeof findSpecific>["found"] = null;
  for (const l of levels) {
    // Tool names compare case-insensitively (SPEC 4.5): a `bash` rule covers Claude Code's `Bash`.
    const hit: ReturnType<typeof lookup> = found ? null : lookup(l.ws, l.org, l.name, l.level === "tool");
    checked.push({ level: l.level, name: l.name ?? null, matched: !!hit, scope: hit?.scope ?? null });
    if (hit && !found) found = { level: l.level, name: hit.name, rule: hit.rule, scope: hit.scope };
  }
  checked.push({ level: "default", name: null, matched: !found, scope: null });
  return { found, checked };
}

function resolveFields(
  specific: { rule: RuleInput; origin: FieldOrigin } | null,
  ws: ConfigDocument,
  org: ConfigDocument,
): { rule: Rule; origins: Record<RuleField, FieldOrigin> } {
  const chain: Array<{ rule: RuleInput | undefined; origin: FieldOrigin }> = [
    ...(specific ? [specific] : []),
    { rule: ws.defaultRule, origin: { from: "workspace_default" } },
    { rule: org.defaultRule, origin: { from: "organization_default" } },
    { rule: BUILTIN_RULE as RuleInput, origin: { from: "builtin" } },
  ];
  const out: Record<string, unknown> = {};
  const origins = {} as Record<RuleField, FieldOrigin>;
  for (const f of RULE_FIELDS) {
    origins[f] = { from: "unset" };
    for (const link of chain) {
      const v = link.rule?.[f];
      if (v !== undefined && v !== null) {
        out[f] = Array.isArray(v) ? [...v] : v;
        origins[f] = link.origin;
        break;
      }
    }
  }
  return { rule: out as unknown as Rule, origins };
}

/** SPEC 4.1: the rule that applies to a call (tool > domain > plugin > default), fields inherited. */
export function resolveRule(
  workspaceDoc: ConfigDocument | null | undefined,
  orgDoc: ConfigDocument | null | undefined,
  q: RuleQuery,
): ResolvedRule {
  // The explanation's text is for the editor's "which rule applies" panel, not the hot path.
  const ws = workspaceDoc ?? {};
  const org = orgDoc ?? {};
  const { found } = findSpecific(ws, org, q);
  const { rule } = resolveFields(found ? { rule: found.rule, origin: { from: "rule", level: found.level, name: found.name, scope: found.scope } } : null, ws, org);
  return { rule, level: found ? found.level : "default", name: found ? found.name : null };
}

/**
 * `resolveRule` for one pair of configuration documents, remembering each answer: a batch asks
 * for the same few (tool, plugin, domain) combinations hundreds of times. The rules it returns
 * are shared between callers and must not be modified.
 */
export function ruleResolver(workspaceDoc: ConfigDocument | null | undefined, orgDoc: ConfigDocument | null | undefined): (q: RuleQuery) => ResolvedRule {
  const known = new Map<string, ResolvedRule>();
  return (q) => {
    const k = `${q.toolName}\u0000${q.pluginName ?? ""}\u0000${q.domain ?? ""}`;
    let r = known.get(k);
    if (!r) known.set(k, (r = resolveRule(workspaceDoc, orgDoc, q)));
    return r;
  };
}

function fmtValue(v: unknown): string {
  if (v === undefined) return "not used";
  if (Array.isArray(v)) return v.join(", ");
  return String(v);
}

function fmtOrigin(o: FieldOrigin): string {
  switch (o.from) {
    case "rule":
      return `${o.level} rule '${o.name}' (${o.scope})`;
    case "workspace_default":
      return "workspace default rule";
    case "organization_default":
      return "organization default rule";
    case "builtin":
      return "built-in default";
    case "unset":
      return "not set anywhere";
  }
}

/** Explains which rule applies to a call and where each field's value comes from. */
export function describeRuleResolution(
  workspaceDoc: ConfigDocument | null | undefined,
  orgDoc: ConfigDocument | null | undefined,
  q: RuleQuery,
): RuleResolutionExplanation {
  const ws = workspaceDoc ?? {};
  const org = orgDoc ?? {};
  const { found, checked } = findSpecific(ws, org, q);
  const { rule, origins } = resolveFields(
    found ? { rule: found.rule, origin: { from: "rule", level: found.level, name: found.name, scope: found.scope } } : null,
    ws,
    org,
  );
  const fields = {} as RuleResolutionExplanation["fields"];
  for (const f of RULE_FIELDS) {
    (fields as Record<string, unknown>)[f] = { value: rule[f], origin: origins[f] };
  }
  const summary: string[] = [];
  summary.push(
    found
      ? `Tool '${q.toolName}' uses the ${found.level} rule '${found.name}' from the ${found.scope} configuration.`
      : `Tool '${q.toolName}' uses the default rule (no tool, domain or plugin rule matches).`,
  );
  for (const c of checked) {
    if (c.level === "default") continue;
    if (c.name === null || c.name === "") summary.push(`  ${c.level} rule: not applicable (no ${c.level})`);
    else if (c.matched) summary.push(`  ${c.level} rule '${c.name}': matches (${c.scope})`);
    else if (found && precedence(c.level) > precedence(found.level))
      summary.push(`  ${c.level} rule '${c.name}': not consulted (a more specific rule matched)`);
    else summary.push(`  ${c.level} rule '${c.name}': none`);
  }
  for (const f of RULE_FIELDS) {
    summary.push(`  ${f} = ${fmtValue(rule[f])} — ${fmtOrigin(origins[f])}`);
  }
  return {
    rule,
    level: found ? found.level : "default",
    name: found ? found.name : null,
    scope: found ? found.scope : null,
    checked,
    fields,
    summary,
  };
}

function precedence(level: RuleLevel): number {
  return { tool: 0, domain: 1, plugin: 2, default: 3 }[level];
}

/** Human form of the thresholds a rule uses, e.g. "3 failures in 3600s". */
export function describeThreshold(rule: Rule): string {
  const parts: string[] = [];
  if (rule.countThreshold !== undefined) parts.push(`${rule.countThreshold} failures in ${rule.windowSeconds}s`);
  if (rule.consecutiveThreshold !== undefined) parts.push(`${rule.consecutiveThreshold} consecutive failures`);
  if (rule.rateThreshold !== undefined)
    parts.push(`${Math.round(rule.rateThreshold * 100)}% failure rate (≥ ${rule.rateMinCalls} calls)`);
  return parts.length ? parts.join(" or ") : "no threshold";
}
