/**
 * Policies (SPEC 4.5): what a call may do, declared by a person at organization and workspace
 * level, and the built-in risk rules (risk-rules.ts). A configuration version's policies are
 * compiled once (`policiesOf`, remembered per EffectiveConfig); each call is evaluated against the
 * compiled form in time linear in its arguments. Pure.
 */
import { compileGlob, compileSafeRegex } from "./safe-pattern";
import { DEFAULT_FILE_TOOLS, DEFAULT_SHELL_TOOLS, RISK_RULES, filePathsOf, type RiskInput, type RiskRule } from "./risk-rules";
import { splitShellCommand, type SubCommand } from "./shell-command";
import type { ArgPattern, ConfigDocument, EffectiveConfig, Policy, PolicyDecision } from "./types";

// The policy document's types live with the configuration document's (types.ts); importers read them here too.
export type { ArgPattern, Policy, PolicyDecision, RiskRulesConfig } from "./types";

export type PolicyLevel = "organization" | "workspace" | "builtin";

/** The policy named in a guard.check answer. */
export interface PolicyHit {
  name: string;
  level: PolicyLevel;
  decision: PolicyDecision;
  reason: string;
}

export interface PolicyEvaluation {
  /** The strictest matching decision; null when nothing matched. */
  decision: PolicyDecision | null;
  /** The policy (or built-in risk rule) that gave it. */
  policy: PolicyHit | null;
  /** The built-in risk rule that matched and was not exempted by an `allow` policy, else null. */
  riskRule: string | null;
}

export const POLICY_DECISIONS = ["allow", "ask", "deny"] as const;
const STRICTNESS: Record<PolicyDecision, number> = { allow: 0, ask: 1, deny: 2 };

// ---------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------

interface Tester {
  test(value: string): boolean;
}

type ArgTester = { kind: "text"; command: Tester; other: Tester } | { kind: "equals"; value: unknown; json: string };
type CompiledArg = ArgTester & { path: string[] };

interface CompiledPolicy {
  hit: PolicyHit;
  tool: Tester;
  args: CompiledArg[];
}

export interface CompiledPolicies {
  /** Organization policies first, then the workspace's. */
  policies: CompiledPolicy[];
  riskRules: RiskRule[];
  shellTools: Set<string>;
  fileTools: Set<string>;
}

/** The reason a policy gives when its author wrote none. */
function defaultPolicyReason(p: { name: string; decision: PolicyDecision }): string {
  return `Policy '${p.name}' ${p.decision === "deny" ? "denies" : p.decision === "ask" ? "asks for approval of" : "allows"} this call`;
}

/** Argument pattern → its tester. Throws on an invalid or unsafe pattern (the document schema reports it first). */
function compileArgPattern(pattern: ArgPattern): ArgTester {
  if (typeof pattern === "string") {
    // `*` crosses `/` in a shell command (SPEC 4.5), not in a path.
    return { kind: "text", command: compileGlob(pattern, { star: "any" }), other: compileGlob(pattern, { star: "path" }) };
  }
  if ("regex" in pattern) {
    const re = compileSafeRegex(pattern.regex);
    return { kind: "text", command: re, other: re };
  }
  return { kind: "equals", value: pattern.equals, json: canonicalJson(pattern.equals) };
}

function compilePolicy(p: Policy, level: "organization" | "workspace"): CompiledPolicy {
  return {
    hit: { name: p.name, level, decision: p.decision, reason: p.reason ?? defaultPolicyReason(p) },
    tool: compileGlob(p.tool, { star: "any", caseInsensitive: true }),
    args: Object.entries(p.args ?? {}).map(([path, pattern]) => ({ path: path.split("."), ...compileArgPattern(pattern) }) as CompiledArg),
  };
}

const lowerSet = (names: readonly string[]) => new Set(names.map((n) => n.toLowerCase()));

/** Both levels' policies and the risk-rule switches, compiled (an invalid stored pattern is left out). */
export function compilePolicies(workspaceDoc: ConfigDocument | null | undefined, orgDoc: ConfigDocument | null | undefined): CompiledPolicies {
  const ws = workspaceDoc ?? {};
  const org = orgDoc ?? {};
  const policies: CompiledPolicy[] = [];
  for (const [doc, level] of [[org, "organization"], [ws, "workspace"]] as const) {
    for (const p of doc.policies ?? []) {
      try {
        policies.push(compilePolicy(p, level));
      } catch {
        // Documents are validated when saved; a stored one older than a pattern rule is not fatal here.
      }
    }
  }
  const risk = { ...org.riskRules, ...definedOnly(ws.riskRules) };
  const disabled = new Set(risk.disabled ?? []);
  return {
    policies,
    riskRules: risk.enabled === false ? [] : RISK_RULES.filter((r) => !disabled.has(r.name)),
    shellTools: lowerSet(risk.shellTools ?? DEFAULT_SHELL_TOOLS),
    fileTools: lowerSet(risk.fileTools ?? DEFAULT_FILE_TOOLS),
  };
}

function definedOnly<T extends object>(o: T | undefined): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

const compiled = new WeakMap<EffectiveConfig, CompiledPolicies>();

/** The compiled policies of one configuration version (an EffectiveConfig is built once per version). */
export function policiesOf(effective: EffectiveConfig): CompiledPolicies {
  let c = compiled.get(effective);
  if (!c) compiled.set(effective, (c = compilePolicies(effective.workspace, effective.organization)));
  return c;
}

// ---------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------

/** JSON text with object keys sorted: two equal values give the same text. */
function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(v as Record<string, unknown>).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
}

const MISSING = Symbol("missing");

function valueAt(args: Record<string, unknown>, path: readonly string[]): unknown {
  let cur: unknown = args;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object" || !Object.prototype.hasOwnProperty.call(cur, seg)) return MISSING;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

/** A call being evaluated: its shell command parsed at most once. */
interface CallView {
  args: Record<string, unknown>;
  shell: boolean;
  parts: SubCommand[] | null;
}

function subCommandsOf(view: CallView, command: string): SubCommand[] {
  if (!view.parts) view.parts = splitShellCommand(command);
  return view.parts;
}

function argMatches(arg: CompiledArg, view: CallView): boolean {
  const v = valueAt(view.args, arg.path);
  if (v === MISSING) return false;
  if (arg.kind === "equals") return canonicalJson(v) === arg.json;
  const isCommand = view.shell && arg.path.length === 1 && arg.path[0] === "command" && typeof v === "string";
  if (isCommand) {
    if (arg.command.test(v)) return true;
    const parts = subCommandsOf(view, v);
    return parts.length > 1 && parts.some((p) => arg.command.test(p.text));
  }
  if (typeof v === "string") return arg.other.test(v);
  if (typeof v === "number" || typeof v === "boolean") return arg.other.test(String(v));
  if (Array.isArray(v)) return v.some((x) => (typeof x === "string" || typeof x === "number" || typeof x === "boolean") && arg.other.test(String(x)));
  return false;
}

/** What the policies and risk rules say about a call (SPEC 4.5). */
export function evaluatePolicies(c: CompiledPolicies, toolName: string, args: Record<string, unknown>): PolicyEvaluation {
  const tool = toolName.toLowerCase();
  const view: CallView = { args, shell: c.shellTools.has(tool), parts: null };
  let best: PolicyHit | null = null;
  let exempt = false;
  for (const p of c.policies) {
    if (!p.tool.test(toolName) || !p.args.every((a) => argMatches(a, view))) continue;
    if (p.hit.decision === "allow") exempt = true;
    if (!best || STRICTNESS[p.hit.decision] > STRICTNESS[best.decision]) best = p.hit;
  }
  let risk: RiskRule | null = null;
  if (!exempt && c.riskRules.length) {
    let input: RiskInput | null = null;
    if (view.shell && typeof args.command === "string") input = { kind: "shell", command: args.command, parts: subCommandsOf(view, args.command) };
    else if (c.fileTools.has(tool)) {
      const paths = filePathsOf(args);
      if (paths.length) input = { kind: "file", paths };
    }
    if (input) {
      for (const r of c.riskRules) {
        if (r.appliesTo !== input.kind || (risk && STRICTNESS[r.decision] <= STRICTNESS[risk.decision])) continue;
        if (r.test(input)) risk = r;
      }
    }
  }
  // A declared policy names the decision when it is as strict as the risk rule.
  let policy = best;
  if (risk && (!best || STRICTNESS[risk.decision] > STRICTNESS[best.decision])) {
    policy = { name: risk.name, level: "builtin", decision: risk.decision, reason: `${risk.reason} (built-in risk rule ${risk.name})` };
  }
  return { decision: policy?.decision ?? null, policy, riskRule: risk?.name ?? null };
}
