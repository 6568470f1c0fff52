/**
 * Dashboard procedures of the Policies page (mounted as `wsPolicies` and `orgPolicies`): the test
 * box — what the policies and built-in risk rules say about a call, through the same engine
 * functions as the agent API's `policies.test`, recording nothing. A valid unsaved `draft` of the
 * level being edited is tested instead of the stored one. Saves go through `wsConfig.put` /
 * `orgConfig.put` (admin, validated, audit-logged).
 */
import { z } from "zod";
import { parseConfigDocument } from "@/server/engine/config";
import type { ConfigDocument } from "@/server/engine/types";
import { testPolicies } from "@/server/dashboard/policies";
import { getConfigDocument, loadEffectiveConfig } from "@/server/services/workspace-config";
import { protectedOrgProcedure, protectedWorkspaceProcedure, router } from "../init";

const testInput = z.object({
  toolName: z.string().trim().min(1, "Enter a tool name").max(256),
  args: z.record(z.string(), z.unknown()),
  /** An unsaved snake_case document of the level being edited. */
  draft: z.unknown().optional(),
});

/** The draft when it is a valid document, else the stored one. */
function draftOr(stored: ConfigDocument, draft: unknown): { doc: ConfigDocument; draftUsed: boolean } {
  if (draft === undefined || draft === null) return { doc: stored, draftUsed: false };
  const parsed = parseConfigDocument(draft);
  return parsed.ok ? { doc: parsed.doc, draftUsed: true } : { doc: stored, draftUsed: false };
}

export const workspacePoliciesRouter = router({
  test: protectedWorkspaceProcedure("viewer")
    .input(testInput)
    .query(async ({ ctx, input }) => {
      const { workspaceDoc, orgDoc } = await loadEffectiveConfig(ctx.db, ctx.workspaceId);
      const { doc, draftUsed } = draftOr(workspaceDoc, input.draft);
      return { ...testPolicies(doc, orgDoc, input.toolName, input.args), draftUsed };
    }),
});

export const orgPoliciesRouter = router({
  /** What the organization's policies alone say (a workspace adds its own). */
  test: protectedOrgProcedure("viewer")
    .input(testInput)
    .query(async ({ ctx, input }) => {
      const stored = await getConfigDocument(ctx.db, { level: "organization", organizationId: ctx.organizationId });
      const { doc, draftUsed } = draftOr(stored, input.draft);
      return { ...testPolicies(null, doc, input.toolName, input.args), draftUsed };
    }),
});
