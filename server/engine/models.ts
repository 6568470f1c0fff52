/**
 * Models (SPEC 6): per (workspace, model, failure key) tool profiles, model-switch suggestions,
 * and per (workspace, model) behavioural profiles. Pure.
 */
import type { SessionBehaviour } from "./behaviour-state";
import type { BehaviourStats } from "./patterns";
import { MODEL_SWITCH_FIELDS, defaultsOf } from "./registry";
import { PATTERN_TYPES, type Effect, type ModelSwitchConfig, type ModelSwitchStrategy, type PatternType } from "./types";

// ---------------------------------------------------------------------------
// Model tool profiles
// ---------------------------------------------------------------------------

export interface ModelToolProfile {
  model: string;
  failureKey: string;
  attempts: number;
  failures: number;
  /** Epoch ms of the last failure, null if none. */
  lastFailureAt: number | null;
}

export const DEFAULT_MODEL_SWITCH_CONFIG: ModelSwitchConfig = defaultsOf(MODEL_SWITCH_FIELDS);

function emptyModelToolProfile(model: string, failureKey: string): ModelToolProfile {
  return { model, failureKey, attempts: 0, failures: 0, lastFailureAt: null };
}

/** success rate = 1 − failures ÷ attempts; 1.0 with no attempts. */
export function successRate(p: { attempts: number; failures: number }): number {
  if (p.attempts <= 0) return 1;
  return 1 - p.failures / p.attempts;
}

/** Counts one tool result of `model` on `failureKey`. `profile` undefined → a new profile. */
export function recordModelToolResult(
  profile: ModelToolProfile | null | undefined,
  input: { model: string; failureKey: string; failed: boolean; now: number },
): ModelToolProfile {
  const p = profile ?? emptyModelToolProfile(input.model, input.failureKey);
  return {
    ...p,
    attempts: p.attempts + 1,
    failures: p.failures + (input.failed ? 1 : 0),
    lastFailureAt: input.failed ? input.now : p.lastFailureAt,
  };
}

/** SPEC 6: the model of a result is `event.model` ?? the session's model. */
export function resultModel(eventModel: string | null | undefined, sessionModel: string | null | undefined): string | null {
  return eventModel ?? sessionModel ?? null;
}

// ---------------------------------------------------------------------------
// Model switch
// ---------------------------------------------------------------------------

export interface SuggestModelSwitchInput {
  failureKey: string;
  /** Every profile for `failureKey` in the workspace (profiles of other keys are ignored). */
  profilesForKey: ModelToolProfile[];
  currentModel: string;
  strategy: ModelSwitchStrategy;
  preferredModels: string[];
  config: ModelSwitchConfig;
  /** True when this (session, key, current model) already got a suggestion: see `hasSuggestedModelSwitch`. */
  alreadySuggested: boolean;
}

/** Rates are compared with this tolerance (0.7 − 0.4 must count as ≥ 0.3). */
const EPSILON = 1e-9;

/**
 * SPEC 6 model switch. When the current model's profile for the key has ≥ failureThreshold
 * failures, the candidate with the best success rate among those with ≥ minAttempts attempts
 * is suggested if it beats the current rate by ≥ minSuccessRateDiff. Candidates: the
 * `preferredModels` when non-empty, else every model with a profile for the key; never the
 * current model. Ties: earlier in preferredModels, then by name. `disabled` → null; `auto` →
 * an instruction to switch (strategy "auto"). `alreadySuggested` → null (once per session, key,
 * current model).
 */
export function suggestModelSwitch(input: SuggestModelSwitchInput): Effect | null {
  const { failureKey, currentModel, strategy, preferredModels, config, alreadySuggested } = input;
  if (strategy === "disabled" || alreadySuggested) return null;

  const profiles = input.profilesForKey.filter((p) => p.failureKey === failureKey);
  const current = profiles.find((p) => p.model === currentModel);
  if (!current || current.failures < config.failureThreshold) return null;
  const currentRate = successRate(current);

  const allowed = preferredModels.length > 0 ? new Set(preferredModels) : null;
  const rank = (m: string) => {
    const i = preferredModels.indexOf(m);
    return i === -1 ? Number.MAX_SAFE_INTEGER : i;
  };

  const seen = new Set<string>();
  const candidates = profiles
    .filter((p) => {
      if (p.model === currentModel || seen.has(p.model)) return false;
      seen.add(p.model);
      return (allowed === null || allowed.has(p.model)) && p.attempts >= config.minAttempts;
    })
    .map((p) => ({ model: p.model, rate: successRate(p) }))
    .sort((a, b) => {
      if (Math.abs(b.rate - a.rate) > EPSILON) return b.rate - a.rate;
      const r = rank(a.model) - rank(b.model);
      if (r !== 0) return r;
      return a.model < b.model ? -1 : a.model > b.model ? 1 : 0;
    });

  const best = candidates[0];
  if (!best) return null;
  if (best.rate - currentRate + EPSILON < config.minSuccessRateDiff) return null;

  return {
    type: "model_suggestion",
    strategy: strategy === "auto" ? "auto" : "suggest",
    currentModel,
    suggestedModel: best.model,
    failureKey,
    currentSuccessRate: currentRate,
    suggestedSuccessRate: best.rate,
  };
}

/**
 * Once-only bookkeeping lives in the session's behaviour state (`modelSuggestions`), so a
 * server restart does not repeat a suggestion. The shell passes
 * `alreadySuggested: hasSuggestedModelSwitch(state, key, model)` and, when an effect comes back,
 * stores `recordModelSwitchSuggestion(state, key, model)`.
 */
function modelSuggestionKey(failureKey: string, currentModel: string): string {
  // Not a NUL-separated string: this lands in the session's jsonb behaviour state, and
  // PostgreSQL jsonb rejects \u0000 (every suggestion made ingest fail with a 500).
  return JSON.stringify([failureKey, currentModel]);
}

export function hasSuggestedModelSwitch(state: SessionBehaviour, failureKey: string, currentModel: string): boolean {
  return state.modelSuggestions.includes(modelSuggestionKey(failureKey, currentModel));
}

export function recordModelSwitchSuggestion(
  state: SessionBehaviour,
  failureKey: string,
  currentModel: string,
): SessionBehaviour {
  const key = modelSuggestionKey(failureKey, currentModel);
  if (state.modelSuggestions.includes(key)) return state;
  return { ...state, modelSuggestions: [...state.modelSuggestions, key] };
}

// ---------------------------------------------------------------------------
// Model behavioural profiles
// ---------------------------------------------------------------------------

export interface ModelBehaviourProfile {
  model: string;
  patternCounts: Partial<Record<PatternType, number>>;
  nudgesSent: number;
  nudgesEffective: number;
  turns: number;
  stalledTurns: number;
}

export function emptyModelBehaviourProfile(model: string): ModelBehaviourProfile {
  return { model, patternCounts: {}, nudgesSent: 0, nudgesEffective: 0, turns: 0, stalledTurns: 0 };
}

/** stalled ÷ turns (0 with no turns). */
export function stallRate(p: { turns: number; stalledTurns: number }): number {
  if (p.turns <= 0) return 0;
  return p.stalledTurns / p.turns;
}

/** effective ÷ sent (1.0 with none sent). */
export function nudgeEffectiveness(p: { nudgesSent: number; nudgesEffective: number }): number {
  if (p.nudgesSent <= 0) return 1;
  return p.nudgesEffective / p.nudgesSent;
}

/** The most frequent pattern type (ties → PATTERN_TYPES order), null if none. */
export function mostCommonPattern(p: { patternCounts: Partial<Record<PatternType, number>> }): PatternType | null {
  let best: PatternType | null = null;
  let bestN = 0;
  for (const t of PATTERN_TYPES) {
    const n = p.patternCounts[t] ?? 0;
    if (n > bestN) {
      best = t;
      bestN = n;
    }
  }
  return best;
}

/** Adds the counters `observeSessionEvent` returned to a model's behavioural profile. */
export function applyBehaviourStats(
  profile: ModelBehaviourProfile | null | undefined,
  model: string,
  stats: BehaviourStats,
): ModelBehaviourProfile {
  const p = profile ?? emptyModelBehaviourProfile(model);
  const patternCounts = { ...p.patternCounts };
  for (const t of PATTERN_TYPES) {
    const n = stats.patterns[t];
    if (n) patternCounts[t] = (patternCounts[t] ?? 0) + n;
  }
  return {
    ...p,
    patternCounts,
    nudgesSent: p.nudgesSent + stats.nudgesSent,
    nudgesEffective: p.nudgesEffective + stats.nudgesEffective,
    turns: p.turns + stats.turns,
    stalledTurns: p.stalledTurns + stats.stalledTurns,
  };
}
