import type { ReactNode } from "react";
import { DashboardShell } from "@/components/dashboard/workspace-shell";
import { otherOrganizations, requireWorkspacePage } from "@/server/dashboard/access";
import { countPendingApprovals } from "@/server/dashboard/approvals";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";

export default async function WorkspaceLayout({ children, params }: { children: ReactNode; params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const { database } = await getRuntime();
  const pending = await countPendingApprovals(database.db, page.access.workspace.id);
  return (
    <DashboardShell
      org={page.access.organization}
      workspaces={page.orgWorkspaces.map((w) => ({ slug: w.slug, name: w.name }))}
      currentWorkspace={page.access.workspace.slug}
      user={{ email: page.user.email, role: page.role }}
      otherOrganizations={await otherOrganizations(page.user.id, page.access.organization.id)}
      initialApprovalsCount={pending}
    >
      {children}
    </DashboardShell>
  );
}
