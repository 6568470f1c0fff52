import type { ReactNode } from "react";
import { DashboardShell } from "@/components/dashboard/workspace-shell";
import { otherOrganizations, requireWorkspacePage } from "@/server/dashboard/access";
import { countPendingApprovals } from "@/server/dashboard/approvals";
import { getRuntime } from "@/server/runtime";
import { KillSwitch, WorkspaceHoldBanner } from "@/components/controls/workspace-hold";
import { listHolds } from "@/server/services/holds";
import { WatchModeBanner } from "@/components/policies/watch-banner";

export const dynamic = "force-dynamic";

export default async function WorkspaceLayout({ children, params }: { children: ReactNode; params: Promise<{ slug: string }> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const { database } = await getRuntime();
  const pending = await countPendingApprovals(database.db, page.access.workspace.id);
  const holds = await listHolds(database.db, page.access.workspace.id);
  const hold = { slug, canOperate: page.permissions.canOperate, initial: holds };
  return (
    <DashboardShell
      org={page.access.organization}
      workspaces={page.orgWorkspaces.map((w) => ({ slug: w.slug, name: w.name }))}
      currentWorkspace={page.access.workspace.slug}
      user={{ email: page.user.email, role: page.role }}
      otherOrganizations={await otherOrganizations(page.user.id, page.access.organization.id)}
      initialApprovalsCount={pending}
      topbarActions={<KillSwitch {...hold} />}
    >
      <WorkspaceHoldBanner {...hold} />
      <WatchModeBanner workspaceId={page.access.workspace.id} slug={page.access.workspace.slug} />
      {children}
    </DashboardShell>
  );
}
