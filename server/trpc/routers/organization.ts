import { z } from "zod";
import { ROLES } from "@/db/schema";
import { protectedOrgProcedure, router } from "../init";
import {
  changeMemberRole,
  createWorkspace,
  listMembers,
  listWorkspaces,
  removeMember,
} from "@/server/services/tenancy";

const role = z.enum(ROLES);

export const organizationRouter = router({
  workspaces: protectedOrgProcedure("viewer").query(({ ctx }) => listWorkspaces(ctx.db, ctx.organizationId)),
  createWorkspace: protectedOrgProcedure("admin")
    .input(z.object({ slug: z.string().trim(), name: z.string().trim().max(100).optional() }))
    .mutation(async ({ ctx, input }) => {
      const ws = await createWorkspace(ctx.db, { organizationId: ctx.organizationId, slug: input.slug, name: input.name, actor: ctx.actor });
      return { slug: ws.slug, name: ws.name };
    }),
  members: protectedOrgProcedure("viewer").query(({ ctx }) => listMembers(ctx.db, ctx.organizationId)),
  // No "add by email": it told any owner whether an email has an account and made that person a
  // member without asking. People join through invitations (invitations.create, then accept).
  setMemberRole: protectedOrgProcedure("owner")
    .input(z.object({ userId: z.string().min(1), role }))
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, { organizationId: ctx.organizationId, userId: input.userId, role: input.role, actor: ctx.actor })),
  removeMember: protectedOrgProcedure("owner")
    .input(z.object({ userId: z.string().min(1) }))
    .mutation(({ ctx, input }) => removeMember(ctx.db, { organizationId: ctx.organizationId, userId: input.userId, actor: ctx.actor })),
});
