/**
 * An AI SDK 7 agent with Vigil in front of its tool, run with a scripted model (no provider key).
 *
 *   VIGIL_URL=http://localhost:3000 VIGIL_API_KEY=vgl_… npx tsx packages/sdk/examples/ai-sdk.ts
 *
 * The model calls `http_request` on an endpoint that answers 503. After three failures Vigil
 * escalates the key, nudges the model about the loop, and the fourth call asks for approval: the run
 * ends with a tool-approval request carrying Vigil's reason (or, with VIGIL_WAIT=60, the call waits
 * for a person on the dashboard's Approvals page first). Watch it on the session's timeline.
 */
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { createVigil } from "@vigil/sdk";
import { vigilAI } from "@vigil/sdk/ai";

const vigil = createVigil({ agent: "example-fetcher", onEffect: (e) => console.log(`  vigil effect: ${e.type}${"message" in e ? ` — ${e.message}` : ""}`) });
const guard = vigilAI(vigil, { waitForApprovalSeconds: Number(process.env.VIGIL_WAIT ?? 0) });

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
let step = 0;
const model = new MockLanguageModelV4({
  modelId: "scripted-model",
  doGenerate: async ({ prompt }) => {
    step += 1;
    const nudged = JSON.stringify(prompt).includes("[Vigil]");
    console.log(`model step ${step}${nudged ? " (prompt carries a Vigil nudge)" : ""}`);
    if (step <= 4) {
      return {
        content: [{ type: "tool-call", toolCallId: `call-${step}`, toolName: "http_request", input: JSON.stringify({ url: "https://api.example.com/v1/users" }) }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    }
    return { content: [{ type: "text", text: "The users API is down." }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
  },
});

const tools = guard.tools({
  http_request: tool({
    description: "GET a URL",
    inputSchema: z.object({ url: z.string() }),
    execute: async ({ url }) => {
      throw Object.assign(new Error(`503 Service Unavailable from ${url}`), { status: 503 });
    },
  }),
});

const result = await generateText({
  model,
  prompt: "List the users",
  tools,
  toolApproval: guard.toolApproval,
  prepareStep: guard.prepareStep,
  stopWhen: [stepCountIs(8), guard.stopWhenPaused],
  onStepFinish: guard.onStepFinish,
});

for (const part of result.content) {
  if (part.type === "tool-approval-request") console.log(`approval requested for ${part.toolCall.toolName}: ${part.reason ?? ""}`);
  if (part.type === "text") console.log(`model: ${part.text}`);
}
await vigil.endSession();
await vigil.close();
console.log(`session ${vigil.sessionId} — open it in the dashboard's Sessions page`);
