"use client";

/** Organization members: owners change roles and remove members (people join by invitation link). */
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { DataTable, type Column } from "@/components/data-table";
import { Button, Select } from "@/components/form";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { RoleBadge } from "@/components/state-badge";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";

export type MemberItem = { userId: string; email: string; name: string; role: string; joinedAt: string };

const SHORT_ROLE_OPTIONS = [
  { value: "viewer", label: "Viewer" },
  { value: "member", label: "Member" },
  { value: "admin", label: "Admin" },
  { value: "owner", label: "Owner" },
];
type RoleName = "owner" | "admin" | "member" | "viewer";

export function MembersManager({
  organizationId,
  members,
  currentUserId,
  canManage,
}: {
  organizationId: string;
  members: MemberItem[];
  currentUserId: string;
  canManage: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const setRole = useMutation(trpc.organization.setMemberRole.mutationOptions());
  const remove = useMutation(trpc.organization.removeMember.mutationOptions());
  const [removing, setRemoving] = useState<MemberItem | null>(null);
  const [pendingRole, setPendingRole] = useState<string | null>(null);

  const changeRole = async (m: MemberItem, role: string) => {
    if (role === m.role) return;
    setPendingRole(m.userId);
    try {
      await setRole.mutateAsync({ organizationId, userId: m.userId, role: role as RoleName });
      toast.success("Role changed", `${m.email} is now ${role}`);
      router.refresh();
    } catch (err) {
      toast.error("Could not change the role", errorMessage(err));
      router.refresh();
    } finally {
      setPendingRole(null);
    }
  };

  const columns: Column<MemberItem>[] = [
    {
      id: "who",
      header: "Member",
      minWidth: 220,
      cell: (m) => (
        <span className="stack" style={{ gap: 2, minWidth: 0 }}>
          <span className="strong truncate">
            {m.name || m.email}
            {m.userId === currentUserId && <span className="subtle"> (you)</span>}
          </span>
          <span className="text-sm muted truncate">{m.email}</span>
        </span>
      ),
    },
    {
      id: "role",
      header: "Role",
      width: canManage ? 150 : 110,
      cell: (m) =>
        canManage ? (
          <Select
            size="sm"
            aria-label={`Role of ${m.email}`}
            value={m.role}
            disabled={pendingRole === m.userId}
            onChange={(e) => changeRole(m, e.target.value)}
            options={SHORT_ROLE_OPTIONS}
          />
        ) : (
          <RoleBadge role={m.role} />
        ),
    },
    { id: "joined", header: "Joined", align: "right", width: 110, cell: (m) => <RelativeTime date={m.joinedAt} /> },
  ];
  if (canManage) {
    columns.push({
      id: "actions",
      header: <span className="sr-only">Actions</span>,
      align: "right",
      width: 60,
      cell: (m) => {
        // The server refuses to remove the last owner too (tenancy.removeMember); say why here first.
        const lastOwner = m.role === "owner" && members.filter((x) => x.role === "owner").length <= 1;
        const button = (
          <Button
            size="sm"
            variant="ghost"
            iconOnly
            aria-label={`Remove ${m.email}`}
            title={lastOwner ? undefined : "Remove from organization"}
            disabled={lastOwner}
            aria-describedby={lastOwner ? `last-owner-${m.userId}` : undefined}
            onClick={() => setRemoving(m)}
          >
            <Icon name="x" />
          </Button>
        );
        return lastOwner ? (
          <span title="The last owner cannot be removed: make someone else an owner first" data-testid="last-owner-remove">
            {button}
            <span id={`last-owner-${m.userId}`} className="sr-only">
              The last owner cannot be removed: make someone else an owner first
            </span>
          </span>
        ) : (
          button
        );
      },
    });
  }

  return (
    <div className="stack stack-lg">
      <DataTable label="Members" columns={columns} rows={members} rowKey={(m) => m.userId} maxHeight="none" />
      <ConfirmDialog
        open={removing !== null}
        onOpenChange={(o) => !o && setRemoving(null)}
        title="Remove this member?"
        tone="danger"
        confirmLabel="Remove"
        description={
          removing && (
            <>
              <strong>{removing.email}</strong> loses access to every workspace of this organization. Their account stays; you can add them
              again later.
            </>
          )
        }
        onConfirm={async () => {
          if (!removing) return;
          try {
            await remove.mutateAsync({ organizationId, userId: removing.userId });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success("Member removed", removing.email);
          if (removing.userId === currentUserId) window.location.assign("/");
          else router.refresh();
        }}
      />
    </div>
  );
}
