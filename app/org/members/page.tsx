import type { Metadata } from "next";
import { InvitationsManager } from "@/components/dashboard/invitations-manager";
import { MembersManager } from "@/components/dashboard/members-manager";
import { PageHeader } from "@/components/page-header";
import { requireOrgPage } from "@/server/dashboard/access";
import { getBaseUrl } from "@/server/dashboard/base-url";
import { listPendingInvitations } from "@/server/services/invitations";
import { smtpSettings } from "@/server/services/invitation-email";
import { getRuntime } from "@/server/runtime";
import { listMembers } from "@/server/services/tenancy";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Members" };

export default async function OrgMembersPage() {
  const page = await requireOrgPage();
  const { db } = (await getRuntime()).database;
  const members = await listMembers(db, page.organization.id);
  // Admins and owners invite by link; owners alone may invite owners.
  const canInvite = page.permissions.canConfigure;
  const invitations = canInvite ? await listPendingInvitations(db, page.organization.id) : [];
  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Members"
        description={
          page.permissions.canManageMembers
            ? `People in ${page.organization.name} and their roles.`
            : `People in ${page.organization.name} and their roles. Only owners can change or remove members${canInvite ? "; admins can invite by link" : ""}.`
        }
      />
      <MembersManager
        organizationId={page.organization.id}
        members={members.map((m) => ({ ...m, joinedAt: m.joinedAt.toISOString() }))}
        currentUserId={page.user.id}
        canManage={page.permissions.canManageMembers}
      />
      {canInvite && (
        <InvitationsManager
          organizationId={page.organization.id}
          invitations={invitations.map((i) => ({ ...i, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() }))}
          baseUrl={await getBaseUrl()}
          canInviteOwners={page.permissions.canManageMembers}
          emailEnabled={smtpSettings() !== null}
        />
      )}
    </div>
  );
}
