/**
 * Codex CLI command hooks (a `curl` pipes the payload here; SPEC 7.5). Codex sends Claude-Code-shaped
 * payloads (plus `model` and `turn_id`), so the mapping is Claude Code's. Differences in what Codex
 * does with answers (agent-hooks/README.md):
 * - it ignores `ask`, so an escalated call is denied with Vigil's reason instead (it shows as
 *   "Command blocked by PreToolUse hook: …" to the model);
 * - failures arrive as PostToolUse with the output as a plain string and no exit status, so a Codex
 *   result is recorded without a success flag (failure detection sees only what SPEC 3 can see);
 * - additionalContext becomes a developer message;
 * - `Stop` carries the model's last text (`last_assistant_message`), recorded as for Claude Code.
 */
import { answerClaudeCode, planClaudeShapedHook, type HookAnswer } from "./claude-code";
import type { HookPlan, HookRequestContext, HookVerdict, Payload } from "./shared";

export function planCodexHook(p: Payload, ctx: HookRequestContext): HookPlan {
  const plan = planClaudeShapedHook(p, ctx);
  if (plan.kind === "record") {
    // Codex reports no exit status: a result is not known to be a success.
    plan.events = plan.events.map((e) => (e.type === "tool.result" && e.success === true ? { ...e, success: undefined } : e));
  }
  return plan;
}

export function answerCodex(hook: string, v: HookVerdict): HookAnswer {
  // Codex ignores "ask": deny with the reason, so the model reads why the call did not run.
  if (hook === "PreToolUse" && v.decision === "ask") return answerClaudeCode(hook, { ...v, decision: "deny" });
  // How Codex treats a blocked Stop is not established: the person reads the nudge, the turn ends as the model chose.
  if (hook === "Stop") {
    const lines = [...(v.stop ? [v.stop] : []), ...v.notices, ...v.context];
    return lines.length ? { systemMessage: lines.join("\n\n") } : null;
  }
  return answerClaudeCode(hook, v);
}
