/**
 * Dashboard procedures of one workspace (`ws.*`), for client-side interaction: polling and the
 * member-level actions. Read-only page data is loaded by Server Components from server/dashboard.
 * No transformer: dates are ISO strings.
 */
import { z } from "zod";
import { protectedWorkspaceProcedure, router } from "../init";
import { listPendingApprovals } from "@/server/dashboard/approvals";
import { getLiveCounts } from "@/server/dashboard/overview";
import { getCliLastEvents, getLastEvent } from "@/server/dashboard/connect";
import { resolveApproval } from "@/server/services/approvals";
import { resetKeys } from "@/server/services/key-reset";
import { setKeyState } from "@/server/services/manual-trust";
import { listHolds, pauseAgent, pauseWorkspace, resumeAgent, resumeWorkspace } from "@/server/services/holds";
import { agentName, holdGuidance, holdReason } from "./agent";

const failureKey = z.string().trim().min(1, "Failure key is required").max(2048);

export const workspaceRouter = router({
  approvals: router({
    /** Pending approvals, tool calls first (count + list with the key's recent history); polled by the shell badge and the approvals page. */
    pending: protectedWorkspaceProcedure("viewer")
      .input(z.object({ withHistory: z.boolean().optional() }))
      .query(async ({ ctx, input }) => {
        const { count, approvals } = await listPendingApprovals(ctx.db, ctx.workspaceId, { historyPerKey: input?.withHistory ? 5 : 0 });
        return { count, approvals };
      }),
    resolve: protectedWorkspaceProcedure("member")
      .input(
        z.object({
          approvalId: z.string().trim().min(1).max(128),
          decision: z.enum(["approve", "deny"]),
          comment: z.string().trim().max(2000).optional(),
          scope: z.enum(["once", "session"]).optional(),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        await resolveApproval(ctx.db, {
          workspaceId: ctx.workspaceId,
          organizationId: ctx.organizationId,
          approvalId: input.approvalId,
          decision: input.decision,
          comment: input.comment || undefined,
          scope: input.scope,
          actor: ctx.actor,
        });
        return { approvalId: input.approvalId, decision: input.decision };
      }),
  }),
  keys: router({
    /** Back to trusted: one key, or every key of the workspace (the UI confirms "reset all"). */
    reset: protectedWorkspaceProcedure("member")
      .input(z.union([z.object({ failureKey }), z.object({ all: z.literal(true) })]))
      .mutation(async ({ ctx, input }) => {
        const target = "all" in input ? { all: true as const } : { failureKey: input.failureKey };
        const { reset } = await resetKeys(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, target, actor: ctx.actor });
        return { reset };
      }),
    /** Escalate or block a key, a tool or a domain by hand (kept until a reset). */
    setState: protectedWorkspaceProcedure("member")
      .input(z.object({ failureKey, state: z.enum(["escalated", "blocked"]), reason: holdReason }))
      .mutation(({ ctx, input }) =>
        setKeyState(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, failureKey: input.failureKey, state: input.state, reason: input.reason, actor: ctx.actor }),
      ),
  }),
  /** Holds (SPEC 4.6): every session of an agent, or the whole workspace (the kill switch). */
  holds: router({
    list: protectedWorkspaceProcedure("viewer").query(({ ctx }) => listHolds(ctx.db, ctx.workspaceId)),
    pauseAgent: protectedWorkspaceProcedure("member")
      .input(z.object({ agent: agentName, reason: holdReason }))
      .mutation(({ ctx, input }) => pauseAgent(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, agent: input.agent, reason: input.reason, actor: ctx.actor })),
    resumeAgent: protectedWorkspaceProcedure("member")
      .input(z.object({ agent: agentName, guidance: holdGuidance }))
      .mutation(({ ctx, input }) => resumeAgent(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, agent: input.agent, guidance: input.guidance, actor: ctx.actor })),
    pauseWorkspace: protectedWorkspaceProcedure("member")
      .input(z.object({ reason: holdReason }))
      .mutation(({ ctx, input }) => pauseWorkspace(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, reason: input.reason, actor: ctx.actor })),
    resumeWorkspace: protectedWorkspaceProcedure("member")
      .input(z.object({ guidance: holdGuidance }))
      .mutation(({ ctx, input }) => resumeWorkspace(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, guidance: input.guidance, actor: ctx.actor })),
  }),
  overview: router({
    /** Counts for the overview tiles, polled. */
    live: protectedWorkspaceProcedure("viewer").query(({ ctx }) => getLiveCounts(ctx.db, ctx.workspaceId)),
  }),
  connect: router({
    /** The newest event received, polled by the Connect page to show a connection working. */
    lastEvent: protectedWorkspaceProcedure("viewer").query(({ ctx }) => getLastEvent(ctx.db, ctx.workspaceId)),
    /** The newest event from each coding CLI's hooks, polled by the Connect page's per-CLI checks. */
    cliLastEvents: protectedWorkspaceProcedure("viewer").query(({ ctx }) => getCliLastEvents(ctx.db, ctx.workspaceId)),
  }),
});
