import type { ReactNode } from "react";
import { DashboardShell } from "@/components/dashboard/workspace-shell";
import { requireOrgPage } from "@/server/dashboard/access";

export const dynamic = "force-dynamic";

export default async function OrganizationLayout({ children }: { children: ReactNode }) {
  const page = await requireOrgPage();
  return (
    <DashboardShell
      org={page.organization}
      workspaces={page.orgWorkspaces.map((w) => ({ slug: w.slug, name: w.name }))}
      currentWorkspace={null}
      user={{ email: page.user.email, role: page.role }}
    >
      {children}
    </DashboardShell>
  );
}
