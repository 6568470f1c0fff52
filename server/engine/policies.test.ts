import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compilePolicies, evaluatePolicies, policiesOf, type Policy } from "./policies";
import { mergeEffectiveConfig, parseConfigDocument } from "./config";
import { guardOutcome } from "./guard";
import type { ConfigDocument, TrustState } from "./types";

const ws = (policies: Policy[], extra: ConfigDocument = {}): ConfigDocument => ({ policies, ...extra });
const evaluate = (wsDoc: ConfigDocument, tool: string, args: Record<string, unknown>, orgDoc: ConfigDocument = {}) =>
  evaluatePolicies(compilePolicies(wsDoc, orgDoc), tool, args);

describe("policies (SPEC 4.5)", () => {
  it("tool globs compare case-insensitively, with * and ?", () => {
    const doc = ws([{ name: "mcp", tool: "mcp__github__*", decision: "ask", reason: "GitHub by hand" }, { name: "one", tool: "b?sh", decision: "deny" }]);
    expect(evaluate(doc, "MCP__GitHub__create_issue", {}).policy).toEqual({ name: "mcp", level: "workspace", decision: "ask", reason: "GitHub by hand" });
    expect(evaluate(doc, "Bash", { command: "ls" }).decision).toBe("deny");
    expect(evaluate(doc, "bassh", { command: "ls" }).decision).toBeNull();
    expect(evaluate(doc, "mcp__gitlab__x", {}).decision).toBeNull();
  });

  it("argument globs: `*` stops at `/` in paths, `**` does not; the whole value must match; a missing path never matches", () => {
    const doc = ws([{ name: "prod", tool: "http_request", args: { url: "https://prod.example.com/**", method: "POST" }, decision: "deny", reason: "Release pipeline only" }]);
    expect(evaluate(doc, "http_request", { url: "https://prod.example.com/api/v1/users", method: "POST" }).policy?.reason).toBe("Release pipeline only");
    expect(evaluate(doc, "http_request", { url: "https://prod.example.com/api", method: "GET" }).decision).toBeNull();
    expect(evaluate(doc, "http_request", { url: "https://prod.example.com.evil.io/x", method: "POST" }).decision).toBeNull();
    expect(evaluate(doc, "http_request", { url: "https://prod.example.com/x" }).decision).toBeNull();
    const star = ws([{ name: "src", tool: "Write", args: { file_path: "src/*.ts" }, decision: "ask" }]);
    expect(evaluate(star, "Write", { file_path: "src/a.ts" }).decision).toBe("ask");
    expect(evaluate(star, "Write", { file_path: "src/lib/a.ts" }).decision).toBeNull();
  });

  it("dot-separated paths reach nested arguments; {equals} compares JSON values", () => {
    const doc = ws([{ name: "force", tool: "deploy", args: { "options.force": { equals: true }, target: { equals: { env: "prod", region: "eu" } } }, decision: "deny" }]);
    expect(evaluate(doc, "deploy", { options: { force: true }, target: { region: "eu", env: "prod" } }).decision).toBe("deny");
    expect(evaluate(doc, "deploy", { options: { force: "true" }, target: { region: "eu", env: "prod" } }).decision).toBeNull();
    expect(evaluate(doc, "deploy", { options: {}, target: { region: "eu", env: "prod" } }).decision).toBeNull();
  });

  it("{regex} searches the value (JavaScript syntax, linear time)", () => {
    const doc = ws([{ name: "drop", tool: "sql_*", args: { query: { regex: "\\bdrop\\s+table\\b" } }, decision: "deny" }]);
    expect(evaluate(doc, "sql_exec", { query: "select 1; drop   table users" }).decision).toBe("deny");
    expect(evaluate(doc, "sql_exec", { query: "select dropped_table from t" }).decision).toBeNull();
  });

  it("a shell command pattern is tried on the whole command and on each sub-command; `*` covers `/` there", () => {
    const doc = ws([{ name: "no-force", tool: "bash", args: { command: "git push --force*" }, decision: "deny" }], { riskRules: { enabled: false } });
    expect(evaluate(doc, "Bash", { command: "git push --force origin feature/x" }).decision).toBe("deny");
    expect(evaluate(doc, "Bash", { command: "npm test && git push --force origin main" }).decision).toBe("deny");
    expect(evaluate(doc, "Bash", { command: "npm test; git push origin main" }).decision).toBeNull();
    // Not a shell tool: no splitting, path-style `*`.
    expect(evaluate(ws([{ name: "x", tool: "notes", args: { command: "git push --force*" }, decision: "deny" }]), "notes", { command: "a && git push --force origin feature/x" }).decision).toBeNull();
  });

  it("the strictest matching decision wins (deny > ask > allow) across both levels", () => {
    const org: ConfigDocument = { policies: [{ name: "ask-deploys", tool: "deploy", decision: "ask", reason: "org" }] };
    expect(evaluate(ws([{ name: "allow-deploys", tool: "deploy", decision: "allow" }]), "deploy", {}, org).policy).toMatchObject({ name: "ask-deploys", level: "organization", decision: "ask" });
    expect(evaluate(ws([{ name: "deny-deploys", tool: "deploy", decision: "deny" }]), "deploy", {}, org).policy).toMatchObject({ name: "deny-deploys", level: "workspace", decision: "deny" });
    // An org policy stays whatever the workspace document says.
    expect(evaluate({}, "deploy", {}, org).decision).toBe("ask");
  });

  it("an allow policy exempts from the built-in risk rules only", () => {
    expect(evaluate({}, "Bash", { command: "sudo make install" })).toMatchObject({ decision: "ask", riskRule: "shell.privilege", policy: { name: "shell.privilege", level: "builtin" } });
    const allow = ws([{ name: "sudo-ok", tool: "Bash", args: { command: "sudo make *" }, decision: "allow", reason: "installs" }]);
    expect(evaluate(allow, "Bash", { command: "sudo make install" })).toEqual({
      decision: "allow",
      riskRule: null,
      policy: { name: "sudo-ok", level: "workspace", decision: "allow", reason: "installs" },
    });
    // …not from another policy.
    const both = ws([...allow.policies!, { name: "no-make", tool: "bash", args: { command: "*make*" }, decision: "deny" }]);
    expect(evaluate(both, "Bash", { command: "sudo make install" }).policy?.name).toBe("no-make");
  });

  it("risk rules: on by default, one can be disabled, all can be switched off, tool lists are configurable", () => {
    expect(evaluate({}, "Bash", { command: "rm -rf ~" }).policy).toMatchObject({ name: "shell.delete_root_or_home", level: "builtin", decision: "deny" });
    expect(evaluate({}, "Bash", { command: "rm -rf ./build" }).decision).toBeNull();
    expect(evaluate({}, "Read", { file_path: "/home/u/project/.env" }).riskRule).toBe("files.secrets");
    expect(evaluate({}, "Read", { file_path: "/home/u/project/.envrc" }).riskRule).toBeNull();
    expect(evaluate({}, "Bash", { command: "git push" }).decision).toBeNull();
    expect(evaluate({ riskRules: { disabled: ["files.secrets"] } }, "Read", { file_path: ".env" }).decision).toBeNull();
    expect(evaluate({ riskRules: { enabled: false } }, "Bash", { command: "rm -rf /" }).decision).toBeNull();
    expect(evaluate({}, "my_shell", { command: "rm -rf /" }).decision).toBeNull();
    expect(evaluate({ riskRules: { shellTools: ["my_shell"] } }, "My_Shell", { command: "rm -rf /" }).decision).toBe("deny");
    // The workspace's setting wins over the organization's, field by field.
    expect(evaluate({ riskRules: { enabled: true } }, "Bash", { command: "rm -rf /" }, { riskRules: { enabled: false } }).decision).toBe("deny");
  });

  it("is compiled once per configuration version", () => {
    const effective = mergeEffectiveConfig(ws([{ name: "a", tool: "x", decision: "deny" }]), {});
    expect(policiesOf(effective)).toBe(policiesOf(effective));
    expect(policiesOf(mergeEffectiveConfig({}, {}))).not.toBe(policiesOf(effective));
  });
});

describe("the policies in a configuration document", () => {
  const issuesOf = (doc: unknown) => {
    const r = parseConfigDocument(doc);
    return r.ok ? [] : r.issues.map((i) => ({ segments: i.segments, message: i.message }));
  };
  const good = { name: "ok", tool: "Bash", decision: "deny" };

  it("round-trip, with risk_rules in snake_case", () => {
    const doc = { policies: [{ ...good, args: { command: "rm *", "a.b": { regex: "x+" }, c: { equals: [1, { d: null }] } }, reason: "r" }], risk_rules: { enabled: true, disabled: ["shell.privilege"], shell_tools: ["sh2"], file_tools: ["cat"] } };
    const r = parseConfigDocument(doc);
    expect(r).toMatchObject({ ok: true, doc: { riskRules: { enabled: true, disabled: ["shell.privilege"], shellTools: ["sh2"], fileTools: ["cat"] } } });
  });

  it("refuse a bad regex, one that could backtrack without bound, an over-long pattern, a bad decision, a duplicate name, an unknown risk rule — naming the field", () => {
    const bad = (args: unknown) => issuesOf({ policies: [good, good.name === "x" ? good : { ...good, name: "b" }, { ...good, name: "c", args }] });
    expect(bad({ command: { regex: "(" } })[0].segments).toEqual(["policies", 2, "args", "command", "regex"]);
    expect(bad({ command: { regex: "(a+)+\\1" } })[0].segments).toEqual(["policies", 2, "args", "command", "regex"]);
    expect(bad({ command: { regex: "(?=x)y" } })[0].segments).toEqual(["policies", 2, "args", "command", "regex"]);
    expect(bad({ command: { regex: "a".repeat(513) } })[0].segments).toEqual(["policies", 2, "args", "command", "regex"]);
    expect(bad({ command: "a".repeat(513) })[0].segments).toEqual(["policies", 2, "args", "command"]);
    expect(bad({ command: { glob: "x" } })[0].segments).toEqual(["policies", 2, "args", "command"]);
    expect(issuesOf({ policies: [{ ...good, decision: "block" }] })[0].segments).toEqual(["policies", 0, "decision"]);
    expect(issuesOf({ policies: [good, good] })[0].segments).toEqual(["policies", 1, "name"]);
    expect(issuesOf({ policies: [{ ...good, name: "Has Space" }] })[0].segments).toEqual(["policies", 0, "name"]);
    expect(issuesOf({ risk_rules: { disabled: ["shell.nope"] } })[0].segments).toEqual(["risk_rules", "disabled", 0]);
    expect(issuesOf({ risk_rules: { shellTools: [] } })[0].segments).toEqual(["risk_rules", "shellTools"]);
  });

  it("the seed's own settings are accepted: auto recovery maps to recovery_mode, the rest is ignored with a warning", () => {
    const r = parseConfigDocument({ enable_auto_recovery: false, persist_across_sessions: true, max_history_entries: 1000 });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.doc).toEqual({ settings: { recoveryMode: "ask" } });
    expect(r.warnings?.map((w) => w.path)).toEqual(["persist_across_sessions", "max_history_entries"]);
    expect(parseConfigDocument({ enable_auto_recovery: true })).toEqual({ ok: true, doc: { settings: { recoveryMode: "auto" } } });
  });
});

describe("guard decision order (SPEC 4.5) as a property", () => {
  const states: TrustState[] = ["trusted", "escalated", "recovering", "blocked"];
  it("first that applies: paused → pause; deny policy → deny; budget → pause; blocked → blockedDecision; ask policy / escalated / recovering / global → ask; else allow", () => {
    fc.assert(
      fc.property(
        fc.record({
          paused: fc.boolean(),
          effectiveState: fc.constantFrom(...states),
          globalPattern: fc.boolean(),
          blockedDecision: fc.constantFrom("ask" as const, "deny" as const),
          policyDecision: fc.constantFrom(null, "allow" as const, "ask" as const, "deny" as const),
          budgetSpent: fc.boolean(),
        }),
        (input) => {
          const expected = input.paused
            ? "pause"
            : input.policyDecision === "deny"
              ? "deny"
              : input.budgetSpent
                ? "pause"
                : input.effectiveState === "blocked"
                  ? input.blockedDecision
                  : input.policyDecision === "ask" || input.effectiveState !== "trusted" || input.globalPattern
                    ? "ask"
                    : "allow";
          expect(guardOutcome(input).decision).toBe(expected);
          // An allow policy never changes the decision.
          if (input.policyDecision === "allow") expect(guardOutcome({ ...input, policyDecision: null }).decision).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("tool names compare case-insensitively (SPEC 4.5)", () => {
  it("in tool_rules (the exact name first) and in tool classes", async () => {
    const { resolveRule } = await import("./rules");
    const { inToolClass } = await import("./patterns");
    expect(resolveRule({ toolRules: { bash: { countThreshold: 1 } } }, {}, { toolName: "Bash" })).toMatchObject({ level: "tool", name: "bash", rule: { countThreshold: 1 } });
    expect(resolveRule({ toolRules: { bash: { countThreshold: 1 }, Bash: { countThreshold: 2 } } }, {}, { toolName: "Bash" }).rule.countThreshold).toBe(2);
    // A workspace rule in any case wins over the organization's exact one.
    expect(resolveRule({ toolRules: { BASH: { countThreshold: 5 } } }, { toolRules: { Bash: { countThreshold: 7 } } }, { toolName: "Bash" }).rule.countThreshold).toBe(5);
    expect(resolveRule({ toolRules: { bash: { countThreshold: 1 } } }, {}, { toolName: "bash2" }).level).toBe("default");
    expect(inToolClass(["execute_bash", "bash"], "BASH")).toBe(true);
    expect(inToolClass(["Read"], "read_file")).toBe(false);
  });
});
