/** Invitations by link (server/services/invitations.ts): admins and owners create, list and revoke; anyone signed in accepts. */
import { z } from "zod";
import { ROLES } from "@/db/schema";
import { authedProcedure, protectedOrgProcedure, router } from "../init";
import {
  acceptInvitation,
  createInvitation,
  INVITATION_DEFAULT_DAYS,
  INVITATION_MAX_DAYS,
  listPendingInvitations,
  revokeInvitation,
} from "@/server/services/invitations";
import { listWorkspaces } from "@/server/services/tenancy";
import { publicOrigin } from "@/server/http/public-origin";

export const invitationsRouter = router({
  list: protectedOrgProcedure("admin").query(async ({ ctx }) =>
    (await listPendingInvitations(ctx.db, ctx.organizationId)).map((i) => ({ ...i, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() })),
  ),
  /** Returns the link's token once; only its hash is stored. */
  create: protectedOrgProcedure("admin")
    .input(
      z.object({
        role: z.enum(ROLES),
        expiresInDays: z.number().int().min(1).max(INVITATION_MAX_DAYS).default(INVITATION_DEFAULT_DAYS),
        /** Emailed the link when SMTP is configured (VIGIL_SMTP_URL); the link is returned either way. */
        email: z.string().trim().max(254).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const inv = await createInvitation(ctx.db, {
        organizationId: ctx.organizationId,
        role: input.role,
        expiresInDays: input.expiresInDays,
        inviterRole: ctx.role,
        actor: ctx.actor,
        email: input.email,
        baseUrl: publicOrigin(ctx.req),
      });
      return { id: inv.id, token: inv.token, role: inv.role, expiresAt: inv.expiresAt.toISOString(), email: inv.email };
    }),
  revoke: protectedOrgProcedure("admin")
    .input(z.object({ invitationId: z.string().min(1).max(64) }))
    .mutation(async ({ ctx, input }) => {
      await revokeInvitation(ctx.db, { organizationId: ctx.organizationId, invitationId: input.invitationId, inviterRole: ctx.role, actor: ctx.actor });
      return { revoked: true };
    }),
  accept: authedProcedure
    .input(z.object({ token: z.string().min(1).max(200) }))
    .mutation(async ({ ctx, input }) => {
      const joined = await acceptInvitation(ctx.db, { token: input.token, user: ctx.user });
      // Where the page sends them next: the organization's first workspace.
      const [first] = await listWorkspaces(ctx.db, joined.organizationId);
      return { ...joined, workspaceSlug: first?.slug ?? null };
    }),
});
