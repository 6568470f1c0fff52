/**
 * Dashboard procedures of the workspace configuration (mounted as `wsConfig`): the configuration
 * document (get / validated put), the "which rule applies" preview, effective settings with their
 * sources, and session actions (timeline paging, resume). Dates are ISO strings (no transformer).
 */
import { z } from "zod";
import { parseConfigDocument, toSnakeDocument } from "@/server/engine/config";
import { describeRuleResolution } from "@/server/engine/rules";
import { resolveSettings } from "@/server/engine/settings";
import type { ConfigDocument } from "@/server/engine/types";
import { sessionTimeline } from "@/server/dashboard/sessions-data";
import { resumeSession } from "@/server/services/sessions";
import { pauseSession } from "@/server/services/holds";
import { queueSessionMessage } from "@/server/services/pending-nudges";
import { holdReason, messageText } from "./agent";
import { loadEffectiveConfig, putConfigDocument } from "@/server/services/workspace-config";
import { protectedWorkspaceProcedure, router } from "../init";

const ruleQuery = z.object({
  toolName: z.string().trim().min(1, "Enter a tool name").max(256),
  pluginName: z.string().trim().max(256).optional(),
  domain: z.string().trim().max(253).optional(),
  /** An unsaved snake_case document to preview instead of the stored workspace level. */
  draft: z.unknown().optional(),
});

/** A draft document for previews: used when valid, otherwise the stored one. */
function draftOr(stored: ConfigDocument, draft: unknown): { doc: ConfigDocument; draftUsed: boolean } {
  if (draft === undefined || draft === null) return { doc: stored, draftUsed: false };
  const parsed = parseConfigDocument(draft);
  return parsed.ok ? { doc: parsed.doc, draftUsed: true } : { doc: stored, draftUsed: false };
}

export const configRouter = router({
  /** Both levels' documents (snake_case, as stored by put) and whether the caller may edit. */
  get: protectedWorkspaceProcedure("viewer").query(async ({ ctx }) => {
    const { workspaceDoc, orgDoc } = await loadEffectiveConfig(ctx.db, ctx.workspaceId);
    return {
      document: toSnakeDocument(workspaceDoc),
      organizationDocument: toSnakeDocument(orgDoc),
      canEdit: ctx.permissions.canConfigure,
    };
  }),

  /** Replaces the workspace level with a whole snake_case document (validated; nothing partial). */
  put: protectedWorkspaceProcedure("admin")
    .input(z.object({ document: z.unknown() }))
    .mutation(async ({ ctx, input }) => {
      const document = await putConfigDocument(ctx.db, {
        level: "workspace",
        workspaceId: ctx.workspaceId,
        organizationId: ctx.organizationId,
        document: input.document,
        actor: ctx.actor,
      });
      return { document };
    }),

  explainRule: protectedWorkspaceProcedure("viewer")
    .input(ruleQuery)
    .query(async ({ ctx, input }) => {
      const { workspaceDoc, orgDoc } = await loadEffectiveConfig(ctx.db, ctx.workspaceId);
      const { doc, draftUsed } = draftOr(workspaceDoc, input.draft);
      const explanation = describeRuleResolution(doc, orgDoc, {
        toolName: input.toolName,
        pluginName: input.pluginName || null,
        domain: input.domain || null,
      });
      return { ...explanation, draftUsed };
    }),

  /** Every setting's effective value and source, plus each level's own values. */
  effectiveSettings: protectedWorkspaceProcedure("viewer").query(async ({ ctx }) => {
    const { workspaceDoc, orgDoc } = await loadEffectiveConfig(ctx.db, ctx.workspaceId);
    return {
      settings: resolveSettings(null, workspaceDoc.settings ?? null, orgDoc.settings ?? null),
      workspace: workspaceDoc.settings ?? {},
      organization: orgDoc.settings ?? {},
    };
  }),

  sessions: router({
    /** One page of a session's timeline (oldest first); `before` is the cursor of the previous page. */
    timeline: protectedWorkspaceProcedure("viewer")
      .input(
        z.object({
          sessionId: z.string().min(1).max(128),
          before: z.object({ seq: z.number().int(), ts: z.string().min(1).max(64) }).nullish(),
          limit: z.number().int().min(10).max(500).optional(),
        }),
      )
      .query(({ ctx, input }) =>
        sessionTimeline(ctx.db, { workspaceId: ctx.workspaceId, sessionId: input.sessionId, before: input.before, limit: input.limit }),
      ),

    /** Resumes a paused session; optional guidance reaches the agent as a `guidance` nudge. */
    resume: protectedWorkspaceProcedure("member")
      .input(
        z.object({
          sessionId: z.string().min(1).max(128),
          guidance: z.string().trim().max(4000, "Guidance is limited to 4000 characters").optional(),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        await resumeSession(ctx.db, {
          workspaceId: ctx.workspaceId,
          organizationId: ctx.organizationId,
          sessionId: input.sessionId,
          guidance: input.guidance ? input.guidance : undefined,
          actor: ctx.actor,
        });
        return { sessionId: input.sessionId, resumed: true as const };
      }),

    /** Pauses a running session: its next check answers `pause` with the reason. */
    pause: protectedWorkspaceProcedure("member")
      .input(z.object({ sessionId: z.string().min(1).max(128), reason: holdReason }))
      .mutation(({ ctx, input }) =>
        pauseSession(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, sessionId: input.sessionId, reason: input.reason, actor: ctx.actor }),
      ),

    /** A message for the running agent, delivered once as a `guidance` nudge on its next call. */
    message: protectedWorkspaceProcedure("member")
      .input(z.object({ sessionId: z.string().min(1).max(128), text: messageText }))
      .mutation(({ ctx, input }) =>
        queueSessionMessage(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, sessionId: input.sessionId, text: input.text, actor: ctx.actor }),
      ),
  }),
});
