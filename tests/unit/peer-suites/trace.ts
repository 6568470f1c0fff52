/**
 * A small driver for replaying agent traces through the pure behaviour engine, the way the shell
 * does (tool.call → tool.result with the call's args borrowed by callId). Used by the peer-suite
 * translations and the engine's own tests.
 */
import { argsHash } from "@/server/engine/failure-key";
import {
  BUILTIN_PATTERN_CONFIG,
  createSessionBehaviour,
  observeSessionEvent,
  type BehaviourEvent,
  type BehaviourSettings,
  type NudgeVerdict,
  type SessionBehaviour,
} from "@/server/engine/patterns";
import type { Effect, JsonObject, PatternConfig, PatternType } from "@/server/engine/types";

export const DEFAULT_SETTINGS: BehaviourSettings = { nudgeLevel: "interrupt", nudgeEnabled: true, patternDetectionEnabled: true };

export type Outcome = { ok: unknown } | { error: unknown } | Record<string, never>;

export class Trace {
  state: SessionBehaviour;
  now = 1_000;
  step = 0;
  /** Every effect, with the step (event number, 1-based) that produced it. */
  log: { step: number; effect: Effect }[] = [];
  verdicts: NudgeVerdict[] = [];
  private n = 0;

  constructor(
    public patterns: PatternConfig = BUILTIN_PATTERN_CONFIG,
    public settings: BehaviourSettings = DEFAULT_SETTINGS,
    public sessionId = "s1",
  ) {
    this.state = createSessionBehaviour(sessionId);
  }

  feed(event: BehaviourEvent): Effect[] {
    this.step += 1;
    const r = observeSessionEvent(this.state, event, { patterns: this.patterns, settings: this.settings }, (this.now += 1000));
    this.state = r.state;
    this.verdicts.push(...r.verdicts);
    for (const effect of r.effects) this.log.push({ step: this.step, effect });
    return r.effects;
  }

  private base() {
    return { id: `e${++this.n}`, sessionId: this.sessionId, ts: this.now };
  }

  /** A tool call; returns its callId. */
  call(toolName: string, args: JsonObject = {}): string {
    const callId = `c${this.n + 1}`;
    const h = argsHash(args);
    this.feed({ ...this.base(), type: "tool.call", callId, toolName, args, failureKey: `${toolName}|${h}`, argsHash: h });
    return callId;
  }

  /** The result of `callId` (no args: the engine finds the call's identity, as the shell does). */
  result(callId: string, toolName: string, outcome: Outcome = {}): Effect[] {
    const failed = "error" in outcome;
    return this.feed({
      ...this.base(),
      type: "tool.result",
      callId,
      toolName,
      success: !failed,
      ...(failed ? { error: outcome.error as string } : {}),
      ...("ok" in outcome ? { result: outcome.ok } : {}),
      failureKey: `${toolName}|?`,
      argsHash: "?",
      failed,
    });
  }

  /** A call followed by its result. */
  act(toolName: string, args: JsonObject, outcome: Outcome = {}): Effect[] {
    const id = this.call(toolName, args);
    return this.result(id, toolName, outcome);
  }

  text(text: string, reasoningOnly?: boolean): Effect[] {
    return this.feed({ ...this.base(), type: "model.text", text, ...(reasoningOnly !== undefined ? { reasoningOnly } : {}) });
  }

  user(text = "…"): Effect[] {
    return this.feed({ ...this.base(), type: "user.message", text });
  }

  /** A message the framework sends by itself (headless "Please continue"). */
  automated(text = "Please continue with the task."): Effect[] {
    return this.feed({ ...this.base(), type: "user.message", text, automated: true });
  }

  turn(turnIndex: number): Effect[] {
    return this.feed({ ...this.base(), type: "turn.start", turnIndex });
  }

  get effects(): Effect[] {
    return this.log.map((l) => l.effect);
  }

  nudges() {
    return this.log.flatMap((l) => (l.effect.type === "nudge" ? [{ step: l.step, ...l.effect }] : []));
  }

  patternsOf(type?: PatternType) {
    return this.log.flatMap((l) => (l.effect.type === "pattern" && (!type || l.effect.patternType === type) ? [{ step: l.step, ...l.effect }] : []));
  }

  /** Whether Vigil intervened (a nudge or a pause) at all so far. */
  get intervened(): boolean {
    return this.log.some((l) => l.effect.type === "nudge" || l.effect.type === "paused");
  }

  get paused(): boolean {
    return this.state.paused;
  }
}

/** A pattern config with extra tools added to the classes (the peers' tools). */
export function withTools(extra: { readOnly?: string[]; action?: string[]; introspection?: string[] }): PatternConfig {
  const c = BUILTIN_PATTERN_CONFIG;
  return {
    ...c,
    readOnlyTools: [...c.readOnlyTools, ...(extra.readOnly ?? [])],
    actionTools: [...c.actionTools, ...(extra.action ?? [])],
    introspectionTools: [...c.introspectionTools, ...(extra.introspection ?? [])],
  };
}
