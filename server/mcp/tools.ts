/**
 * Vigil's tools for the model (SPEC 7.7, the seed's "Exposed Tools"): an MCP server built per
 * request for one API key's workspace. Each answer is text a model reads plus the same facts as
 * `structuredContent`; a refusal (unknown key or session, a bad argument) is a tool error naming
 * what was wrong, never a protocol error.
 */
import { McpServer, type CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Db } from "@/db/client";
import type { Actor } from "@/server/services/audit";
import { ServiceError } from "@/server/services/errors";
import { reliabilityStatus } from "@/server/services/status";
import { getSessionView } from "@/server/services/sessions";
import { undeliveredNudges } from "@/server/services/pending-nudges";
import { recentResetRequests, requestKeyReset } from "@/server/services/reset-requests";
import { keyHref } from "@/server/dashboard/paths";

const MCP_SERVER_NAME = "vigil";
/** Where a client without a conversation id of its own puts the session (SPEC 7.7). */
const SESSION_META_KEY = "io.vigil/sessionId";

export interface McpCaller {
  db: Db;
  workspaceId: string;
  organizationId: string;
  workspaceSlug: string;
  actor: Actor;
  /** The dashboard's origin as the client reached it, for links in answers. */
  origin: string;
}

type StatusAnswer = Awaited<ReturnType<typeof reliabilityStatus>>;

function answer(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** Service refusals (not found, bad request) are the model's to read; anything else is the server's. */
async function refusalsAsToolErrors(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ServiceError) return toolError(error.message);
    throw error;
  }
}

function statusText(status: StatusAnswer, resets: Awaited<ReturnType<typeof recentResetRequests>>, toolName: string | undefined): string {
  const untrusted = status.keys.filter((k) => k.effectiveState !== "trusted");
  const lines: string[] = [];
  const scope = toolName ? ` for ${toolName}` : "";
  if (!status.keys.length) lines.push(`No failure keys tracked${scope} yet: every tool is trusted.`);
  else if (!untrusted.length) lines.push(`All ${status.keys.length} tracked failure keys${scope} are trusted.`);
  else {
    lines.push(`${untrusted.length} of ${status.keys.length} tracked failure keys${scope} are not trusted; calls on them need a person's approval or are refused:`);
    for (const k of untrusted) {
      const recovery = k.recovery ? `, recovering ${k.recovery.successes}/${k.recovery.needed} successes` : "";
      const expires = k.escalationExpires ? `, until ${k.escalationExpires}` : "";
      lines.push(`- ${k.failureKey}: ${k.effectiveState}${k.effectiveState !== k.state ? ` (own state ${k.state})` : ""}, ${k.effectiveFailures}/${k.threshold ?? "-"} failures${recovery}${expires}${k.escalationReason ? ` — ${k.escalationReason}` : ""}`);
    }
  }
  for (const r of resets) {
    if (r.status === "pending") lines.push(`Reset of ${r.failureKey} requested, waiting for a person (approval ${r.approvalId}).`);
    else if (r.status === "denied") lines.push(`Reset of ${r.failureKey} was denied by ${r.resolvedBy ?? "a person"}: ${r.comment ?? "no reason given"}`);
    else lines.push(`Reset of ${r.failureKey} was approved by ${r.resolvedBy ?? "a person"}.`);
  }
  if ("history" in status && status.history?.length) {
    lines.push("Recent failures:");
    for (const h of status.history.slice(0, 20)) lines.push(`- ${h.ts} ${h.failureKey} (${h.severity}): ${h.error ?? "no message"}`);
  }
  return lines.join("\n");
}

/** The MCP server of one request: the three tools, for the caller's workspace. */
export function createVigilMcpServer(caller: McpCaller): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: "1.0.0" }, { instructions: "Vigil tracks how reliable each tool is and when a person must approve a call. Ask it before retrying a tool that keeps failing." });
  const dashboard = `${caller.origin}/w/${caller.workspaceSlug}`;

  server.registerTool(
    "reliability_status",
    {
      title: "Reliability status",
      description: "Trust state of the workspace's failure keys (tool + what it acted on): which tools are escalated or blocked, why, how far their recovery is, and the answers to reset requests.",
      inputSchema: z.object({
        tool_name: z.string().min(1).max(256).optional().describe("Only this tool's keys"),
        include_history: z.boolean().optional().describe("Include recent failures"),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ tool_name, include_history }) =>
      refusalsAsToolErrors(async () => {
        const [status, resets] = await Promise.all([
          reliabilityStatus(caller.db, caller.workspaceId, { toolName: tool_name, includeHistory: include_history }),
          recentResetRequests(caller.db, caller.workspaceId),
        ]);
        return answer(statusText(status, resets, tool_name), { ...status, resetRequests: resets });
      }),
  );

  server.registerTool(
    "reliability_session",
    {
      title: "Session status",
      description: "One agent session as Vigil sees it: paused or held and why, the behaviour patterns active in it, messages and nudges not delivered yet.",
      inputSchema: z.object({ session_id: z.string().min(1).max(128).optional().describe(`The session id (else _meta["${SESSION_META_KEY}"])`) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ session_id }, ctx) =>
      refusalsAsToolErrors(async () => {
        const fromMeta = ctx.mcpReq._meta?.[SESSION_META_KEY];
        const sessionId = session_id ?? (typeof fromMeta === "string" && fromMeta.length > 0 && fromMeta.length <= 128 ? fromMeta : undefined);
        if (!sessionId) return toolError(`session_id: required (or _meta["${SESSION_META_KEY}"])`);
        const [view, nudges] = await Promise.all([getSessionView(caller.db, caller.workspaceId, sessionId), undeliveredNudges(caller.db, caller.workspaceId, sessionId)]);
        const lines = [`Session ${sessionId} (agent ${view.agent}) is ${view.status}.`];
        if (view.held) lines.push(`Held (${view.held.scope}) by ${view.held.by ?? "a person"}: ${view.held.reason}. Tool calls are refused until a person resumes it at ${dashboard}/sessions/${encodeURIComponent(sessionId)}.`);
        for (const p of view.activePatterns) lines.push(`Active pattern: ${p.patternType} (${p.severity}).`);
        for (const n of nudges) lines.push(`Message (${n.nudgeType}): ${n.message}`);
        if (!view.held && !view.activePatterns.length && !nudges.length) lines.push("Nothing holds it and no pattern is active.");
        const pendingNudges = nudges.map((n) => ({ ...n, createdAt: n.createdAt.toISOString() }));
        return answer(lines.join("\n"), { ...view, pendingNudges });
      }),
  );

  server.registerTool(
    "reliability_request_reset",
    {
      title: "Request a reset",
      description: "Ask a person to reset a failure key to trusted (for example after the cause of its failures was fixed). Nothing changes until they approve it; reliability_status shows their answer.",
      inputSchema: z.object({
        failure_key: z.string().trim().min(1).max(2048).describe("The failure key, as reliability_status names it"),
        reason: z.string().trim().min(1).max(2000).describe("Why the key should be trusted again; the person reads it"),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ failure_key, reason }) =>
      refusalsAsToolErrors(async () => {
        const { approvalId } = await requestKeyReset(caller.db, { workspaceId: caller.workspaceId, organizationId: caller.organizationId, failureKey: failure_key, reason, actor: caller.actor });
        const approvalsUrl = `${dashboard}/approvals`;
        return answer(
          `A person must approve the reset of ${failure_key} before it is trusted again. The request (approval ${approvalId}) waits in Vigil's approvals at ${approvalsUrl}; reliability_status shows the answer. Key: ${caller.origin}${keyHref(caller.workspaceSlug, failure_key)}`,
          { approvalId, status: "pending", failureKey: failure_key, approvalsUrl },
        );
      }),
  );
  return server;
}
