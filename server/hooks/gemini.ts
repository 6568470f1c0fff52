/**
 * Gemini CLI command hooks (a `curl` pipes the payload here; SPEC 7.5). Gemini's names:
 * BeforeAgent (the prompt), BeforeTool, AfterTool, AfterAgent (the turn's response text),
 * SessionStart, SessionEnd; everything else is accepted and ignored. BeforeTool carries no tool-call id, so the call id is derived from the
 * session, tool and arguments: the AfterTool of the same call derives the same id (repeats of an
 * identical call share it, which only matters for pairing results with their call).
 * Answers: `{"decision":"deny","reason":R}` blocks a tool (Gemini has no "ask" a hook can rely on,
 * so an escalated call is denied with the reason); `hookSpecificOutput.additionalContext` on
 * AfterTool is appended to the tool output the model reads; `continue:false` stops the agent.
 */
import type { EventInput } from "@/server/ingest/schema";
import type { HookAnswer } from "./claude-code";
import {
  clampId,
  clampName,
  decisionText,
  digest,
  fitArgs,
  fitResult,
  isObject,
  sessionOf,
  sessionStartEvent,
  str,
  type HookPlan,
  type HookRequestContext,
  type HookVerdict,
  type Payload,
} from "./shared";

/** Gemini's shell tool reports its exit status inside the text the model reads. */
function shellExitCode(response: unknown): number | null {
  const text = isObject(response) && typeof response.llmContent === "string" ? response.llmContent : typeof response === "string" ? response : null;
  const m = text ? /Exit Code:\s*(-?\d+)/.exec(text) : null;
  return m ? Number(m[1]) : null;
}

function failureOf(response: unknown): string | Record<string, unknown> | null {
  if (isObject(response) && response.error !== undefined && response.error !== null && response.error !== "") {
    return typeof response.error === "string" ? response.error.slice(0, 65536) : isObject(response.error) ? response.error : String(response.error);
  }
  const code = shellExitCode(response);
  if (code !== null && code !== 0) {
    const display = isObject(response) && typeof response.returnDisplay === "string" ? response.returnDisplay : "";
    return `Exit code ${code}${display ? `\n${display}` : ""}`.slice(0, 65536);
  }
  return null;
}

export function planGeminiHook(p: Payload, ctx: HookRequestContext): HookPlan {
  const hook = str(p, "hook_event_name");
  const session = sessionOf(p, ctx);
  if (!hook || !session) return { kind: "ignore" };
  const { sessionId, agent } = session;
  const start = sessionStartEvent(ctx, sessionId, agent);
  const record = (...events: EventInput[]): HookPlan => ({ kind: "record", sessionId, events: [start, ...events] });
  const toolName = clampName(str(p, "tool_name") ?? "unknown");
  const args = fitArgs(p.tool_input);
  // The payload includes its timestamp, so a re-delivered hook has the same id and a new call a new one.
  const id = clampId(`gemini:${hook}:${digest(p)}`);
  const callId = `call-${digest(sessionId, toolName, args)}`;

  switch (hook) {
    case "SessionStart":
      return record();
    case "BeforeAgent": {
      const prompt = str(p, "prompt");
      return record({ type: "user.message", id, sessionId, ...(prompt !== undefined ? { text: prompt } : {}) });
    }
    case "BeforeTool":
      return { kind: "guard", sessionId, start, eventId: id, callId, toolName, args, waitSeconds: ctx.waitSeconds };
    case "AfterTool": {
      const error = failureOf(p.tool_response);
      const result = fitResult(p.tool_response);
      return record({
        type: "tool.result",
        id,
        sessionId,
        callId,
        toolName,
        args,
        success: error === null,
        ...(error !== null ? { error } : {}),
        ...(result !== undefined ? { result } : {}),
      });
    }
    case "AfterAgent": {
      // The turn's response text (SPEC 5.1). AfterModel carries the same text per model call, possibly
      // in streamed pieces: recording both would count every text twice, so the turn's whole text is the one kept.
      const text = p.prompt_response;
      return typeof text === "string" ? record({ type: "model.text", id, sessionId, text: text.slice(0, 65536) }) : { kind: "ignore" };
    }
    case "SessionEnd":
      return record({ type: "session.end", id: clampId(`gemini:end:${sessionId}`), sessionId });
    default:
      return { kind: "ignore" };
  }
}

export function answerGemini(hook: string, v: HookVerdict): HookAnswer {
  const context = [...(hook === "AfterTool" && v.stop ? [v.stop] : []), ...v.notices, ...v.context].join("\n\n") || null;
  // What changed about a key, for the person (systemMessage never reaches the model).
  const notice = v.notices.length ? { systemMessage: v.notices.join("\n") } : {};
  if (hook === "BeforeTool") {
    if (v.decision === "pause") return { ...notice, decision: "deny", reason: v.stop };
    if (v.decision === "deny" || v.decision === "ask") return { ...notice, decision: "deny", reason: decisionText(v) };
    return context ? { ...notice, hookSpecificOutput: { hookEventName: "BeforeTool", additionalContext: context } } : null;
  }
  if (hook === "AfterAgent") {
    // The turn is over: the person reads a pause, a nudge or a key's change.
    const lines = [...(v.stop ? [v.stop] : []), ...v.notices, ...v.context];
    return lines.length ? { systemMessage: lines.join("\n\n") } : null;
  }
  if (hook === "AfterTool") {
    const out: Record<string, unknown> = { ...notice };
    if (context) out.hookSpecificOutput = { hookEventName: "AfterTool", additionalContext: context };
    if (v.stop) Object.assign(out, { continue: false, stopReason: v.stop });
    return Object.keys(out).length ? out : null;
  }
  if (hook === "BeforeAgent") {
    if (v.stop) return { decision: "deny", reason: v.stop };
    return context ? { hookSpecificOutput: { hookEventName: "BeforeAgent", additionalContext: context } } : null;
  }
  return null;
}
