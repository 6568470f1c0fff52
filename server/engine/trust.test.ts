import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { classifySeverity, DEFAULT_SECURITY_PATTERNS, REPEATED_AUTH_WINDOW_MS } from "./classify";
import { buildSessionTimeline, countFailuresInWindow, effectiveFailures, emptyTimeline, failureRate } from "./decay";
import { extractFailureKey } from "./failure-key";
import { BUILTIN_RULE, resolveRule } from "./rules";
import { applyOutcome, applyToolResult, approveRecovery, denyRecovery, MIN_HISTORY_MS, recoveryOf, resetKey, type Outcome } from "./trust";
import { clampClock, effectiveState, newKeyContext, newKeyState, strictestState } from "./key-state";
import { copyKeyContext, historyOf, keyMetrics, failureChanges, resultChanges, resultChunks, assembleResults, storedResultLog, RESULT_CHUNK_SIZE, EMPTY_LOG_SEQ, upgradeKeyContext } from "./key-history";
import { escalationInfo } from "./escalation";
import { guardDecision } from "./guard";
import {
  SEVERITIES,
  type ConfigDocument,
  type Effect,
  type FailureRecord,
  type KeyContext,
  type RecoveryMode,
  type ResolvedRule,
  type ResultLog,
  type StoredResultLog,
  type Rule,
  type SessionTimeline,
  type Severity,
} from "./types";

const T0 = 1_700_000_000_000;
const SEC = 1000;
const MIN = 60 * SEC;

const baseRule: Rule = { ...BUILTIN_RULE, severityFilter: [...BUILTIN_RULE.severityFilter] };
const fail = (severity: Severity = "server_error"): Outcome => ({ failed: true, severity, sessionId: "s1", agent: "default" });
const ok: Outcome = { failed: false, sessionId: "s1", agent: "default" };

/** A single key driven through outcomes. */
class Key {
  ctx: KeyContext;
  effects: Effect[] = [];
  last: Effect[] = [];
  constructor(
    public rule: Rule = baseRule,
    public mode: RecoveryMode = "auto",
    public timeline: SessionTimeline = emptyTimeline(),
    key = "http_request|domain=api.example.com|path_prefix=v1",
    tool = "http_request",
  ) {
    this.ctx = newKeyContext(key, tool);
  }
  get s() {
    return this.ctx.state;
  }
  apply(o: Outcome, at: number) {
    const r = applyOutcome(this.ctx, o, this.rule, this.mode, this.timeline, at);
    this.ctx = r.ctx;
    this.last = r.effects;
    this.effects.push(...r.effects);
    return r;
  }
  fail(at: number, sev: Severity = "server_error") {
    return this.apply(fail(sev), at);
  }
  ok(at: number) {
    return this.apply(ok, at);
  }
}

/** Escalates a fresh key with 3 server errors a minute apart; returns it escalated at T0+2min. */
function escalatedKey(rule: Rule = baseRule, mode: RecoveryMode = "auto") {
  const k = new Key(rule, mode);
  k.fail(T0);
  k.fail(T0 + MIN);
  k.fail(T0 + 2 * MIN);
  expect(k.s.state).toBe("escalated");
  return k;
}
const ESC_AT = T0 + 2 * MIN;
const EXPIRES = ESC_AT + 1800 * SEC;

describe("newKeyState / clampClock / effectiveState", () => {
  it("new states are trusted with empty counters", () => {
    const s = newKeyState("bash|command=ls", "bash");
    expect(s).toMatchObject({ state: "trusted", level: "key", consecutiveFailures: 0, totalCalls: 0, clock: null });
    expect(newKeyState("@domain:x", "t").level).toBe("domain");
    expect(newKeyState("@tool:bash", "bash").level).toBe("tool");
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });

  it("clock never goes backwards", () => {
    expect(clampClock(null, 5)).toBe(5);
    expect(clampClock(10, 5)).toBe(10);
    expect(clampClock(10, 15)).toBe(15);
  });

  it("strictest state: blocked > escalated > recovering > trusted", () => {
    expect(effectiveState([])).toBe("trusted");
    expect(effectiveState(["trusted", "recovering"])).toBe("recovering");
    expect(effectiveState(["recovering", "escalated", null])).toBe("escalated");
    expect(effectiveState(["escalated", "blocked", "trusted"])).toBe("blocked");
    const a = newKeyState("a", "t");
    const b = { ...newKeyState("@tool:t", "t"), state: "blocked" as const };
    expect(strictestState([a, null, b])).toBe(b);
    expect(strictestState([a])).toBe(a);
  });
});

describe("trusted → escalated", () => {
  it("by count: 3 in-filter failures (reason '3 failures in 3600s', expiry now + 1800s)", () => {
    const k = new Key();
    k.fail(T0);
    k.fail(T0 + MIN);
    expect(k.s.state).toBe("trusted");
    expect(k.last).toEqual([]);
    k.fail(T0 + 2 * MIN);
    expect(k.s).toMatchObject({
      state: "escalated",
      escalationReason: "3 failures in 3600s",
      escalatedAt: ESC_AT,
      escalationExpires: EXPIRES,
      escalationFailureCount: 3,
      escalationWindowSeconds: 3600,
      consecutiveFailures: 3,
      totalFailures: 3,
      totalCalls: 3,
    });
    expect(k.last).toHaveLength(1);
    expect(k.last[0]).toMatchObject({
      type: "escalated",
      failureKey: "http_request|domain=api.example.com|path_prefix=v1",
      toolName: "http_request",
      reason: "3 failures in 3600s",
      expiresAt: new Date(EXPIRES).toISOString(),
    });
    expect((k.last[0] as { message: string }).message).toContain("Tool 'http_request' escalated");
    expect((k.last[0] as { message: string }).message).toContain("domain=api.example.com");
  });

  it("failures outside the filter do not count toward the count threshold", () => {
    const k = new Key();
    for (let i = 0; i < 5; i++) k.fail(T0 + i * MIN, "timeout");
    expect(k.s.state).toBe("trusted");
  });

  it("invalid_input weighs half: 5 do not reach 3, 6 do", () => {
    const k = new Key({ ...baseRule, severityFilter: ["invalid_input"] });
    for (let i = 0; i < 5; i++) k.fail(T0 + i, "invalid_input");
    expect(k.s.state).toBe("trusted");
    k.fail(T0 + 6, "invalid_input");
    expect(k.s.state).toBe("escalated");
    expect(k.s.escalationReason).toBe("3 failures in 3600s");
  });

  it("by consecutive failures (any severity), reset by a success", () => {
    const rule = { ...baseRule, countThreshold: undefined, consecutiveThreshold: 2 };
    const k = new Key(rule);
    k.fail(T0, "not_found");
    k.ok(T0 + 1);
    k.fail(T0 + 2, "timeout");
    expect(k.s.state).toBe("trusted");
    expect(k.s.consecutiveFailures).toBe(1);
    k.fail(T0 + 3, "timeout");
    expect(k.s.state).toBe("escalated");
    expect(k.s.escalationReason).toBe("2 consecutive failures");
  });

  it("by failure rate (all severities, only with ≥ rateMinCalls results)", () => {
    const rule = { ...baseRule, countThreshold: undefined, rateThreshold: 0.6, rateMinCalls: 3 };
    const k = new Key(rule);
    k.fail(T0, "not_found");
    k.fail(T0 + 1, "not_found"); // 2 results: below rateMinCalls
    expect(k.s.state).toBe("trusted");
    k.ok(T0 + 2); // 2/3 = 67% but a success never escalates
    expect(k.s.state).toBe("trusted");
    k.fail(T0 + 3, "timeout"); // 3/4 = 75%
    expect(k.s.state).toBe("escalated");
    expect(k.s.escalationReason).toBe("75% failure rate");
  });

  it("rate reason is rounded: 2 of 3 → '67% failure rate'", () => {
    const rule = { ...baseRule, countThreshold: undefined, rateThreshold: 0.5, rateMinCalls: 3 };
    const k = new Key(rule);
    k.ok(T0);
    k.fail(T0 + 1, "timeout");
    expect(k.s.state).toBe("trusted"); // 1/2, below min calls
    k.fail(T0 + 2, "timeout");
    expect(k.s.escalationReason).toBe("67% failure rate");
  });

  it("thresholds that are not set are not used", () => {
    const rule = { ...baseRule, countThreshold: undefined };
    const k = new Key(rule);
    for (let i = 0; i < 10; i++) k.fail(T0 + i);
    expect(k.s.state).toBe("trusted");
  });

  it("count is checked before consecutive and rate", () => {
    const rule = { ...baseRule, countThreshold: 2, consecutiveThreshold: 2, rateThreshold: 0.1, rateMinCalls: 2 };
    const k = new Key(rule);
    k.fail(T0);
    k.fail(T0 + 1);
    expect(k.s.escalationReason).toBe("2 failures in 3600s");
  });

  it("decayed failures: 3 failures spread over hours do not reach 3", () => {
    const k = new Key({ ...baseRule, windowSeconds: 24 * 3600 });
    k.fail(T0);
    k.fail(T0 + 61 * MIN);
    k.fail(T0 + 122 * MIN); // 0.8 + 0.9 + 1.0 = 2.7
    expect(k.s.state).toBe("trusted");
  });

  it("notify: false escalates silently", () => {
    const k = escalatedKey({ ...baseRule, notify: false });
    expect(k.effects).toEqual([]);
  });
});

describe("escalated", () => {
  it("more failures keep it escalated and do not extend the expiry", () => {
    const k = escalatedKey();
    k.fail(T0 + 10 * MIN);
    expect(k.s.state).toBe("escalated");
    expect(k.s.escalationExpires).toBe(EXPIRES);
    expect(k.s.escalatedAt).toBe(ESC_AT);
    expect(k.last).toEqual([]);
    expect(k.s.escalationFailureCount).toBe(4);
  });

  it("a success before expiry keeps it escalated", () => {
    const k = escalatedKey();
    k.ok(EXPIRES - 1);
    expect(k.s.state).toBe("escalated");
    expect(k.s.consecutiveFailures).toBe(0);
  });

  it("a success at exactly now == expires (cooldown passed) starts recovery with 1 success", () => {
    const k = escalatedKey();
    k.ok(EXPIRES);
    expect(k.s).toMatchObject({ state: "recovering", recoverySuccesses: 1, recoveryNeeded: 3 });
    expect(k.last).toEqual([{ type: "recovering", failureKey: k.s.failureKey, successes: 1, needed: 3 }]);
  });

  it("cooldown not yet passed: stays escalated after expiry", () => {
    const k = escalatedKey();
    k.fail(EXPIRES - 5 * MIN); // last failure 5 min before expiry; cooldown 15 min
    k.ok(EXPIRES);
    expect(k.s.state).toBe("escalated");
    k.ok(EXPIRES - 5 * MIN + 15 * MIN - 1);
    expect(k.s.state).toBe("escalated");
    k.ok(EXPIRES - 5 * MIN + 15 * MIN);
    expect(k.s.state).toBe("recovering");
  });

  it("blockThreshold: effective failures since escalation reaching it → blocked", () => {
    const k = escalatedKey({ ...baseRule, blockThreshold: 2 });
    k.fail(T0 + 3 * MIN, "timeout"); // not in filter: does not count
    k.fail(T0 + 4 * MIN);
    expect(k.s.state).toBe("escalated");
    k.fail(T0 + 5 * MIN);
    expect(k.s.state).toBe("blocked");
    expect(k.s.escalationReason).toBe("2 failures since escalation (block threshold 2)");
    expect(k.last).toHaveLength(1);
    expect(k.last[0]).toMatchObject({ type: "blocked", reason: "2 failures since escalation (block threshold 2)" });
  });

  it("blockThreshold counts failures applied at the same millisecond as the escalation", () => {
    const k = new Key({ ...baseRule, blockThreshold: 1 });
    k.fail(T0);
    k.fail(T0);
    k.fail(T0);
    expect(k.s.state).toBe("escalated");
    k.fail(T0);
    expect(k.s.state).toBe("blocked");
  });
});

describe("recovering", () => {
  function recoveringKey(mode: RecoveryMode = "auto") {
    const k = escalatedKey(baseRule, mode);
    k.ok(EXPIRES);
    expect(k.s.state).toBe("recovering");
    return k;
  }

  it("auto: successes count up to successCountToRecover → trusted with a recovered effect", () => {
    const k = recoveringKey();
    k.ok(EXPIRES + 1);
    expect(k.s.recoverySuccesses).toBe(2);
    expect(k.last).toEqual([{ type: "recovering", failureKey: k.s.failureKey, successes: 2, needed: 3 }]);
    k.ok(EXPIRES + 2);
    expect(k.s).toMatchObject({
      state: "trusted",
      escalatedAt: null,
      escalationReason: null,
      escalationExpires: null,
      recoverySuccesses: 0,
      approvalPending: false,
    });
    expect(k.last).toHaveLength(1);
    expect(k.last[0]).toMatchObject({ type: "recovered", toolName: "http_request" });
    expect((k.last[0] as { message: string }).message).toContain("Tool 'http_request' recovered");
  });

  it("after recovery the old failures no longer count", () => {
    const k = recoveringKey();
    k.ok(EXPIRES + 1);
    k.ok(EXPIRES + 2);
    k.fail(EXPIRES + 3);
    expect(k.s.state).toBe("trusted");
    expect(keyMetrics(k.ctx, baseRule, emptyTimeline()).effectiveFailures).toBe(1);
  });

  it("an in-filter failure → escalated with a fresh window, progress reset", () => {
    const k = recoveringKey();
    k.ok(EXPIRES + 1);
    k.fail(EXPIRES + 2, "crash");
    expect(k.s).toMatchObject({
      state: "escalated",
      escalatedAt: EXPIRES + 2,
      escalationExpires: EXPIRES + 2 + 1800 * SEC,
      recoverySuccesses: 0,
      escalationReason: "crash failure during recovery",
    });
    expect(k.last[0]).toMatchObject({ type: "escalated", expiresAt: new Date(EXPIRES + 2 + 1800 * SEC).toISOString() });
  });

  it("a failure outside the filter only resets progress", () => {
    const k = recoveringKey();
    k.ok(EXPIRES + 1);
    k.fail(EXPIRES + 2, "not_found");
    expect(k.s).toMatchObject({ state: "recovering", recoverySuccesses: 0, recoveryNeeded: 3 });
    expect(k.last).toEqual([{ type: "recovering", failureKey: k.s.failureKey, successes: 0, needed: 3 }]);
    k.ok(EXPIRES + 3);
    k.ok(EXPIRES + 4);
    expect(k.s.state).toBe("recovering");
    k.ok(EXPIRES + 5);
    expect(k.s.state).toBe("trusted");
  });

  it("ask: recovery_pending once, stays recovering until approved", () => {
    const k = recoveringKey("ask");
    k.ok(EXPIRES + 1);
    k.ok(EXPIRES + 2);
    expect(k.s).toMatchObject({ state: "recovering", recoverySuccesses: 3, approvalPending: true });
    expect(k.last).toContainEqual({ type: "recovery_pending", failureKey: k.s.failureKey, approvalId: "" });
    k.ok(EXPIRES + 3);
    k.ok(EXPIRES + 4);
    expect(k.s).toMatchObject({ state: "recovering", recoverySuccesses: 5 });
    expect(k.effects.filter((e) => e.type === "recovery_pending")).toHaveLength(1);
    // What status, Tools and Approvals read: the engine's count, past `needed` while it waits.
    expect(recoveryOf(k.s)).toEqual({ successes: 5, needed: 3 });

    const approved = approveRecovery(k.s, EXPIRES + 10);
    expect(approved.applied).toBe(true);
    expect(approved.state).toMatchObject({ state: "trusted", approvalPending: false, escalationReason: null });
    expect(approved.effects[0]).toMatchObject({ type: "recovered" });
    expect(recoveryOf(approved.state)).toBeNull();
  });

  it("ask: deny → escalated with a fresh escalation window", () => {
    const k = recoveringKey("ask");
    k.ok(EXPIRES + 1);
    k.ok(EXPIRES + 2);
    const denied = denyRecovery(k.s, baseRule, EXPIRES + 10 * MIN);
    expect(denied.applied).toBe(true);
    expect(denied.state).toMatchObject({
      state: "escalated",
      escalatedAt: EXPIRES + 10 * MIN,
      escalationExpires: EXPIRES + 10 * MIN + 1800 * SEC,
      escalationReason: "recovery denied",
      approvalPending: false,
      recoverySuccesses: 0,
    });
    expect(denied.effects[0]).toMatchObject({ type: "escalated", reason: "recovery denied" });
    // the next recovery asks again
    k.ctx = { ...k.ctx, state: denied.state };
    const later = EXPIRES + 10 * MIN + 1800 * SEC;
    k.ok(later);
    k.ok(later + 1);
    k.ok(later + 2);
    expect(k.last).toContainEqual({ type: "recovery_pending", failureKey: k.s.failureKey, approvalId: "" });
  });

  it("ask: needing a single success asks at once", () => {
    const k = escalatedKey({ ...baseRule, successCountToRecover: 1 }, "ask");
    k.ok(EXPIRES);
    expect(k.s).toMatchObject({ state: "recovering", approvalPending: true });
  });

  it("approve/deny of a key that is not recovering changes nothing", () => {
    const k = escalatedKey();
    expect(approveRecovery(k.s, EXPIRES)).toEqual({ state: k.s, effects: [], applied: false });
    expect(denyRecovery(k.s, baseRule, EXPIRES)).toEqual({ state: k.s, effects: [], applied: false });
  });
});

describe("security and blocked", () => {
  it.each(["trusted", "escalated", "recovering"] as const)("security → blocked at once from %s", (from) => {
    const k = from === "trusted" ? new Key() : escalatedKey();
    if (from === "recovering") k.ok(EXPIRES);
    expect(k.s.state).toBe(from);
    k.fail(EXPIRES + 1, "security");
    expect(k.s.state).toBe("blocked");
    expect(k.last).toHaveLength(1);
    expect(k.last[0]).toMatchObject({ type: "blocked", reason: "security concern detected" });
  });

  it("blocked: successes and failures change nothing (no effects)", () => {
    const k = new Key();
    k.fail(T0, "security");
    const before = { ...k.s };
    k.ok(T0 + 10 * 3600 * SEC);
    k.fail(T0 + 10 * 3600 * SEC + 1, "security");
    k.ok(T0 + 20 * 3600 * SEC);
    expect(k.s.state).toBe("blocked");
    expect(k.s.escalationReason).toBe(before.escalationReason);
    expect(k.effects.filter((e) => e.type !== "blocked")).toEqual([]);
    expect(k.effects).toHaveLength(1);
  });

  it.each(["trusted", "escalated", "recovering", "blocked"] as const)("reset from %s → trusted, counters cleared", (from) => {
    const k = escalatedKey();
    if (from === "recovering") k.ok(EXPIRES);
    if (from === "blocked") k.fail(EXPIRES, "security");
    if (from === "trusted") {
      k.ok(EXPIRES);
      k.ok(EXPIRES + 1);
      k.ok(EXPIRES + 2);
    }
    expect(k.s.state).toBe(from);
    const r = resetKey(k.s);
    expect(r).toMatchObject({
      state: "trusted",
      consecutiveFailures: 0,
      escalatedAt: null,
      escalationReason: null,
      escalationExpires: null,
      recoverySuccesses: 0,
      recoveryNeeded: 0,
      approvalPending: false,
    });
    k.ctx = { ...k.ctx, state: r };
    expect(keyMetrics(k.ctx, baseRule, emptyTimeline()).effectiveFailures).toBe(0);
    // one new failure after a reset does not re-escalate on the old history
    k.fail(EXPIRES + 10);
    expect(k.s.state).toBe("trusted");
  });
});

describe("clock (SPEC 4.4)", () => {
  it("an older event is applied at the last applied time", () => {
    const k = new Key();
    k.fail(T0 + 10 * MIN);
    k.fail(T0); // older: applied at T0+10min
    expect(k.s.clock).toBe(T0 + 10 * MIN);
    expect(k.ctx.failures.map((f) => f.ts)).toEqual([T0 + 10 * MIN, T0 + 10 * MIN]);
    expect(k.s.lastFailureAt).toBe(T0 + 10 * MIN);
  });

  it("history is trimmed to the rule window (at least 10 minutes)", () => {
    const k = new Key({ ...baseRule, windowSeconds: 60, countThreshold: 10 });
    k.fail(T0);
    k.fail(T0 + 5 * MIN);
    k.fail(T0 + 12 * MIN);
    expect(k.ctx.failures.map((f) => f.ts)).toEqual([T0 + 5 * MIN, T0 + 12 * MIN]);
    expect(k.ctx.results.ts).toHaveLength(0); // no rate threshold: results are not kept at all
    const r = new Key({ ...baseRule, windowSeconds: 60, rateThreshold: 0.5 });
    r.fail(T0, "timeout");
    r.fail(T0 + 5 * MIN, "timeout");
    r.fail(T0 + 12 * MIN, "timeout");
    expect(r.ctx.results).toEqual({ firstSeq: 2, ts: [T0 + 5 * MIN, T0 + 12 * MIN] });
  });

  it("inputs are not mutated", () => {
    const ctx = newKeyContext("k", "t");
    const snapshot = JSON.stringify(ctx);
    applyOutcome(ctx, fail(), baseRule, "auto", emptyTimeline(), T0);
    expect(JSON.stringify(ctx)).toBe(snapshot);
  });

  it("inputs are not mutated when the history is trimmed; inPlace changes the owner's copy alone, to the same result", () => {
    const rule: Rule = { ...baseRule, windowSeconds: 60, rateThreshold: 0.9 };
    let ctx = newKeyContext("k", "t");
    for (let i = 0; i < 5; i++) ctx = applyOutcome(ctx, i % 2 ? ok : fail(), rule, "auto", emptyTimeline(), T0 + i * MIN).ctx;
    expect(ctx.results.ts).toHaveLength(5);
    const snapshot = JSON.stringify(ctx);
    const later = T0 + 30 * MIN; // every result and failure before it is out of the kept history
    const copied = applyOutcome(ctx, fail(), rule, "auto", emptyTimeline(), later).ctx;
    expect(JSON.stringify(ctx)).toBe(snapshot);
    const mine = copyKeyContext(ctx);
    const inPlace = applyOutcome(mine, fail(), rule, "auto", emptyTimeline(), later, { inPlace: true }).ctx;
    expect(JSON.stringify(ctx)).toBe(snapshot);
    expect(inPlace).toBe(mine);
    expect(inPlace).toEqual(copied);
    expect(copied.results).toEqual({ firstSeq: 6, ts: [later] });
    expect(copied.failures.map((f) => f.seq)).toEqual([6]);
  });
});

describe("results kept for the failure rate (property)", () => {
  const rules: Rule[] = [
    { ...baseRule, countThreshold: undefined, windowSeconds: 3600, rateThreshold: 0.6, rateMinCalls: 3 },
    { ...baseRule, countThreshold: undefined, windowSeconds: 60, rateThreshold: 0.6, rateMinCalls: 2 },
    { ...baseRule, windowSeconds: 1800 }, // no rate threshold: results are not kept
  ];
  type Record = { ts: number; failed: boolean; seq: number };
  /** The failure rate over one record per result, as the engine kept results before ResultLog. */
  const rateOverRecords = (records: Record[], windowSeconds: number, minCalls: number, now: number, afterSeq: number) => {
    const counted = records.filter((r) => r.seq > afterSeq && now - r.ts <= windowSeconds * 1000);
    return counted.length === 0 || counted.length < minCalls ? null : counted.filter((r) => r.failed).length / counted.length;
  };
  const step = fc.record({
    dt: fc.integer({ min: -5 * MIN, max: 20 * MIN }),
    failed: fc.boolean(),
    severity: fc.constantFrom<Severity>("server_error", "timeout", "not_found", "invalid_input"),
    rule: fc.constantFrom(0, 0, 0, 1, 1, 2),
    reset: fc.integer({ min: 0, max: 19 }),
    probe: fc.record({ windowSeconds: fc.integer({ min: 1, max: 7200 }), minCalls: fc.integer({ min: 1, max: 6 }), afterSeq: fc.integer({ min: -1, max: 80 }), ahead: fc.integer({ min: 0, max: 2 * 3600_000 }) }),
  });

  it("equals the rate over one record per result, through trims, rule changes, resets and old stored contexts; in place equals copied", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        let copied = newKeyContext("k", "t");
        const owned = copyKeyContext(copied);
        let records: Record[] = [];
        let at = T0;
        for (const st of steps) {
          at += st.dt;
          const rule = rules[st.rule];
          const outcome: Outcome = st.failed ? { ...fail(st.severity) } : ok;
          copied = applyOutcome(copied, outcome, rule, "auto", emptyTimeline(), at).ctx;
          applyOutcome(owned, outcome, rule, "auto", emptyTimeline(), at, { inPlace: true });
          expect(owned).toEqual(copied);
          const t = copied.state.clock!;
          records.push({ ts: t, failed: st.failed, seq: copied.state.seq });
          records = rule.rateThreshold === undefined ? [] : records.filter((r) => r.ts >= t - Math.max(rule.windowSeconds * 1000, 10 * MIN));
          if (st.reset === 0) {
            copied = { ...copied, state: resetKey(copied.state) };
            owned.state = copied.state;
          }
          const { windowSeconds, minCalls, afterSeq, ahead } = st.probe;
          const probeRule = { windowSeconds, rateMinCalls: minCalls };
          for (const after of [afterSeq, copied.state.countFromSeq]) {
            expect(failureRate(copied.results, copied.failures, probeRule, t + ahead, { afterSeq: after })).toBe(rateOverRecords(records, windowSeconds, minCalls, t + ahead, after));
          }
          // A history stored with one record per result reads back as the same history.
          const upgraded = upgradeKeyContext(copied.state, { results: records }, copied.failures);
          expect(upgraded.results.ts).toEqual(copied.results.ts);
          if (records.length) expect(upgraded).toEqual(copied);
          // Stored in chunks and read back through JSON; stored whole in `data` as in the older whole-log form,
          // as gaps and as absolute times (before gaps): the same context.
          const through = <T>(v: T): T => JSON.parse(JSON.stringify(v));
          const chunks = through(resultChunks(copied.results, 0).map((c) => c.log));
          expect(upgradeKeyContext(copied.state, through(historyOf(copied)), copied.failures, chunks)).toEqual(copied);
          const whole = through(storedResultLog(copied.results.firstSeq, copied.results.ts));
          expect(upgradeKeyContext(copied.state, { results: whole }, copied.failures)).toEqual(copied);
          expect(upgradeKeyContext(copied.state, { results: copied.results }, copied.failures)).toEqual(copied);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("failures kept for what the rule reads", () => {
  it("a failure outside the rule's filter is not kept without a rate rule; it still counts as a failure", () => {
    const k = new Key({ ...baseRule, countThreshold: 3 });
    for (let i = 0; i < 100; i++) expect(k.fail(T0 + i * SEC, "not_found").failure?.severity).toBe("not_found");
    k.fail(T0 + 100 * SEC);
    expect(k.ctx.failures.map((f) => f.severity)).toEqual(["server_error"]);
    expect(k.s).toMatchObject({ state: "trusted", totalFailures: 101, consecutiveFailures: 101 });
    k.fail(T0 + 101 * SEC);
    k.fail(T0 + 102 * SEC);
    expect(k.s.state).toBe("escalated");
    expect(k.s.escalationFailureCount).toBe(3);
  });

  it("with a rate rule every failure is kept, and the rate counts them (SPEC 4.2: all severities)", () => {
    const k = new Key({ ...baseRule, countThreshold: undefined, rateThreshold: 0.5, rateMinCalls: 4 });
    k.ok(T0);
    k.fail(T0 + SEC, "not_found");
    k.ok(T0 + 2 * SEC);
    expect(k.s.state).toBe("trusted");
    k.fail(T0 + 3 * SEC, "not_found");
    expect(k.ctx.failures).toHaveLength(2);
    expect(k.s.state).toBe("escalated");
  });

  it("failures before the state's count baseline (a recovery, a reset) are not kept once another comes", () => {
    const k = escalatedKey({ ...baseRule, cooldownSeconds: 60, successCountToRecover: 1 });
    k.ok(EXPIRES);
    expect(k.s.state).toBe("trusted");
    expect(k.ctx.failures).toHaveLength(3);
    k.fail(EXPIRES + SEC);
    expect(k.ctx.failures.map((f) => f.ts)).toEqual([EXPIRES + SEC]);
    k.ctx = { ...k.ctx, state: resetKey(k.s) };
    k.fail(EXPIRES + 2 * SEC);
    expect(k.ctx.failures.map((f) => f.ts)).toEqual([EXPIRES + 2 * SEC]);
  });

  it("permission failures stay for the repeated-auth upgrade, twice its window, then go", () => {
    const k = new Key({ ...baseRule, windowSeconds: 3600 });
    k.fail(T0, "permission");
    k.fail(T0 + 5 * MIN, "repeated_auth");
    k.fail(T0 + 2 * REPEATED_AUTH_WINDOW_MS, "not_found");
    expect(k.ctx.failures.map((f) => f.ts)).toEqual([T0, T0 + 5 * MIN]);
    k.fail(T0 + 2 * REPEATED_AUTH_WINDOW_MS + 1, "not_found");
    expect(k.ctx.failures.map((f) => f.ts)).toEqual([T0 + 5 * MIN]);
  });

  // The state machine reads a history through effectiveFailures and countFailuresInWindow (the
  // rate only under a rate rule, which keeps everything), and the classifier through the
  // permission failures of the last 10 minutes: over the kept failures each reads what it reads
  // over every failure the key ever had.
  const rules: Rule[] = [
    baseRule,
    { ...baseRule, countThreshold: 4, blockThreshold: 6, windowSeconds: 1800, escalationDurationSeconds: 300, cooldownSeconds: 60 },
    { ...baseRule, severityFilter: ["server_error", "not_found", "timeout"], windowSeconds: 900 },
  ];
  const step = fc.record({
    dt: fc.integer({ min: -2 * MIN, max: 8 * MIN }),
    failed: fc.integer({ min: 0, max: 3 }),
    severity: fc.constantFrom<Severity>("server_error", "timeout", "not_found", "invalid_input", "permission", "repeated_auth", "crash"),
    session: fc.constantFrom("s1", "s2", "s3"),
    reset: fc.integer({ min: 0, max: 24 }),
    probe: fc.record({ windowSeconds: fc.integer({ min: 60, max: 7200 }), afterSeq: fc.integer({ min: -1, max: 80 }) }),
  });
  it("every reading of the kept failures equals the same reading of all of them (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(0, 1, 2), fc.array(step, { minLength: 1, maxLength: 80 }), (ruleIndex, steps) => {
        const rule = rules[ruleIndex];
        const timeline = buildSessionTimeline([
          { sessionId: "s1", agent: "a", startedAt: T0 - MIN, endedAt: T0 },
          { sessionId: "s2", agent: "a", startedAt: T0 + MIN, endedAt: null },
          { sessionId: "s3", agent: "b", startedAt: T0, endedAt: null },
        ]);
        let ctx = newKeyContext("k", "t");
        const all: FailureRecord[] = [];
        let at = T0;
        for (const st of steps) {
          at += st.dt;
          const outcome: Outcome = st.failed ? { failed: true, severity: st.severity, sessionId: st.session, agent: st.session === "s3" ? "b" : "a" } : { ...ok, sessionId: st.session };
          const r = applyOutcome(ctx, outcome, rule, "auto", timeline, at);
          ctx = r.ctx;
          if (r.failure) all.push(r.failure);
          if (st.reset === 0) ctx = { ...ctx, state: resetKey(ctx.state) };
          const t = ctx.state.clock!;
          for (const probe of [rule, { ...rule, windowSeconds: Math.min(st.probe.windowSeconds, rule.windowSeconds) }]) {
            // Every reading counts from the state's baseline on (countFromSeq), or from later.
            const from = ctx.state.countFromSeq;
            for (const afterSeq of [from, Math.max(ctx.state.escalationSeq ?? -1, from), Math.max(st.probe.afterSeq, from)]) {
              expect(effectiveFailures(ctx.failures, probe, timeline, t, { afterSeq })).toBeCloseTo(effectiveFailures(all, probe, timeline, t, { afterSeq }), 9);
              expect(countFailuresInWindow(ctx.failures, probe, t, { afterSeq })).toBe(countFailuresInWindow(all, probe, t, { afterSeq }));
            }
          }
          // What the repeated-auth upgrade reads, for a result up to 10 minutes behind the key's
          // clock, over what the window keeps (at least 10 minutes, MIN_HISTORY_MS).
          const windowed = all.filter((f) => f.ts >= t - Math.max(rule.windowSeconds * 1000, MIN_HISTORY_MS));
          for (const now of [t, t - 5 * MIN, t - 10 * MIN]) {
            const auth = (list: FailureRecord[]) => list.filter((f) => (f.severity === "permission" || f.severity === "repeated_auth") && f.ts <= now && now - f.ts <= REPEATED_AUTH_WINDOW_MS).length;
            expect(auth(ctx.failures)).toBe(auth(windowed));
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("failureChanges (a state's failures stored one row each)", () => {
  // Batches of outcomes under rules that change between them (one with a rate rule, which keeps
  // every failure; one narrowing the filter), resets between them; the rows are kept as the shell
  // keeps `key_failure`: the added ones inserted, the ones below `droppedBelow` deleted.
  const rules: Rule[] = [
    baseRule,
    { ...baseRule, countThreshold: 4, blockThreshold: 6, windowSeconds: 1800, escalationDurationSeconds: 300, cooldownSeconds: 60, successCountToRecover: 1 },
    { ...baseRule, severityFilter: ["server_error", "not_found", "timeout"], windowSeconds: 900 },
    { ...baseRule, windowSeconds: 600, rateThreshold: 0.6, rateMinCalls: 3, countThreshold: 50 },
  ];
  const outcomeArb = fc.record({
    dt: fc.integer({ min: -2 * MIN, max: 8 * MIN }),
    failed: fc.integer({ min: 0, max: 2 }),
    severity: fc.constantFrom<Severity>("server_error", "timeout", "not_found", "invalid_input", "permission", "repeated_auth"),
    session: fc.constantFrom("s1", "s2", "s3"),
  });
  const batchArb = fc.record({ rule: fc.integer({ min: 0, max: 3 }), reset: fc.integer({ min: 0, max: 12 }), outcomes: fc.array(outcomeArb, { minLength: 1, maxLength: 4 }) });

  it("the rows are exactly the failures the state keeps, batch after batch (property)", () => {
    fc.assert(
      fc.property(fc.array(batchArb, { minLength: 1, maxLength: 30 }), (batches) => {
        const timeline = buildSessionTimeline([
          { sessionId: "s1", agent: "a", startedAt: T0 - MIN, endedAt: T0 },
          { sessionId: "s2", agent: "a", startedAt: T0 + MIN, endedAt: null },
          { sessionId: "s3", agent: "b", startedAt: T0, endedAt: null },
        ]);
        const rows = new Map<number, FailureRecord>();
        let ctx: KeyContext | undefined;
        let at = T0;
        for (const batch of batches) {
          const rule = rules[batch.rule];
          const before = ctx;
          const owned = before ? copyKeyContext(before) : newKeyContext("k", "t");
          for (const o of batch.outcomes) {
            at += o.dt;
            const outcome: Outcome = o.failed ? { failed: true, severity: o.severity, sessionId: o.session, agent: o.session === "s3" ? "b" : "a" } : { ...ok, sessionId: o.session };
            applyOutcome(owned, outcome, rule, "auto", timeline, at, { inPlace: true });
          }
          const { added, droppedBelow, dropped } = failureChanges(before, owned);
          if (droppedBelow !== null) for (const seq of [...rows.keys()]) if (seq < droppedBelow) rows.delete(seq);
          for (const seq of dropped) expect(rows.delete(seq)).toBe(true);
          for (const f of added) {
            expect(rows.has(f.seq)).toBe(false);
            rows.set(f.seq, f);
          }
          ctx = batch.reset === 0 ? { ...owned, state: resetKey(owned.state) } : owned;
          // Read back as another instance would: the same list, record for record.
          expect([...rows.values()].sort((a, b) => a.seq - b.seq)).toEqual(ctx.failures);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("adds a batch's kept failures and drops the rows below the first one kept once the window passed it", () => {
    const rule: Rule = { ...baseRule, countThreshold: 100, windowSeconds: 600 };
    let ctx = newKeyContext("k", "t");
    ctx = applyOutcome(ctx, fail(), rule, "auto", emptyTimeline(), T0).ctx;
    ctx = applyOutcome(ctx, fail(), rule, "auto", emptyTimeline(), T0 + MIN).ctx;
    expect(failureChanges(undefined, ctx)).toEqual({ added: ctx.failures, droppedBelow: null, dropped: [] });
    const later = applyOutcome(ctx, fail(), rule, "auto", emptyTimeline(), T0 + 10 * MIN + 30 * SEC).ctx;
    expect(failureChanges(ctx, later)).toEqual({ added: [later.failures[1]], droppedBelow: 2, dropped: [] });
    // Successes add nothing and drop nothing until the window passes every failure.
    expect(failureChanges(later, applyOutcome(later, ok, rule, "auto", emptyTimeline(), T0 + 11 * MIN).ctx)).toEqual({ added: [], droppedBelow: null, dropped: [] });
    const empty = applyOutcome(later, ok, rule, "auto", emptyTimeline(), T0 + 30 * MIN).ctx;
    expect(failureChanges(later, empty)).toEqual({ added: [], droppedBelow: empty.state.seq + 1, dropped: [] });
  });

  it("names the failures dropped from further in than the front", () => {
    // A not_found kept under a rate rule (which keeps every failure), then a failure under a count rule drops it.
    const rated: Rule = { ...baseRule, countThreshold: 100, windowSeconds: 600, rateThreshold: 0.99, rateMinCalls: 100 };
    let ctx = newKeyContext("k", "t");
    ctx = applyOutcome(ctx, fail(), rated, "auto", emptyTimeline(), T0).ctx;
    ctx = applyOutcome(ctx, fail("not_found"), rated, "auto", emptyTimeline(), T0 + SEC).ctx;
    const counted = applyOutcome(ctx, fail(), { ...rated, rateThreshold: undefined }, "auto", emptyTimeline(), T0 + 2 * SEC).ctx;
    expect(counted.failures.map((f) => f.seq)).toEqual([1, 3]);
    expect(failureChanges(ctx, counted)).toEqual({ added: [counted.failures[1]], droppedBelow: null, dropped: [2] });
  });
});

describe("escalationInfo / guardDecision", () => {
  it("null for trusted; reason, count, window, hint and expiry when escalated", () => {
    expect(escalationInfo(newKeyState("k", "t"))).toBeNull();
    expect(escalationInfo(null)).toBeNull();
    const k = escalatedKey();
    const info = escalationInfo(k.s, baseRule, "auto", ESC_AT);
    expect(info).toMatchObject({
      reason: "3 failures in 3600s",
      failureCount: 3,
      window: "3600s",
      expiresAt: new Date(EXPIRES).toISOString(),
    });
    expect(info!.recoveryHint).toContain("3 successful calls");
    expect(info!.recoveryHint).toContain("in 30 min");
  });

  it("hints for recovering, pending approval and blocked", () => {
    const k = escalatedKey(baseRule, "ask");
    k.ok(EXPIRES);
    expect(escalationInfo(k.s, baseRule, "ask")!.recoveryHint).toContain("1/3");
    k.ok(EXPIRES + 1);
    k.ok(EXPIRES + 2);
    expect(escalationInfo(k.s, baseRule, "ask")!.recoveryHint).toContain("approve");
    k.fail(EXPIRES + 3, "security");
    const b = escalationInfo(k.s, baseRule)!;
    expect(b.reason).toBe("security concern detected");
    expect(b.expiresAt).toBeNull();
    expect(b.recoveryHint).toContain("reset");
  });

  it("decision: pause > allow (trusted, no global) > blocked setting > ask", () => {
    const d = (paused: boolean, effectiveState: "trusted" | "escalated" | "recovering" | "blocked", globalPattern = false, blockedDecision: "ask" | "deny" = "ask") =>
      guardDecision({ paused, effectiveState, globalPattern, blockedDecision });
    expect(d(true, "trusted")).toBe("pause");
    expect(d(true, "blocked", true, "deny")).toBe("pause");
    expect(d(false, "trusted")).toBe("allow");
    expect(d(false, "trusted", true)).toBe("ask");
    expect(d(false, "escalated")).toBe("ask");
    expect(d(false, "recovering")).toBe("ask");
    expect(d(false, "blocked", false, "deny")).toBe("deny");
    expect(d(false, "blocked", false, "ask")).toBe("ask");
    expect(d(false, "blocked", true, "deny")).toBe("deny");
  });
});

// ---------------------------------------------------------------------------
// Domain and tool levels, seed use cases
// ---------------------------------------------------------------------------

/** A tiny in-memory shell: keys, domain and tool states, classification, rule resolution. */
class Engine {
  states = new Map<string, KeyContext>();
  effects: Effect[] = [];
  constructor(
    public ws: ConfigDocument = {},
    public mode: RecoveryMode = "auto",
    public timeline: SessionTimeline = emptyTimeline(),
  ) {}
  result(toolName: string, args: Record<string, unknown>, ev: { error?: string; httpStatus?: number; ok?: boolean }, at: number) {
    const k = extractFailureKey(toolName, args, {});
    const resolution: ResolvedRule = resolveRule(this.ws, {}, { toolName, domain: k.domain });
    const key = this.states.get(k.failureKey) ?? newKeyContext(k.failureKey, toolName);
    const failed = !ev.ok;
    const severity = failed
      ? classifySeverity(ev, {
          isCommandTool: k.kind === "command",
          command: k.command,
          securityPatterns: DEFAULT_SECURITY_PATTERNS,
          recentFailures: key.failures,
          now: at,
        })
      : null;
    const domainKey = resolution.level === "domain" ? `@domain:${resolution.name}` : null;
    const r = applyToolResult(
      {
        key,
        domain: domainKey ? this.states.get(domainKey) : null,
        tool: this.states.get(`@tool:${toolName}`),
      },
      { failed, severity, sessionId: "s1", agent: "default", toolName },
      resolution,
      this.mode,
      this.timeline,
      at,
    );
    this.states.set(k.failureKey, r.key);
    if (r.domain) this.states.set(r.domain.state.failureKey, r.domain);
    if (r.tool) this.states.set(r.tool.state.failureKey, r.tool);
    this.effects.push(...r.effects);
    return { ...r, failureKey: k.failureKey, severity };
  }
  effective(toolName: string, args: Record<string, unknown>) {
    const k = extractFailureKey(toolName, args, {});
    const res = resolveRule(this.ws, {}, { toolName, domain: k.domain });
    return effectiveState([
      this.states.get(k.failureKey)?.state,
      res.level === "domain" ? this.states.get(`@domain:${res.name}`)?.state : null,
      this.states.get(`@tool:${toolName}`)?.state,
    ]);
  }
}

describe("domain-level state", () => {
  const ws: ConfigDocument = {
    domainRules: { atlassian: { countThreshold: 2, severityFilter: ["timeout", "server_error", "crash", "security"] } },
  };

  it("two MCP tools of one server each timing out once escalate the server; other servers stay trusted", () => {
    const e = new Engine(ws);
    e.result("mcp_atlassian_search", { q: "project:PROJ" }, { error: "Request timed out" }, T0);
    expect(e.effective("mcp_atlassian_search", {})).toBe("trusted");
    const r = e.result("mcp_atlassian_create_issue", { title: "x" }, { error: "timeout" }, T0 + 2 * MIN);
    expect(r.severity).toBe("timeout");
    // each key has only one failure: the keys stay trusted, the domain escalates
    expect(e.states.get("mcp_atlassian_search|mcp_server=atlassian")!.state.state).toBe("trusted");
    expect(e.states.get("mcp_atlassian_create_issue|mcp_server=atlassian")!.state.state).toBe("trusted");
    expect(e.states.get("@domain:atlassian")!.state).toMatchObject({
      state: "escalated",
      level: "domain",
      escalationReason: "2 failures in 3600s",
    });
    expect(r.effects).toHaveLength(1);
    expect(r.effects[0]).toMatchObject({ type: "escalated", failureKey: "@domain:atlassian", toolName: "mcp_atlassian_create_issue" });
    expect((r.effects[0] as { message: string }).message).toContain("atlassian");
    // every atlassian tool is effectively escalated, other servers are not
    expect(e.effective("mcp_atlassian_search", {})).toBe("escalated");
    expect(e.effective("mcp_atlassian_get_page", {})).toBe("escalated");
    expect(e.effective("mcp_github_search", {})).toBe("trusted");
    expect(e.states.has("@domain:github")).toBe(false);
  });

  it("no domain state is kept when the applicable rule is not a domain rule", () => {
    const e = new Engine({});
    e.result("mcp_atlassian_search", {}, { error: "timeout" }, T0);
    expect(e.states.has("@domain:atlassian")).toBe(false);
  });

  it("a tool rule beats the domain rule: no domain-level counting for that tool", () => {
    const e = new Engine({ ...ws, toolRules: { mcp_atlassian_search: { countThreshold: 5 } } });
    e.result("mcp_atlassian_search", {}, { error: "timeout" }, T0);
    e.result("mcp_atlassian_create_issue", {}, { error: "timeout" }, T0 + 1);
    expect(e.states.get("@domain:atlassian")!.state.state).toBe("trusted");
    expect(e.states.get("@domain:atlassian")!.state.totalFailures).toBe(1);
  });

  it("a success on any key of the domain counts for the domain's recovery", () => {
    const e = new Engine(ws);
    e.result("mcp_atlassian_search", {}, { error: "timeout" }, T0);
    e.result("mcp_atlassian_create_issue", {}, { error: "timeout" }, T0 + 1);
    const later = T0 + 1 + 1800 * SEC;
    e.result("mcp_atlassian_get_page", {}, { ok: true }, later);
    expect(e.states.get("@domain:atlassian")!.state).toMatchObject({ state: "recovering", recoverySuccesses: 1 });
    e.result("mcp_atlassian_search", {}, { ok: true }, later + 1);
    e.result("mcp_atlassian_search", {}, { ok: true }, later + 2);
    expect(e.states.get("@domain:atlassian")!.state.state).toBe("trusted");
    expect(e.effects.at(-1)).toMatchObject({ type: "recovered", failureKey: "@domain:atlassian" });
  });
});

describe("tool-level block", () => {
  it("`sudo rm -rf /` blocks the key and the whole tool: `bash|command=ls` is effectively blocked", () => {
    const e = new Engine();
    e.result("bash", { command: "ls" }, { ok: true }, T0);
    const r = e.result("bash", { command: "sudo rm -rf /" }, { error: "Permission denied" }, T0 + 1);
    expect(r.failureKey).toBe("bash|command=sudo");
    expect(r.severity).toBe("security");
    expect(e.states.get("bash|command=sudo")!.state.state).toBe("blocked");
    expect(e.states.get("@tool:bash")!.state).toMatchObject({ state: "blocked", level: "tool" });
    expect(e.states.get("bash|command=ls")!.state.state).toBe("trusted");
    expect(e.effective("bash", { command: "ls" })).toBe("blocked");
    expect(e.effective("Bash", { command: "ls" })).toBe("trusted");
    expect(r.effects.map((x) => [x.type, "failureKey" in x ? x.failureKey : null])).toEqual([
      ["blocked", "bash|command=sudo"],
      ["blocked", "@tool:bash"],
    ]);
    expect((r.effects[1] as { message: string }).message).toContain("Tool 'bash' blocked");
    // later successes do not unblock the tool
    e.result("bash", { command: "ls" }, { ok: true }, T0 + 10 * 3600 * SEC);
    expect(e.effective("bash", { command: "ls" })).toBe("blocked");
    // only a reset does
    const tool = e.states.get("@tool:bash")!;
    e.states.set("@tool:bash", { ...tool, state: resetKey(tool.state) });
    expect(e.effective("bash", { command: "ls" })).toBe("trusted");
  });

  it("a second security failure does not emit another tool-level block", () => {
    const e = new Engine();
    e.result("bash", { command: "sudo ls" }, { error: "x" }, T0);
    const r = e.result("bash", { command: "mkfs /dev/sda" }, { error: "x" }, T0 + 1);
    expect(r.effects.map((x) => x.type)).toEqual(["blocked"]);
    expect(r.effects[0]).toMatchObject({ failureKey: "bash|command=mkfs" });
  });

  it("a security failure under a domain rule blocks key and tool, and counts for the domain", () => {
    const e = new Engine({ domainRules: { atlassian: { countThreshold: 5 } } });
    const r = applyToolResult(
      { key: newKeyContext("mcp_atlassian_x|mcp_server=atlassian", "mcp_atlassian_x") },
      { ...fail("security"), toolName: "mcp_atlassian_x" },
      resolveRule(e.ws, {}, { toolName: "mcp_atlassian_x", domain: "atlassian" }),
      "auto",
      emptyTimeline(),
      T0,
    );
    expect(r.key.state.state).toBe("blocked");
    expect(r.tool!.state.state).toBe("blocked");
    expect(r.domain!.state).toMatchObject({ state: "trusted", totalFailures: 1 });
  });
});

describe("seed use cases", () => {
  it("1. HTTP service degradation", () => {
    const e = new Engine();
    const url = { url: "https://api.example.com/data" };
    const key = "http_request|domain=api.example.com|path_prefix=data";
    const t1 = T0;
    e.result("http_request", url, { httpStatus: 503 }, t1);
    expect(e.states.get(key)!.state.state).toBe("trusted");
    e.result("http_request", url, { httpStatus: 503 }, t1 + MIN);
    expect(e.states.get(key)!.state.state).toBe("trusted");
    const r3 = e.result("http_request", url, { httpStatus: 503 }, t1 + 2 * MIN);
    expect(r3.severity).toBe("server_error");
    expect(e.states.get(key)!.state.state).toBe("escalated");
    expect(r3.effects[0]).toMatchObject({ type: "escalated", toolName: "http_request" });
    // turn 4: allowed once by a person, fails again: still escalated
    e.result("http_request", url, { httpStatus: 503 }, t1 + 3 * MIN);
    expect(e.states.get(key)!.state.state).toBe("escalated");
    // turn 5: 30 min later (expired, cooldown passed)
    const t5 = t1 + 3 * MIN + 30 * MIN;
    const r5 = e.result("http_request", url, { httpStatus: 200, ok: true }, t5);
    expect(e.states.get(key)!.state).toMatchObject({ state: "recovering", recoverySuccesses: 1, recoveryNeeded: 3 });
    expect(r5.effects).toEqual([{ type: "recovering", failureKey: key, successes: 1, needed: 3 }]);
    e.result("http_request", url, { ok: true }, t5 + MIN);
    const r7 = e.result("http_request", url, { ok: true }, t5 + 2 * MIN);
    expect(e.states.get(key)!.state.state).toBe("trusted");
    expect(r7.effects[0]).toMatchObject({ type: "recovered", toolName: "http_request" });
    expect((r7.effects[0] as { message: string }).message).toContain("api.example.com");
  });

  it("2. CLI command failures: permission errors stay trusted, sudo rm -rf / blocks bash", () => {
    const e = new Engine();
    const r1 = e.result("bash", { command: "rm /protected/file" }, { error: "Permission denied" }, T0);
    expect(r1.severity).toBe("permission");
    expect(e.effective("bash", { command: "rm /protected/file" })).toBe("trusted");
    const r2 = e.result("bash", { command: "cat /protected/secrets" }, { error: "Permission denied" }, T0 + MIN);
    expect(r2.severity).toBe("permission");
    expect(e.effective("bash", { command: "cat x" })).toBe("trusted");
    const r3 = e.result("bash", { command: "sudo rm -rf /" }, { error: "Permission denied" }, T0 + 2 * MIN);
    expect(r3.severity).toBe("security");
    expect(r3.effects.some((x) => x.type === "blocked" && x.failureKey === "@tool:bash")).toBe(true);
    for (const c of ["rm /protected/file", "cat x", "git status", "sudo ls"]) {
      expect(e.effective("bash", { command: c })).toBe("blocked");
      expect(guardDecision({ paused: false, effectiveState: e.effective("bash", { command: c }), globalPattern: false, blockedDecision: "ask" })).toBe("ask");
    }
  });

  it("3. MCP server issues: 2 timeouts in 5 minutes escalate atlassian, other servers unaffected", () => {
    const e = new Engine({ domainRules: { atlassian: { countThreshold: 2, windowSeconds: 300, severityFilter: ["timeout"] } } });
    e.result("mcp_atlassian_search", { query: "project:PROJ" }, { error: "timeout" }, T0);
    expect(e.effective("mcp_atlassian_search", {})).toBe("trusted");
    e.result("mcp_atlassian_create_issue", { summary: "x" }, { error: "timeout" }, T0 + 4 * MIN);
    expect(e.effective("mcp_atlassian_create_issue", {})).toBe("escalated");
    expect(e.effective("mcp_atlassian_search", {})).toBe("escalated");
    expect(e.effective("mcp_slack_post", {})).toBe("trusted");
  });

  it("3b. outside the 5-minute window the two timeouts do not escalate", () => {
    const e = new Engine({ domainRules: { atlassian: { countThreshold: 2, windowSeconds: 300, severityFilter: ["timeout"] } } });
    e.result("mcp_atlassian_search", {}, { error: "timeout" }, T0);
    e.result("mcp_atlassian_create_issue", {}, { error: "timeout" }, T0 + 6 * MIN);
    expect(e.effective("mcp_atlassian_search", {})).toBe("trusted");
  });
});

describe("session decay inside the state machine", () => {
  it("failures of an ended session, with later sessions of the same agent, weigh less", () => {
    const tl = buildSessionTimeline([
      { sessionId: "old", agent: "default", startedAt: T0, endedAt: T0 + MIN },
      { sessionId: "new", agent: "default", startedAt: T0 + 2 * MIN, endedAt: null },
    ]);
    const k = new Key(baseRule, "auto", tl);
    k.apply({ ...fail(), sessionId: "old" }, T0);
    k.apply({ ...fail(), sessionId: "old" }, T0 + 30 * SEC);
    k.apply({ ...fail(), sessionId: "new" }, T0 + 3 * MIN); // 0.8 + 0.8 + 1 = 2.6 < 3
    expect(k.s.state).toBe("trusted");
    k.apply({ ...fail(), sessionId: "new" }, T0 + 4 * MIN); // 3.6
    expect(k.s.state).toBe("escalated");
    expect(k.s.escalationReason).toBe("3.6 failures in 3600s");
  });
});

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

const outcomeArb = fc.record({
  failed: fc.boolean(),
  severity: fc.constantFrom(...SEVERITIES),
  dt: fc.integer({ min: -10 * MIN, max: 40 * MIN }),
  sessionId: fc.constantFrom("a", "b"),
});
const ruleArb = fc.record({
  countThreshold: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  consecutiveThreshold: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  rateThreshold: fc.option(fc.double({ min: 0.1, max: 1, noNaN: true }), { nil: undefined }),
  rateMinCalls: fc.integer({ min: 1, max: 6 }),
  windowSeconds: fc.integer({ min: 60, max: 7200 }),
  severityFilter: fc.subarray([...SEVERITIES], { minLength: 1 }),
  escalationDurationSeconds: fc.integer({ min: 0, max: 3600 }),
  notify: fc.boolean(),
  cooldownSeconds: fc.integer({ min: 0, max: 1800 }),
  successCountToRecover: fc.integer({ min: 1, max: 4 }),
  blockThreshold: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
});

function runAll(rule: Rule, mode: RecoveryMode, steps: Array<{ failed: boolean; severity: Severity; dt: number; sessionId: string }>) {
  let ctx = newKeyContext("k|x=1", "k");
  let t = T0;
  const trace: Array<{ state: string; effects: Effect[] }> = [];
  for (const st of steps) {
    t += st.dt;
    const r = applyOutcome(
      ctx,
      { failed: st.failed, severity: st.failed ? st.severity : null, sessionId: st.sessionId, agent: "default" },
      rule,
      mode,
      emptyTimeline(),
      t,
    );
    ctx = r.ctx;
    trace.push({ state: ctx.state.state, effects: r.effects });
  }
  return { ctx, trace };
}

describe("properties", () => {
  it("blocked is never left without a reset", () => {
    fc.assert(
      fc.property(ruleArb, fc.constantFrom<RecoveryMode>("auto", "ask"), fc.array(outcomeArb, { maxLength: 60 }), (rule, mode, steps) => {
        const { trace } = runAll(rule, mode, steps);
        const firstBlocked = trace.findIndex((x) => x.state === "blocked");
        if (firstBlocked >= 0) {
          for (const x of trace.slice(firstBlocked)) {
            expect(x.state).toBe("blocked");
          }
          for (const x of trace.slice(firstBlocked + 1)) expect(x.effects).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("applying outcomes is deterministic and JSON round-trips", () => {
    fc.assert(
      fc.property(ruleArb, fc.constantFrom<RecoveryMode>("auto", "ask"), fc.array(outcomeArb, { maxLength: 40 }), (rule, mode, steps) => {
        const a = runAll(rule, mode, steps);
        const b = runAll(rule, mode, steps);
        expect(b).toEqual(a);
        expect(JSON.parse(JSON.stringify(a.ctx))).toEqual(a.ctx);
      }),
      { numRuns: 200 },
    );
  });

  it("clocks never go backwards and only valid states appear; recovery_pending at most once per recovery", () => {
    fc.assert(
      fc.property(ruleArb, fc.array(outcomeArb, { maxLength: 60 }), (rule, steps) => {
        let ctx = newKeyContext("k|x=1", "k");
        let t = T0;
        let pendingThisRecovery = 0;
        for (const st of steps) {
          t += st.dt;
          const prevClock = ctx.state.clock;
          const prevState = ctx.state.state;
          const r = applyOutcome(
            ctx,
            { failed: st.failed, severity: st.failed ? st.severity : null, sessionId: st.sessionId },
            rule,
            "ask",
            emptyTimeline(),
            t,
          );
          ctx = r.ctx;
          if (prevClock !== null) expect(ctx.state.clock!).toBeGreaterThanOrEqual(prevClock);
          if (prevState !== "recovering") pendingThisRecovery = 0;
          pendingThisRecovery += r.effects.filter((e) => e.type === "recovery_pending").length;
          expect(pendingThisRecovery).toBeLessThanOrEqual(1);
          if (ctx.state.state === "recovering") expect(ctx.state.recoveryNeeded).toBe(rule.successCountToRecover);
          expect(ctx.state.consecutiveFailures).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("a security failure always ends in blocked", () => {
    fc.assert(
      fc.property(ruleArb, fc.array(outcomeArb, { maxLength: 30 }), (rule, steps) => {
        const { ctx } = runAll(rule, "auto", [...steps, { failed: true, severity: "security", dt: 0, sessionId: "a" }]);
        expect(ctx.state.state).toBe("blocked");
      }),
      { numRuns: 100 },
    );
  });
});

describe("the result log as stored: chunks (resultChunks, resultChanges, assembleResults)", () => {
  const withLog = (firstSeq: number, ts: number[]) => {
    const ctx = newKeyContext("k", "t");
    ctx.results = { firstSeq, ts };
    ctx.state.seq = firstSeq + ts.length - 1;
    return ctx;
  };
  const rows = (chunks: ReturnType<typeof resultChunks>) => JSON.parse(JSON.stringify(chunks.map((c) => c.log)));

  it("stores each chunk's times as gaps, the first from 0, and reads them back", () => {
    const ctx = withLog(7, [T0, T0 + 95, T0 + 95, T0 + 190]);
    expect(resultChunks(ctx.results, 0)).toEqual([{ chunk: 0, log: { firstSeq: 7, gaps: [T0, 95, 0, 95] } }]);
    expect(historyOf(ctx)).toEqual({ resultsFrom: 7 });
    expect(upgradeKeyContext(ctx.state, historyOf(ctx), [], rows(resultChunks(ctx.results, 0)))).toEqual(ctx);
  });

  it("splits a log at every RESULT_CHUNK_SIZE seqs, and a chunk of a busy key takes a fraction of the text", () => {
    const ctx = withLog(1, Array.from({ length: 36_000 }, (_, i) => T0 + i * 94));
    const chunks = resultChunks(ctx.results, 0);
    expect(chunks.map((c) => c.chunk)).toEqual(Array.from({ length: Math.floor(36_000 / RESULT_CHUNK_SIZE) + 1 }, (_, i) => i));
    expect(chunks[0].log.firstSeq).toBe(1);
    expect(chunks[1].log.firstSeq).toBe(RESULT_CHUNK_SIZE);
    expect(JSON.stringify(chunks).length).toBeLessThan(JSON.stringify(ctx.results).length / 3);
    // From a seq on: the chunks holding it and after, each whole.
    const tail = resultChunks(ctx.results, 35_000);
    expect(tail.map((c) => c.chunk)).toEqual([34, 35]);
    expect(upgradeKeyContext(ctx.state, historyOf(ctx), [], rows(chunks))).toEqual(ctx);
  });

  it("keeps times that are not whole milliseconds absolute (gaps between them need not add up exactly)", () => {
    const ctx = withLog(1, [T0 + 0.1, T0 + 0.3]);
    expect(resultChunks(ctx.results, 0)[0].log).toEqual(ctx.results);
    expect(upgradeKeyContext(ctx.state, historyOf(ctx), [], rows(resultChunks(ctx.results, 0)))).toEqual(ctx);
  });

  it("reads no log from chunks that do not run on to the state's last result", () => {
    const ctx = withLog(1, [T0, T0 + 1, T0 + 2]);
    const stored = rows(resultChunks(ctx.results, 0));
    expect(assembleResults(1, stored, 3)).toEqual(ctx.results);
    expect(assembleResults(1, stored, 4)).toEqual({ firstSeq: EMPTY_LOG_SEQ, ts: [] });
    expect(assembleResults(EMPTY_LOG_SEQ, stored, 3)).toEqual({ firstSeq: EMPTY_LOG_SEQ, ts: [] });
    // The window passed the first two: the chunk still holds them, the log starts at 3.
    expect(assembleResults(3, stored, 3)).toEqual({ firstSeq: 3, ts: [T0 + 2] });
  });

  // Batches under rules that change between them (a rate rule keeps results, a count rule none),
  // with small chunks of time between results and long gaps; the rows kept as the shell keeps
  // `key_result_chunk`: the written chunks upserted, the ones below `deleteBelow` deleted.
  const rateRules: Rule[] = [
    { ...baseRule, countThreshold: 10_000, consecutiveThreshold: 10_000, windowSeconds: 600, rateThreshold: 0.99, rateMinCalls: 100_000 },
    { ...baseRule, countThreshold: 10_000, consecutiveThreshold: 10_000, windowSeconds: 60, rateThreshold: 0.99, rateMinCalls: 100_000 },
    { ...baseRule, countThreshold: 10_000, consecutiveThreshold: 10_000 },
  ];
  const batchArb = fc.record({
    rule: fc.constantFrom(0, 0, 0, 1, 1, 2),
    results: fc.integer({ min: 1, max: 900 }),
    spacing: fc.constantFrom(10, 100, 1000),
    pause: fc.constantFrom(0, 0, 0, 30 * MIN),
  });

  it("the rows read back as the log the state keeps, batch after batch, and hold nothing outside it (property)", () => {
    fc.assert(
      fc.property(fc.array(batchArb, { minLength: 1, maxLength: 14 }), fc.boolean(), (batches, fromWhole) => {
        const stored = new Map<number, StoredResultLog | ResultLog>();
        let ctx: KeyContext | undefined;
        let whole = false;
        let at = T0;
        for (const [i, batch] of batches.entries()) {
          const rule = rateRules[batch.rule];
          const before = ctx;
          const owned = before ? copyKeyContext(before) : newKeyContext("k", "t");
          at += batch.pause;
          for (let r = 0; r < batch.results; r++) applyOutcome(owned, (at += batch.spacing) % 7 === 0 ? fail() : ok, rule, "auto", emptyTimeline(), at, { inPlace: true });
          const { write, deleteBelow } = resultChanges(before, owned, whole);
          if (deleteBelow !== null) for (const c of [...stored.keys()]) if (c < deleteBelow) stored.delete(c);
          for (const c of write) stored.set(c.chunk, c.log);
          ctx = owned;
          whole = false;
          // The first batch's log, once, as a row in the older whole-log form holds it: whole in `data`, no chunks.
          if (fromWhole && i === 0) {
            stored.clear();
            whole = true;
            continue;
          }
          const chunks = [...stored.entries()].sort((a, b) => a[0] - b[0]).map(([, log]) => JSON.parse(JSON.stringify(log)));
          const read = upgradeKeyContext(ctx.state, JSON.parse(JSON.stringify(historyOf(ctx))), ctx.failures, chunks);
          expect(read.results).toEqual(ctx.results);
          const log = ctx.results;
          if (!log.ts.length) expect([...stored.keys()]).toEqual([]);
          else for (const c of stored.keys()) expect(c * RESULT_CHUNK_SIZE + RESULT_CHUNK_SIZE > log.firstSeq && c * RESULT_CHUNK_SIZE <= ctx.state.seq).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("a batch writes the chunks its results fall in, not the log before them", () => {
    const rule = rateRules[0];
    const ctx = withLog(1, Array.from({ length: 3000 }, (_, i) => T0 + i * 100));
    const after = copyKeyContext(ctx);
    for (let i = 0; i < 10; i++) applyOutcome(after, ok, rule, "auto", emptyTimeline(), T0 + 300_000 + i * 100, { inPlace: true });
    expect(resultChanges(ctx, after).write.map((c) => c.chunk)).toEqual([2]);
    expect(resultChanges(ctx, after, true).write.map((c) => c.chunk)).toEqual([0, 1, 2]);
  });
});
