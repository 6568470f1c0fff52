import { z } from "zod";
import { ROLES } from "@/db/schema";
import { protectedOrgProcedure, router } from "../init";
import {
  addMemberByEmail,
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
  addMember: protectedOrgProcedure("owner")
    .input(z.object({ email: z.email("Enter a valid email address"), role }))
    .mutation(({ ctx, input }) => addMemberByEmail(ctx.db, { organizationId: ctx.organizationId, email: input.email, role: input.role, actor: ctx.actor })),
  setMemberRole: protectedOrgProcedure("owner")
    .input(z.object({ userId: z.string().min(1), role }))
    .mutation(({ ctx, input }) => changeMemberRole(ctx.db, { organizationId: ctx.organizationId, userId: input.userId, role: input.role, actor: ctx.actor })),
  removeMember: protectedOrgProcedure("owner")
    .input(z.object({ userId: z.string().min(1) }))
    .mutation(({ ctx, input }) => removeMember(ctx.db, { organizationId: ctx.organizationId, userId: input.userId, actor: ctx.actor })),
});
