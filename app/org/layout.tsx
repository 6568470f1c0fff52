import type { ReactNode } from "react";
import { cookies } from "next/headers";
import { DashboardShell } from "@/components/dashboard/workspace-shell";
import { otherOrganizations, requireOrgPage } from "@/server/dashboard/access";

export const dynamic = "force-dynamic";

export default async function OrganizationLayout({ children }: { children: ReactNode }) {
  const page = await requireOrgPage();
  // The workspace visited last, when it belongs to this organization: its nav stays available.
  const last = (await cookies()).get("vigil_ws")?.value;
  const current = page.orgWorkspaces.some((w) => w.slug === last) ? last! : null;
  return (
    <DashboardShell
      org={page.organization}
      workspaces={page.orgWorkspaces.map((w) => ({ slug: w.slug, name: w.name }))}
      currentWorkspace={current}
      user={{ email: page.user.email, role: page.role }}
      otherOrganizations={await otherOrganizations(page.user.id, page.organization.id)}
    >
      {children}
    </DashboardShell>
  );
}
