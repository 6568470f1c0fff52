import type { Metadata } from "next";
import { MembersManager } from "@/components/dashboard/members-manager";
import { PageHeader } from "@/components/page-header";
import { requireOrgPage } from "@/server/dashboard/access";
import { getRuntime } from "@/server/runtime";
import { listMembers } from "@/server/services/tenancy";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Members" };

export default async function OrgMembersPage() {
  const page = await requireOrgPage();
  const { db } = (await getRuntime()).database;
  const members = await listMembers(db, page.organization.id);
  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Members"
        description={
          page.permissions.canManageMembers
            ? `People in ${page.organization.name} and their roles.`
            : `People in ${page.organization.name} and their roles. Only owners can add, change or remove members.`
        }
      />
      <MembersManager
        organizationId={page.organization.id}
        members={members.map((m) => ({ ...m, joinedAt: m.joinedAt.toISOString() }))}
        currentUserId={page.user.id}
        canManage={page.permissions.canManageMembers}
      />
    </div>
  );
}
