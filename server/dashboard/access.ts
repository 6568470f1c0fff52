/**
 * Access checks for dashboard Server Components (pages and layouts).
 *
 *   const { user } = await requireUser();                       // → /sign-in when signed out
 *   const page = await requireWorkspacePage(slug);              // → notFound() unless a member
 *   page.access.workspace.id, page.access.organization, page.access.role, page.permissions
 *   const org = await requireOrgPage();                         // current organization (cookie / first)
 *
 * Both are memoised per request with React `cache`, so a layout and its page share one lookup.
 */
import "server-only";
import { cookies, headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import type { Role } from "@/db/schema";
import { getRuntime } from "@/server/runtime";
import { isDatabaseUnavailable } from "@/server/http/database-unavailable";
import { DatabaseUnavailablePageError } from "@/lib/database-unavailable";
import { permissionsFor, type Permissions } from "@/server/services/roles";
import { getWorkspaceAccess, listMemberships, listWorkspaces, type WorkspaceAccess } from "@/server/services/tenancy";

export interface DashboardUser {
  id: string;
  email: string;
  name: string;
}

/** Cookie remembering the organization of the last workspace visited (for /org pages). */
const CURRENT_ORG_COOKIE = "vigil_org";

/** The signed-in user, or null. */
export const getSessionUser = cache(async (): Promise<DashboardUser | null> => {
  const runtime = await getRuntime();
  try {
    const session = await runtime.auth.api.getSession({ headers: await headers() });
    if (!session) return null;
    return { id: session.user.id, email: session.user.email, name: session.user.name };
  } catch (err) {
    // Unknown, not signed out: the page says the database is unavailable instead of asking to sign in.
    if (isDatabaseUnavailable(err)) throw new DatabaseUnavailablePageError(err);
    return null;
  }
});

/** The signed-in user; redirects to /sign-in otherwise. */
export async function requireUser(): Promise<{ user: DashboardUser }> {
  const user = await getSessionUser();
  if (!user) redirect("/sign-in");
  return { user };
}

export interface WorkspacePage {
  user: DashboardUser;
  access: WorkspaceAccess;
  role: Role;
  permissions: Permissions;
  /** Workspaces of the same organization (for the switcher). */
  orgWorkspaces: { id: string; slug: string; name: string }[];
}

/** A workspace page: signed in and a member of the workspace's organization, else 404. */
export const requireWorkspacePage = cache(async (slug: string): Promise<WorkspacePage> => {
  const { user } = await requireUser();
  const { database } = await getRuntime();
  let decoded = slug;
  try {
    decoded = decodeURIComponent(slug);
  } catch {
    notFound();
  }
  if (!decoded || decoded.length > 63) notFound();
  const access = await getWorkspaceAccess(database.db, user.id, decoded);
  if (!access) notFound();
  const orgWorkspaces = (await listWorkspaces(database.db, access.organization.id)).map((w) => ({ id: w.id, slug: w.slug, name: w.name }));
  return { user, access, role: access.role, permissions: permissionsFor(access.role), orgWorkspaces };
});

/** The workspaces of the user's other organizations, for the workspace switcher. */
export async function otherOrganizations(userId: string, currentOrganizationId: string) {
  const { database } = await getRuntime();
  const memberships = await listMemberships(database.db, userId);
  return Promise.all(
    memberships
      .filter((m) => m.organizationId !== currentOrganizationId)
      .map(async (m) => ({
        name: m.organizationName,
        workspaces: (await listWorkspaces(database.db, m.organizationId)).map((w) => ({ slug: w.slug, name: w.name })),
      })),
  );
}

export interface OrgPage {
  user: DashboardUser;
  organization: { id: string; name: string };
  role: Role;
  permissions: Permissions;
  orgWorkspaces: { id: string; slug: string; name: string }[];
  /** Every organization the user belongs to. */
  memberships: { organizationId: string; organizationName: string; role: Role }[];
}

/**
 * An organization page. The organization is the one of the last workspace visited (cookie),
 * else the user's first. A signed-in user without any organization goes to /onboarding.
 */
export const requireOrgPage = cache(async (): Promise<OrgPage> => {
  const { user } = await requireUser();
  const { database } = await getRuntime();
  const memberships = await listMemberships(database.db, user.id);
  if (memberships.length === 0) redirect("/onboarding");
  const wanted = (await cookies()).get(CURRENT_ORG_COOKIE)?.value;
  const current = memberships.find((m) => m.organizationId === wanted) ?? memberships[0];
  const orgWorkspaces = (await listWorkspaces(database.db, current.organizationId)).map((w) => ({ id: w.id, slug: w.slug, name: w.name }));
  return {
    user,
    organization: { id: current.organizationId, name: current.organizationName },
    role: current.role,
    permissions: permissionsFor(current.role),
    orgWorkspaces,
    memberships,
  };
});
