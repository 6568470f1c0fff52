/**
 * The SDK's framework adapters as users get them (the packed tarball installed into a scratch
 * project) driving real `@openai/agents` and `langchain` agents with scripted models against a real
 * Vigil over HTTP: an escalated key asks, a policy denies without running the tool, a paused session
 * stops, a nudge reaches the next model call, results and their failures land in Vigil.
 */
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { Agent, Runner, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { createAgent, FakeToolCallingModel, tool as lcTool, HumanMessage, ToolMessage } from "langchain";
import { Command, MemorySaver } from "@langchain/langgraph";
import { useTestApp } from "../support/use-test-app";
import { HttpError, usePackedSdk } from "../support/packed-sdk";
import { event } from "@/db/schema";

type Sdk = typeof import("../../packages/sdk/src/index");
type SdkAgents = typeof import("../../packages/sdk/src/openai-agents");
type SdkLangchain = typeof import("../../packages/sdk/src/langchain");

const URL_V1 = "https://api.example.com/v1/users";
const KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1";
const DENY_DELETES = { policies: [{ name: "no-user-deletes", tool: "delete_user", decision: "deny", reason: "Users are deleted by support only" }] };

/** A `Model` of @openai/agents that plays its turns in order and keeps every input it was sent. */
class ScriptedModel implements Model {
  readonly inputs: string[] = [];
  constructor(private readonly turns: ModelResponse["output"][]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(JSON.stringify(request.input));
    const output = this.turns[this.inputs.length - 1] ?? [message("done")];
    return { usage: new Usage(), output, responseId: `r${this.inputs.length}` };
  }
  getStreamedResponse(request: ModelRequest): AsyncIterable<any> {
    const respond = () => this.getResponse(request);
    return (async function* () {
      const response = await respond();
      yield { type: "response_started" };
      for (const item of response.output as any[]) if (item.type === "message") for (const part of item.content) if (part.type === "output_text") yield { type: "output_text_delta", delta: part.text };
      yield { type: "response_done", response: { id: response.responseId!, usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 }, output: response.output } };
    })();
  }
}
const functionCall = (callId: string, name: string, args: unknown) => ({ type: "function_call" as const, id: callId, callId, name, status: "completed" as const, arguments: JSON.stringify(args) });
const message = (text: string) => ({ type: "message" as const, role: "assistant" as const, status: "completed" as const, content: [{ type: "output_text" as const, text }] });

describe("@vigil/sdk adapters, packed and installed", () => {
  const app = useTestApp("pglite");
  const packed = usePackedSdk<{ core: Sdk; agents: SdkAgents; langchain: SdkLangchain }>(app, {
    peers: ["@openai/agents", "langchain", "@langchain/core", "@langchain/langgraph"],
    entries: { core: "@vigil/sdk", agents: "@vigil/sdk/openai-agents", langchain: "@vigil/sdk/langchain" },
  });

  const events = (workspaceId: string, sessionId: string) =>
    app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, sessionId))).orderBy(event.ts, event.seq);
  const ok = async (procedure: string, input: unknown, key: string) => {
    const res = await app.mutation(procedure, input, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  /** A workspace, a client and a session Vigil knows (sessions.pause needs it to exist). */
  const setUp = async (agent: string) => {
    const ws = await app.seedWorkspace();
    const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key, agent });
    vigil.startSession();
    await vigil.flush();
    return { ws, vigil };
  };

  describe("OpenAI Agents (@vigil/sdk/openai-agents)", () => {
    const fetchTool = (guard: InstanceType<SdkAgents["VigilAgents"]>, execute: (input: { url: string }) => unknown) =>
      guard.tool({ name: "http_request", description: "GET a URL", parameters: z.object({ url: z.string() }), execute });

    it("failures land in Vigil, the nudge reaches the next model call, the escalated key asks; approved through RunState it runs", async () => {
      const { ws, vigil } = await setUp("agents-crawler");
      const guard = packed.sdk.agents.vigilAgents(vigil);
      const model = new ScriptedModel([
        [functionCall("c1", "http_request", { url: URL_V1 })],
        [functionCall("c2", "http_request", { url: URL_V1 })],
        [functionCall("c3", "http_request", { url: URL_V1 })],
        [functionCall("c4", "http_request", { url: URL_V1 })],
        [message("Fetched the users")],
      ]);
      let runs = 0;
      const agent = new Agent({ name: "crawler", instructions: "Fetch", model, tools: [fetchTool(guard, () => { if (++runs <= 3) throw new HttpError("Service Unavailable", 503); return { users: 2 }; })] });
      const runner = guard.attach(new Runner({ callModelInputFilter: guard.callModelInputFilter, tracingDisabled: true }));
      const first = await runner.run(agent, "Fetch the users");
      expect(runs).toBe(3);
      expect(first.interruptions).toHaveLength(1);
      expect(first.interruptions[0].rawItem).toMatchObject({ callId: "c4", name: "http_request" });
      // Three identical failing calls are a loop: the nudge is in the 4th model call, not before.
      expect(model.inputs).toHaveLength(4);
      expect(model.inputs[3]).toContain("[Vigil]");
      expect(model.inputs.slice(0, 3).join("")).not.toContain("[Vigil]");

      guard.approve(first.state, first.interruptions[0]);
      const second = await runner.run(agent, first.state);
      expect(runs).toBe(4);
      expect(second.finalOutput).toBe("Fetched the users");
      await vigil.flush();

      const rows = await events(ws.workspaceId, vigil.sessionId);
      expect(rows.filter((r) => r.type === "tool.result").map((r) => [r.callId, r.failed, (r.payload as any).error ?? null])).toEqual([
        ["c1", true, "Service Unavailable"],
        ["c2", true, "Service Unavailable"],
        ["c3", true, "Service Unavailable"],
        ["c4", false, null],
      ]);
      expect(rows.filter((r) => r.type === "tool.call").map((r) => r.callId)).toEqual(["c1", "c2", "c3", "c4"]);
      expect(rows.find((r) => r.type === "permission.resolved")).toMatchObject({ callId: "c4" });
      expect(rows.filter((r) => r.type === "model.text").map((r) => (r.payload as any).text)).toEqual(["Fetched the users"]);
      const status = await app.query("reliability.status", { toolName: "http_request" }, { key: ws.key });
      expect(status.body.result!.data.keys.find((k: any) => k.failureKey === KEY_V1).state).not.toBe("trusted");
      await vigil.close();
    });

    it("a policy's deny: the tool does not run and the model reads the policy's reason (streamed run)", async () => {
      const { ws, vigil } = await setUp("agents-admin");
      await ok("config.put", DENY_DELETES, ws.key);
      const guard = packed.sdk.agents.vigilAgents(vigil);
      const model = new ScriptedModel([[functionCall("d1", "delete_user", { id: 7 })], [message("I cannot delete users")]]);
      let runs = 0;
      const deleteUser = guard.tool({ name: "delete_user", description: "Delete a user", parameters: z.object({ id: z.number() }), execute: () => ++runs });
      const agent = new Agent({ name: "admin", instructions: "Admin", model, tools: [deleteUser] });
      const runner = guard.attach(new Runner({ callModelInputFilter: guard.callModelInputFilter, tracingDisabled: true }));
      const streamed = await runner.run(agent, "Delete user 7", { stream: true });
      for await (const _ of streamed) void _;
      await streamed.completed;
      expect(runs).toBe(0);
      expect(streamed.finalOutput).toBe("I cannot delete users");
      expect(model.inputs[1]).toContain("Users are deleted by support only");
      await vigil.flush();
      const rows = await events(ws.workspaceId, vigil.sessionId);
      expect(rows.filter((r) => r.type === "tool.result")).toHaveLength(0);
      expect(rows.filter((r) => r.type === "tool.call").map((r) => r.callId)).toEqual(["d1"]);
      await vigil.close();
    });

    it("a paused session: the tool does not run and the run ends with Vigil's pause", async () => {
      const { ws, vigil } = await setUp("agents-paused");
      await ok("sessions.pause", { sessionId: vigil.sessionId, reason: "Reviewing the migration" }, ws.key);
      const guard = packed.sdk.agents.vigilAgents(vigil);
      const model = new ScriptedModel([[functionCall("p1", "http_request", { url: URL_V1 })], [message("should not be asked")]]);
      let runs = 0;
      const agent = new Agent({ name: "paused", instructions: "x", model, tools: [fetchTool(guard, () => ++runs)] });
      const runner = guard.attach(new Runner({ callModelInputFilter: guard.callModelInputFilter, tracingDisabled: true }));
      const error = await runner.run(agent, "Fetch").catch((e) => e);
      expect(packed.sdk.agents.isVigilPause(error)).toBe(true);
      expect(packed.sdk.agents.vigilAnswerOf(error)?.reason).toContain("Reviewing the migration");
      expect(runs).toBe(0);
      expect(model.inputs).toHaveLength(1);
      expect(guard.paused).toContain("Reviewing the migration");
      await vigil.close();
    });

    it("an agent used as a tool: the outer call and the inner agent's tool are both guarded and reported", async () => {
      const { ws, vigil } = await setUp("agents-nested");
      await ok("config.put", DENY_DELETES, ws.key);
      const guard = packed.sdk.agents.vigilAgents(vigil);
      const innerModel = new ScriptedModel([[functionCall("i1", "lookup", { q: "users" })], [functionCall("i2", "delete_user", { id: 1 })], [message("2 users")]]);
      let deletes = 0;
      const inner = new Agent({
        name: "researcher",
        instructions: "Look things up",
        model: innerModel,
        tools: [guard.tool({ name: "lookup", description: "Look up", parameters: z.object({ q: z.string() }), execute: () => "users: 2" }), guard.tool({ name: "delete_user", description: "Delete", parameters: z.object({ id: z.number() }), execute: () => ++deletes })],
      });
      const outerModel = new ScriptedModel([[functionCall("o1", "research", { input: "How many users?" })], [message("There are 2 users")]]);
      const outer = new Agent({ name: "lead", instructions: "Delegate", model: outerModel, tools: [guard.tool(inner.asTool({ toolName: "research", toolDescription: "Research a question" }))] });
      const runner = guard.attach(new Runner({ callModelInputFilter: guard.callModelInputFilter, tracingDisabled: true }));
      const result = await runner.run(outer, "How many users?");
      expect(result.finalOutput).toBe("There are 2 users");
      expect(deletes).toBe(0);
      expect(innerModel.inputs[2]).toContain("Users are deleted by support only");
      await vigil.flush();
      const rows = await events(ws.workspaceId, vigil.sessionId);
      expect(rows.filter((r) => r.type === "tool.call").map((r) => [r.callId, r.toolName])).toEqual([["o1", "research"], ["i1", "lookup"], ["i2", "delete_user"]]);
      expect(rows.filter((r) => r.type === "tool.result").map((r) => [r.toolName, r.failed])).toEqual([["lookup", false], ["research", false]]);
      await vigil.close();
    });
  });

  describe("LangChain v1 middleware (@vigil/sdk/langchain)", () => {
    const toolCall = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args, type: "tool_call" as const });

    it("failures land in Vigil, the nudge reaches the next model call, the escalated key interrupts; Command({ resume }) re-runs the node and the tool runs once", async () => {
      const { ws, vigil } = await setUp("lc-crawler");
      let runs = 0;
      const fetchUrl = lcTool(
        async ({ url }: { url: string }) => {
          runs++;
          if (runs <= 3) throw new HttpError("Service Unavailable", 503);
          return `fetched ${url}`;
        },
        { name: "http_request", description: "GET a URL", schema: z.object({ url: z.string() }) },
      );
      const calls = ["c1", "c2", "c3", "c4"].map((id) => [toolCall(id, "http_request", { url: URL_V1 })]);
      const model = new FakeToolCallingModel({ toolCalls: [...calls, []] });
      const agent = createAgent({ model, tools: [fetchUrl], middleware: [packed.sdk.langchain.vigilMiddleware(vigil)], checkpointer: new MemorySaver() });
      const config = { configurable: { thread_id: vigil.sessionId } };
      const first: any = await agent.invoke({ messages: [new HumanMessage("Fetch the users")] }, config);
      expect(runs).toBe(3);
      const [pending] = first.__interrupt__;
      expect(pending.value).toMatchObject({ type: "vigil.approval", toolName: "http_request", callId: "c4", failureKey: KEY_V1 });
      expect(pending.value.reason).toContain("3 failures");
      // The nudge was added before the 4th model call, after the third failure.
      const texts = first.messages.map((m: any) => `${m.type}:${typeof m.content === "string" ? m.content : ""}`);
      const nudgeAt = texts.findIndex((t: string) => t.startsWith("human:[Vigil]"));
      expect(nudgeAt).toBeGreaterThan(texts.findIndex((t: string) => t.startsWith("tool:") && t.includes("Service Unavailable")));
      expect(first.messages.filter((m: any) => ToolMessage.isInstance(m) && m.status === "error")).toHaveLength(3);

      // Resuming re-runs the tools node: Vigil is asked again with the same ids, the tool runs once.
      const second: any = await agent.invoke(new Command({ resume: { approved: true } }), config);
      expect(runs).toBe(4);
      expect(second.__interrupt__).toBeUndefined();
      expect(second.messages.some((m: any) => ToolMessage.isInstance(m) && m.content === `fetched ${URL_V1}`)).toBe(true);
      await vigil.flush();

      const rows = await events(ws.workspaceId, vigil.sessionId);
      expect(rows.filter((r) => r.type === "tool.result").map((r) => [r.callId, r.failed])).toEqual([["c1", true], ["c2", true], ["c3", true], ["c4", false]]);
      expect((rows.find((r) => r.type === "tool.result")!.payload as any).error).toContain("Service Unavailable");
      expect(rows.filter((r) => r.type === "tool.call").map((r) => r.callId)).toEqual(["c1", "c2", "c3", "c4"]);
      expect(rows.filter((r) => r.type === "permission.resolved").map((r) => r.callId)).toEqual(["c4"]);
      expect(rows.filter((r) => r.type === "model.text").length).toBeGreaterThan(0);
      await vigil.close();
    });

    it("a policy's deny answers the model without running the tool; a person's reject through resume does the same with their comment", async () => {
      const { ws, vigil } = await setUp("lc-admin");
      await ok("config.put", { policies: [...DENY_DELETES.policies, { name: "ask-exports", tool: "export_users", decision: "ask", reason: "Exports need a person" }] }, ws.key);
      let runs = 0;
      const deleteUser = lcTool(async () => ++runs, { name: "delete_user", description: "Delete", schema: z.object({ id: z.number() }) });
      const exportUsers = lcTool(async () => ++runs, { name: "export_users", description: "Export", schema: z.object({}) });
      const model = new FakeToolCallingModel({ toolCalls: [[toolCall("d1", "delete_user", { id: 7 })], [toolCall("e1", "export_users", {})], []] });
      const agent = createAgent({ model, tools: [deleteUser, exportUsers], middleware: [packed.sdk.langchain.vigilMiddleware(vigil)], checkpointer: new MemorySaver() });
      const config = { configurable: { thread_id: vigil.sessionId } };
      const first: any = await agent.invoke({ messages: [new HumanMessage("Clean up")] }, config);
      expect(first.messages.find((m: any) => ToolMessage.isInstance(m) && m.tool_call_id === "d1")).toMatchObject({ content: "Users are deleted by support only", status: "error" });
      expect(first.__interrupt__[0].value).toMatchObject({ toolName: "export_users", reason: "Exports need a person" });
      const second: any = await agent.invoke(new Command({ resume: { approved: false, comment: "Not this week" } }), config);
      expect(second.messages.find((m: any) => ToolMessage.isInstance(m) && m.tool_call_id === "e1")).toMatchObject({ content: "Not this week", status: "error" });
      expect(runs).toBe(0);
      await vigil.flush();
      const rows = await events(ws.workspaceId, vigil.sessionId);
      expect(rows.filter((r) => r.type === "tool.result")).toHaveLength(0);
      expect(rows.find((r) => r.type === "permission.resolved")).toMatchObject({ callId: "e1", toolName: "export_users" });
      await vigil.close();
    });

    it("a paused session: the tool does not run and the agent ends before the next model call", async () => {
      const { ws, vigil } = await setUp("lc-paused");
      await ok("sessions.pause", { sessionId: vigil.sessionId, reason: "Reviewing the migration" }, ws.key);
      let runs = 0;
      const fetchUrl = lcTool(async () => ++runs, { name: "http_request", description: "GET", schema: z.object({ url: z.string() }) });
      const model = new FakeToolCallingModel({ toolCalls: [[toolCall("p1", "http_request", { url: URL_V1 })], []] });
      const agent = createAgent({ model, tools: [fetchUrl], middleware: [packed.sdk.langchain.vigilMiddleware(vigil)], checkpointer: new MemorySaver() });
      const out: any = await agent.invoke({ messages: [new HumanMessage("Fetch")] }, { configurable: { thread_id: vigil.sessionId } });
      expect(runs).toBe(0);
      expect(out.messages.find((m: any) => ToolMessage.isInstance(m))?.content).toContain("Reviewing the migration");
      // One model call only: the one that asked for the tool.
      expect(out.messages.filter((m: any) => m.type === "ai" && (m.tool_calls?.length ?? 0) > 0)).toHaveLength(1);
      expect(out.messages.at(-1).content).toContain("Reviewing the migration");
      await vigil.close();
    });
  });
});
