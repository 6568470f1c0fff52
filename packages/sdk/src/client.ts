/**
 * The core client: `check` before a tool call, batched `report` of what happened, `guardTool` to do
 * both around a function. Fails open by default: when Vigil cannot be reached the call is allowed
 * (and the events wait for the next flush); `failOpen: false` refuses instead.
 */
import { createHash, randomUUID } from "node:crypto";
import { VigilApiError, VigilDecisionError, VigilUnreachableError } from "./errors.js";
import { Transport, type TransportOptions } from "./transport.js";
import type { CheckAnswer, CheckInput, Effect, IngestAnswer, SessionStartEvent, VigilEvent } from "./types.js";

export interface VigilOptions extends Partial<Pick<TransportOptions, "timeoutMs" | "maxRetries" | "maxRetryDelayMs" | "fetch">> {
  /** Vigil's base URL, e.g. `http://localhost:3000`. Default `VIGIL_URL`. */
  url?: string;
  /** An API key (`vgl_…`). Default `VIGIL_API_KEY`. */
  apiKey?: string;
  /** The agent's name on its sessions (`session.start.agent`). */
  agent?: string;
  /** The client's own session; default a new id made when the client is created. */
  sessionId?: string;
  /** Allow tool calls when Vigil cannot be reached (default true); false refuses them. */
  failOpen?: boolean;
  /** Seconds an `ask` waits for a person in Vigil's Approvals (0–120, default 0). */
  waitForApprovalSeconds?: number;
  /** Events sent together once this many are queued (default 100, at most 1000). */
  batchSize?: number;
  /** Queued events are sent at least this often (ms, default 1000). */
  flushIntervalMs?: number;
  /** Events kept while Vigil cannot be reached (default 10 000; the oldest are dropped beyond). */
  maxQueue?: number;
  /** Every effect Vigil answers with (escalations, nudges, pauses…), in order. */
  onEffect?: (effect: Effect) => void;
  /** Errors the client swallows to fail open (Vigil unreachable, a batch refused). Default: a warning on stderr. */
  onError?: (error: Error) => void;
}

export interface GuardToolOptions {
  pluginName?: string;
  /** Seconds an `ask` waits for a person in Vigil's Approvals (overrides the client's). */
  waitForApprovalSeconds?: number;
  /**
   * Asked when Vigil answers `ask` (after any wait): return true to run the tool. Recorded as the
   * call's `permission.resolved`. Without it an `ask` throws VigilDecisionError.
   */
  onAsk?: (answer: CheckAnswer) => boolean | Promise<boolean>;
}

export interface ToolContext {
  sessionId?: string;
  callId?: string;
}

export type GuardedTool<A, R> = (args: A, ctx?: ToolContext) => Promise<R>;

/** The call a tool.result belongs to. */
export interface ReportedCall {
  toolName: string;
  callId: string;
  sessionId?: string;
  args?: unknown;
  pluginName?: string;
}

export interface StartSessionOptions {
  sessionId?: string;
  agent?: string;
  model?: string;
  /** Session setting overrides, e.g. `{ nudgeLevel: "direct" }`. */
  settings?: Record<string, unknown>;
}

/** Results larger than this (JSON characters) are stored as a truncated string. */
const MAX_RESULT_CHARS = 16_384;

export class Vigil {
  /** The client's own session id. */
  readonly sessionId: string;
  readonly agent: string | undefined;
  readonly failOpen: boolean;
  readonly transport: Transport;
  private readonly waitForApprovalSeconds: number;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxQueue: number;
  private readonly onError: (error: Error) => void;
  private readonly effectListeners = new Set<(effect: Effect) => void>();
  private queue: Record<string, unknown>[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<IngestAnswer> | null = null;
  private readonly startedSessions = new Set<string>();
  private readonly paused = new Map<string, string>();
  private readonly nudges = new Map<string, Extract<Effect, { type: "nudge" }>[]>();
  private closed = false;

  constructor(options: VigilOptions = {}) {
    const url = options.url ?? process.env.VIGIL_URL;
    const apiKey = options.apiKey ?? process.env.VIGIL_API_KEY;
    if (!url) throw new TypeError("createVigil: `url` is required (or set VIGIL_URL)");
    if (!apiKey) throw new TypeError("createVigil: `apiKey` is required (or set VIGIL_API_KEY)");
    this.transport = new Transport({ url, apiKey, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries, maxRetryDelayMs: options.maxRetryDelayMs, fetch: options.fetch });
    this.sessionId = options.sessionId ?? `vigil-${randomUUID()}`;
    this.agent = options.agent;
    this.failOpen = options.failOpen ?? true;
    this.waitForApprovalSeconds = options.waitForApprovalSeconds ?? 0;
    this.batchSize = Math.min(Math.max(1, options.batchSize ?? 100), 1000);
    this.flushIntervalMs = options.flushIntervalMs ?? 1000;
    this.maxQueue = options.maxQueue ?? 10_000;
    this.onError = options.onError ?? ((error) => process.emitWarning(error.message, { code: "VIGIL" }));
    if (options.onEffect) this.effectListeners.add(options.onEffect);
  }

  /** Listens to every effect Vigil answers with; returns the function that stops listening. */
  onEffect(listener: (effect: Effect) => void): () => void {
    this.effectListeners.add(listener);
    return () => this.effectListeners.delete(listener);
  }

  /** guard.check: records the call and answers allow / ask / deny / pause. Reports queued before it are sent first, so the decision sees them. */
  async check(input: CheckInput): Promise<CheckAnswer> {
    const sessionId = input.sessionId ?? this.sessionId;
    const callId = input.callId ?? randomUUID();
    this.ensureSession(sessionId);
    await this.flush().catch(() => {});
    const wait = input.waitForApprovalSeconds ?? this.waitForApprovalSeconds;
    const body: Record<string, unknown> = {
      id: input.id ?? stableId("check", sessionId, callId),
      sessionId,
      callId,
      toolName: input.toolName,
      args: jsonObject(input.args),
    };
    if (input.pluginName) body.pluginName = input.pluginName;
    if (input.model) body.model = input.model;
    if (input.turnIndex !== undefined) body.turnIndex = input.turnIndex;
    if (wait > 0) body.waitForApprovalSeconds = wait;
    let answer: Omit<CheckAnswer, "callId" | "sessionId">;
    try {
      answer = await this.transport.mutation("guard.check", body, wait * 1000);
    } catch (error) {
      if (this.failOpen && cannotReach(error)) {
        this.onError(error as Error);
        return { decision: "allow", failureKey: "", state: "trusted", reason: null, escalation: null, approvalId: null, policy: null, wouldDecide: null, effects: [], failedOpen: (error as Error).message, callId, sessionId };
      }
      throw error;
    }
    const out: CheckAnswer = { ...answer, effects: answer.effects ?? [], callId, sessionId };
    if (out.decision === "pause") this.paused.set(sessionId, out.reason ?? "paused");
    else this.paused.delete(sessionId);
    this.dispatch(out.effects);
    return out;
  }

  /** Queues an event for ingest.events; sent when `batchSize` are queued, every `flushIntervalMs`, on `flush()` and on `close()`. */
  report(event: VigilEvent): void {
    if (this.closed) throw new Error("vigil.report after close()");
    const sessionId = event.sessionId ?? this.sessionId;
    if (event.type !== "session.start") this.ensureSession(sessionId);
    this.enqueue({ ...event, id: event.id ?? randomUUID(), sessionId, ts: event.ts ?? new Date().toISOString() });
  }

  /** Sends every queued event now. Fail-open: when Vigil cannot be reached the events stay queued and the answer counts none. */
  flush(): Promise<IngestAnswer> {
    const previous = this.flushing ?? Promise.resolve(emptyAnswer());
    const next = previous.catch(() => emptyAnswer()).then(() => this.sendQueued());
    this.flushing = next;
    const clear = () => {
      if (this.flushing === next) this.flushing = null;
    };
    next.then(clear, clear);
    return next;
  }

  /** Starts a session (session.start with the client's agent); returns its id. */
  startSession(options: StartSessionOptions = {}): string {
    const sessionId = options.sessionId ?? this.sessionId;
    this.startedSessions.add(sessionId);
    const event: SessionStartEvent = { type: "session.start", sessionId };
    const agent = options.agent ?? this.agent;
    if (agent) event.agent = agent;
    if (options.model) event.model = options.model;
    if (options.settings) event.settings = options.settings;
    this.report(event);
    return sessionId;
  }

  /** Ends a session (session.end) and sends what is queued. */
  async endSession(sessionId: string = this.sessionId): Promise<void> {
    this.report({ type: "session.end", sessionId });
    await this.flush();
    this.paused.delete(sessionId);
    this.nudges.delete(sessionId);
  }

  /**
   * Wraps a tool: check → run → report the result or the thrown error. `deny` and `pause` throw a
   * VigilDecisionError (its message is Vigil's reason) without running the tool; so does an `ask`
   * unless `onAsk` grants it.
   */
  guardTool<A, R>(name: string, fn: (args: A) => R | Promise<R>, options: GuardToolOptions = {}): GuardedTool<A, R> {
    return async (args: A, ctx: ToolContext = {}) => {
      const sessionId = ctx.sessionId ?? this.sessionId;
      const callId = ctx.callId ?? randomUUID();
      const answer = await this.check({ toolName: name, args: args as Record<string, unknown>, callId, sessionId, pluginName: options.pluginName, waitForApprovalSeconds: options.waitForApprovalSeconds });
      if (answer.decision === "ask") {
        const granted = options.onAsk ? Boolean(await options.onAsk(answer)) : false;
        if (options.onAsk) this.report({ type: "permission.resolved", sessionId, callId, toolName: name, granted, method: "sdk" });
        if (!granted) throw new VigilDecisionError(answer);
      } else if (answer.decision !== "allow") {
        throw new VigilDecisionError(answer);
      }
      return this.runReported({ toolName: name, callId, sessionId, args, pluginName: options.pluginName }, () => fn(args));
    };
  }

  /** Runs `fn` and reports its result (or thrown error) as the call's tool.result; used by guardTool and the adapters. */
  async runReported<R>(call: ReportedCall, fn: () => R | Promise<R>): Promise<R> {
    const startedAt = performance.now();
    try {
      const result = await fn();
      this.reportToolResult(call, { result, startedAt });
      return result;
    } catch (error) {
      this.reportToolResult(call, { error, startedAt });
      throw error;
    }
  }

  /** Reports a call's tool.result: `result` for a success, `error` (anything thrown) for a failure. */
  reportToolResult(call: ReportedCall, outcome: { result?: unknown; error?: unknown; startedAt?: number }): void {
    const base = { type: "tool.result" as const, sessionId: call.sessionId ?? this.sessionId, callId: call.callId, toolName: call.toolName, ...(call.args !== undefined ? { args: jsonObject(call.args) } : {}), ...(call.pluginName ? { pluginName: call.pluginName } : {}) };
    const durationMs = outcome.startedAt !== undefined ? { durationMs: Math.max(0, Math.round(performance.now() - outcome.startedAt)) } : {};
    if ("error" in outcome) {
      const status = httpStatusOf(outcome.error);
      this.report({ ...base, success: false, error: errorText(outcome.error), ...(status ? { httpStatus: status } : {}), ...durationMs });
    } else {
      this.report({ ...base, success: true, ...resultField(outcome.result), ...durationMs });
    }
  }

  /** Whether Vigil paused the session (a `pause` answer or a `paused` effect), and why. */
  pausedReason(sessionId: string = this.sessionId): string | null {
    return this.paused.get(sessionId) ?? null;
  }

  /** The nudges Vigil sent for the session since the last call, in order; taking them clears them. */
  takeNudges(sessionId: string = this.sessionId): Extract<Effect, { type: "nudge" }>[] {
    const list = this.nudges.get(sessionId) ?? [];
    this.nudges.delete(sessionId);
    return list;
  }

  /** Stops the timer and sends what is queued. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
    this.closed = true;
  }

  /** The session.start for a session the client has not started yet (carries the agent name). */
  ensureSession(sessionId: string): void {
    if (this.startedSessions.has(sessionId)) return;
    this.startSession({ sessionId });
  }

  private enqueue(event: Record<string, unknown>): void {
    this.queue.push(event);
    if (this.queue.length > this.maxQueue) this.queue.splice(0, this.queue.length - this.maxQueue);
    if (this.queue.length >= this.batchSize) void this.flush().catch(() => {});
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.flush().catch(() => {});
      }, this.flushIntervalMs);
      this.timer.unref?.();
    }
  }

  private async sendQueued(): Promise<IngestAnswer> {
    const total = emptyAnswer();
    while (this.queue.length) {
      const batch = this.queue.splice(0, Math.min(this.batchSize, 1000));
      let answer: IngestAnswer;
      try {
        answer = await this.transport.mutation<IngestAnswer>("ingest.events", { events: batch });
      } catch (error) {
        if (cannotReach(error)) {
          this.queue.unshift(...batch); // kept for the next flush
          if (this.failOpen) {
            this.onError(error as Error);
            return total;
          }
        } else {
          // A refused batch is refused as a whole and would be again: dropped, and said so.
          this.onError(error as Error);
        }
        throw error;
      }
      total.accepted += answer.accepted;
      total.duplicates += answer.duplicates;
      total.effects.push(...(answer.effects ?? []));
      this.dispatch(answer.effects ?? []);
    }
    return total;
  }

  private dispatch(effects: Effect[]): void {
    for (const effect of effects) {
      if (effect.type === "paused") this.paused.set(effect.sessionId, effect.reason);
      if (effect.type === "nudge") {
        const list = this.nudges.get(effect.sessionId) ?? [];
        list.push(effect);
        this.nudges.set(effect.sessionId, list);
      }
      for (const listener of this.effectListeners) {
        try {
          listener(effect);
        } catch (error) {
          this.onError(error as Error);
        }
      }
    }
  }
}

/** The client: `createVigil({ url, apiKey, agent?, sessionId?, failOpen? })`. */
export function createVigil(options: VigilOptions = {}): Vigil {
  return new Vigil(options);
}

/** Vigil unreachable, overloaded or down (after the retries): what fail-open covers. */
export function cannotReach(error: unknown): boolean {
  return error instanceof VigilUnreachableError || (error instanceof VigilApiError && (error.status >= 500 || error.status === 429));
}

function emptyAnswer(): IngestAnswer {
  return { accepted: 0, duplicates: 0, effects: [] };
}

/** A 1–128 character event id that is the same for the same parts. */
export function stableId(kind: string, ...parts: string[]): string {
  return `${kind}_${createHash("sha256").update(parts.join("\u0000")).digest("base64url")}`;
}

/** Tool args as the JSON object Vigil takes (a non-object is wrapped as `{ input }`). */
export function jsonObject(value: unknown): Record<string, unknown> {
  let plain: unknown;
  try {
    plain = JSON.parse(JSON.stringify(value ?? {}));
  } catch {
    plain = { input: String(value) };
  }
  return plain && typeof plain === "object" && !Array.isArray(plain) ? (plain as Record<string, unknown>) : { input: plain };
}

function resultField(result: unknown): { result?: unknown } {
  if (result === undefined) return {};
  let text: string | undefined;
  try {
    text = JSON.stringify(result);
  } catch {
    return { result: String(result) };
  }
  if (text === undefined) return {};
  return text.length > MAX_RESULT_CHARS ? { result: `${text.slice(0, MAX_RESULT_CHARS)}…` } : { result: JSON.parse(text) };
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** An HTTP status carried by the error (`status`, `statusCode`, `response.status`). */
function httpStatusOf(error: unknown): number | null {
  if (!error || typeof error !== "object") return null;
  const e = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown } };
  for (const value of [e.status, e.statusCode, e.response?.status]) {
    if (typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599) return value;
  }
  return null;
}
