/**
 * Raw behaviour events (calls without results) and a session that folds them one at a time, as the
 * seed's examples are written. Test support (vitest only).
 */
import { BUILTIN_PATTERN_CONFIG, createSessionBehaviour, observeSessionEvent, type BehaviourEvent, type SessionBehaviour } from "../patterns";
import type { Effect } from "../types";

export const SID = "s1";
let seq = 0;
/** The fields every raw event has, with the next id. */
export const base = () => ({ id: `e${++seq}`, sessionId: SID, ts: 0 });
export const call = (toolName: string, args: Record<string, unknown> = {}): BehaviourEvent => ({
  ...base(), type: "tool.call", callId: `c${seq}`, toolName, args, failureKey: toolName, argsHash: "h",
});
export const text = (t: string): BehaviourEvent => ({ ...base(), type: "model.text", text: t });
export const turn = (i: number): BehaviourEvent => ({ ...base(), type: "turn.start", turnIndex: i });

/** One session with every nudge level on, a second apart per event. */
export class Session {
  state: SessionBehaviour = createSessionBehaviour(SID);
  now = 1_000;
  feed(...events: BehaviourEvent[]): Effect[] {
    const out: Effect[] = [];
    for (const e of events) {
      const r = observeSessionEvent(this.state, e, { patterns: BUILTIN_PATTERN_CONFIG, settings: { nudgeLevel: "interrupt", nudgeEnabled: true, patternDetectionEnabled: true } }, (this.now += 1000));
      this.state = r.state;
      out.push(...r.effects);
    }
    return out;
  }
}
