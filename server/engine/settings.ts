/**
 * Settings (SPEC 6): built-in defaults, resolution session > workspace > organization > default
 * with the source of every value, the session-settings input schema (zod v4) and patches.
 */
import { z } from "zod";
import {
  NUDGE_LEVELS,
  type EffectiveSettings,
  type SessionSettingsInput,
  type SettingName,
  type SettingSource,
  type SettingValues,
} from "./types";

export const DEFAULT_SETTINGS: Readonly<SettingValues> = Object.freeze({
  nudgeLevel: "interrupt",
  nudgeEnabled: true,
  recoveryMode: "auto",
  modelSwitchStrategy: "suggest",
  patternDetectionEnabled: true,
  blockedDecision: "ask",
  preferredModels: [] as string[],
});

export const SETTING_NAMES: readonly SettingName[] = [
  "nudgeLevel",
  "nudgeEnabled",
  "recoveryMode",
  "modelSwitchStrategy",
  "patternDetectionEnabled",
  "blockedDecision",
  "preferredModels",
];

/** A level's settings: a missing or null value means "not set at this level, inherit". */
export type SettingsLevel = { [K in SettingName]?: SettingValues[K] | null } | null | undefined;

function copyValue<V>(v: V): V {
  return (Array.isArray(v) ? [...v] : v) as V;
}

/**
 * Resolves every setting: session > workspace > organization > built-in default, returning the
 * value and its source. A level's value counts when it is neither undefined nor null (an empty
 * `preferredModels` list set at a level is a value: "no preference" decided there).
 */
export function resolveSettings(
  session: SettingsLevel,
  workspace: SettingsLevel,
  organization: SettingsLevel,
): EffectiveSettings {
  const levels: [SettingSource, SettingsLevel][] = [
    ["session", session],
    ["workspace", workspace],
    ["organization", organization],
  ];
  const out: Partial<Record<SettingName, { value: unknown; source: SettingSource }>> = {};
  for (const name of SETTING_NAMES) {
    let resolved: { value: unknown; source: SettingSource } | null = null;
    for (const [source, level] of levels) {
      const v = level?.[name];
      if (v !== undefined && v !== null) {
        resolved = { value: copyValue(v), source };
        break;
      }
    }
    out[name] = resolved ?? { value: copyValue(DEFAULT_SETTINGS[name]), source: "default" };
  }
  return out as EffectiveSettings;
}

/** The plain values of resolved settings. */
export function settingValues(effective: EffectiveSettings): SettingValues {
  const out: Partial<Record<SettingName, unknown>> = {};
  for (const name of SETTING_NAMES) out[name] = copyValue(effective[name].value);
  return out as SettingValues;
}

// ---------------------------------------------------------------------------
// Input schema (camelCase). `null` clears a session override.
// ---------------------------------------------------------------------------

function oneOf<const T extends readonly [string, ...string[]]>(name: string, values: T) {
  return z.enum(values, { error: `${name} must be one of ${values.join(", ")}` });
}

function bool(name: string) {
  return z.boolean({ error: `${name} must be true or false` });
}

export const settingValueSchemas = {
  nudgeLevel: oneOf("nudgeLevel", NUDGE_LEVELS),
  nudgeEnabled: bool("nudgeEnabled"),
  recoveryMode: oneOf("recoveryMode", ["auto", "ask"] as const),
  modelSwitchStrategy: oneOf("modelSwitchStrategy", ["disabled", "suggest", "auto"] as const),
  patternDetectionEnabled: bool("patternDetectionEnabled"),
  blockedDecision: oneOf("blockedDecision", ["ask", "deny"] as const),
  preferredModels: z
    .array(
      z
        .string({ error: "preferredModels must be a list of model names" })
        .min(1, { error: "preferredModels entries must be non-empty model names" })
        .max(256, { error: "preferredModels entries must be at most 256 characters" }),
      { error: "preferredModels must be a list of model names" },
    )
    .max(100, { error: "preferredModels may list at most 100 models" }),
} as const;

/**
 * Session settings input (`session.start.settings`, `sessions.setSettings.settings`): every
 * setting optional, `null` clears the session override, unknown names are rejected.
 */
export const sessionSettingsInputSchema = z.strictObject(
  {
    nudgeLevel: settingValueSchemas.nudgeLevel.nullable().optional(),
    nudgeEnabled: settingValueSchemas.nudgeEnabled.nullable().optional(),
    recoveryMode: settingValueSchemas.recoveryMode.nullable().optional(),
    modelSwitchStrategy: settingValueSchemas.modelSwitchStrategy.nullable().optional(),
    patternDetectionEnabled: settingValueSchemas.patternDetectionEnabled.nullable().optional(),
    blockedDecision: settingValueSchemas.blockedDecision.nullable().optional(),
    preferredModels: settingValueSchemas.preferredModels.nullable().optional(),
  },
  {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? `unknown setting${iss.keys.length > 1 ? "s" : ""}: ${iss.keys.join(", ")} (known: ${SETTING_NAMES.join(", ")})`
        : iss.code === "invalid_type"
          ? "settings must be an object"
          : undefined,
  },
);

/** Same shape without nulls: a stored level (workspace / organization settings). */
export const settingsLevelSchema = z.strictObject(
  {
    nudgeLevel: settingValueSchemas.nudgeLevel.optional(),
    nudgeEnabled: settingValueSchemas.nudgeEnabled.optional(),
    recoveryMode: settingValueSchemas.recoveryMode.optional(),
    modelSwitchStrategy: settingValueSchemas.modelSwitchStrategy.optional(),
    patternDetectionEnabled: settingValueSchemas.patternDetectionEnabled.optional(),
    blockedDecision: settingValueSchemas.blockedDecision.optional(),
    preferredModels: settingValueSchemas.preferredModels.optional(),
  },
  {
    error: (iss) =>
      iss.code === "unrecognized_keys"
        ? `unknown setting${iss.keys.length > 1 ? "s" : ""}: ${iss.keys.join(", ")} (known: ${SETTING_NAMES.join(", ")})`
        : undefined,
  },
);

export type ParseSettingsResult =
  | { ok: true; value: SessionSettingsInput }
  | { ok: false; errors: { path: string; message: string }[] };

/** Validates session settings input; errors carry the offending path and a message naming it. */
export function parseSessionSettings(input: unknown): ParseSettingsResult {
  const r = sessionSettingsInputSchema.safeParse(input);
  if (r.success) return { ok: true, value: r.data as SessionSettingsInput };
  return {
    ok: false,
    errors: r.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message })),
  };
}

/**
 * Applies a patch to a level's overrides: a value sets, `null` deletes, `undefined` / absent
 * keeps. Returns a new object that never contains nulls.
 */
export function applySettingsPatch(
  current: SessionSettingsInput | null | undefined,
  patch: SessionSettingsInput,
): SessionSettingsInput {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const v = current?.[name];
    if (v !== undefined && v !== null) out[name] = copyValue(v);
  }
  for (const name of SETTING_NAMES) {
    if (!(name in patch)) continue;
    const v = patch[name];
    if (v === null) delete out[name];
    else if (v !== undefined) out[name] = copyValue(v);
  }
  return out as SessionSettingsInput;
}
