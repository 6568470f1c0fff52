import { z } from "zod";
import { authedProcedure, apiKeyProcedure, router } from "../init";
import { createOrganization, createWorkspace, listMemberships, listWorkspaces } from "@/server/services/tenancy";

export const accountRouter = router({
  /** The signed-in user with their organizations and workspaces. */
  me: authedProcedure.query(async ({ ctx }) => {
    const memberships = await listMemberships(ctx.db, ctx.user.id);
    const organizations = await Promise.all(
      memberships.map(async (m) => ({
        id: m.organizationId,
        name: m.organizationName,
        role: m.role,
        workspaces: (await listWorkspaces(ctx.db, m.organizationId)).map((w) => ({ slug: w.slug, name: w.name })),
      })),
    );
    return { user: ctx.user, organizations };
  }),

  /** First step after sign-up: a new organization owned by the user, with its first workspace. */
  createOrganization: authedProcedure
    .input(
      z.object({
        name: z.string().trim().min(1, "Organization name is required").max(100),
        workspaceSlug: z.string().trim(),
        workspaceName: z.string().trim().max(100).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      return ctx.db.transaction(async (tx) => {
        const org = await createOrganization(tx, { name: input.name, ownerUserId: ctx.user.id, actor: ctx.actor });
        const ws = await createWorkspace(tx, {
          organizationId: org.id,
          slug: input.workspaceSlug,
          name: input.workspaceName,
          actor: ctx.actor,
        });
        return { organizationId: org.id, workspaceSlug: ws.slug };
      });
    }),

  /** For agents: which workspace does this key belong to? */
  whoami: apiKeyProcedure.query(({ ctx }) => ({
    workspace: ctx.apiKey.workspaceSlug,
    scope: ctx.apiKey.scope,
    keyPrefix: ctx.apiKey.prefix,
  })),
});
