import { describe, expect, it } from "vitest";
import { BUILTIN_RULE, describeRuleResolution, describeThreshold, resolveRule, ruleResolver } from "./rules";
import type { ConfigDocument } from "./types";

describe("BUILTIN_RULE", () => {
  it("has the SPEC 4.1 defaults", () => {
    expect(BUILTIN_RULE).toEqual({
      countThreshold: 3,
      rateMinCalls: 4,
      windowSeconds: 3600,
      severityFilter: ["server_error", "crash", "security"],
      escalationDurationSeconds: 1800,
      notify: true,
      cooldownSeconds: 900,
      successCountToRecover: 3,
    });
    expect(BUILTIN_RULE.consecutiveThreshold).toBeUndefined();
    expect(BUILTIN_RULE.rateThreshold).toBeUndefined();
    expect(BUILTIN_RULE.blockThreshold).toBeUndefined();
  });
});

describe("resolveRule precedence", () => {
  const ws: ConfigDocument = {
    toolRules: { http_request: { countThreshold: 10 } },
    domainRules: { "api.example.com": { countThreshold: 20 } },
    pluginRules: { web: { countThreshold: 30 } },
    defaultRule: { countThreshold: 40 },
  };

  it("tool > domain > plugin > default", () => {
    const all = { toolName: "http_request", domain: "api.example.com", pluginName: "web" };
    expect(resolveRule(ws, {}, all)).toMatchObject({ level: "tool", name: "http_request", rule: { countThreshold: 10 } });
    expect(resolveRule(ws, {}, { ...all, toolName: "fetch" })).toMatchObject({
      level: "domain",
      name: "api.example.com",
      rule: { countThreshold: 20 },
    });
    expect(resolveRule(ws, {}, { ...all, toolName: "fetch", domain: "other.com" })).toMatchObject({
      level: "plugin",
      name: "web",
      rule: { countThreshold: 30 },
    });
    expect(resolveRule(ws, {}, { toolName: "fetch", domain: null, pluginName: null })).toMatchObject({
      level: "default",
      name: null,
      rule: { countThreshold: 40 },
    });
  });

  it("with no configuration at all the built-in rule applies", () => {
    const r = resolveRule(undefined, undefined, { toolName: "bash" });
    expect(r).toEqual({ rule: { ...BUILTIN_RULE }, level: "default", name: null });
  });
});

describe("field inheritance", () => {
  const org: ConfigDocument = {
    defaultRule: { windowSeconds: 600, cooldownSeconds: 60, severityFilter: ["timeout"] },
    toolRules: { bash: { consecutiveThreshold: 7 }, grep: { countThreshold: 9 } },
    domainRules: { "org.example.com": { rateThreshold: 0.5 } },
    pluginRules: { cli: { blockThreshold: 4 } },
  };
  const ws: ConfigDocument = {
    defaultRule: { windowSeconds: 1200, successCountToRecover: 5 },
    toolRules: { bash: { countThreshold: 2 } },
  };

  it("specific → workspace default → organization default → built-in", () => {
    const r = resolveRule(ws, org, { toolName: "bash" });
    expect(r.level).toBe("tool");
    expect(r.rule).toEqual({
      countThreshold: 2, // tool rule
      windowSeconds: 1200, // workspace default
      successCountToRecover: 5, // workspace default
      cooldownSeconds: 60, // organization default
      severityFilter: ["timeout"], // organization default
      rateMinCalls: 4, // built-in
      escalationDurationSeconds: 1800, // built-in
      notify: true, // built-in
    });
  });

  it("a workspace rule replaces the organization rule of the same name (no merge)", () => {
    const r = resolveRule(ws, org, { toolName: "bash" });
    expect(r.rule.consecutiveThreshold).toBeUndefined();
  });

  it("organization tool/domain/plugin rules apply when the workspace has none of that name", () => {
    expect(resolveRule(ws, org, { toolName: "grep" })).toMatchObject({ level: "tool", name: "grep", rule: { countThreshold: 9 } });
    expect(resolveRule(ws, org, { toolName: "fetch", domain: "org.example.com" })).toMatchObject({
      level: "domain",
      rule: { rateThreshold: 0.5, countThreshold: 3, windowSeconds: 1200 },
    });
    expect(resolveRule(ws, org, { toolName: "x", pluginName: "cli" })).toMatchObject({
      level: "plugin",
      rule: { blockThreshold: 4 },
    });
  });

  it("the default rule inherits from the organization default and built-ins", () => {
    const r = resolveRule({ defaultRule: { countThreshold: 5 } }, { defaultRule: { countThreshold: 8, notify: false } }, {
      toolName: "x",
    });
    expect(r.rule.countThreshold).toBe(5);
    expect(r.rule.notify).toBe(false);
    expect(r.rule.windowSeconds).toBe(3600);
  });

  it("returned arrays are copies", () => {
    const r = resolveRule(ws, org, { toolName: "bash" });
    r.rule.severityFilter.push("crash");
    expect(org.defaultRule!.severityFilter).toEqual(["timeout"]);
    const b = resolveRule({}, {}, { toolName: "z" });
    b.rule.severityFilter.push("timeout");
    expect(BUILTIN_RULE.severityFilter).toEqual(["server_error", "crash", "security"]);
  });
});

describe("describeRuleResolution", () => {
  it("explains the matching rule and each field's origin", () => {
    const ws: ConfigDocument = { domainRules: { atlassian: { countThreshold: 2 } }, defaultRule: { windowSeconds: 300 } };
    const org: ConfigDocument = { defaultRule: { cooldownSeconds: 10 } };
    const e = describeRuleResolution(ws, org, { toolName: "mcp_atlassian_search", domain: "atlassian", pluginName: "mcp" });
    expect(e.level).toBe("domain");
    expect(e.name).toBe("atlassian");
    expect(e.scope).toBe("workspace");
    expect(e.checked.map((c) => [c.level, c.matched])).toEqual([
      ["tool", false],
      ["domain", true],
      ["plugin", false],
      ["default", false],
    ]);
    expect(e.fields.countThreshold).toEqual({
      value: 2,
      origin: { from: "rule", level: "domain", name: "atlassian", scope: "workspace" },
    });
    expect(e.fields.windowSeconds.origin).toEqual({ from: "workspace_default" });
    expect(e.fields.cooldownSeconds.origin).toEqual({ from: "organization_default" });
    expect(e.fields.successCountToRecover.origin).toEqual({ from: "builtin" });
    expect(e.fields.blockThreshold).toEqual({ value: undefined, origin: { from: "unset" } });
    expect(e.summary[0]).toContain("domain rule 'atlassian'");
    expect(e.summary.join("\n")).toContain("plugin rule 'mcp': not consulted");
  });

  it("explains the default when nothing matches", () => {
    const e = describeRuleResolution({}, {}, { toolName: "bash" });
    expect(e.level).toBe("default");
    expect(e.scope).toBeNull();
    expect(e.summary[0]).toContain("default rule");
  });

  it("describeThreshold", () => {
    expect(describeThreshold({ ...BUILTIN_RULE, severityFilter: [] })).toBe("3 failures in 3600s");
    expect(describeThreshold({ ...BUILTIN_RULE, countThreshold: undefined, consecutiveThreshold: 2, rateThreshold: 0.5 })).toBe(
      "2 consecutive failures or 50% failure rate (≥ 4 calls)",
    );
  });
});

describe("resolveRule and ruleResolver agree with the explanation", () => {
  const ws: ConfigDocument = {
    defaultRule: { countThreshold: 4 },
    toolRules: { Bash: { consecutiveThreshold: 2 } },
    domainRules: { "api.example.com": { windowSeconds: 60 } },
  };
  const org: ConfigDocument = { pluginRules: { mcp: { rateThreshold: 0.5 } }, toolRules: { Read: { countThreshold: 9 } } };
  const queries = [
    { toolName: "Bash" },
    { toolName: "Read", domain: "api.example.com" },
    { toolName: "http_request", domain: "api.example.com" },
    { toolName: "mcp__jira", pluginName: "mcp" },
    { toolName: "mcp__jira", pluginName: "" },
    { toolName: "other", domain: null, pluginName: null },
  ];

  it("gives the rule, level and name describeRuleResolution explains", () => {
    for (const q of queries) {
      const e = describeRuleResolution(ws, org, q);
      expect(resolveRule(ws, org, q)).toEqual({ rule: e.rule, level: e.level, name: e.name });
    }
  });

  it("remembers each answer and tells queries apart", () => {
    const resolve = ruleResolver(ws, org);
    for (const q of [...queries, ...queries]) expect(resolve(q)).toEqual(resolveRule(ws, org, q));
    expect(resolve({ toolName: "Bash" })).toBe(resolve({ toolName: "Bash" }));
    expect(resolve({ toolName: "Read" }).rule.countThreshold).toBe(9);
    expect(resolve({ toolName: "Read", domain: "x" }).rule.countThreshold).toBe(9);
    expect(resolve({ toolName: "x", domain: "api.example.com" }).level).toBe("domain");
  });
});

