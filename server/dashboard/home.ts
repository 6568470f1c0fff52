/** Where `/` and the auth pages send a visitor. */
import "server-only";
import { asc, eq, sql } from "drizzle-orm";
import { user, workspace } from "@/db/schema";
import { getRuntime } from "@/server/runtime";
import { listMemberships } from "@/server/services/tenancy";
import type { DashboardUser } from "./access";

export async function countUsers(): Promise<number> {
  const { database } = await getRuntime();
  const [row] = await database.db.select({ n: sql<number>`count(*)::int` }).from(user);
  return row?.n ?? 0;
}

/** The landing path of a signed-in user: their first workspace, else org pages, else onboarding. */
export async function homePathFor(u: DashboardUser): Promise<string> {
  const { database } = await getRuntime();
  const memberships = await listMemberships(database.db, u.id);
  if (memberships.length === 0) return "/onboarding";
  for (const m of memberships) {
    const [ws] = await database.db
      .select({ slug: workspace.slug })
      .from(workspace)
      .where(eq(workspace.organizationId, m.organizationId))
      .orderBy(asc(workspace.createdAt))
      .limit(1);
    if (ws) return `/w/${ws.slug}/overview`;
  }
  return "/org/workspaces";
}
