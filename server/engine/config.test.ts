import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  DEFAULT_MODEL_SWITCH,
  DEFAULT_PATTERN_CONFIG,
  DEFAULT_RETENTION_DAYS,
  mergeEffectiveConfig,
  parseConfigDocument,
  toSnakeDocument,
} from "./config";
import { DEFAULT_SECURITY_PATTERNS } from "./classify";
import { resolveRule } from "./rules";
import { PATTERN_TYPES, SEVERITIES } from "./types";

/** The seed's `.jaato/reliability.json` example. */
const SEED_FILE = {
  default_rule: { count_threshold: 3, window_seconds: 3600, escalation_duration_seconds: 1800 },
  plugin_rules: {
    cli: { count_threshold: 5, severity_filter: ["crash", "security"] },
    service_connector: { rate_threshold: 0.4, window_seconds: 300 },
  },
  domain_rules: {
    "api.production.com": { count_threshold: 2, consecutive_threshold: 2, escalation_duration_seconds: 3600 },
  },
};

const FULL = {
  ...SEED_FILE,
  tool_rules: {
    bash: {
      count_threshold: 2,
      consecutive_threshold: 3,
      rate_threshold: 0.5,
      rate_min_calls: 6,
      window_seconds: 600,
      severity_filter: ["server_error", "timeout"],
      escalation_duration_seconds: 900,
      notify_user: false,
      cooldown_seconds: 120,
      success_count_to_recover: 2,
      block_threshold: 4,
    },
  },
  settings: {
    recovery_mode: "ask",
    nudge_level: "direct",
    nudge_enabled: true,
    model_switch_strategy: "auto",
    pattern_detection_enabled: false,
    blocked_decision: "deny",
    preferred_models: ["claude-sonnet", "gpt-5"],
  },
  model_switch: { failure_threshold: 4, min_success_rate_diff: 0.2, min_attempts: 5 },
  patterns: {
    introspection_tools: ["list_tools"],
    read_only_tools: ["Read"],
    action_tools: ["Write"],
    announce_phrases: ["on it"],
    repetitive_calls: { minor: 4, moderate: 5, severe: 7 },
    tool_avoidance: { severe: 9 },
  },
  extractors: [
    { tool: "my_*", kind: "path", field: "target" },
    { tool: "search", kind: "hash", field: "" },
  ],
  security_patterns: ["\\bterraform\\s+destroy\\b"],
  retention_days: 90,
};

describe("parseConfigDocument", () => {
  it("pattern ladders: unknown pattern names and ladders that decrease name the field", () => {
    const unknown = parseConfigDocument({ patterns: { stuck_forever: { minor: 1 } } });
    expect(unknown).toEqual({
      ok: false,
      issues: [{ path: "patterns.stuck_forever", message: "Unknown field 'patterns.stuck_forever'", segments: ["patterns", "stuck_forever"], code: "unrecognized_keys" }],
    });
    const decreasing = parseConfigDocument({ patterns: { repetitive_calls: { minor: 3, moderate: 2, severe: 5 } } });
    expect(decreasing.ok).toBe(false);
    if (!decreasing.ok) expect(decreasing.issues.map((i) => [i.path, i.message])).toEqual([["patterns.repetitive_calls.moderate", "patterns.repetitive_calls.moderate: moderate must be at least minor"]]);
    // Equal levels are a jump straight to the higher severity (SPEC 5.1: Roo's limit, Cline's hard threshold).
    const jump = parseConfigDocument({ patterns: { repetitive_calls: { minor: 4, moderate: 4, severe: 4 } } });
    expect(jump).toEqual({ ok: true, doc: { patterns: { thresholds: { repetitive_calls: { minor: 4, moderate: 4, severe: 4 } } } } });
    const down = parseConfigDocument({ patterns: { empty_response: { minor: 2, severe: 1 } } });
    expect(down.ok).toBe(false);
    if (!down.ok) expect(down.issues[0]!.path).toBe("patterns.empty_response.severe");
    const ok = parseConfigDocument({ patterns: { empty_response: { minor: 2, moderate: 3, severe: 4 }, volatile_arg_fields: ["nonce"] } });
    expect(ok).toEqual({ ok: true, doc: { patterns: { volatileArgFields: ["nonce"], thresholds: { empty_response: { minor: 2, moderate: 3, severe: 4 } } } } });
  });

  it("imports the seed's reliability.json as it is and exports it back identically", () => {
    const r = parseConfigDocument(SEED_FILE);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.doc.defaultRule).toEqual({ countThreshold: 3, windowSeconds: 3600, escalationDurationSeconds: 1800 });
    expect(r.doc.pluginRules!.cli).toEqual({ countThreshold: 5, severityFilter: ["crash", "security"] });
    expect(toSnakeDocument(r.doc)).toEqual(SEED_FILE);
  });

  it("a document with every field round-trips exactly", () => {
    const r = parseConfigDocument(FULL);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.doc.toolRules!.bash.notify).toBe(false);
    expect(r.doc.settings).toMatchObject({ recoveryMode: "ask", blockedDecision: "deny" });
    expect(r.doc.modelSwitch).toEqual({ failureThreshold: 4, minSuccessRateDiff: 0.2, minAttempts: 5 });
    expect(r.doc.patterns!.thresholds).toEqual({ repetitive_calls: { minor: 4, moderate: 5, severe: 7 }, tool_avoidance: { severe: 9 } });
    expect(r.doc.retentionDays).toBe(90);
    expect(JSON.parse(JSON.stringify(toSnakeDocument(r.doc)))).toEqual(FULL);
  });

  it("the empty document is valid", () => {
    expect(parseConfigDocument({})).toEqual({ ok: true, doc: {} });
  });

  it("unknown fields are errors naming their path, at every level", () => {
    const r = parseConfigDocument({
      nope: 1,
      default_rule: { count_threshold: 3, threshold: 3 },
      tool_rules: { bash: { notify: true } },
      settings: { color: "red" },
      patterns: { repetitive_calls: { minor: 3, extreme: 9 } },
      extractors: [{ tool: "x", kind: "path", field: "p", extra: 1 }],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const paths = r.issues.map((i) => i.path).sort();
    expect(paths).toEqual(
      [
        "nope",
        "default_rule.threshold",
        "tool_rules.bash.notify",
        "settings.color",
        "patterns.repetitive_calls.extreme",
        "extractors[0].extra",
      ].sort(),
    );
    expect(r.issues.find((i) => i.path === "nope")!.message).toContain("Unknown field");
  });

  it.each([
    [{ default_rule: { count_threshold: 0 } }, "default_rule.count_threshold"],
    [{ default_rule: { count_threshold: -1 } }, "default_rule.count_threshold"],
    [{ default_rule: { consecutive_threshold: 1.5 } }, "default_rule.consecutive_threshold"],
    [{ default_rule: { rate_threshold: 1.2 } }, "default_rule.rate_threshold"],
    [{ default_rule: { rate_threshold: 0 } }, "default_rule.rate_threshold"],
    [{ default_rule: { window_seconds: 0 } }, "default_rule.window_seconds"],
    [{ default_rule: { severity_filter: ["server_error", "fatal"] } }, "default_rule.severity_filter[1]"],
    [{ default_rule: { success_count_to_recover: 0 } }, "default_rule.success_count_to_recover"],
    [{ default_rule: { block_threshold: 0 } }, "default_rule.block_threshold"],
    [{ default_rule: { notify_user: "yes" } }, "default_rule.notify_user"],
    [{ domain_rules: { "a.com": { cooldown_seconds: -5 } } }, "domain_rules.a.com.cooldown_seconds"],
    [{ settings: { recovery_mode: "manual" } }, "settings.recovery_mode"],
    [{ settings: { nudge_level: "loud" } }, "settings.nudge_level"],
    [{ settings: { nudge_enabled: "true" } }, "settings.nudge_enabled"],
    [{ settings: { model_switch_strategy: "always" } }, "settings.model_switch_strategy"],
    [{ settings: { pattern_detection_enabled: 1 } }, "settings.pattern_detection_enabled"],
    [{ settings: { blocked_decision: "allow" } }, "settings.blocked_decision"],
    [{ settings: { preferred_models: "gpt" } }, "settings.preferred_models"],
    [{ model_switch: { min_success_rate_diff: 2 } }, "model_switch.min_success_rate_diff"],
    [{ extractors: [{ tool: "x", kind: "regex", field: "a" }] }, "extractors[0].kind"],
    [{ extractors: [{ tool: "x", kind: "path", field: "" }] }, "extractors[0].field"],
    [{ security_patterns: ["ok", "(unclosed"] }, "security_patterns[1]"],
    [{ retention_days: 0 }, "retention_days"],
    [{ retention_days: 3651 }, "retention_days"],
    [{ patterns: { planning_loop: { minor: 5, moderate: 4 } } }, "patterns.planning_loop.moderate"],
    [{ patterns: { planning_loop: { moderate: 5, severe: 4 } } }, "patterns.planning_loop.severe"],
    [{ patterns: { planning_loop: { minor: 0 } } }, "patterns.planning_loop.minor"],
  ])("%j is rejected at %s", (doc, path) => {
    const r = parseConfigDocument(doc);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toContain(path);
  });

  it("an invalid security pattern's message names its index", () => {
    const r = parseConfigDocument({ security_patterns: ["a", "b", "[z-a]"] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0].message).toContain("security_patterns[2]");
  });

  it("a non-object is rejected", () => {
    expect(parseConfigDocument([]).ok).toBe(false);
    expect(parseConfigDocument("x").ok).toBe(false);
  });

  it("every known severity is accepted in a filter", () => {
    expect(parseConfigDocument({ default_rule: { severity_filter: [...SEVERITIES] } }).ok).toBe(true);
  });

  it("refuses __proto__ as a rule name instead of silently dropping it", () => {
    const r = parseConfigDocument(JSON.parse('{"tool_rules":{"__proto__":{"count_threshold":2}}}'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0].message).toContain("__proto__");
  });

  it("property: valid rule documents round-trip", () => {
    const rule = fc.record(
      {
        count_threshold: fc.integer({ min: 1, max: 100 }),
        consecutive_threshold: fc.integer({ min: 1, max: 100 }),
        rate_threshold: fc.double({ min: 0.01, max: 1, noNaN: true }),
        window_seconds: fc.integer({ min: 1, max: 100000 }),
        severity_filter: fc.subarray([...SEVERITIES]),
        notify_user: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.record({ default_rule: rule, tool_rules: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k !== "__proto__"), rule) }, { requiredKeys: [] }), (doc) => {
        const r = parseConfigDocument(doc);
        expect(r.ok).toBe(true);
        if (r.ok) expect(toSnakeDocument(r.doc)).toEqual(doc);
      }),
    );
  });
});

describe("mergeEffectiveConfig", () => {
  it("built-in defaults", () => {
    const e = mergeEffectiveConfig({}, {});
    expect(e.patterns).toEqual(DEFAULT_PATTERN_CONFIG);
    expect(e.securityPatterns).toEqual([...DEFAULT_SECURITY_PATTERNS]);
    expect(e.modelSwitch).toEqual({ failureThreshold: 3, minSuccessRateDiff: 0.3, minAttempts: 3 });
    expect(DEFAULT_MODEL_SWITCH).toEqual(e.modelSwitch);
    expect(e.retentionDays).toBe(30);
    expect(DEFAULT_RETENTION_DAYS).toBe(30);
    expect(e.extractors).toEqual([]);
  });

  it("SPEC 5 table defaults", () => {
    expect(DEFAULT_PATTERN_CONFIG.introspectionTools).toEqual(["list_tools", "get_tool_schemas", "askPermission"]);
    expect(DEFAULT_PATTERN_CONFIG.readOnlyTools).toEqual([
      "readFile", "list_tools", "get_tool_schemas", "glob", "grep", "Read", "Glob", "Grep", "LS", "read_file", "list_files", "search_files",
    ]);
    expect(DEFAULT_PATTERN_CONFIG.actionTools).toEqual([
      "writeFile", "updateFile", "bash", "removeFile", "Write", "Edit", "MultiEdit", "Bash",
      "execute_bash", "terminal", "execute_command", "write_to_file", "replace_in_file", "str_replace_editor",
    ]);
    expect(DEFAULT_PATTERN_CONFIG.volatileArgFields).toEqual(["description", "task_progress", "timeout", "request_id"]);
    expect(DEFAULT_PATTERN_CONFIG.announcePhrases).toEqual(["proceeding now", "let me", "i'll now", "executing", "running", "starting", "proceeding"]);
    expect(Object.keys(DEFAULT_PATTERN_CONFIG.thresholds).sort()).toEqual([...PATTERN_TYPES].sort());
    expect(DEFAULT_PATTERN_CONFIG.thresholds.announce_no_action).toEqual({ minor: 2, moderate: 3, severe: 4 });
    expect(DEFAULT_PATTERN_CONFIG.thresholds.read_only_loop).toEqual({ minor: 3, moderate: 5, severe: 8 });
    expect(DEFAULT_PATTERN_CONFIG.thresholds.alternating_calls).toEqual({ minor: 4, moderate: 6, severe: 8 });
    expect(DEFAULT_PATTERN_CONFIG.thresholds.empty_response).toEqual({ minor: 1, moderate: 2, severe: 3 });
    expect(DEFAULT_PATTERN_CONFIG.thresholds.introspection_loop).toEqual({ minor: 2, moderate: 4, severe: 6 });
  });

  it("workspace over organization over built-ins", () => {
    const e = mergeEffectiveConfig(
      {
        securityPatterns: ["ws"],
        patterns: { actionTools: ["Write"], thresholds: { repetitive_calls: { minor: 2 } } },
        modelSwitch: { minAttempts: 10 },
      },
      {
        securityPatterns: ["org"],
        extractors: [{ tool: "x", kind: "hash", field: "*" }],
        patterns: { readOnlyTools: ["Read"], thresholds: { repetitive_calls: { moderate: 5 } } },
        modelSwitch: { failureThreshold: 7, minAttempts: 4 },
        retentionDays: 60,
      },
    );
    expect(e.securityPatterns).toEqual(["ws"]);
    expect(e.extractors).toEqual([{ tool: "x", kind: "hash", field: "*" }]);
    expect(e.patterns.actionTools).toEqual(["Write"]);
    expect(e.patterns.readOnlyTools).toEqual(["Read"]);
    expect(e.patterns.introspectionTools).toEqual(DEFAULT_PATTERN_CONFIG.introspectionTools);
    expect(e.patterns.thresholds.repetitive_calls).toEqual({ minor: 2, moderate: 5, severe: 6 }); // severe 5 (default) lifted above moderate
    expect(e.modelSwitch).toEqual({ failureThreshold: 7, minSuccessRateDiff: 0.3, minAttempts: 10 });
    expect(e.retentionDays).toBe(60);
  });

  it("merged ladders stay monotonic", () => {
    const e = mergeEffectiveConfig({ patterns: { thresholds: { planning_loop: { minor: 9 } } } }, {});
    expect(e.patterns.thresholds.planning_loop).toEqual({ minor: 9, moderate: 10, severe: 11 });
  });

  it("configured equal levels stay equal; a workspace's minor meets its organization's jump", () => {
    const jump = mergeEffectiveConfig({ patterns: { thresholds: { repetitive_calls: { minor: 4, moderate: 4, severe: 4 } } } }, {});
    expect(jump.patterns.thresholds.repetitive_calls).toEqual({ minor: 4, moderate: 4, severe: 4 });
    const layered = mergeEffectiveConfig(
      { patterns: { thresholds: { repetitive_calls: { minor: 6 } } } },
      { patterns: { thresholds: { repetitive_calls: { moderate: 4, severe: 4 } } } },
    );
    expect(layered.patterns.thresholds.repetitive_calls).toEqual({ minor: 6, moderate: 6, severe: 6 });
  });

  it("default lists are copies", () => {
    const e = mergeEffectiveConfig({}, {});
    e.patterns.actionTools.push("x");
    e.securityPatterns.push("y");
    expect(DEFAULT_PATTERN_CONFIG.actionTools).not.toContain("x");
    expect(DEFAULT_SECURITY_PATTERNS).not.toContain("y");
  });

  it("the documents feed rule resolution", () => {
    const ws = parseConfigDocument(SEED_FILE);
    if (!ws.ok) throw new Error("invalid");
    const e = mergeEffectiveConfig(ws.doc, {});
    const r = resolveRule(e.workspace, e.organization, { toolName: "http_request", domain: "api.production.com", pluginName: "cli" });
    expect(r).toMatchObject({ level: "domain", rule: { countThreshold: 2, consecutiveThreshold: 2, escalationDurationSeconds: 3600, windowSeconds: 3600 } });
    const p = resolveRule(e.workspace, e.organization, { toolName: "bash", pluginName: "cli" });
    expect(p).toMatchObject({ level: "plugin", rule: { countThreshold: 5, severityFilter: ["crash", "security"] } });
  });
});
