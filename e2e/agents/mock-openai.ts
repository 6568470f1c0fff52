/**
 * A scripted stand-in for the OpenAI Responses API on localhost (a Codex model provider with
 * `base_url` pointing here), so the real Codex CLI runs offline. Every request is recorded; the
 * script decides each turn: a shell command or a final message, streamed as Responses SSE events.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ResponsesRequest {
  model: string;
  input: Record<string, any>[];
  tools?: { type: string; name?: string }[];
}

export type CodexTurn = { command: string } | { text: string };
export type CodexScript = (req: ResponsesRequest, turn: number) => CodexTurn;

/** All text of a request (messages, developer messages, tool outputs), for assertions. */
export function responsesText(req: ResponsesRequest): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(req.input);
  return parts.join("\n");
}

/** The outputs of the tool calls in a request, in order. */
export function functionOutputs(req: ResponsesRequest): string[] {
  return req.input.filter((i) => i.type === "function_call_output").map((i) => (typeof i.output === "string" ? i.output : JSON.stringify(i.output)));
}

export class MockOpenAI {
  readonly requests: ResponsesRequest[] = [];
  private server: http.Server | null = null;

  constructor(private script: CodexScript) {}

  setScript(script: CodexScript) {
    this.script = script;
    this.requests.length = 0;
  }

  get url(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
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
    if (req.method !== "POST" || !(req.url ?? "").split("?")[0].endsWith("/responses")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `mock: no ${req.method} ${req.url}` } }));
    }
    const body = JSON.parse(raw) as ResponsesRequest;
    this.requests.push(body);
    const n = this.requests.length;
    const turn = this.script(body, n);
    const id = `resp_mock_${n}`;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data: { type: string } & Record<string, unknown>) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
    send({ type: "response.created", response: { id } });
    if ("command" in turn) {
      // Newer Codex models get `exec_command`, older ones `shell`.
      const names = (body.tools ?? []).map((t) => t.name ?? t.type);
      const item = names.includes("exec_command")
        ? { type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: turn.command }), call_id: `call_mock_${n}` }
        : { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", turn.command] }), call_id: `call_mock_${n}` };
      send({ type: "response.output_item.done", item });
    } else {
      send({ type: "response.output_item.done", item: { type: "message", role: "assistant", id: `msg_mock_${n}`, content: [{ type: "output_text", text: turn.text }] } });
    }
    send({ type: "response.completed", response: { id, usage: { input_tokens: 100, input_tokens_details: null, output_tokens: 20, output_tokens_details: null, total_tokens: 120 } } });
    res.end();
  }
}
