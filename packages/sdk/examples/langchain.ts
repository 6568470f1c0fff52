/**
 * A LangChain v1 agent with Vigil's middleware, run with the library's scripted FakeToolCallingModel.
 *
 *   VIGIL_URL=http://localhost:3000 VIGIL_API_KEY=vgl_… npx tsx packages/sdk/examples/langchain.ts
 *
 * The tool answers 503 three times; Vigil escalates the key and adds a nudge before the next model
 * call; the fourth call interrupts the graph (`interrupt()`), and `Command({ resume })` approves it:
 * the tools node runs again and the tool runs once.
 */
import { createAgent, FakeToolCallingModel, HumanMessage, tool } from "langchain";
import { Command, MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { createVigil } from "@vigil/sdk";
import { vigilMiddleware } from "@vigil/sdk/langchain";

const vigil = createVigil({ agent: "example-langchain", onEffect: (e) => console.log(`  vigil effect: ${e.type}${"message" in e ? ` — ${e.message}` : ""}`) });

let attempts = 0;
const httpRequest = tool(
  async ({ url }: { url: string }) => {
    if (++attempts <= 3) throw Object.assign(new Error("Service Unavailable"), { status: 503 });
    return `fetched ${url}`;
  },
  { name: "http_request", description: "GET a URL", schema: z.object({ url: z.string() }) },
);
const call = (id: string) => [{ id, name: "http_request", args: { url: "https://api.example.com/v1/users" }, type: "tool_call" as const }];
const model = new FakeToolCallingModel({ toolCalls: [call("c1"), call("c2"), call("c3"), call("c4"), []] });
const agent = createAgent({ model, tools: [httpRequest], middleware: [vigilMiddleware(vigil)], checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: vigil.sessionId } };

let state: any = await agent.invoke({ messages: [new HumanMessage("Fetch the users")] }, config);
for (const pending of state.__interrupt__ ?? []) {
  console.log(`Vigil asks: ${pending.value.reason} — approving it here`);
  state = await agent.invoke(new Command({ resume: { approved: true } }), config);
}
console.log(state.messages.map((m: any) => `${m.type}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`).join("\n"));
await vigil.endSession();
await vigil.close();
