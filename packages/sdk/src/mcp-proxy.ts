/**
 * `vigil mcp-proxy -- <command> [args…]` (SPEC 7.7): Vigil between an MCP client and a stdio MCP
 * server. Messages are newline-delimited JSON-RPC in both directions and pass through unchanged,
 * except `tools/call`: Vigil decides first (guard.check), and the result is reported back to it.
 * One proxy process is one Vigil session. stdout is the protocol channel: everything the proxy has
 * to say goes to stderr.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { Vigil, errorText } from "./client.js";
import type { CheckAnswer } from "./types.js";

export interface McpProxyOptions {
  url: string;
  apiKey: string;
  command: string;
  args: string[];
  /** The agent's name in Vigil (default: the client's name from `initialize`). */
  agent?: string;
  sessionId?: string;
  /** How long a call waits for a person in the dashboard when the client cannot be asked (default 50 s, under clients' 60 s time-out). */
  waitSeconds?: number;
  /** `closed`: refuse calls when Vigil cannot be reached (default `open`: forward them). */
  fail?: "open" | "closed";
  stdin?: Readable;
  stdout?: Writable;
  /** Where the proxy logs (default stderr). */
  log?: (line: string) => void;
}

type Id = string | number;
interface JsonRpc {
  jsonrpc?: string;
  id?: Id | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

interface ForwardedCall {
  callId: string;
  toolName: string;
  startedAt: number;
}

export const DEFAULT_WAIT_SECONDS = 50;
/** Ids of the requests the proxy itself sends the client (elicitation); a server's ids never start so. */
const OWN_ID_PREFIX = "vigil-proxy-";

const idKey = (id: Id) => JSON.stringify(id);

/** JSON with sorted keys: the same arguments in another order are the same call. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The text of a result's text items (what an `isError` result says). */
function resultText(result: any): string {
  const items = Array.isArray(result?.content) ? result.content : [];
  const text = items
    .filter((c: any) => c?.type === "text" && typeof c.text === "string")
    .map((c: any) => c.text)
    .join("\n");
  return text || "the tool reported an error";
}

/** Runs the proxy until the client disconnects (0) or the server exits on its own (its exit status, at least 1). */
export async function runMcpProxy(options: McpProxyOptions): Promise<number> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const log = options.log ?? ((line: string) => process.stderr.write(`[vigil mcp-proxy] ${line}\n`));
  const waitSeconds = options.waitSeconds ?? DEFAULT_WAIT_SECONDS;
  const failClosed = options.fail === "closed";
  const vigil = new Vigil({
    url: options.url,
    apiKey: options.apiKey,
    agent: options.agent,
    sessionId: options.sessionId,
    failOpen: !failClosed,
    onError: (error) => log(`Vigil: ${error.message}`),
  });
  const sessionId = vigil.sessionId;

  let serverName: string | undefined;
  let clientName: string | undefined;
  let clientAsksForms = false;
  let initializeId: string | null = null;
  let workspaceSlug: Promise<string | null> | null = null;
  const inFlight = new Map<string, { method: string; call?: ForwardedCall }>();
  const askedCalls = new Map<string, string>();
  const ownRequests = new Map<string, (answer: JsonRpc) => void>();
  let ownCounter = 0;
  let clientGone = false;

  const toClient = (message: JsonRpc | string) => {
    if (clientGone) return;
    stdout.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
  };

  const child: ChildProcess = spawn(options.command, options.args, { stdio: ["pipe", "pipe", "inherit"] });
  const toServer = (line: string) => {
    if (child.stdin?.writable) child.stdin.write(`${line}\n`);
  };
  const childExited = new Promise<number>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    child.on("error", (error) => {
      log(`could not start ${options.command}: ${error.message}`);
      resolve(127);
    });
  });

  const dashboard = async (path: string) => {
    workspaceSlug ??= vigil.transport.query<{ workspace: string }>("account.whoami").then(
      (me) => me.workspace,
      () => null,
    );
    const slug = await workspaceSlug;
    return slug ? `${vigil.transport.baseUrl}/w/${slug}${path}` : vigil.transport.baseUrl;
  };

  /** Nudges and guidance due to the session, as one text item for the next result. */
  const nudgeItem = () => {
    const nudges = vigil.takeNudges(sessionId);
    return nudges.length ? [{ type: "text", text: `[Vigil] ${nudges.map((n) => n.message).join("\n[Vigil] ")}` }] : [];
  };

  const refuse = (id: Id, text: string) => toClient({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }, ...nudgeItem()], isError: true } });

  const forward = (message: JsonRpc, raw: string, call?: ForwardedCall) => {
    if (message.id !== undefined && message.id !== null) inFlight.set(idKey(message.id), { method: message.method ?? "", call });
    toServer(raw);
  };

  /** Asks the person in the client (form elicitation); null when the client could not ask. */
  const elicit = (toolName: string, answer: CheckAnswer): Promise<boolean | null> =>
    new Promise((resolve) => {
      const id = `${OWN_ID_PREFIX}${++ownCounter}`;
      ownRequests.set(id, (reply) => {
        if (reply.error) return resolve(null);
        resolve(reply.result?.action === "accept" && reply.result?.content?.approve === true);
      });
      toClient({
        jsonrpc: "2.0",
        id,
        method: "elicitation/create",
        params: {
          message: `Vigil asks before ${toolName}${serverName ? ` (${serverName})` : ""} runs: ${answer.reason ?? "this call needs a person's approval"}\nFailure key: ${answer.failureKey}`,
          requestedSchema: {
            type: "object",
            properties: { approve: { type: "boolean", title: "Run this call", description: "Allow this tool call once", default: false } },
            required: ["approve"],
          },
        },
      });
    });

  const guardCall = async (message: JsonRpc, raw: string) => {
    const id = message.id as Id;
    const toolName = typeof message.params?.name === "string" ? message.params.name : "";
    const args = message.params?.arguments && typeof message.params.arguments === "object" ? message.params.arguments : {};
    const signature = `${toolName}\u0000${canonical(args)}`;
    const callId = askedCalls.get(signature) ?? randomUUID();
    const wait = clientAsksForms ? 0 : waitSeconds;
    let answer: CheckAnswer;
    try {
      answer = await vigil.check({ sessionId, callId, toolName, args, pluginName: serverName, waitForApprovalSeconds: wait });
    } catch (error) {
      log(`guard.check failed for ${toolName}: ${errorText(error)}`);
      if (failClosed) return refuse(id, `Vigil could not be asked about this call (${errorText(error)}), and this proxy refuses calls then (--fail closed).`);
      return forward(message, raw, { callId, toolName, startedAt: Date.now() });
    }
    if (answer.failedOpen) log(`Vigil cannot be reached; ${toolName} runs unchecked (${answer.failedOpen})`);
    if (answer.decision === "ask" && clientAsksForms) {
      const granted = await elicit(toolName, answer);
      if (granted !== null) {
        vigil.report({ type: "permission.resolved", sessionId, callId, toolName, granted, method: "mcp_elicitation" });
        if (!granted) return refuse(id, `The person declined this call to ${toolName}.`);
        return forward(message, raw, { callId, toolName, startedAt: Date.now() });
      }
      // The client could not ask after all: wait for a person in the dashboard instead.
      answer = await vigil.check({ sessionId, callId, toolName, args, pluginName: serverName, waitForApprovalSeconds: waitSeconds }).catch(() => answer);
    }
    switch (answer.decision) {
      case "allow":
        askedCalls.delete(signature);
        return forward(message, raw, { callId, toolName, startedAt: Date.now() });
      case "deny":
        askedCalls.delete(signature);
        return refuse(id, `Vigil denied this call: ${answer.reason ?? "no reason given"}`);
      case "pause":
        return refuse(id, `This session is paused in Vigil: ${answer.reason ?? "no reason given"}. The call did not run. A person resumes it at ${await dashboard(`/sessions/${encodeURIComponent(sessionId)}`)}`);
      default:
        // The same call again gets the person's decision once made.
        askedCalls.set(signature, callId);
        return refuse(
          id,
          `A person must approve this call in Vigil: ${answer.reason ?? "approval required"}. It did not run. Approve it at ${await dashboard("/approvals")}, then call the tool again with the same arguments.`,
        );
    }
  };

  const fromClient = (raw: string) => {
    if (!raw.trim()) return;
    let message: JsonRpc;
    try {
      message = JSON.parse(raw);
    } catch {
      return toServer(raw);
    }
    if (Array.isArray(message) || typeof message !== "object" || message === null) return toServer(raw);
    const hasId = message.id !== undefined && message.id !== null;
    if (!message.method && hasId && typeof message.id === "string" && ownRequests.has(message.id)) {
      const settle = ownRequests.get(message.id)!;
      ownRequests.delete(message.id);
      return settle(message);
    }
    if (message.method === "initialize" && hasId) {
      clientName = typeof message.params?.clientInfo?.name === "string" ? message.params.clientInfo.name : undefined;
      const elicitation = message.params?.capabilities?.elicitation;
      // An empty elicitation capability means form (the 2025-06-18 meaning).
      clientAsksForms = Boolean(elicitation && typeof elicitation === "object" && (elicitation.form !== undefined || elicitation.url === undefined));
      initializeId = idKey(message.id as Id);
      vigil.startSession({ sessionId, agent: options.agent ?? clientName ?? "mcp" });
      return forward(message, raw);
    }
    if (message.method === "tools/call" && hasId) {
      void guardCall(message, raw).catch((error) => {
        log(`tools/call could not be handled: ${errorText(error)}`);
        refuse(message.id as Id, `Vigil's proxy could not handle this call: ${errorText(error)}`);
      });
      return;
    }
    return forward(message, raw);
  };

  const fromServer = (raw: string) => {
    if (!raw.trim()) return;
    let message: JsonRpc;
    try {
      message = JSON.parse(raw);
    } catch {
      return toClient(raw);
    }
    const isAnswer = message && typeof message === "object" && !message.method && message.id !== undefined && message.id !== null;
    const pending = isAnswer ? inFlight.get(idKey(message.id as Id)) : undefined;
    if (!pending) return toClient(raw);
    inFlight.delete(idKey(message.id as Id));
    if (idKey(message.id as Id) === initializeId) {
      serverName = typeof message.result?.serverInfo?.name === "string" ? message.result.serverInfo.name : serverName;
      return toClient(raw);
    }
    if (!pending.call) return toClient(raw);
    const { callId, toolName, startedAt } = pending.call;
    const failed = Boolean(message.error) || message.result?.isError === true;
    vigil.report({
      type: "tool.result",
      sessionId,
      callId,
      toolName,
      ...(serverName ? { pluginName: serverName } : {}),
      success: !failed,
      ...(failed ? { error: message.error ? message.error.message : resultText(message.result) } : { result: message.result?.structuredContent ?? message.result?.content ?? null }),
      durationMs: Date.now() - startedAt,
    });
    const extra = nudgeItem();
    if (!extra.length || !Array.isArray(message.result?.content)) return toClient(raw);
    return toClient({ ...message, result: { ...message.result, content: [...message.result.content, ...extra] } });
  };

  createInterface({ input: child.stdout!, crlfDelay: Infinity }).on("line", fromServer);
  const clientLines = createInterface({ input: stdin, crlfDelay: Infinity });
  clientLines.on("line", fromClient);
  const clientClosed = new Promise<void>((resolve) => clientLines.on("close", () => resolve()));

  const ended = await Promise.race([clientClosed.then(() => "client" as const), childExited.then(() => "server" as const)]);
  let status = 0;
  if (ended === "client") {
    clientGone = true;
    child.stdin?.end();
    const exited = await Promise.race([childExited, new Promise<null>((r) => setTimeout(() => r(null), 5000).unref())]);
    if (exited === null) child.kill("SIGTERM");
  } else {
    const code = await childExited;
    status = Math.max(1, code);
    log(`${options.command} exited (status ${code}) before the client disconnected`);
    for (const [key, pending] of inFlight) {
      const id = JSON.parse(key) as Id;
      toClient({ jsonrpc: "2.0", id, error: { code: -32603, message: `The MCP server exited (status ${code})` } });
      if (pending.call) {
        vigil.report({ type: "tool.result", sessionId, callId: pending.call.callId, toolName: pending.call.toolName, success: false, error: `The MCP server exited (status ${code})`, durationMs: Date.now() - pending.call.startedAt });
      }
    }
    inFlight.clear();
    clientLines.close();
  }
  await vigil.endSession(sessionId).catch((error) => log(`could not report the session's end: ${errorText(error)}`));
  await vigil.close().catch(() => {});
  return status;
}
