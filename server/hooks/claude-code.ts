/**
 * Claude Code's `"type": "http"` hooks (SPEC 7.5, agent-hooks/README.md): payload → Vigil events,
 * Vigil's verdict → Claude Code's hook output. Codex CLI sends the same shapes (codex.ts reuses
 * the mapping and changes what Codex does not honour).
 *
 * Answers follow what the real CLI does with them: no objection is an empty body (an "allow"
 * would override the person's own permission rules); `additionalContext` reaches the model as a
 * system reminder; `continue:false` stops the session at once after PostToolUse and PostToolBatch
 * (not after PostToolUseFailure, nor beside a PreToolUse deny), so a session paused by a failure
 * stops at the PostToolBatch that follows it, and a paused session's next call is denied with why.
 */
import {
  clampId,
  clampName,
  decisionText,
  digest,
  fitArgs,
  fitResult,
  isObject,
  num,
  sessionOf,
  sessionStartEvent,
  str,
  type HookPlan,
  type HookRequestContext,
  type HookVerdict,
  type Payload,
} from "./shared";
import type { EventInput } from "@/server/ingest/schema";

/** Hook output JSON, or null for an empty answer. */
export type HookAnswer = Record<string, unknown> | null;

const MAX_ERROR_CHARS = 65536;

/** The model's text a stop hook carries (`last_assistant_message`), as a `model.text` of the session (SPEC 5.1). */
function modelTextOf(p: Payload, id: string, sessionId: string, model?: string): EventInput[] {
  const text = p.last_assistant_message;
  return typeof text === "string" ? [{ type: "model.text", id, sessionId, text: text.slice(0, MAX_ERROR_CHARS), ...(model ? { model } : {}) }] : [];
}

/** A tool event's call id: the CLI's `tool_use_id`, else one derived from the call itself. */
function callIdOf(p: Payload, sessionId: string, toolName: string, args: unknown): string {
  const id = str(p, "tool_use_id");
  return id ? clampId(id) : `call-${digest(sessionId, toolName, args)}`;
}

/** Event id: the CLI, the hook, the session and what identifies this delivery (the tool call, else the whole body). */
function eventIdOf(ctx: HookRequestContext, hook: string, sessionId: string, p: Payload): string {
  const callId = str(p, "tool_use_id");
  return clampId(`${ctx.cli}:${hook}:${sessionId}:${callId ?? digest(p)}`);
}

export function planClaudeShapedHook(p: Payload, ctx: HookRequestContext): HookPlan {
  const hook = str(p, "hook_event_name");
  const session = sessionOf(p, ctx);
  if (!hook || !session) return { kind: "ignore" };
  const { sessionId, agent } = session;
  const model = str(p, "model") ? clampName(str(p, "model")!, 200) : undefined;
  const start = sessionStartEvent(ctx, sessionId, agent, model);
  const record = (...events: EventInput[]): HookPlan => ({ kind: "record", sessionId, events: [start, ...events] });
  const toolName = clampName(str(p, "tool_name") ?? "unknown");
  const args = fitArgs(p.tool_input);
  const id = eventIdOf(ctx, hook, sessionId, p);

  switch (hook) {
    case "SessionStart":
      return record();
    case "UserPromptSubmit": {
      const prompt = str(p, "prompt");
      return record({ type: "user.message", id, sessionId, ...(prompt !== undefined ? { text: prompt } : {}) });
    }
    case "PreToolUse":
    case "PermissionRequest":
      return {
        kind: "guard",
        sessionId,
        start,
        eventId: id,
        callId: callIdOf(p, sessionId, toolName, args),
        toolName,
        args,
        ...(model ? { model } : {}),
        waitSeconds: ctx.waitSeconds,
        // A PermissionRequest carries no call id: it belongs to the call its PreToolUse recorded.
        ...(hook === "PermissionRequest" ? { matchRecordedCall: true } : {}),
      };
    case "PostToolUse": {
      const durationMs = num(p, "duration_ms");
      const result = fitResult(p.tool_response);
      return record({
        type: "tool.result",
        id,
        sessionId,
        callId: callIdOf(p, sessionId, toolName, args),
        toolName,
        args,
        success: true,
        ...(result !== undefined ? { result } : {}),
        ...(durationMs !== undefined ? { durationMs } : {}),
      });
    }
    case "PostToolUseFailure": {
      const callId = callIdOf(p, sessionId, toolName, args);
      // The person stopped the tool: recorded as their decision on the call, never as a failure.
      if (p.is_interrupt === true) return record({ type: "permission.resolved", id, sessionId, callId, toolName, granted: false, method: "interrupted" });
      const durationMs = num(p, "duration_ms");
      const error = typeof p.error === "string" && p.error !== "" ? p.error.slice(0, MAX_ERROR_CHARS) : isObject(p.error) ? p.error : "Tool failed";
      return record({
        type: "tool.result",
        id,
        sessionId,
        callId,
        toolName,
        args,
        success: false,
        error,
        ...(durationMs !== undefined ? { durationMs } : {}),
      });
    }
    case "PostToolBatch":
      // Fires after every batch of tool calls, failed ones included: where a pause stops the agent.
      return { kind: "pause-check", sessionId };
    case "SessionEnd":
      return record({ type: "session.end", id: clampId(`${ctx.cli}:end:${sessionId}`), sessionId });
    case "Stop": {
      // The model's last text of the turn: an announcement never acted on, a planning loop, an empty answer.
      const text = modelTextOf(p, id, sessionId, model);
      return text.length ? record(...text) : { kind: "ignore" };
    }
    case "SubagentStop":
      // The subagent's last text, then its child session ends with it.
      return str(p, "agent_id") ? record(...modelTextOf(p, id, sessionId, model), { type: "session.end", id: clampId(`${ctx.cli}:end:${sessionId}`), sessionId }) : { kind: "ignore" };
    case "StopFailure": {
      // The model's API call failed: the model's failure, never a tool's (SPEC 5.1, 7.6).
      const kind = str(p, "error");
      const message = str(p, "last_assistant_message");
      const error = [kind && kind !== "unknown" ? kind : null, message].filter(Boolean).join(": ") || kind || "model API call failed";
      return record({ type: "model.error", id, sessionId, error: error.slice(0, MAX_ERROR_CHARS), ...(model ? { model } : {}) });
    }
    default:
      return { kind: "ignore" };
  }
}

/** What the model reads: the pause, what changed about a key, the nudges. */
function contextText(v: HookVerdict, extra?: string | null): string | null {
  const parts = [...(extra ? [extra] : []), ...v.notices, ...v.context];
  return parts.length ? parts.join("\n\n") : null;
}

/** What the person reads (never the model): what changed about a key. */
function noticeAnswer(v: HookVerdict): { systemMessage?: string } {
  return v.notices.length ? { systemMessage: v.notices.join("\n") } : {};
}

/** Stops the session; the reason is shown to the person (interactive sessions show stopReason and systemMessage). */
function stopAnswer(reason: string, v?: HookVerdict) {
  return { continue: false, stopReason: reason, systemMessage: [reason, ...(v?.notices ?? [])].join("\n") };
}

/** Claude Code's answer for a hook, given Vigil's verdict. */
export function answerClaudeCode(hook: string, v: HookVerdict): HookAnswer {
  switch (hook) {
    case "PreToolUse": {
      const context = contextText(v);
      const extra = context ? { additionalContext: context } : {};
      const notice = noticeAnswer(v);
      if (v.decision === "pause") {
        // continue:false is ignored beside a deny; the denial's reason tells the model to stop.
        return { ...notice, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: v.stop, ...extra } };
      }
      if (v.decision === "deny" || v.decision === "ask") {
        return { ...notice, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: v.decision, permissionDecisionReason: decisionText(v), ...extra } };
      }
      return context ? { ...notice, hookSpecificOutput: { hookEventName: "PreToolUse", ...extra } } : null;
    }
    case "PermissionRequest": {
      // A person decided in the dashboard → answer the prompt; otherwise let the CLI's own prompt run.
      if (v.decision === "pause") return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: v.stop } } };
      if (v.decision === "deny") return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: decisionText(v) } } };
      if (v.decision === "allow" && v.approvalId) return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } };
      return null;
    }
    case "PostToolUse":
    case "PostToolUseFailure": {
      const context = contextText(v, v.stop);
      const out: Record<string, unknown> = { ...noticeAnswer(v) };
      if (context) out.hookSpecificOutput = { hookEventName: hook, additionalContext: context };
      // After PostToolUse, continue:false stops the session at once (no further model call);
      // PostToolUseFailure ignores it, and the PostToolBatch that follows stops the session.
      if (v.stop) Object.assign(out, stopAnswer(v.stop, v));
      return Object.keys(out).length ? out : null;
    }
    case "PostToolBatch":
      return v.stop ? stopAnswer(v.stop) : null;
    case "Stop":
    case "SubagentStop": {
      // Paused by this text: the agent is stopping anyway; the person reads why and how to resume.
      if (v.stop) return { systemMessage: [v.stop, ...v.notices].join("\n") };
      // A nudge on the model's last text (it announced and did not act, it keeps planning): blocking
      // the stop hands the nudge to the model, which goes on; a new stop is nudged only if its pattern rises.
      const nudges = v.context.join("\n\n");
      if (nudges) return { decision: "block", reason: nudges, ...noticeAnswer(v) };
      return v.notices.length ? noticeAnswer(v) : null;
    }
    case "StopFailure":
      return v.notices.length || v.stop ? { systemMessage: [...(v.stop ? [v.stop] : []), ...v.notices].join("\n") } : null;
    case "UserPromptSubmit": {
      // A new prompt in a paused session is not processed; the person reads why and how to resume.
      if (v.stop) return { decision: "block", reason: v.stop };
      const context = contextText(v);
      return context ? { ...noticeAnswer(v), hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: context } } : null;
    }
    default:
      return null;
  }
}
