/**
 * `@vigil/sdk/openai-agents` — the OpenAI Agents SDK (`@openai/agents` 0.x) with Vigil deciding each
 * tool call. Wire it as
 *   const guard = vigilAgents(vigil);
 *   const agent = new Agent({ model, tools: [guard.tool({ name, parameters, execute }), guard.tool(other.asTool(…))] });
 *   const runner = guard.attach(new Runner({ callModelInputFilter: guard.callModelInputFilter }));
 *   let result = await runner.run(agent, input);
 *   for (const item of result.interruptions) guard.approve(result.state, item);   // or guard.reject(…)
 *   result = await runner.run(agent, result.state);
 * - `needsApproval` asks guard.check: `ask` → the run stops with an interruption (approve or reject it
 *   through RunState), or a wait for a person in Vigil's Approvals first (`waitForApprovalSeconds`);
 * - a tool input guardrail refuses a denied call with Vigil's reason (the model reads it) and ends the
 *   run on a pause (`ToolInputGuardrailTripwireTriggered`, `isVigilPause(error)`);
 * - results and errors of the guarded tools, the agents' final text, approvals answered through
 *   RunState are reported; nudges go into the next model call; a paused session's next model call
 *   throws `VigilPausedError`.
 */
import { tool as functionTool } from "@openai/agents";
import { stableId, type ReportedCall, type Vigil } from "./client.js";
import type { CheckAnswer } from "./types.js";

export interface VigilAgentsOptions {
  /** The session the run belongs to; default the client's own. */
  sessionId?: string;
  /** The model's name on calls and texts. */
  model?: string;
  /** Seconds an `ask` waits for a person in Vigil's Approvals before it becomes the run's interruption (0–120). */
  waitForApprovalSeconds?: number;
  /** How a nudge is worded for the model; default `[Vigil] <message>`. */
  formatNudge?: (message: string, nudgeType: string) => string;
}

/** The session was paused in Vigil: the run does not call the model again. */
export class VigilPausedError extends Error {
  constructor(
    readonly sessionId: string,
    reason: string,
  ) {
    super(reason);
    this.name = "VigilPausedError";
  }
}

interface RunContextLike {
  isToolApproved(approval: { toolName: string; callId: string }): boolean | undefined;
}

interface GuardrailOutput {
  behavior: { type: "allow" } | { type: "rejectContent"; message: string } | { type: "throwException" };
  outputInfo?: unknown;
}

interface InputGuardrail {
  type: "tool_input";
  name: string;
  run: (data: { context: RunContextLike; agent: unknown; toolCall: { name: string; callId: string; arguments: string } }) => Promise<GuardrailOutput>;
}

/** A FunctionTool as `tool()` and `agent.asTool()` make it. */
interface FunctionToolLike {
  type: "function";
  name: string;
  invoke: (runContext: any, input: string, details?: any) => Promise<unknown>;
  needsApproval: (runContext: any, input: any, callId?: string) => Promise<boolean>;
  inputGuardrails?: InputGuardrail[];
  [key: string]: any;
}

/** Any FunctionTool, as the caller's types see it. */
type AnyFunctionTool = { type: "function"; name: string; invoke: unknown; [key: string]: any };

/** What `tool()` takes; `execute` is wrapped so its result or thrown error is reported. */
type ToolOptionsLike = Parameters<typeof functionTool>[0];

interface ApprovalItemLike {
  rawItem: { callId?: string; name?: string; type?: string };
  toolName?: string;
}

interface RunStateLike {
  approve(item: any, options?: { alwaysApprove?: boolean }): void;
  reject(item: any, options?: { alwaysReject?: boolean; message?: string }): void;
}

interface HooksLike {
  on(event: string, listener: (...args: any[]) => void): unknown;
}

const GUARDRAIL_NAME = "vigil";

export class VigilAgents {
  readonly sessionId: string;
  private readonly decisions = new Map<string, Promise<CheckAnswer>>();
  private readonly resolved = new Set<string>();
  private turnIndex = 0;

  constructor(
    readonly vigil: Vigil,
    private readonly options: VigilAgentsOptions = {},
  ) {
    this.sessionId = options.sessionId ?? vigil.sessionId;
    vigil.ensureSession(this.sessionId);
  }

  /** The session's pause reason once Vigil paused it, else null. */
  get paused(): string | null {
    return this.vigil.pausedReason(this.sessionId);
  }

  /**
   * A tool with Vigil in front. Given `tool()`'s options, makes the tool (its `execute` reported:
   * result, or the thrown error as a failure); given a FunctionTool (e.g. `agent.asTool()`), wraps it
   * (its output reported). Either way `needsApproval` and an input guardrail come from guard.check.
   */
  tool(definition: ToolOptionsLike | AnyFunctionTool): any {
    if (isFunctionTool(definition)) return this.guardFunctionTool(definition, true);
    const options = definition as ToolOptionsLike & { name?: string; execute: (input: any, runContext?: any, details?: any) => unknown };
    const name = options.name ?? options.execute.name;
    const execute = options.execute;
    const made = functionTool({
      ...options,
      execute: async (input: unknown, runContext?: unknown, details?: { toolCall?: { callId?: string } }) => {
        const callId = details?.toolCall?.callId ?? stableId("call", name, JSON.stringify(input));
        return this.vigil.runReported({ toolName: name, callId, sessionId: this.sessionId, args: input }, () => execute(input, runContext, details));
      },
    } as ToolOptionsLike) as unknown as FunctionToolLike;
    return this.guardFunctionTool(made, false);
  }

  /** Each of `tools` through `tool()`. */
  tools(tools: (ToolOptionsLike | AnyFunctionTool)[]): any[] {
    return tools.map((t) => this.tool(t));
  }

  /** RunConfig `callModelInputFilter`: sends what is queued, stops a paused session, adds Vigil's nudges to this model call. */
  readonly callModelInputFilter = async <D extends { input: unknown[]; instructions?: string }>(args: { modelData: D }): Promise<D> => {
    await this.vigil.flush().catch(() => {});
    const paused = this.paused;
    if (paused) throw new VigilPausedError(this.sessionId, paused);
    const nudges = this.vigil.takeNudges(this.sessionId);
    if (!nudges.length) return args.modelData;
    const format = this.options.formatNudge ?? ((message: string) => `[Vigil] ${message}`);
    return { ...args.modelData, input: [...args.modelData.input, ...nudges.map((n) => ({ role: "user", content: format(n.message, n.nudgeType) }))] };
  };

  /** Subscribes to a Runner's (or an Agent's) hooks: each agent's final text is reported as `model.text`. */
  attach<H extends HooksLike>(hooks: H): H {
    hooks.on("agent_end", (...args: unknown[]) => {
      // Runner: (context, agent, output); Agent: (context, output).
      const output = args[args.length - 1];
      const text = typeof output === "string" ? output : output === undefined || output === null ? "" : JSON.stringify(output);
      this.vigil.report({ type: "model.text", sessionId: this.sessionId, text, turnIndex: this.turnIndex++, ...(this.options.model ? { model: this.options.model } : {}) });
    });
    return hooks;
  }

  /** Approves an interruption in the run's state and records it in Vigil (`permission.resolved`). */
  approve(state: RunStateLike, item: ApprovalItemLike, options?: { alwaysApprove?: boolean }): void {
    state.approve(item, options);
    this.recordResolution(item.rawItem.callId, item.toolName ?? item.rawItem.name, true);
  }

  /** Rejects an interruption; `message` is what the model reads. Recorded in Vigil. */
  reject(state: RunStateLike, item: ApprovalItemLike, options?: { alwaysReject?: boolean; message?: string }): void {
    state.reject(item, options);
    this.recordResolution(item.rawItem.callId, item.toolName ?? item.rawItem.name, false);
  }

  private guardFunctionTool(tool: FunctionToolLike, reportOutput: boolean): FunctionToolLike {
    const name = tool.name;
    const ownApproval = tool.needsApproval;
    const guardrail: InputGuardrail = {
      type: "tool_input",
      name: GUARDRAIL_NAME,
      run: async ({ context, toolCall }) => {
        if (context.isToolApproved({ toolName: toolCall.name, callId: toolCall.callId }) === true) {
          this.recordResolution(toolCall.callId, toolCall.name, true);
          return { behavior: { type: "allow" } };
        }
        const answer = await this.decide(name, toolCall.callId, parseArgs(toolCall.arguments));
        if (answer.decision === "deny") return { behavior: { type: "rejectContent", message: answer.reason ?? `Vigil denied ${answer.failureKey}.` }, outputInfo: { vigil: answer } };
        if (answer.decision === "pause") return { behavior: { type: "throwException" }, outputInfo: { vigil: answer } };
        return { behavior: { type: "allow" } };
      },
    };
    const guarded: FunctionToolLike = {
      ...tool,
      needsApproval: async (runContext: unknown, input: unknown, callId?: string) => {
        const answer = await this.decide(name, callId, input, true);
        if (answer.decision === "ask") return true;
        if (answer.decision === "allow") return ownApproval(runContext, input, callId);
        return false; // deny / pause: the guardrail answers
      },
      inputGuardrails: [guardrail, ...(tool.inputGuardrails ?? []).filter((g) => g.name !== GUARDRAIL_NAME)],
    };
    if (reportOutput) {
      const invoke = tool.invoke;
      guarded.invoke = async (runContext: unknown, input: string, details?: { toolCall?: { callId?: string } }) => {
        const call: ReportedCall = { toolName: name, callId: details?.toolCall?.callId ?? stableId("call", name, input), sessionId: this.sessionId, args: parseArgs(input) };
        return this.vigil.runReported(call, () => invoke(runContext, input, details));
      };
    }
    return guarded;
  }

  /** guard.check once per call (the approval policy and the guardrail ask the same answer). */
  private decide(toolName: string, callId: string | undefined, input: unknown, mayWait = false): Promise<CheckAnswer> {
    const key = callId ?? stableId("call", toolName, JSON.stringify(input ?? {}));
    let answer = this.decisions.get(key);
    if (!answer) {
      answer = this.vigil.check({
        toolName,
        args: (input ?? {}) as Record<string, unknown>,
        callId: key,
        sessionId: this.sessionId,
        ...(this.options.model ? { model: this.options.model } : {}),
        waitForApprovalSeconds: mayWait ? (this.options.waitForApprovalSeconds ?? 0) : 0,
      });
      answer.catch(() => this.decisions.delete(key));
      this.decisions.set(key, answer);
    }
    return answer;
  }

  private recordResolution(callId: string | undefined, toolName: string | undefined, granted: boolean): void {
    if (!callId || this.resolved.has(callId)) return;
    this.resolved.add(callId);
    this.vigil.report({ type: "permission.resolved", id: stableId("permission", this.sessionId, callId), sessionId: this.sessionId, callId, toolName: toolName ?? "unknown", granted, method: "openai-agents" });
  }
}

/** Vigil in front of an OpenAI Agents run's tools; see the module comment for the wiring. */
export function vigilAgents(vigil: Vigil, options: VigilAgentsOptions = {}): VigilAgents {
  return new VigilAgents(vigil, options);
}

/** True for the error a run ends with when Vigil paused its session (the guardrail's tripwire, or the next model call). */
export function isVigilPause(error: unknown): boolean {
  for (const e of causes(error)) if (e instanceof VigilPausedError) return true;
  return vigilAnswerOf(error)?.decision === "pause";
}

/** Vigil's answer carried by a run's guardrail error (the SDK wraps it in a ToolCallError), if any. */
export function vigilAnswerOf(error: unknown): CheckAnswer | null {
  for (const e of causes(error)) {
    const answer = (e as { result?: { output?: { outputInfo?: { vigil?: CheckAnswer } } } }).result?.output?.outputInfo?.vigil;
    if (answer) return answer;
  }
  return null;
}

function* causes(error: unknown): Generator<object> {
  const seen = new Set<unknown>();
  let current = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    yield current;
    const e = current as { error?: unknown; cause?: unknown };
    current = e.error instanceof Error ? e.error : e.cause;
  }
}

function isFunctionTool(value: unknown): value is FunctionToolLike {
  return !!value && typeof value === "object" && (value as FunctionToolLike).type === "function" && typeof (value as FunctionToolLike).invoke === "function";
}

function parseArgs(input: unknown): Record<string, unknown> {
  if (typeof input !== "string") return (input ?? {}) as Record<string, unknown>;
  try {
    const parsed = JSON.parse(input);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : { input: parsed };
  } catch {
    return { input };
  }
}
