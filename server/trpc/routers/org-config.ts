/**
 * Organization-level configuration (mounted as `orgConfig`): the organization defaults document,
 * its rule preview and settings, and the organization's global tool patterns.
 */
import { z } from "zod";
import { parseConfigDocument, toSnakeDocument } from "@/server/engine/config";
import { describeRuleResolution } from "@/server/engine/rules";
import { resolveSettings } from "@/server/engine/settings";
import { hasRole } from "@/server/services/roles";
import { clearGlobalPattern, listGlobalPatterns } from "@/server/services/global-patterns";
import { getConfigDocument, putConfigDocument } from "@/server/services/workspace-config";
import { protectedOrgProcedure, router } from "../init";

export const orgConfigRouter = router({
  get: protectedOrgProcedure("viewer").query(async ({ ctx }) => {
    const doc = await getConfigDocument(ctx.db, { level: "organization", organizationId: ctx.organizationId });
    return { document: toSnakeDocument(doc), organizationDocument: null, canEdit: hasRole(ctx.role, "admin") };
  }),

  put: protectedOrgProcedure("admin")
    .input(z.object({ document: z.unknown() }))
    .mutation(async ({ ctx, input }) => {
      const document = await putConfigDocument(ctx.db, {
        level: "organization",
        organizationId: ctx.organizationId,
        document: input.document,
        actor: ctx.actor,
      });
      return { document };
    }),

  /** What a workspace without rules of its own would use. */
  explainRule: protectedOrgProcedure("viewer")
    .input(
      z.object({
        toolName: z.string().trim().min(1, "Enter a tool name").max(256),
        pluginName: z.string().trim().max(256).optional(),
        domain: z.string().trim().max(253).optional(),
        draft: z.unknown().optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      let doc = await getConfigDocument(ctx.db, { level: "organization", organizationId: ctx.organizationId });
      let draftUsed = false;
      if (input.draft !== undefined && input.draft !== null) {
        const parsed = parseConfigDocument(input.draft);
        if (parsed.ok) {
          doc = parsed.doc;
          draftUsed = true;
        }
      }
      const explanation = describeRuleResolution({}, doc, {
        toolName: input.toolName,
        pluginName: input.pluginName || null,
        domain: input.domain || null,
      });
      return { ...explanation, draftUsed };
    }),

  effectiveSettings: protectedOrgProcedure("viewer").query(async ({ ctx }) => {
    const doc = await getConfigDocument(ctx.db, { level: "organization", organizationId: ctx.organizationId });
    return { settings: resolveSettings(null, null, doc.settings ?? null), workspace: {}, organization: doc.settings ?? {} };
  }),

  globalPatterns: router({
    list: protectedOrgProcedure("viewer")
      .input(z.object({ includeCleared: z.boolean().optional() }))
      .query(({ ctx, input }) => listGlobalPatterns(ctx.db, ctx.organizationId, { includeCleared: input.includeCleared })),
    clear: protectedOrgProcedure("admin")
      .input(z.object({ toolName: z.string().min(1).max(256) }))
      .mutation(({ ctx, input }) => clearGlobalPattern(ctx.db, { organizationId: ctx.organizationId, toolName: input.toolName, actor: ctx.actor })),
  }),
});
