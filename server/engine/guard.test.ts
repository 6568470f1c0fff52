import { describe, expect, it } from "vitest";
import { storedCallFromLog, type BatchSession, type LoggedCall, type WorkspaceConfigs } from "./batch";
import { applyBatch } from "./apply-batch";
import { storedSessionBehaviour, type SessionBehaviour } from "./behaviour-state";
import { mergeEffectiveConfig } from "./config";
import { buildSessionTimeline } from "./decay";
import { guardAnswer, guardLevelKeys, guardRecord, guardSession, guardToolCallStep, guardVerdict, type GuardSessionFields, type GuardToolCallInput } from "./guard";
import { newKeyState } from "./key-state";
import type { AgentEvent, ConfigDocument, KeyState } from "./types";

type ToolCall = Extract<AgentEvent, { type: "tool.call" }>;

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const configsOf = (workspaceDoc: ConfigDocument = {}): WorkspaceConfigs => ({ workspaceDoc, orgDoc: {}, effective: mergeEffectiveConfig(workspaceDoc, {}) });

let n = 0;
const call = (extra: Partial<ToolCall> = {}): ToolCall => ({
  type: "tool.call",
  id: `call-${++n}`,
  sessionId: "s",
  callId: `c${n}`,
  toolName: "http_request",
  pluginName: "web",
  args: { url: "https://api.example.com/v1/users?token=sk-abcdefghijklmnopqrstuvwxyz012345", method: "GET" },
  ts: T0,
  model: "model-a",
  ...extra,
});

const storedRow = (fields: Partial<GuardSessionFields> = {}): GuardSessionFields => ({
  model: "model-a",
  paused: false,
  pause_reason: null,
  settings: {},
  clock: T0 + 60_000,
  first_event_at: new Date(T0 - 60_000).toISOString(),
  event_count: 4,
  call_count: 2,
  agent: "default",
  ...fields,
});

function stepInput(ev: ToolCall, o: { configs?: WorkspaceConfigs; stored?: GuardSessionFields | null; behaviour?: SessionBehaviour | null; states?: Map<string, KeyState>; duplicate?: boolean; globalPattern?: boolean } = {}): GuardToolCallInput {
  const configs = o.configs ?? configsOf();
  const stored = o.stored === undefined ? null : o.stored;
  return {
    call: ev,
    keys: guardLevelKeys(ev, configs),
    stored,
    cachedBehaviour: o.behaviour ?? null,
    session: guardSession(stored),
    configs,
    states: o.states ?? new Map(),
    globalPattern: o.globalPattern ?? false,
    duplicate: o.duplicate ?? false,
  };
}

/** The same session as applyBatch loads it. */
function batchSession(stored: GuardSessionFields | null, behaviour: SessionBehaviour | null): BatchSession {
  return {
    sessionId: "s", agent: stored?.agent ?? "default", model: stored?.model ?? null, startedAt: null, endedAt: null,
    firstEventAt: stored?.first_event_at ? Date.parse(stored.first_event_at) : null, lastEventAt: stored?.clock == null ? null : Number(stored.clock),
    clock: stored?.clock == null ? null : Number(stored.clock), paused: stored?.paused ?? false, pauseReason: stored?.pause_reason ?? null, pausedAt: null,
    settings: stored?.settings ?? {}, behaviour, eventCount: stored?.event_count ?? 0, callCount: stored?.call_count ?? 0, failureCount: 0, patternCount: 0, dirty: false,
  };
}

function applyBatchTo(ev: ToolCall, configs: WorkspaceConfigs, stored: GuardSessionFields | null, behaviour: SessionBehaviour | null) {
  const loaded = { workspaceId: "ws", configs, sessions: new Map([["s", batchSession(stored, behaviour)]]), contexts: new Map(), profiles: new Map(), timeline: buildSessionTimeline([]), storedCalls: new Map() };
  return applyBatch(loaded, [ev], () => "approval");
}

describe("guard.check's tool-call step and applyBatch record a call alike", () => {
  for (const [name, stored] of [
    ["a new session", null],
    ["a stored session whose clock is ahead of the call (the clock clamp)", storedRow()],
    ["a stored session behind the call", storedRow({ clock: T0 - 1000, model: null })],
  ] as const) {
    it(`${name}: the event payload, the session's fields and its behaviour`, () => {
      const configs = configsOf();
      const ev = call();
      const step = guardToolCallStep(stepInput(ev, { configs, stored }));
      if (!step || step.duplicate) throw new Error("the lean path should decide this call");
      const batch = applyBatchTo(ev, configs, stored, null);
      const [row] = batch.records.events;
      const s = batch.sessions.get("s")!;

      const { guard, ...payload } = step.payload;
      expect(payload).toEqual(row.payload);
      // The full path appends the answer to the same payload (recordGuardDecision).
      expect(Object.keys(step.payload)).toEqual([...Object.keys(row.payload), "guard"]);
      expect(guard).toEqual(guardRecord(step.verdict));
      expect(step.info).toEqual(storedCallFromLog(row.payload.call as LoggedCall, row.failureKey));
      expect(step.info.failureKey).toBe(row.failureKey);
      expect(step.at).toBe(row.ts.toISOString());
      expect(step.fields).toMatchObject({
        clock: s.clock,
        first_event_at: new Date(s.firstEventAt!).toISOString(),
        event_count: s.eventCount,
        call_count: s.callCount,
        model: s.model,
        paused: s.paused,
        pause_reason: s.pauseReason,
      });
      expect(storedSessionBehaviour(step.behaviour)).toEqual(storedSessionBehaviour(s.behaviour!));
    });
  }

  it("the clamp: a call older than the session's clock takes the clock's time", () => {
    const step = guardToolCallStep(stepInput(call({ ts: T0 }), { stored: storedRow({ clock: String(T0 + 5000) }) }));
    expect(step && !step.duplicate && step.fields.clock).toBe(T0 + 5000);
  });
});

describe("guard.check's tool-call step: what it leaves to the full path", () => {
  it("an ask (an escalated key) needs the full path; the verdict alone says ask", () => {
    const ev = call();
    const input = stepInput(ev);
    const escalated: KeyState = { ...newKeyState(input.keys.info.failureKey, ev.toolName), state: "escalated", escalationReason: "3 failures in 1h" };
    const states = new Map([[escalated.failureKey, escalated]]);
    expect(guardToolCallStep({ ...input, states })).toBeNull();
    expect(guardVerdict({ ...input, states })).toMatchObject({ decision: "ask", cause: "state", reason: "3 failures in 1h" });
  });

  it("a deny policy and the call that spends the tool-call budget need the full path", () => {
    const deny = configsOf({ policies: [{ name: "no-http", tool: "http_request", decision: "deny", reason: "no web" }] });
    expect(guardToolCallStep(stepInput(call(), { configs: deny }))).toBeNull();
    const budget = configsOf({ settings: { maxToolCallsPerSession: 2 } });
    expect(guardToolCallStep(stepInput(call(), { configs: budget, stored: storedRow({ call_count: 2 }) }))).toBeNull();
    expect(guardToolCallStep(stepInput(call(), { configs: budget, stored: storedRow({ call_count: 1 }) }))).not.toBeNull();
  });

  it("a call seen before answers and writes nothing", () => {
    const step = guardToolCallStep(stepInput(call(), { duplicate: true }));
    expect(step).toMatchObject({ duplicate: true, verdict: { decision: "allow", cause: "none" } });
  });

  it("a hold pauses the decision; the session row keeps its own pause", () => {
    const stored = storedRow();
    const input = stepInput(call(), { stored });
    const step = guardToolCallStep({ ...input, session: { ...input.session, paused: true, pauseReason: "maintenance (the workspace is paused)" } });
    if (!step || step.duplicate) throw new Error("a paused decision is written by the lean path");
    expect(step.verdict).toMatchObject({ decision: "pause", reason: "maintenance (the workspace is paused)", cause: "paused" });
    expect(step.fields).toMatchObject({ paused: false, pause_reason: null });
    expect(guardAnswer(step.verdict, { approvalId: null, effects: [] })).toEqual({
      decision: "pause", failureKey: step.verdict.failureKey, state: "trusted", reason: "maintenance (the workspace is paused)", escalation: null, approvalId: null, effects: [], policy: null, wouldDecide: null,
    });
  });

  it("the call that makes a pattern (the same call again and again) needs the full path, where applyBatch reports it", () => {
    const configs = configsOf();
    let behaviour: SessionBehaviour | null = null;
    let stored: GuardSessionFields | null = null;
    for (let i = 0; i < 50; i++) {
      const ev = call({ ts: T0 + i * 1000, args: { url: "https://api.example.com/v1/same", method: "GET" } });
      const step = guardToolCallStep(stepInput(ev, { configs, stored, behaviour }));
      if (!step) {
        const batch = applyBatchTo(ev, configs, stored, behaviour);
        expect(batch.effects.length).toBeGreaterThan(0);
        return;
      }
      if (step.duplicate) throw new Error("no call is repeated by id");
      expect(applyBatchTo(ev, configs, stored, behaviour).effects).toEqual([]);
      behaviour = step.behaviour;
      stored = step.fields;
    }
    throw new Error("fifty identical calls made no pattern");
  });
});
