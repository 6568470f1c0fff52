/**
 * What each CLI is told when a key changes (SPEC 7.5 revision 3): the person through `systemMessage`,
 * the model through `additionalContext`, whatever else the answer says. The integration suite
 * checks an escalation end to end; this covers every answer a recovery or a block can ride on.
 */
import { describe, expect, it } from "vitest";
import { answerClaudeCode } from "@/server/hooks/claude-code";
import { answerCodex } from "@/server/hooks/codex";
import { answerGemini } from "@/server/hooks/gemini";
import { EMPTY_VERDICT, type HookVerdict } from "@/server/hooks/shared";

const recovered = "Vigil: ✓ Tool 'Bash' recovered (command=ls): 3 successful calls.";
const blocked = "Vigil: 🛑 Tool 'Bash' blocked - security concern. Every 'Bash' call needs approval until a person resets it.";
const verdict = (v: Partial<HookVerdict>): HookVerdict => ({ ...EMPTY_VERDICT, ...v });

describe("a key's change reaches the person and the model", () => {
  it("Claude Code and Codex: after a tool result, before a call, on a prompt", () => {
    for (const answer of [answerClaudeCode, answerCodex]) {
      for (const hook of ["PostToolUse", "PostToolUseFailure", "PreToolUse", "UserPromptSubmit"]) {
        const out = answer(hook, verdict({ notices: [recovered] }))!;
        expect(out.systemMessage, hook).toBe(recovered);
        expect((out.hookSpecificOutput as { additionalContext: string }).additionalContext, hook).toContain(recovered);
      }
    }
  });

  it("Claude Code: beside a denial, a nudge and a pause, the notice is still told", () => {
    const denied = answerClaudeCode("PreToolUse", verdict({ decision: "deny", reason: "blocked", decisionReason: "Blocked.", notices: [blocked] }))!;
    expect(denied.systemMessage).toBe(blocked);
    expect(denied.hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "Vigil: Blocked.", additionalContext: blocked });
    const nudged = answerClaudeCode("PostToolUse", verdict({ context: ["Read the error."], notices: [recovered] }))!;
    expect((nudged.hookSpecificOutput as { additionalContext: string }).additionalContext).toBe(`${recovered}\n\nRead the error.`);
    const paused = answerClaudeCode("PostToolUse", verdict({ stop: "Vigil paused this session: x.", notices: [blocked] }))!;
    expect(paused).toMatchObject({ continue: false, stopReason: "Vigil paused this session: x." });
    expect(paused.systemMessage).toBe(`Vigil paused this session: x.\n${blocked}`);
  });

  it("Gemini: before and after a tool", () => {
    const after = answerGemini("AfterTool", verdict({ notices: [recovered] }))!;
    expect(after).toEqual({ systemMessage: recovered, hookSpecificOutput: { hookEventName: "AfterTool", additionalContext: recovered } });
    const before = answerGemini("BeforeTool", verdict({ decision: "deny", reason: "blocked", decisionReason: "Blocked.", notices: [blocked] }))!;
    expect(before).toEqual({ systemMessage: blocked, decision: "deny", reason: "Vigil: Blocked." });
  });

  it("nothing changed, nothing said: the answers stay empty", () => {
    for (const hook of ["PostToolUse", "PostToolUseFailure", "PreToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "StopFailure"]) expect(answerClaudeCode(hook, EMPTY_VERDICT), hook).toBeNull();
    expect(answerCodex("Stop", EMPTY_VERDICT)).toBeNull();
    for (const hook of ["AfterTool", "BeforeTool", "AfterAgent", "BeforeAgent"]) expect(answerGemini(hook, EMPTY_VERDICT), hook).toBeNull();
  });
});
