/** The audit log helper every mutation uses: who did what to which target, before → after. */
import type { Db, Tx } from "@/db/client";
import { auditLog } from "@/db/schema";

export type Actor =
  | { type: "user"; id: string; label: string }
  | { type: "api_key"; id: string; label: string }
  | { type: "system"; id: null; label: string };

export const SYSTEM_ACTOR: Actor = { type: "system", id: null, label: "system" };

export interface AuditEntry {
  organizationId: string;
  workspaceId?: string | null;
  actor: Actor;
  action: string;
  target?: string | null;
  before?: unknown;
  after?: unknown;
  at?: Date;
}

export async function writeAudit(db: Db | Tx, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values({
    organizationId: entry.organizationId,
    workspaceId: entry.workspaceId ?? null,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    actorLabel: entry.actor.label,
    action: entry.action,
    target: entry.target ?? null,
    before: entry.before === undefined ? null : entry.before,
    after: entry.after === undefined ? null : entry.after,
    ...(entry.at ? { createdAt: entry.at } : {}),
  });
}
