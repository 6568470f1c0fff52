/**
 * A scripted stand-in for the Anthropic Messages API on localhost, so the real Claude Code CLI
 * runs offline (ANTHROPIC_BASE_URL). Every request is recorded; the test's script decides each
 * answer from the conversation so far (a tool call or a final text), streamed as SSE exactly as
 * the real API frames it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface MessagesRequest {
  model: string;
  system?: unknown;
  messages: { role: "user" | "assistant"; content: string | Record<string, any>[] }[];
  tools?: { name: string }[];
  stream?: boolean;
}

export type ScriptedTurn = { toolUse: { name: string; input: Record<string, unknown> } } | { text: string };

/** Decides the model's next turn; `null` for requests the script does not own (side calls). */
export type Script = (req: MessagesRequest, turn: number) => ScriptedTurn;

/** All text of a request (message text, tool results, system reminders), for assertions. */
export function requestText(req: MessagesRequest): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(req.messages);
  return parts.join("\n");
}

/** The tool results in the last user message of a request. */
export function lastToolResults(req: MessagesRequest): { content: string; isError: boolean }[] {
  const last = req.messages.at(-1);
  if (!last || typeof last.content === "string") return [];
  return last.content
    .filter((b) => b.type === "tool_result")
    .map((b) => ({ content: typeof b.content === "string" ? b.content : JSON.stringify(b.content), isError: b.is_error === true }));
}

export class MockAnthropic {
  readonly requests: MessagesRequest[] = [];
  /** Requests of the agent loop (the ones offering tools), in order. */
  readonly agentRequests: MessagesRequest[] = [];
  private server: http.Server | null = null;
  private toolUses = 0;

  constructor(private script: Script) {}

  setScript(script: Script) {
    this.script = script;
    this.agentRequests.length = 0;
  }

  get url(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => this.handle(req, res, raw));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "POST" || !path.endsWith("/v1/messages")) {
      if (path.endsWith("/count_tokens")) return json(res, 200, { input_tokens: 100 });
      return json(res, 404, { type: "error", error: { type: "not_found_error", message: `mock: no ${req.method} ${path}` } });
    }
    let body: MessagesRequest;
    try {
      body = JSON.parse(raw);
    } catch {
      return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "mock: bad JSON" } });
    }
    this.requests.push(body);
    // Side calls (titles, quota checks) offer no tools: answer them with plain text.
    let turn: ScriptedTurn = { text: "ok" };
    if (body.tools?.length) {
      this.agentRequests.push(body);
      turn = this.script(body, this.agentRequests.length);
    }
    type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
    const content: Block[] =
      "toolUse" in turn
        ? [{ type: "tool_use", id: `toolu_mock_${(++this.toolUses).toString(16).padStart(8, "0")}${Date.now().toString(16)}`, name: turn.toolUse.name, input: turn.toolUse.input }]
        : [{ type: "text", text: turn.text }];
    const stopReason = "toolUse" in turn ? "tool_use" : "end_turn";
    const message = { id: `msg_mock_${this.requests.length}`, type: "message", role: "assistant", model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 20 } };
    if (!body.stream) return json(res, 200, message);

    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send("message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 } } });
    content.forEach((block, index) => {
      if (block.type === "text") {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
      } else {
        send("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
        send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
      }
      send("content_block_stop", { type: "content_block_stop", index });
    });
    send("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
    send("message_stop", { type: "message_stop" });
    res.end();
  }
}

function json(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
