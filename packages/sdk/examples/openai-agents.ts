/**
 * An OpenAI Agents SDK agent with Vigil in front of its tool, run with a scripted Model (no provider key).
 *
 *   VIGIL_URL=http://localhost:3000 VIGIL_API_KEY=vgl_… npx tsx packages/sdk/examples/openai-agents.ts
 *
 * The model calls `http_request` on an endpoint that answers 503. After three failures Vigil escalates
 * the key and nudges the model about the loop; the fourth call asks: the run stops with an
 * interruption, which this script approves through RunState (`guard.approve`) before running again.
 */
import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { z } from "zod";
import { createVigil } from "@vigil/sdk";
import { vigilAgents } from "@vigil/sdk/openai-agents";

const vigil = createVigil({ agent: "example-agents", onEffect: (e) => console.log(`  vigil effect: ${e.type}${"message" in e ? ` — ${e.message}` : ""}`) });
const guard = vigilAgents(vigil);

let turn = 0;
const model: Model = {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    turn += 1;
    console.log(`model turn ${turn}${JSON.stringify(request.input).includes("[Vigil]") ? " (input carries a Vigil nudge)" : ""}`);
    const output: ModelResponse["output"] =
      turn <= 4
        ? [{ type: "function_call", id: `call-${turn}`, callId: `call-${turn}`, name: "http_request", status: "completed", arguments: JSON.stringify({ url: "https://api.example.com/v1/users" }) }]
        : [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }] }];
    return { usage: new Usage(), output };
  },
  async *getStreamedResponse() {
    throw new Error("this example does not stream");
  },
};

let attempts = 0;
const httpRequest = guard.tool({
  name: "http_request",
  description: "GET a URL",
  parameters: z.object({ url: z.string() }),
  execute: async ({ url }: { url: string }) => {
    if (++attempts <= 3) throw Object.assign(new Error("Service Unavailable"), { status: 503 });
    return `fetched ${url}`;
  },
});
const agent = new Agent({ name: "fetcher", instructions: "Fetch what is asked.", model, tools: [httpRequest] });
const runner = guard.attach(new Runner({ callModelInputFilter: guard.callModelInputFilter, tracingDisabled: true }));

let result = await runner.run(agent, "Fetch the users");
for (const item of result.interruptions) {
  console.log(`Vigil asks about ${item.rawItem.type === "function_call" ? item.rawItem.name : "a call"}: approving it here`);
  guard.approve(result.state, item);
}
if (result.interruptions.length) result = await runner.run(agent, result.state);
console.log("final output:", result.finalOutput);
await vigil.endSession();
await vigil.close();
