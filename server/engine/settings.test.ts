import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  applySettingsPatch,
  DEFAULT_SETTINGS,
  parseSessionSettings,
  resolveSettings,
  sessionSettingsInputSchema,
  settingsLevelSchema,
  settingValues,
  SETTING_NAMES,
} from "./settings";

describe("resolveSettings", () => {
  it("built-in defaults, source default", () => {
    const eff = resolveSettings(undefined, null, {});
    expect(eff).toEqual({
      nudgeLevel: { value: "interrupt", source: "default" },
      nudgeEnabled: { value: true, source: "default" },
      recoveryMode: { value: "auto", source: "default" },
      modelSwitchStrategy: { value: "suggest", source: "default" },
      patternDetectionEnabled: { value: true, source: "default" },
      blockedDecision: { value: "ask", source: "default" },
      enforcement: { value: "enforce", source: "default" },
      maxToolCallsPerSession: { value: null, source: "default" },
      openCallSeconds: { value: 600, source: "default" },
      sessionIdleMinutes: { value: 30, source: "default" },
      preferredModels: { value: [], source: "default" },
    });
    expect(settingValues(eff)).toEqual(DEFAULT_SETTINGS);
  });

  it("session > workspace > organization > default, each with its source", () => {
    const eff = resolveSettings(
      { nudgeLevel: "gentle", nudgeEnabled: null },
      { nudgeLevel: "direct", nudgeEnabled: false, recoveryMode: "ask" },
      { nudgeLevel: "off", recoveryMode: "auto", modelSwitchStrategy: "auto", preferredModels: ["m1", "m2"] },
    );
    expect(eff.nudgeLevel).toEqual({ value: "gentle", source: "session" });
    expect(eff.nudgeEnabled).toEqual({ value: false, source: "workspace" });
    expect(eff.recoveryMode).toEqual({ value: "ask", source: "workspace" });
    expect(eff.modelSwitchStrategy).toEqual({ value: "auto", source: "organization" });
    expect(eff.preferredModels).toEqual({ value: ["m1", "m2"], source: "organization" });
    expect(eff.blockedDecision).toEqual({ value: "ask", source: "default" });
    expect(eff.patternDetectionEnabled).toEqual({ value: true, source: "default" });
  });

  it("false and [] are values, not 'unset'", () => {
    const eff = resolveSettings({ patternDetectionEnabled: false, preferredModels: [] }, null, { preferredModels: ["x"] });
    expect(eff.patternDetectionEnabled).toEqual({ value: false, source: "session" });
    expect(eff.preferredModels).toEqual({ value: [], source: "session" });
  });

  it("does not share arrays with its inputs or the defaults", () => {
    const org = { preferredModels: ["a"] };
    const eff = resolveSettings(null, null, org);
    eff.preferredModels.value.push("b");
    expect(org.preferredModels).toEqual(["a"]);
    resolveSettings(null, null, null).preferredModels.value.push("z");
    expect(DEFAULT_SETTINGS.preferredModels).toEqual([]);
  });

  it("property: the source is the highest level that sets the value", () => {
    const level = fc.record(
      { nudgeLevel: fc.option(fc.constantFrom("off", "gentle", "direct", "interrupt" as const), { nil: undefined }) },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(level, level, level, (s, w, o) => {
        const eff = resolveSettings(s, w, o);
        const expected =
          s.nudgeLevel != null
            ? { value: s.nudgeLevel, source: "session" }
            : w.nudgeLevel != null
              ? { value: w.nudgeLevel, source: "workspace" }
              : o.nudgeLevel != null
                ? { value: o.nudgeLevel, source: "organization" }
                : { value: "interrupt", source: "default" };
        expect(eff.nudgeLevel).toEqual(expected);
      }),
    );
  });
});

describe("session settings schema", () => {
  it("accepts every setting, and null to clear", () => {
    const input = {
      nudgeLevel: "direct",
      nudgeEnabled: false,
      recoveryMode: "ask",
      modelSwitchStrategy: "disabled",
      patternDetectionEnabled: true,
      blockedDecision: "deny",
      preferredModels: ["a", "b"],
    };
    expect(parseSessionSettings(input)).toEqual({ ok: true, value: input });
    const nulls = Object.fromEntries(SETTING_NAMES.map((n) => [n, null]));
    expect(parseSessionSettings(nulls)).toEqual({ ok: true, value: nulls });
    expect(parseSessionSettings({})).toEqual({ ok: true, value: {} });
  });

  it("rejects unknown names, naming them", () => {
    const r = parseSessionSettings({ nudgeLevel: "gentle", nudge_level: "gentle", colour: "red" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.message).toContain("nudge_level");
    expect(r.errors[0]!.message).toContain("colour");
  });

  it("rejects bad values with the setting's name and path", () => {
    const r = parseSessionSettings({ nudgeLevel: "loud", nudgeEnabled: "yes", recoveryMode: 1, blockedDecision: "pause", modelSwitchStrategy: "sometimes", preferredModels: [""] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const byPath = Object.fromEntries(r.errors.map((e) => [e.path, e.message]));
    expect(byPath.nudgeLevel).toBe("nudgeLevel must be one of off, gentle, direct, interrupt");
    expect(byPath.nudgeEnabled).toBe("nudgeEnabled must be true or false");
    expect(byPath.recoveryMode).toBe("recoveryMode must be one of auto, ask");
    expect(byPath.blockedDecision).toBe("blockedDecision must be one of ask, deny");
    expect(byPath.modelSwitchStrategy).toBe("modelSwitchStrategy must be one of disabled, suggest, auto");
    expect(byPath["preferredModels.0"]).toContain("preferredModels");
  });

  it("rejects a non-object", () => {
    expect(sessionSettingsInputSchema.safeParse("interrupt").success).toBe(false);
    expect(sessionSettingsInputSchema.safeParse(["x"]).success).toBe(false);
  });

  it("the level schema (workspace / organization) takes no nulls", () => {
    expect(settingsLevelSchema.safeParse({ nudgeLevel: "gentle" }).success).toBe(true);
    expect(settingsLevelSchema.safeParse({ nudgeLevel: null }).success).toBe(false);
    expect(settingsLevelSchema.safeParse({ extra: 1 }).success).toBe(false);
  });
});

describe("applySettingsPatch", () => {
  it("sets values, deletes on null, keeps absent ones", () => {
    const cur = { nudgeLevel: "gentle" as const, recoveryMode: "ask" as const, preferredModels: ["a"] };
    const next = applySettingsPatch(cur, { nudgeLevel: null, blockedDecision: "deny", preferredModels: ["b", "c"] });
    expect(next).toEqual({ recoveryMode: "ask", blockedDecision: "deny", preferredModels: ["b", "c"] });
    expect("nudgeLevel" in next).toBe(false);
    expect(cur).toEqual({ nudgeLevel: "gentle", recoveryMode: "ask", preferredModels: ["a"] });
  });

  it("clearing a session override falls back to the level below", () => {
    const ws = { nudgeLevel: "direct" as const };
    let session = applySettingsPatch(undefined, { nudgeLevel: "off" });
    expect(resolveSettings(session, ws, null).nudgeLevel).toEqual({ value: "off", source: "session" });
    session = applySettingsPatch(session, { nudgeLevel: null });
    expect(resolveSettings(session, ws, null).nudgeLevel).toEqual({ value: "direct", source: "workspace" });
    expect(resolveSettings(session, null, null).nudgeLevel).toEqual({ value: "interrupt", source: "default" });
  });

  it("patching with an empty patch copies; nulls in current are dropped", () => {
    expect(applySettingsPatch({ nudgeEnabled: false, recoveryMode: null }, {})).toEqual({ nudgeEnabled: false });
    expect(applySettingsPatch(null, {})).toEqual({});
  });
});
