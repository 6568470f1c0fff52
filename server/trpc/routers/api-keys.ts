import { z } from "zod";
import { API_KEY_SCOPES } from "@/db/schema";
import { protectedWorkspaceProcedure, router } from "../init";
import { createApiKey, listApiKeys, revokeApiKey } from "@/server/services/api-keys";

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Dashboard management of a workspace's API keys (admin role). */
export const apiKeysRouter = router({
  list: protectedWorkspaceProcedure("admin").query(async ({ ctx }) =>
    (await listApiKeys(ctx.db, ctx.workspaceId)).map((k) => ({
      ...k,
      createdAt: k.createdAt.toISOString(),
      lastUsedAt: iso(k.lastUsedAt),
      revokedAt: iso(k.revokedAt),
    })),
  ),
  create: protectedWorkspaceProcedure("admin")
    .input(z.object({ name: z.string().trim().min(1, "Give the key a name").max(100), scope: z.enum(API_KEY_SCOPES) }))
    .mutation(async ({ ctx, input }) => {
      const { key, value } = await createApiKey(ctx.db, {
        workspaceId: ctx.workspaceId,
        organizationId: ctx.organizationId,
        name: input.name,
        scope: input.scope,
        actor: ctx.actor,
      });
      // The value is returned exactly once; only its hash is stored.
      return { id: key.id, prefix: key.prefix, scope: key.scope, value };
    }),
  revoke: protectedWorkspaceProcedure("admin")
    .input(z.object({ keyId: z.string().min(1) }))
    .mutation(async ({ ctx, input }) => {
      const k = await revokeApiKey(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, keyId: input.keyId, actor: ctx.actor });
      return { id: k.id, revokedAt: iso(k.revokedAt) };
    }),
});
