/**
 * The agent API (SPEC 7): names, paths and shapes are a contract. Thin: validate, call a service.
 * Admin-scope procedures are audit-logged with the key's prefix as the actor.
 */
import { z } from "zod";
import { adminApiKeyProcedure, apiKeyProcedure, cachedApiKeyProcedure, router } from "../init";
import { guardInputSchema, ingestInputSchema } from "@/server/ingest/schema";
import { syncInput } from "../sync-input";
import { guardCheck, ingestEvents } from "@/server/ingest";
import { reliabilityStatus } from "@/server/services/status";
import { getConfigDocument, loadEffectiveConfig, putConfigDocument } from "@/server/services/workspace-config";
import { toSnakeDocument } from "@/server/engine/config";
import { compilePolicies, evaluatePolicies } from "@/server/engine/policies";
import { listApprovals, resolveApproval } from "@/server/services/approvals";
import { getApproval } from "@/server/services/tool-call-approvals";
import { notFound } from "@/server/services/errors";
import { resetKeys } from "@/server/services/key-reset";
import { requestKeyReset } from "@/server/services/reset-requests";
import { getSessionView, resumeSession, setSessionSettings } from "@/server/services/sessions";
import { listHolds, pauseAgent, pauseSession, pauseWorkspace, resumeAgent, resumeWorkspace } from "@/server/services/holds";
import { setKeyState } from "@/server/services/manual-trust";
import { MAX_MESSAGE_LENGTH, queueSessionMessage } from "@/server/services/pending-nudges";
import { RANGE_IDS, modelList, patternSummary } from "@/server/dashboard/agent-summaries";
import { failureGroups } from "@/server/dashboard/failure-groups";

const sessionId = z.string().min(1).max(128);
/** Operator controls (SPEC 4.6): what a person types, read by the agent and kept in the audit log. */
export const holdReason = z.string().trim().min(1, "Give a reason").max(1000);
export const holdGuidance = z.string().max(4000).optional();
export const agentName = z.string().trim().min(1).max(200);
const manualKeyState = z.strictObject({ failureKey: z.string().trim().min(1).max(2048), state: z.enum(["escalated", "blocked"]), reason: holdReason });
const resetRequest = z.strictObject({ failureKey: z.string().trim().min(1).max(2048), reason: z.string().trim().min(1, "Give a reason").max(2000) });
export const messageText = z.string().trim().min(1, "The message is empty").max(MAX_MESSAGE_LENGTH);

export const ingestRouter = router({
  events: cachedApiKeyProcedure.input(syncInput(ingestInputSchema)).mutation(({ ctx, input }) =>
    ingestEvents(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId }, input.events, Date.now(), { recheckApiKeyId: ctx.recheckApiKeyId }),
  ),
});

export const guardRouter = router({
  check: cachedApiKeyProcedure.input(syncInput(guardInputSchema)).mutation(({ ctx, input, signal }) =>
    guardCheck(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId }, input, Date.now(), { signal, apiKeyId: ctx.recheckApiKeyId, capacitySlot: ctx.capacitySlot }),
  ),
});

export const reliabilityRouter = router({
  status: apiKeyProcedure
    .input(z.strictObject({ toolName: z.string().min(1).max(256).optional(), includeHistory: z.boolean().optional() }).optional())
    .query(({ ctx, input }) => reliabilityStatus(ctx.db, ctx.workspaceId, input ?? {})),
});

export const configRouter = router({
  get: adminApiKeyProcedure.query(async ({ ctx }) =>
    toSnakeDocument(await getConfigDocument(ctx.db, { level: "workspace", workspaceId: ctx.workspaceId })),
  ),
  put: adminApiKeyProcedure.input(z.unknown()).mutation(({ ctx, input }) =>
    putConfigDocument(ctx.db, { level: "workspace", workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, document: input, actor: ctx.actor }),
  ),
});

/** `policies.test` (SPEC 7.6): what the policies and built-in risk rules say about a call, recording nothing. */
export const policiesRouter = router({
  test: apiKeyProcedure
    .input(z.strictObject({ toolName: z.string().min(1).max(256), args: z.record(z.string(), z.unknown()) }))
    .query(async ({ ctx, input }) => {
      const { workspaceDoc, orgDoc } = await loadEffectiveConfig(ctx.db, ctx.workspaceId);
      const verdict = evaluatePolicies(compilePolicies(workspaceDoc, orgDoc), input.toolName, input.args);
      return { decision: verdict.decision ?? "allow", policy: verdict.policy, riskRule: verdict.riskRule };
    }),
});

/** `patterns.summary` (SPEC 7.6): the Patterns page's numbers for a window (the page's range vocabulary), one model or all. */
export const patternsRouter = router({
  summary: apiKeyProcedure
    .input(z.strictObject({ range: z.enum(RANGE_IDS).optional(), model: z.string().trim().min(1).max(256).optional() }).optional())
    .query(({ ctx, input }) => patternSummary(ctx.db, ctx.workspaceId, input ?? {})),
});

/** `models.list` (SPEC 7.6): the Models page's behavioural profiles and tool success rates. */
export const modelsRouter = router({
  list: apiKeyProcedure.query(({ ctx }) => modelList(ctx.db, ctx.workspaceId)),
});

/** `failures.groups` (SPEC 7.6): failures grouped by their normalized message, largest first. */
export const failuresRouter = router({
  groups: apiKeyProcedure
    .input(z.strictObject({ range: z.enum(RANGE_IDS).optional(), toolName: z.string().trim().min(1).max(256).optional() }).optional())
    .query(({ ctx, input }) => failureGroups(ctx.db, ctx.workspaceId, input ?? {})),
});

export const approvalsRouter = router({
  get: apiKeyProcedure.input(z.strictObject({ approvalId: z.string().min(1).max(128) })).query(async ({ ctx, input }) => {
    const found = await getApproval(ctx.db, ctx.workspaceId, input.approvalId);
    if (!found) throw notFound("Approval");
    return found;
  }),
  list: adminApiKeyProcedure
    .input(z.strictObject({ status: z.enum(["pending", "approved", "denied"]).optional() }).optional())
    .query(async ({ ctx, input }) => ({ approvals: await listApprovals(ctx.db, ctx.workspaceId, input?.status) })),
  resolve: adminApiKeyProcedure
    .input(
      z.strictObject({
        approvalId: z.string().min(1).max(128),
        decision: z.enum(["approve", "deny"]),
        comment: z.string().max(2000).optional(),
        scope: z.enum(["once", "session"]).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      resolveApproval(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor }),
    ),
});

export const keysRouter = router({
  reset: adminApiKeyProcedure
    .input(z.union([z.strictObject({ failureKey: z.string().min(1).max(2048) }), z.strictObject({ all: z.literal(true) })]))
    .mutation(({ ctx, input }) =>
      resetKeys(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, target: input, actor: ctx.actor }),
    ),
  /** Agent scope (SPEC 7.6): a person approves the reset in the approvals queue. */
  requestReset: apiKeyProcedure
    .input(resetRequest)
    .mutation(async ({ ctx, input }) => {
      const { approvalId } = await requestKeyReset(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor });
      return { approvalId };
    }),
  setState: adminApiKeyProcedure
    .input(manualKeyState)
    .mutation(({ ctx, input }) => setKeyState(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor })),
});

export const sessionsRouter = router({
  get: apiKeyProcedure.input(z.strictObject({ sessionId })).query(({ ctx, input }) => getSessionView(ctx.db, ctx.workspaceId, input.sessionId)),
  setSettings: apiKeyProcedure
    .input(z.strictObject({ sessionId, settings: z.unknown() }))
    .mutation(({ ctx, input }) => setSessionSettings(ctx.db, { workspaceId: ctx.workspaceId, sessionId: input.sessionId, settings: input.settings })),
  resume: adminApiKeyProcedure
    .input(z.strictObject({ sessionId, guidance: z.string().max(4000).optional() }))
    .mutation(({ ctx, input }) =>
      resumeSession(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, sessionId: input.sessionId, guidance: input.guidance, actor: ctx.actor }),
    ),
  pause: adminApiKeyProcedure
    .input(z.strictObject({ sessionId, reason: holdReason }))
    .mutation(({ ctx, input }) => pauseSession(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor })),
  message: adminApiKeyProcedure
    .input(z.strictObject({ sessionId, text: messageText }))
    .mutation(({ ctx, input }) => queueSessionMessage(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor })),
});

export const agentsRouter = router({
  pause: adminApiKeyProcedure
    .input(z.strictObject({ agent: agentName, reason: holdReason }))
    .mutation(({ ctx, input }) => pauseAgent(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor })),
  resume: adminApiKeyProcedure
    .input(z.strictObject({ agent: agentName, guidance: holdGuidance }))
    .mutation(({ ctx, input }) => resumeAgent(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor })),
});

/** The workspace's kill switch (`workspace.*`; the dashboard's own procedures are under `ws`). */
export const workspaceHoldsRouter = router({
  pause: adminApiKeyProcedure
    .input(z.strictObject({ reason: holdReason }))
    .mutation(({ ctx, input }) => pauseWorkspace(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, ...input, actor: ctx.actor })),
  resume: adminApiKeyProcedure
    .input(z.strictObject({ guidance: holdGuidance }).optional())
    .mutation(({ ctx, input }) => resumeWorkspace(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, guidance: input?.guidance, actor: ctx.actor })),
  holds: adminApiKeyProcedure.query(({ ctx }) => listHolds(ctx.db, ctx.workspaceId)),
});
