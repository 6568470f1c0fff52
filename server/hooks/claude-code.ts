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
    case "SubagentStop":
      // The subagent's child session ends with it.
      return str(p, "agent_id") ? record({ type: "session.end", id: clampId(`${ctx.cli}:end:${sessionId}`), sessionId }) : { kind: "ignore" };
    default:
      return { kind: "ignore" };
  }
}

function contextText(v: HookVerdict, extra?: string | null): string | null {
  const parts = [...(extra ? [extra] : []), ...v.context];
  return parts.length ? parts.join("\n\n") : null;
}

/** Stops the session; the reason is shown to the person (interactive sessions show stopReason and systemMessage). */
function stopAnswer(reason: string) {
  return { continue: false, stopReason: reason, systemMessage: reason };
}

/** Claude Code's answer for a hook, given Vigil's verdict. */
export function answerClaudeCode(hook: string, v: HookVerdict): HookAnswer {
  switch (hook) {
    case "PreToolUse": {
      const context = contextText(v);
      const extra = context ? { additionalContext: context } : {};
      if (v.decision === "pause") {
        // continue:false is ignored beside a deny; the denial's reason tells the model to stop.
        return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: v.stop, ...extra } };
      }
      if (v.decision === "deny" || v.decision === "ask") {
        return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: v.decision, permissionDecisionReason: decisionText(v), ...extra } };
      }
      return context ? { hookSpecificOutput: { hookEventName: "PreToolUse", ...extra } } : null;
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
      const out: Record<string, unknown> = {};
      if (context) out.hookSpecificOutput = { hookEventName: hook, additionalContext: context };
      // After PostToolUse, continue:false stops the session at once (no further model call);
      // PostToolUseFailure ignores it, and the PostToolBatch that follows stops the session.
      if (v.stop) Object.assign(out, stopAnswer(v.stop));
      return Object.keys(out).length ? out : null;
    }
    case "PostToolBatch":
      return v.stop ? stopAnswer(v.stop) : null;
    case "UserPromptSubmit": {
      // A new prompt in a paused session is not processed; the person reads why and how to resume.
      if (v.stop) return { decision: "block", reason: v.stop };
      const context = contextText(v);
      return context ? { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: context } } : null;
    }
    default:
      return null;
  }
}
