/**
 * Settings (SPEC 6): built-in defaults, resolution session > workspace > organization > default
 * with the source of every value, the session-settings input schema (zod v4) and patches.
 */
import { SETTINGS, defaultsOf, namesOf, registryObjectSchema } from "./registry";
import type { EffectiveSettings, SessionSettingsInput, SettingName, SettingSource, SettingValues } from "./types";

export const DEFAULT_SETTINGS: Readonly<SettingValues> = Object.freeze(defaultsOf(SETTINGS) as SettingValues);

export const SETTING_NAMES: readonly SettingName[] = namesOf(SETTINGS);

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
// Input schemas (camelCase), derived from the registry. `null` clears a session override.
// ---------------------------------------------------------------------------

const unknownSettings = (keys: readonly string[]) =>
  `unknown setting${keys.length > 1 ? "s" : ""}: ${keys.join(", ")} (known: ${SETTING_NAMES.join(", ")})`;

/**
 * Session settings input (`session.start.settings`, `sessions.setSettings.settings`): every
 * setting optional, `null` clears the session override, unknown names are rejected.
 */
export const sessionSettingsInputSchema = registryObjectSchema(SETTINGS, "camel", (f) => f.nullable().optional(), {
  error: (iss) =>
    iss.code === "unrecognized_keys" ? unknownSettings(iss.keys) : iss.code === "invalid_type" ? "settings must be an object" : undefined,
});

/** Same shape without nulls: a stored level (workspace / organization settings). */
export const settingsLevelSchema = registryObjectSchema(SETTINGS, "camel", (f) => f.optional(), {
  error: (iss) => (iss.code === "unrecognized_keys" ? unknownSettings(iss.keys) : undefined),
});

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
