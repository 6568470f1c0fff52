/**
 * `@vigil/sdk/langchain` — LangChain v1 agent middleware with Vigil deciding each tool call.
 *   const agent = createAgent({ model, tools, middleware: [vigilMiddleware(vigil)], checkpointer: new MemorySaver() });
 *   let state = await agent.invoke({ messages }, config);
 *   if (state.__interrupt__) state = await agent.invoke(new Command({ resume: { approved: true } }), config);
 * - `wrapToolCall`: guard.check decides; allow runs the tool and reports its result (a thrown error or
 *   an error ToolMessage is a failure); deny and pause answer the model with Vigil's reason without
 *   running it (a tool's thrown error is answered as the tools node answers it without middleware);
 *   ask → `interrupt()` with Vigil's answer, continued by `Command({ resume })`
 *   (`{ approved: true }` runs it, `{ approved: false, comment? }` answers the model with the comment).
 *   On resume LangGraph runs the tools node again: the check is sent with the same ids, so Vigil
 *   records the call once, and the tool runs only after the resume.
 * - `beforeModel`: sends what is queued, ends the run once Vigil paused the session, adds Vigil's
 *   nudges to this model call. `afterModel`: reports the model's text as `model.text`.
 */
import { createMiddleware, AIMessage, HumanMessage, ToolMessage } from "langchain";
import { interrupt, isGraphInterrupt } from "@langchain/langgraph";
import { stableId, type Vigil } from "./client.js";
import type { CheckAnswer } from "./types.js";

export interface VigilMiddlewareOptions {
  /** The session the agent's runs belong to; default the client's own. */
  sessionId?: string;
  /** The model's name on calls and texts. */
  model?: string;
  /** Seconds an `ask` waits for a person in Vigil's Approvals before it interrupts the graph (0–120). */
  waitForApprovalSeconds?: number;
  /** How a nudge is worded for the model; default `[Vigil] <message>`. */
  formatNudge?: (message: string, nudgeType: string) => string;
}

/** What `interrupt()` hands to the caller when Vigil asks. */
export interface VigilInterrupt {
  type: "vigil.approval";
  toolName: string;
  callId: string;
  args: Record<string, unknown>;
  failureKey: string;
  reason: string | null;
  approvalId: string | null;
}

/** What `Command({ resume })` answers a VigilInterrupt with (`true` / `false` are short for it). */
export type VigilResume = boolean | { approved: boolean; comment?: string };

interface ToolCallLike {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

/** The middleware; see the module comment for the wiring. */
export function vigilMiddleware(vigil: Vigil, options: VigilMiddlewareOptions = {}) {
  const sessionId = options.sessionId ?? vigil.sessionId;
  const decisions = new Map<string, Promise<CheckAnswer>>();
  const format = options.formatNudge ?? ((message: string) => `[Vigil] ${message}`);
  const model = options.model ? { model: options.model } : {};
  let turnIndex = 0;
  vigil.ensureSession(sessionId);

  const decide = (call: ToolCallLike, callId: string): Promise<CheckAnswer> => {
    let answer = decisions.get(callId);
    if (!answer) {
      answer = vigil.check({ toolName: call.name, args: call.args ?? {}, callId, sessionId, ...model, waitForApprovalSeconds: options.waitForApprovalSeconds ?? 0 });
      answer.catch(() => decisions.delete(callId));
      decisions.set(callId, answer);
    }
    return answer;
  };

  const refusal = (call: ToolCallLike, callId: string, text: string) => new ToolMessage({ content: text, tool_call_id: callId, name: call.name, status: "error" });

  return createMiddleware({
    name: "VigilMiddleware",
    beforeModel: {
      canJumpTo: ["end"],
      hook: async () => {
        await vigil.flush().catch(() => {});
        const paused = vigil.pausedReason(sessionId);
        if (paused) return { jumpTo: "end" as const, messages: [new AIMessage({ content: `Stopped: ${paused}`, response_metadata: { vigil: "paused" } })] };
        const nudges = vigil.takeNudges(sessionId);
        if (!nudges.length) return undefined;
        return { messages: nudges.map((n) => new HumanMessage({ content: format(n.message, n.nudgeType), additional_kwargs: { vigil: n.nudgeType } })) };
      },
    },
    afterModel: async (state) => {
      const last = state.messages[state.messages.length - 1];
      if (!last || !AIMessage.isInstance(last)) return undefined;
      const text = typeof last.content === "string" ? last.content : last.text;
      // A turn that only called tools said nothing: not an empty response.
      if (!text && (last.tool_calls?.length ?? 0) > 0) return undefined;
      vigil.report({ type: "model.text", sessionId, text: text ?? "", turnIndex: turnIndex++, ...model });
      return undefined;
    },
    wrapToolCall: async (request, handler) => {
      const call = request.toolCall as ToolCallLike;
      const callId = call.id ?? stableId("call", call.name, JSON.stringify(call.args ?? {}));
      const answer = await decide(call, callId);
      if (answer.decision === "deny" || answer.decision === "pause") return refusal(call, callId, answer.reason ?? reasonOf(answer));
      if (answer.decision === "ask") {
        const question: VigilInterrupt = { type: "vigil.approval", toolName: call.name, callId, args: call.args ?? {}, failureKey: answer.failureKey, reason: answer.reason, approvalId: answer.approvalId };
        const resume = interrupt(question) as VigilResume;
        const approved = typeof resume === "boolean" ? resume : resume?.approved === true;
        vigil.report({ type: "permission.resolved", id: stableId("permission", sessionId, callId), sessionId, callId, toolName: call.name, granted: approved, method: "langchain" });
        if (!approved) return refusal(call, callId, (typeof resume === "object" && resume?.comment) || answer.reason || reasonOf(answer));
      }
      const reported = { toolName: call.name, callId, sessionId, args: call.args };
      const startedAt = performance.now();
      let result: Awaited<ReturnType<typeof handler>>;
      try {
        result = await handler(request);
      } catch (error) {
        if (isGraphInterrupt(error) || request.runtime?.signal?.aborted) throw error;
        vigil.reportToolResult(reported, { error, startedAt });
        // Without a wrapToolCall middleware the tools node answers a thrown error this way; with one it
        // would end the run. Adding Vigil keeps the agent's behaviour.
        return new ToolMessage({ content: `${error}\n Please fix your mistakes.`, tool_call_id: callId, name: call.name, status: "error" });
      }
      if (ToolMessage.isInstance(result)) {
        if (result.status === "error") vigil.reportToolResult(reported, { error: result.text || String(result.content), startedAt });
        else vigil.reportToolResult(reported, { result: result.content, startedAt });
      } else {
        vigil.reportToolResult(reported, { result: "(command)", startedAt });
      }
      return result;
    },
  });
}

function reasonOf(answer: CheckAnswer): string {
  if (answer.decision === "pause") return "Vigil paused this session; a person resumes it in the dashboard.";
  if (answer.decision === "ask") return `A person must approve ${answer.failureKey} first (Vigil).`;
  return `Vigil denied ${answer.failureKey}.`;
}
