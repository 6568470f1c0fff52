import { z } from "zod";
import { protectedWorkspaceProcedure, router } from "../init";
import { NOTIFICATION_EVENTS, NOTIFICATION_SEVERITIES } from "@/server/notifications/events";
import {
  createChannel, deleteChannel, listChannels, listDeliveries, rotateChannelSecret, sendTestNotification, setChannelEnabled, updateChannel,
} from "@/server/services/notification-channels";

const channelFields = {
  name: z.string().trim().min(1, "Give the channel a name").max(100),
  events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1, "Choose at least one event"),
  minSeverity: z.enum(NOTIFICATION_SEVERITIES),
  quietPeriodSeconds: z.number().int().min(0).max(7 * 86400),
};
const id = z.object({ channelId: z.string().min(1).max(64) });

/** Settings → Notifications (admin edits; everyone in the workspace can read). */
export const notificationsRouter = router({
  list: protectedWorkspaceProcedure("viewer").query(({ ctx }) => listChannels(ctx.db, ctx.workspaceId)),
  create: protectedWorkspaceProcedure("admin")
    .input(z.object({ ...channelFields, type: z.enum(["webhook", "slack"]), url: z.string().trim().min(1).max(2000) }))
    .mutation(({ ctx, input }) => createChannel(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, actor: ctx.actor }, input)),
  update: protectedWorkspaceProcedure("admin")
    .input(id.extend({ ...channelFields, url: z.string().trim().min(1).max(2000).optional(), enabled: z.boolean().optional() }))
    .mutation(({ ctx, input: { channelId, ...rest } }) =>
      updateChannel(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, actor: ctx.actor }, channelId, { ...rest, type: "webhook" }),
    ),
  setEnabled: protectedWorkspaceProcedure("admin")
    .input(id.extend({ enabled: z.boolean() }))
    .mutation(({ ctx, input }) => setChannelEnabled(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, actor: ctx.actor }, input.channelId, input.enabled)),
  rotateSecret: protectedWorkspaceProcedure("admin")
    .input(id)
    .mutation(({ ctx, input }) => rotateChannelSecret(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, actor: ctx.actor }, input.channelId)),
  delete: protectedWorkspaceProcedure("admin")
    .input(id)
    .mutation(({ ctx, input }) => deleteChannel(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, actor: ctx.actor }, input.channelId)),
  sendTest: protectedWorkspaceProcedure("admin")
    .input(id.extend({ event: z.enum(NOTIFICATION_EVENTS).default("key_escalated") }))
    .mutation(({ ctx, input }) => sendTestNotification(ctx.db, { workspaceId: ctx.workspaceId, organizationId: ctx.organizationId, actor: ctx.actor }, input.channelId, undefined, input.event)),
  deliveries: protectedWorkspaceProcedure("viewer")
    .input(id.extend({ limit: z.number().int().min(1).max(100).default(20), offset: z.number().int().min(0).default(0) }))
    .query(({ ctx, input }) => listDeliveries(ctx.db, ctx.workspaceId, input.channelId, input)),
});
