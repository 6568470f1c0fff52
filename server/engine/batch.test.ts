import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { callInfo, storedCallFromLog, type BatchOutcome, type BatchSession, type LoadedState, type LoggedCall, type StoredCall } from "./batch";
import { applyBatch } from "./apply-batch";
import { applySessionPhase } from "./session-phase";
import { applyTrustPhase } from "./trust-phase";
import { callsToLoad, planBatch } from "./batch-plan";
import { mergeEffectiveConfig } from "./config";
import { buildSessionTimeline } from "./decay";
import { DOMAIN_PREFIX, TOOL_PREFIX, newKeyContext } from "./key-state";
import type { AgentEvent, KeyContext } from "./types";

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const configs = { workspaceDoc: {}, orgDoc: {}, effective: mergeEffectiveConfig({}, {}) };

function session(sessionId: string): BatchSession {
  return {
    sessionId, agent: "default", model: null, startedAt: null, endedAt: null, firstEventAt: null, lastEventAt: null, clock: null,
    paused: false, pauseReason: null, pausedAt: null, settings: {}, behaviour: null,
    eventCount: 0, callCount: 0, failureCount: 0, patternCount: 0, dirty: false,
  };
}

/** What the shell would load for `events` from a store holding `contexts` (and nothing else). */
function loaded(events: readonly AgentEvent[], contexts: Map<string, KeyContext> = new Map(), sessions = new Map<string, BatchSession>()): LoadedState {
  const all = new Map(sessions);
  for (const e of events) if (!all.has(e.sessionId)) all.set(e.sessionId, session(e.sessionId));
  return { workspaceId: "ws", configs, sessions: all, contexts, profiles: new Map(), timeline: buildSessionTimeline([]), storedCalls: new Map() };
}

let n = 0;
const ids = () => {
  let i = 0;
  return () => `approval-${++i}`;
};
const ev = <E extends AgentEvent>(e: Omit<E, "id"> & { id?: string }) => ({ id: `e${++n}`, ...e }) as unknown as AgentEvent;
const result = (sessionId: string, command: string, ok: boolean, ts: number, extra: Record<string, unknown> = {}) =>
  ev({ type: "tool.result", sessionId, callId: `c${n}`, toolName: "bash", args: { command }, ts, ...(ok ? { success: true } : { success: false, error: "boom" }), ...extra } as never);

describe("engine batch: clock clamp", () => {
  it("an event older than the session's clock takes the clock's time; the clock never goes back", () => {
    const events = [ev({ type: "turn.start", sessionId: "s", ts: T0 + 5000 } as never), ev({ type: "turn.start", sessionId: "s", ts: T0 } as never)];
    const out = applyBatch(loaded(events), events, ids());
    expect(out.records.events.map((r) => r.ts.getTime())).toEqual([T0 + 5000, T0 + 5000]);
    expect(out.sessions.get("s")).toMatchObject({ clock: T0 + 5000, firstEventAt: T0 + 5000, lastEventAt: T0 + 5000, eventCount: 2, dirty: true });
  });
});

describe("engine batch: event records", () => {
  it("a call keeps its call info for later results (its key in the row's column, no null field); a result keeps what is shown of it, not its call's info again, nor names of fields it lacks", () => {
    const call = ev({ type: "tool.call", sessionId: "s", callId: "c-rec", toolName: "bash", args: { command: "make build" }, ts: T0 } as never);
    const res = ev({ type: "tool.result", sessionId: "s", callId: "c-rec", toolName: "bash", args: { command: "make build" }, ts: T0 + 10, success: false, error: "exit 2", httpStatus: 500, durationMs: 12 } as never);
    const out = applyBatch(loaded([call, res]), [call, res], ids());
    const [callRow, resultRow] = out.records.events;
    expect(callRow.payload).toEqual({ call: { argsHash: expect.any(String), kind: "command", command: "make build", params: expect.any(Object) }, preview: expect.any(String) });
    expect(storedCallFromLog(callRow.payload.call as LoggedCall, callRow.failureKey)).toEqual(callInfo(call as never, configs));
    expect(resultRow.failureKey).toBe(callRow.failureKey);
    expect(resultRow.payload).toEqual({ preview: expect.any(String), error: "exit 2", httpStatus: 500, durationMs: 12 });
    const quiet = ev({ type: "tool.result", sessionId: "s", callId: "c-rec", toolName: "bash", ts: T0 + 20, success: true } as never);
    expect(applyBatch(loaded([quiet]), [quiet], ids()).records.events[0].payload).toEqual({});
  });
});

describe("engine batch: a result's call info", () => {
  it("a result repeating its call's args (keys in another order) has the call's key; other args, a domain or a service make their own", () => {
    const call = (callId: string, args: Record<string, unknown>) => ev({ type: "tool.call", sessionId: "s", callId, toolName: "http_request", args, ts: T0 } as never);
    const res = (callId: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      ev({ type: "tool.result", sessionId: "s", callId, toolName: "http_request", args, ts: T0 + 5, success: false, error: "503", ...extra } as never);
    const events = [
      call("same", { url: "https://api.example.com/v1/a", method: "GET" }),
      res("same", { method: "GET", url: "https://api.example.com/v1/a" }),
      call("other", { url: "https://api.example.com/v1/a" }),
      res("other", { url: "https://billing.example.com/v2/b" }),
      call("svc", { url: "https://api.example.com/v1/a" }),
      res("svc", { url: "https://api.example.com/v1/a" }, { domain: "payments" }),
    ];
    const plan = planBatch(events, configs, new Map());
    const keyOf = (i: number) => plan.resultInfo.get(events[i].id)!;
    expect(keyOf(1)).toEqual(plan.batchCalls.get("s\u0000same"));
    expect(keyOf(3).failureKey).toContain("billing.example.com");
    expect(keyOf(3).failureKey).not.toBe(plan.batchCalls.get("s\u0000other")!.failureKey);
    expect(keyOf(5).domain).toBe("payments");
  });
});

describe("engine batch: session phase, then trust phase", () => {
  const denied = (ts: number) => result("s", "curl https://auth.example.com", false, ts, { error: "403 Forbidden", httpStatus: 403 });

  it("the session phase's event rows need no trust state; the trust phase upgrades what the key's history changes", () => {
    const stored = newKeyContext("bash|command=curl", "bash");
    const events = [denied(T0), denied(T0 + 1000), denied(T0 + 2000), result("s", "curl https://auth.example.com", true, T0 + 3000)];
    const state = loaded(events, new Map([["bash|command=curl", stored]]));
    const sessionPhase = applySessionPhase(state, events);
    expect(sessionPhase.records.events.map((r) => r.severity)).toEqual(["permission", "permission", "permission", null]);
    const out = applyTrustPhase(state, sessionPhase, ids());
    expect(out.severityUpgrades).toEqual([{ id: events[2].id, ts: new Date(T0 + 2000), severity: "repeated_auth" }]);
    expect(out.records.failures.map((f) => f.severity)).toEqual(["permission", "permission", "repeated_auth"]);
    // applyBatch, both phases at once, hands out the rows as finally stored.
    expect(applyBatch(state, events, ids()).records.events.map((r) => r.severity)).toEqual(["permission", "permission", "repeated_auth", null]);
  });

  it("effects come out in event order, a result's trust effects before its event's behaviour effects", () => {
    // The third failure escalates the key and is the third repeat of the same call: a pattern and
    // its nudge at the same event, after the escalation.
    const events = Array.from({ length: 6 }, (_, i) => result("s", "make", false, T0 + i * 1000));
    const out = applyBatch(loaded(events), events, ids());
    expect(out.effects.map((e) => e.type)).toEqual(["escalated", "pattern", "nudge", "pattern", "nudge", "pattern", "nudge", "paused"]);
    // Each effect names the event that produced it (the shell splits a grouped batch's effects by it).
    expect(out.effectEvents).toEqual([2, 2, 2, 3, 3, 4, 4, 4]);
  });
});

describe("engine batch: security pre-classification", () => {
  it("a failing command matching a security pattern may create its tool-level state; other results only see it", () => {
    const events = [result("s", "sudo rm -rf /", false, T0), result("s", "ls -la", false, T0)];
    const plan = planBatch(events, configs, new Map());
    expect([...plan.possiblySecurityResults]).toEqual([events[0].id]);
    expect(plan.createKeys.map((k) => k.failureKey)).toContain("@tool:bash");
    expect([...plan.toolKeys]).toEqual(["@tool:bash"]);
  });

  it("a success is never possibly-security, whatever the command", () => {
    const plan = planBatch([result("s", "sudo rm -rf /", true, T0)], configs, new Map());
    expect(plan.possiblySecurityResults.size).toBe(0);
    expect(plan.createKeys.map((k) => k.failureKey)).not.toContain("@tool:bash");
  });

  it("a security failure blocks the tool level; results before it in the batch do not land on that state", () => {
    const events = [result("s", "make", true, T0), result("s", "sudo rm -rf /", false, T0 + 1000)];
    const out = applyBatch(loaded(events), events, ids());
    const tool = out.contexts.get("@tool:bash")!;
    expect(tool.state.state).toBe("blocked");
    expect(tool.state.totalCalls).toBe(1);
    expect(out.records.changedLevelStates.has("@tool:bash")).toBe(true);
  });

  it("a result without args borrows its call's key, from the batch or from the stored calls", () => {
    const call = ev({ type: "tool.call", sessionId: "s", callId: "k1", toolName: "bash", args: { command: "make build" }, ts: T0 } as never);
    const orphan = ev({ type: "tool.result", sessionId: "s", callId: "k0", toolName: "bash", success: true, ts: T0 } as never);
    const res = ev({ type: "tool.result", sessionId: "s", callId: "k1", toolName: "bash", success: true, ts: T0 } as never);
    expect(callsToLoad([call, orphan, res])).toEqual([{ sessionId: "s", callId: "k0" }]);
    const stored: StoredCall = { failureKey: "bash:git", argsHash: "h", domain: null, kind: "command", command: "git", params: {} };
    const plan = planBatch([call, orphan, res], configs, new Map([["s\u0000k0", stored]]));
    expect(plan.resultInfo.get(orphan.id)!.failureKey).toBe("bash:git");
    expect(plan.resultInfo.get(res.id)!.failureKey).toBe(plan.batchCalls.get("s\u0000k1")!.failureKey);
  });
});

describe("engine batch: approval lifecycle", () => {
  const recovering = (key: string, approvalPending = false): KeyContext => {
    const c = newKeyContext(key, "bash");
    return { ...c, state: { ...c.state, state: "recovering", recoverySuccesses: 2, recoveryNeeded: 3, approvalPending } };
  };
  const askSession = () => ({ ...session("s"), settings: { recoveryMode: "ask" } } as BatchSession);

  it("the last needed success in ask mode opens one approval, named by the caller, and the effect carries its id", () => {
    const first = [result("s", "make build", true, T0)];
    const key = planBatch(first, configs, new Map()).resultInfo.get(first[0].id)!.failureKey;
    const out = applyBatch(loaded(first, new Map([[key, recovering(key)]]), new Map([["s", askSession()]])), first, ids());
    expect(out.records.approvalsCreated).toMatchObject([{ id: "approval-1", kind: "recovery", failureKey: key, status: "pending", createdAt: new Date(T0) }]);
    expect(out.effects).toContainEqual(expect.objectContaining({ type: "recovery_pending", failureKey: key, approvalId: "approval-1" }));
    expect(out.contexts.get(key)!.state.approvalPending).toBe(true);
  });

  it("an approval opened and superseded in the same batch is written closed; an older one is closed by key", () => {
    const events = [result("s", "make build", true, T0), ...Array.from({ length: 6 }, (_, i) => result("s", "make build", false, T0 + 1000 * (i + 1)))];
    const key = planBatch(events, configs, new Map()).resultInfo.get(events[0].id)!.failureKey;
    const inBatch = applyBatch(loaded(events, new Map([[key, recovering(key)]]), new Map([["s", askSession()]])), events, ids());
    expect(inBatch.records.approvalsCreated).toMatchObject([{ status: "denied", resolvedBy: "system", comment: expect.stringContaining("Superseded") }]);
    expect(inBatch.records.approvalsSuperseded).toEqual([]);

    const failures = events.slice(1);
    const older = applyBatch(loaded(failures, new Map([[key, recovering(key, true)]]), new Map([["s", askSession()]])), failures, ids());
    expect(older.records.approvalsCreated).toEqual([]);
    expect(older.records.approvalsSuperseded).toEqual([key]);
  });
});

describe("engine batch: model deltas and daily roll-ups", () => {
  it("sums attempts and failures per (model, key) and results per (day, tool, key)", () => {
    const nextDay = T0 + 86_400_000;
    const events = [
      result("s", "make build", true, T0, { model: "m1" }),
      result("s", "make build", false, T0 + 1000, { model: "m1" }),
      result("s", "git push", false, T0 + 2000, { model: "m2" }),
      result("s", "make build", true, nextDay, { model: "m2" }),
    ];
    const out = applyBatch(loaded(events), events, ids());
    const deltas = [...out.records.modelToolDeltas.values()].map((d) => [d.model, d.failureKey, d.attempts, d.failures, d.lastFailureAt]);
    const build = out.records.events[0].failureKey!;
    const test = out.records.events[2].failureKey!;
    expect(deltas).toEqual([
      ["m1", build, 2, 1, T0 + 1000],
      ["m2", test, 1, 1, T0 + 2000],
      ["m2", build, 1, 0, null],
    ]);
    const daily = [...out.records.dailyStats.values()];
    expect(daily).toEqual([
      { day: "2026-11-23", toolName: "bash", failureKey: build, results: 2, failures: 1 },
      { day: "2026-11-23", toolName: "bash", failureKey: test, results: 1, failures: 1 },
      { day: "2026-11-24", toolName: "bash", failureKey: build, results: 1, failures: 0 },
    ]);
    expect(out.profiles.get(build)!.map((p) => [p.model, p.attempts, p.failures])).toEqual([["m1", 2, 1], ["m2", 1, 0]]);
  });
});

describe("engine batch: pauses", () => {
  it("an interrupt nudge pauses the session, and the pause is in the next session state", () => {
    const start = ev({ type: "session.start", sessionId: "s", agent: "a", settings: { nudgeLevel: "interrupt" }, ts: T0 } as never);
    const calls = Array.from({ length: 12 }, (_, i) =>
      ev({ type: "tool.call", sessionId: "s", callId: `p${i}`, toolName: "readFile", args: { path: "/same" }, ts: T0 + 1000 * (i + 1) } as never),
    );
    const events = [start, ...calls];
    const out = applyBatch(loaded(events), events, ids());
    const paused = out.effects.find((e) => e.type === "paused");
    expect(paused).toBeDefined();
    const s = out.sessions.get("s")!;
    expect(s).toMatchObject({ paused: true, callCount: 12, eventCount: 13 });
    expect(s.pauseReason).toBe((paused as { reason: string }).reason);
    expect(out.records.nudges.some((r) => r.nudgeType === "interrupt")).toBe(true);
  });

  it("leaves the loaded state untouched", () => {
    const events = [result("s", "make build", false, T0)];
    const state = loaded(events);
    const before = JSON.stringify([...state.sessions.values()]);
    applyBatch(state, events, ids());
    expect(JSON.stringify([...state.sessions.values()])).toBe(before);
    expect(state.contexts.size).toBe(0);
  });
});

describe("engine batch: session decay", () => {
  it("decays by the sessions the shell loaded as rows, as by the same sessions as a timeline, and leaves the rows as they were", () => {
    const first = applyBatch(loaded([result("old", "make build", false, T0 - 60_000)]), [result("old", "make build", false, T0 - 60_000)], ids());
    const [key, stored] = [...first.contexts].find(([k]) => !k.startsWith(TOOL_PREFIX) && !k.startsWith(DOMAIN_PREFIX))!;
    // The failure's session ended; two later sessions of its agent started: 0.8² of its weight is left.
    const rows = [
      { sessionId: "old", agent: "default", startedAt: T0 - 120_000, endedAt: T0 - 50_000 },
      { sessionId: "a", agent: "default", startedAt: T0 - 40_000, endedAt: null },
      { sessionId: "b", agent: "default", startedAt: T0 - 30_000, endedAt: T0 - 20_000 },
    ];
    const copy = JSON.parse(JSON.stringify(rows));
    const events = [result("s", "make build", true, T0)];
    const run = (timeline: LoadedState["timeline"]) => {
      const state = { ...loaded(events, new Map([[key, stored]])), timeline };
      return applyTrustPhase(state, applySessionPhase(state, events), ids());
    };
    const fromRows = run(rows);
    expect(fromRows.keyMetrics.get(key)?.effectiveFailures).toBeCloseTo(0.64, 6);
    expect(run(buildSessionTimeline(rows)).keyMetrics).toEqual(fromRows.keyMetrics);
    expect(rows).toEqual(copy);
    expect(Object.keys(fromRows.timeline.sessions).sort()).toEqual(["a", "b", "old", "s"]);
  });
});

// ---------------------------------------------------------------------------------------------
// A batch applied all at once equals the same events applied one by one
// ---------------------------------------------------------------------------------------------

const COMMANDS = ["ls -la", "make build", "sudo rm -rf /", "git push"];
const OUTCOMES: Record<string, unknown>[] = [
  { success: true },
  { success: true },
  { success: false, error: "boom" },
  { success: false, httpStatus: 503 },
  { success: false, error: "permission denied" },
  { success: false, error: "crashed", severity: "crash" },
  { success: false, error: "policy", severity: "security" },
];
const eventArb = fc.record({
  kind: fc.constantFrom("result", "result", "result", "call", "start", "end", "turn", "text"),
  session: fc.constantFrom("s1", "s2"),
  command: fc.constantFrom(...COMMANDS),
  tool: fc.constantFrom("bash", "sh", "Read"),
  // Empty (empty_response), repeated (planning_loop counts a repeat twice), naming an action tool (tool_avoidance).
  text: fc.constantFrom("", "I will run bash now", "Let me check the logs"),
  outcome: fc.constantFrom(...OUTCOMES),
  model: fc.constantFrom(undefined, "m1", "m2"),
  dt: fc.integer({ min: -60_000, max: 600_000 }),
  mode: fc.constantFrom(undefined, "auto", "ask"),
});

type EventSpec = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

function toEvents(specs: EventSpec[]): AgentEvent[] {
  let t = T0;
  return specs.map((s, i) => {
    t += s.dt;
    const base = { id: `p${i}`, sessionId: s.session, ts: t, ...(s.model ? { model: s.model } : {}) };
    switch (s.kind) {
      case "call":
        return { ...base, type: "tool.call", callId: `c${i}`, toolName: s.tool, args: { command: s.command } } as AgentEvent;
      case "start":
        return { ...base, type: "session.start", agent: "agent", ...(s.mode ? { settings: { recoveryMode: s.mode } } : {}) } as AgentEvent;
      case "end":
        return { ...base, type: "session.end" } as AgentEvent;
      case "turn":
        return { ...base, type: "turn.start", turnIndex: i } as AgentEvent;
      case "text":
        return { ...base, type: "model.text", text: s.text } as AgentEvent;
      default:
        return { ...base, type: "tool.result", callId: `c${i}`, toolName: s.tool, args: { command: s.command }, ...s.outcome } as AgentEvent;
    }
  });
}

/** The store a sequence of outcomes leaves: what the shell would have written, folded. */
interface Store {
  sessions: Map<string, BatchSession>;
  contexts: Map<string, KeyContext>;
  /** The metrics each trust state's row stores, as the last batch touching it wrote them. */
  keyMetrics: Map<string, unknown>;
  profiles: LoadedState["profiles"];
  timeline: LoadedState["timeline"];
  events: unknown[];
  failures: unknown[];
  transitions: unknown[];
  approvals: Map<string, { failureKey: string; status: string }>;
  patterns: unknown[];
  nudges: { sessionId: string; patternType: string | null; ts: Date; effective?: boolean }[];
  modelDeltas: Map<string, [number, number]>;
  behaviour: Map<string, string>;
  daily: Map<string, [number, number]>;
  suggestions: unknown[];
  effects: unknown[];
}

function emptyStore(): Store {
  return {
    sessions: new Map(), contexts: new Map(), keyMetrics: new Map(), profiles: new Map(), timeline: buildSessionTimeline([]), events: [], failures: [], transitions: [],
    approvals: new Map(), patterns: [], nudges: [], modelDeltas: new Map(), behaviour: new Map(), daily: new Map(), suggestions: [], effects: [],
  };
}

function write(store: Store, out: BatchOutcome) {
  const r = out.records;
  for (const [k, s] of out.sessions) store.sessions.set(k, { ...s, dirty: false });
  for (const [k, c] of out.contexts) store.contexts.set(k, c);
  for (const k of out.records.touchedKeys) store.keyMetrics.set(k, out.keyMetrics.get(k));
  store.profiles = new Map([...store.profiles, ...out.profiles]);
  store.timeline = out.timeline;
  store.events.push(...r.events);
  store.failures.push(...r.failures);
  store.transitions.push(...r.transitions);
  for (const k of r.approvalsSuperseded) for (const a of store.approvals.values()) if (a.failureKey === k && a.status === "pending") a.status = "denied";
  for (const a of r.approvalsCreated) store.approvals.set(a.id, { failureKey: a.failureKey, status: a.status });
  store.patterns.push(...r.patterns);
  // Verdicts on stored nudges first, then the batch's own nudges (as writeSessionPhase does).
  for (const v of r.nudgeVerdicts)
    for (const row of store.nudges) if (row.sessionId === v.sessionId && row.patternType === v.patternType && row.ts.getTime() === v.sentAt && row.effective == null) row.effective = v.effective;
  store.nudges.push(...r.nudges.map((x) => ({ ...x })));
  for (const d of r.modelToolDeltas.values()) {
    const k = `${d.model}|${d.failureKey}`;
    const [a, f] = store.modelDeltas.get(k) ?? [0, 0];
    store.modelDeltas.set(k, [a + d.attempts, f + d.failures]);
  }
  for (const [m, d] of r.behaviourDeltas) {
    const prev = JSON.parse(store.behaviour.get(m) ?? '{"patterns":{},"nudgesSent":0,"nudgesEffective":0,"turns":0,"stalledTurns":0}');
    for (const [p, c] of Object.entries(d.patterns)) prev.patterns[p] = (prev.patterns[p] ?? 0) + c;
    for (const f of ["nudgesSent", "nudgesEffective", "turns", "stalledTurns"] as const) prev[f] += d[f];
    prev.patterns = Object.fromEntries(Object.entries(prev.patterns).sort());
    store.behaviour.set(m, JSON.stringify(prev));
  }
  for (const d of r.dailyStats.values()) {
    const k = `${d.day}|${d.toolName}|${d.failureKey}`;
    const [a, f] = store.daily.get(k) ?? [0, 0];
    store.daily.set(k, [a + d.results, f + d.failures]);
  }
  store.suggestions.push(...r.suggestions);
  store.effects.push(...out.effects);
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** `shellPlan`: pass the plan made for loading to the engine, as the shell does (else it plans itself). */
function run(store: Store, events: AgentEvent[], newId: () => string, shellPlan = false) {
  const state: LoadedState = { workspaceId: "ws", configs, sessions: new Map(), contexts: new Map(), profiles: store.profiles, timeline: store.timeline, storedCalls: new Map() };
  const sessions = new Map<string, BatchSession>();
  // Frozen, as the shell's cached documents are to be: a batch that changed one in place throws.
  for (const e of events) sessions.set(e.sessionId, deepFreeze(store.sessions.get(e.sessionId) ?? session(e.sessionId)));
  // Only the states the batch touches, as the shell loads them.
  const plan = planBatch(events, configs, new Map());
  const contexts = new Map<string, KeyContext>();
  for (const k of [...plan.createKeys.map((c) => c.failureKey), ...plan.toolKeys]) {
    const c = store.contexts.get(k);
    if (c) contexts.set(k, c);
  }
  write(store, applyBatch({ ...state, sessions, contexts, ...(shellPlan ? { plan } : {}) }, events, newId));
}

const comparable = (s: Store) => ({
  ...s,
  sessions: Object.fromEntries([...s.sessions].sort()),
  contexts: Object.fromEntries([...s.contexts].sort()),
  keyMetrics: Object.fromEntries([...s.keyMetrics].sort()),
  profiles: Object.fromEntries([...s.profiles].sort()),
  timeline: undefined,
  approvals: [...s.approvals.values()],
  modelDeltas: Object.fromEntries([...s.modelDeltas].sort()),
  behaviour: Object.fromEntries([...s.behaviour].sort()),
  daily: Object.fromEntries([...s.daily].sort()),
});

describe("engine batch: properties", () => {
  it("a batch applied all at once (with the shell's plan) equals the same events applied one by one, never changing the states it loaded", () => {
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 1, maxLength: 40 }), (specs) => {
        const events = toEvents(specs);
        const whole = emptyStore();
        run(whole, events, ids(), true);
        const single = emptyStore();
        const newId = ids();
        for (const e of events) run(single, [e], newId);
        expect(comparable(single)).toEqual(comparable(whole));
      }),
      { numRuns: 150 },
    );
  });
});
