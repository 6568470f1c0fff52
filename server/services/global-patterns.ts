/**
 * Global tool patterns of an organization (SPEC 6 promotion): listing for the organization page
 * and clearing by a person (audited). Detection/promotion itself is done by the ingest shell.
 */
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { globalToolPattern, workspace } from "@/db/schema";
import { writeAudit, type Actor } from "./audit";
import { notFound } from "./errors";

export interface GlobalPatternRow {
  toolName: string;
  status: "active" | "cleared";
  workspaces: Array<{ id: string; slug: string; name: string }>;
  avgFailureRate: number;
  detectedAt: string;
  clearedAt: string | null;
  clearedBy: string | null;
}

export async function listGlobalPatterns(
  db: Db,
  organizationId: string,
  opts: { includeCleared?: boolean } = {},
): Promise<GlobalPatternRow[]> {
  const conds = [eq(globalToolPattern.organizationId, organizationId)];
  if (!opts.includeCleared) conds.push(eq(globalToolPattern.status, "active"));
  const rows = await db
    .select()
    .from(globalToolPattern)
    .where(and(...conds))
    .orderBy(desc(globalToolPattern.detectedAt));
  const ids = [...new Set(rows.flatMap((r) => (Array.isArray(r.workspaceIds) ? (r.workspaceIds as string[]) : [])))];
  const wsRows = ids.length
    ? await db
        .select({ id: workspace.id, slug: workspace.slug, name: workspace.name })
        .from(workspace)
        .where(and(eq(workspace.organizationId, organizationId), inArray(workspace.id, ids)))
    : [];
  const byId = new Map(wsRows.map((w) => [w.id, w]));
  return rows.map((r) => ({
    toolName: r.toolName,
    status: r.status,
    workspaces: ((Array.isArray(r.workspaceIds) ? r.workspaceIds : []) as string[]).map(
      (id) => byId.get(id) ?? { id, slug: id, name: "(deleted workspace)" },
    ),
    avgFailureRate: r.avgFailureRate,
    detectedAt: r.detectedAt.toISOString(),
    clearedAt: r.clearedAt ? r.clearedAt.toISOString() : null,
    clearedBy: r.clearedBy,
  }));
}

/** Clears an active global pattern: `guard.check` stops answering `ask` for the tool. Audited. */
export async function clearGlobalPattern(
  db: Db,
  input: { organizationId: string; toolName: string; actor: Actor; now?: Date },
): Promise<{ toolName: string; clearedAt: string }> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(globalToolPattern)
      .where(and(eq(globalToolPattern.organizationId, input.organizationId), eq(globalToolPattern.toolName, input.toolName)))
      .for("update");
    if (!row || row.status !== "active") throw notFound(`Active global pattern for '${input.toolName}'`);
    const at = input.now ?? new Date();
    await tx
      .update(globalToolPattern)
      .set({ status: "cleared", clearedAt: at, clearedBy: input.actor.label })
      .where(and(eq(globalToolPattern.organizationId, input.organizationId), eq(globalToolPattern.toolName, input.toolName)));
    await writeAudit(tx, {
      organizationId: input.organizationId,
      actor: input.actor,
      action: "global_pattern.clear",
      target: input.toolName,
      before: { status: row.status, workspaceIds: row.workspaceIds, avgFailureRate: row.avgFailureRate },
      after: { status: "cleared" },
      at,
    });
    return { toolName: input.toolName, clearedAt: at.toISOString() };
  });
}
