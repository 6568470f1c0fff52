/**
 * `@vigil/sdk/ai` — the Vercel AI SDK (7, and 6) with Vigil deciding each tool call.
 *
 * Structural: nothing here imports `ai`, so one build serves both major versions. Wire it as
 *   generateText({ model, tools: guard.tools(tools), toolApproval: guard.toolApproval,   // toolApproval: AI SDK 7
 *                  prepareStep: guard.prepareStep, stopWhen: [stepCountIs(10), guard.stopWhenPaused],
 *                  onStepFinish: guard.onStepFinish, … })
 * - guard.check is the tool-approval decision: allow runs; deny and pause answer the model with
 *   Vigil's reason (AI SDK 7: a denied approval; 6: the tool's error) and the tool does not run;
 *   ask → the SDK's own approval flow, or (ask: "wait") a person in Vigil's Approvals first.
 * - tool results and errors, model text and approvals answered in the SDK's flow are reported;
 * - nudges Vigil sent are added to the next model call; `stopWhenPaused` ends the loop on pause.
 */
import type { ReportedCall, Vigil } from "./client.js";
import { VigilDecisionError } from "./errors.js";
import type { CheckAnswer } from "./types.js";

export interface VigilAIOptions {
  /** The session the run belongs to; default the client's own. */
  sessionId?: string;
  /** The model's name on calls and texts until a step reports its own. */
  model?: string;
  /**
   * What an `ask` does: `"approval"` hands it to the SDK's tool-approval flow (the run ends with a
   * tool-approval request carrying Vigil's reason); `"wait"` first waits up to
   * `waitForApprovalSeconds` for a person in Vigil's Approvals, then falls back to the SDK's flow.
   * Default: `"wait"` when `waitForApprovalSeconds` > 0, else `"approval"`.
   */
  ask?: "approval" | "wait";
  /** Seconds to wait for a person in Vigil (0–120). */
  waitForApprovalSeconds?: number;
  /** How a nudge is worded for the model; default `[Vigil] <message>`. */
  formatNudge?: (message: string, nudgeType: string) => string;
}

/** AI SDK 7's approval status (`ToolApprovalStatus`). */
export type VigilApprovalStatus = "not-applicable" | { type: "not-applicable" } | { type: "denied"; reason: string } | { type: "user-approval"; reason?: string };

interface ToolCallLike {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

interface ToolLike {
  execute?: (input: any, options: any) => any;
  needsApproval?: boolean | ((input: any, options: any) => boolean | PromiseLike<boolean>);
  [key: string]: any;
}

interface StepLike {
  text?: string;
  reasoningText?: string | undefined;
  toolCalls?: readonly unknown[];
  response?: { modelId?: string };
  stepNumber?: number;
}

export class VigilAI {
  readonly sessionId: string;
  private readonly decisions = new Map<string, CheckAnswer>();
  private readonly ownApproval = new Map<string, ToolLike["needsApproval"]>();
  private readonly resolvedApprovals = new Set<string>();
  private readonly mode: "approval" | "wait";
  private readonly wait: number;
  private model: string | undefined;
  private stepIndex = 0;

  constructor(
    readonly vigil: Vigil,
    private readonly options: VigilAIOptions = {},
  ) {
    this.sessionId = options.sessionId ?? vigil.sessionId;
    this.wait = options.waitForApprovalSeconds ?? 0;
    this.mode = options.ask ?? (this.wait > 0 ? "wait" : "approval");
    this.model = options.model;
    vigil.ensureSession(this.sessionId);
  }

  /** The session's pause reason once Vigil paused it, else null. */
  get paused(): string | null {
    return this.vigil.pausedReason(this.sessionId);
  }

  /**
   * The tools with Vigil in front: `needsApproval` asks guard.check (AI SDK 6, and 7 without
   * `toolApproval`), `execute` refuses a denied or paused call with Vigil's reason and reports the
   * result or the error.
   */
  tools<T extends Record<string, any>>(tools: T): T {
    const out: Record<string, unknown> = {};
    for (const [name, tool] of Object.entries(tools)) out[name] = this.tool(name, tool);
    return out as T;
  }

  /** One tool, as `tools()` wraps each. */
  tool<T extends ToolLike>(name: string, tool: T): T {
    this.ownApproval.set(name, tool.needsApproval);
    const wrapped: ToolLike = {
      ...tool,
      needsApproval: async (input: unknown, options: { toolCallId: string }) => {
        const answer = await this.decide({ toolCallId: options.toolCallId, toolName: name, input });
        if (answer.decision === "ask") return true;
        if (answer.decision === "allow") return this.toolWantsApproval(name, input, options);
        return false; // deny / pause: execute answers with the reason
      },
    };
    if (typeof tool.execute === "function") {
      const execute = tool.execute.bind(tool);
      wrapped.execute = async (input: unknown, options: { toolCallId: string }) => {
        const answer = this.decisions.get(options.toolCallId) ?? (await this.decide({ toolCallId: options.toolCallId, toolName: name, input }, false));
        this.decisions.delete(options.toolCallId);
        // `ask` reaching execute: a person approved it in the SDK's flow.
        if (answer.decision === "deny" || answer.decision === "pause") throw new VigilDecisionError(answer);
        const call: ReportedCall = { toolName: name, callId: options.toolCallId, sessionId: this.sessionId, args: input };
        const startedAt = performance.now();
        let result: unknown;
        try {
          result = await execute(input, options);
        } catch (error) {
          this.vigil.reportToolResult(call, { error, startedAt });
          throw error;
        }
        if (isAsyncIterable(result)) return this.reportStream(call, result, startedAt);
        this.vigil.reportToolResult(call, { result, startedAt });
        return result;
      };
    }
    return wrapped as T;
  }

  /** AI SDK 7's `toolApproval`: guard.check decides each call. */
  readonly toolApproval = async (options: { toolCall: ToolCallLike; messages?: readonly unknown[] }): Promise<VigilApprovalStatus> => {
    const { toolCall } = options;
    const answer = await this.decide(toolCall);
    switch (answer.decision) {
      case "deny":
      case "pause":
        return { type: "denied", reason: answer.reason ?? answerReason(answer) };
      case "ask":
        return { type: "user-approval", reason: answer.reason ?? answerReason(answer) };
      default:
        return (await this.toolWantsApproval(toolCall.toolName, toolCall.input, { toolCallId: toolCall.toolCallId, messages: options.messages ?? [] }))
          ? { type: "user-approval" }
          : "not-applicable";
    }
  };

  /**
   * `prepareStep`: sends what is queued (so Vigil has seen the last step's results), records
   * approvals answered in the SDK's flow, and adds the nudges Vigil sent to this model call.
   */
  readonly prepareStep = async <M>(options: { messages: M[]; stepNumber?: number }): Promise<{ messages: M[] } | undefined> => {
    this.reportApprovalAnswers(options.messages as unknown[]);
    await this.vigil.flush().catch(() => {});
    const nudges = this.vigil.takeNudges(this.sessionId);
    if (!nudges.length) return undefined;
    const format = this.options.formatNudge ?? ((message: string) => `[Vigil] ${message}`);
    const added = nudges.map((n) => ({ role: "user", content: format(n.message, n.nudgeType) }) as M);
    return { messages: [...options.messages, ...added] };
  };

  /** A stop condition: true once Vigil paused the session. */
  readonly stopWhenPaused = (_options?: { steps: readonly unknown[] }): boolean => this.paused !== null;

  /** `onStepFinish` (AI SDK 6) / `onStepEnd` (7): reports the step's model text. */
  readonly onStepFinish = async (step: StepLike): Promise<void> => {
    const turnIndex = this.stepIndex++;
    if (step.response?.modelId) this.model = step.response.modelId;
    const text = step.text ?? "";
    const reasoning = step.reasoningText ?? "";
    const calledTools = (step.toolCalls?.length ?? 0) > 0;
    // A step that only called tools said nothing: not an empty response.
    if (!text && calledTools) return;
    this.vigil.report({ type: "model.text", sessionId: this.sessionId, text, turnIndex, ...(this.model ? { model: this.model } : {}), ...(!text.trim() && reasoning ? { reasoningOnly: true } : {}) });
  };

  readonly onStepEnd = this.onStepFinish;

  /** guard.check for a tool call, once per call id (a re-check answers from the cache). */
  private async decide(call: ToolCallLike, mayWait = true): Promise<CheckAnswer> {
    const cached = this.decisions.get(call.toolCallId);
    if (cached) return cached;
    const answer = await this.vigil.check({
      toolName: call.toolName,
      args: call.input as Record<string, unknown>,
      callId: call.toolCallId,
      sessionId: this.sessionId,
      model: this.model,
      waitForApprovalSeconds: mayWait && this.mode === "wait" ? this.wait : 0,
    });
    this.decisions.set(call.toolCallId, answer);
    return answer;
  }

  private async toolWantsApproval(name: string, input: unknown, options: unknown): Promise<boolean> {
    const own = this.ownApproval.get(name);
    return typeof own === "function" ? Boolean(await own(input, options)) : Boolean(own);
  }

  /** Approvals a person answered in the SDK's flow (tool-approval-response parts) → permission.resolved, once each. */
  private reportApprovalAnswers(messages: unknown[]): void {
    const requests = new Map<string, { toolCallId: string; toolName?: string }>();
    const names = new Map<string, string>();
    for (const message of messages) {
      const content = (message as { content?: unknown }).content;
      if (!Array.isArray(content)) continue;
      for (const part of content) {
        if (part?.type === "tool-call" && typeof part.toolCallId === "string") names.set(part.toolCallId, part.toolName);
        if (part?.type === "tool-approval-request" && typeof part.approvalId === "string") requests.set(part.approvalId, { toolCallId: part.toolCallId ?? part.toolCall?.toolCallId, toolName: part.toolCall?.toolName });
      }
    }
    for (const message of messages) {
      const content = (message as { content?: unknown }).content;
      if (!Array.isArray(content)) continue;
      for (const part of content) {
        if (part?.type !== "tool-approval-response" || typeof part.approvalId !== "string" || this.resolvedApprovals.has(part.approvalId)) continue;
        const request = requests.get(part.approvalId);
        if (!request?.toolCallId) continue;
        this.resolvedApprovals.add(part.approvalId);
        const toolName = request.toolName ?? names.get(request.toolCallId) ?? "unknown";
        this.vigil.report({ type: "permission.resolved", sessionId: this.sessionId, callId: request.toolCallId, toolName, granted: part.approved === true, method: "ai-sdk" });
      }
    }
  }

  /** A streaming tool (async iterable of preliminary results): passed through, reported with its last value when it ends. */
  private async *reportStream(call: ReportedCall, stream: AsyncIterable<unknown>, startedAt: number): AsyncIterable<unknown> {
    let last: unknown;
    try {
      for await (const value of stream) {
        last = value;
        yield value;
      }
    } catch (error) {
      this.vigil.reportToolResult(call, { error, startedAt });
      throw error;
    }
    this.vigil.reportToolResult(call, { result: last, startedAt });
  }
}

/** Vigil in front of an AI SDK agent's tools; see the module comment for the wiring. */
export function vigilAI(vigil: Vigil, options: VigilAIOptions = {}): VigilAI {
  return new VigilAI(vigil, options);
}

function answerReason(answer: CheckAnswer): string {
  if (answer.decision === "pause") return "Vigil paused this session; a person resumes it in the dashboard.";
  if (answer.decision === "ask") return `A person must approve ${answer.failureKey} first (Vigil).`;
  return `Vigil denied ${answer.failureKey}.`;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && Symbol.asyncIterator in value;
}
