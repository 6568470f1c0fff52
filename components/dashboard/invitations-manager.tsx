"use client";

/** Invitations by link (admins and owners): create a link with a role and an expiry (shown once), list and revoke pending ones. */
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { DataTable, type Column } from "@/components/data-table";
import { Button, Field, FormError, Select, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { RoleBadge } from "@/components/state-badge";
import { toast } from "@/components/toast";
import { errorMessage, fieldErrors, useTRPC } from "@/lib/trpc/client";

export type InvitationItem = { id: string; role: string; createdByLabel: string; createdAt: string; expiresAt: string };
type RoleName = "owner" | "admin" | "member" | "viewer";

const ROLE_OPTIONS: { value: RoleName; label: string }[] = [
  { value: "viewer", label: "Viewer — read only" },
  { value: "member", label: "Member — approve, reset, resume" },
  { value: "admin", label: "Admin — settings, rules, API keys" },
  { value: "owner", label: "Owner — everything, members" },
];
const EXPIRY_OPTIONS = [
  { value: "1", label: "1 day" },
  { value: "3", label: "3 days" },
  { value: "7", label: "7 days" },
  { value: "14", label: "14 days" },
  { value: "30", label: "30 days" },
];

export function InvitationsManager({
  organizationId,
  invitations,
  baseUrl,
  canInviteOwners,
  emailEnabled = false,
}: {
  organizationId: string;
  invitations: InvitationItem[];
  baseUrl: string;
  canInviteOwners: boolean;
  /** SMTP is configured (VIGIL_SMTP_URL): the form takes an address to email the link to. */
  emailEnabled?: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const create = useMutation(trpc.invitations.create.mutationOptions());
  const revoke = useMutation(trpc.invitations.revoke.mutationOptions());
  const [role, setRole] = useState<RoleName>("member");
  const [days, setDays] = useState("7");
  const [email, setEmail] = useState("");
  type EmailStatus = { sent: true; to: string } | { sent: false; to: string; reason: string } | null;
  const [created, setCreated] = useState<{ link: string; role: string; expiresAt: string; email: EmailStatus } | null>(null);
  const [copied, setCopied] = useState(false);
  const [revoking, setRevoking] = useState<InvitationItem | null>(null);
  const errs = fieldErrors(create.error);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      const r = await create.mutateAsync({ organizationId, role, expiresInDays: Number(days), ...(emailEnabled && email.trim() ? { email: email.trim() } : {}) });
      setCreated({ link: `${baseUrl}/invite/${r.token}`, role: r.role, expiresAt: r.expiresAt, email: r.email });
      setEmail("");
      setCopied(false);
      router.refresh();
    } catch {
      /* shown below the form */
    }
  };

  const columns: Column<InvitationItem>[] = [
    { id: "role", header: "Role", width: 96, cell: (i) => <RoleBadge role={i.role} /> },
    {
      id: "by",
      header: "Created",
      cell: (i) => (
        <span className="stack" style={{ gap: 2, minWidth: 0 }}>
          <span className="truncate" title={i.createdByLabel}>
            {i.createdByLabel}
          </span>
          <span className="text-sm muted">
            <RelativeTime date={i.createdAt} />
          </span>
        </span>
      ),
    },
    { id: "expires", header: "Expires", align: "right", width: 84, cell: (i) => <RelativeTime date={i.expiresAt} /> },
    {
      id: "actions",
      header: <span className="sr-only">Actions</span>,
      align: "right",
      width: 76,
      cell: (i) =>
        i.role === "owner" && !canInviteOwners ? null : (
          <Button size="xs" variant="ghost" onClick={() => setRevoking(i)} aria-label={`Revoke the ${i.role} invitation created by ${i.createdByLabel}`}>
            Revoke
          </Button>
        ),
    },
  ];

  return (
    <Section
      id="invitations"
      title="Invitations"
      description="A link lets one person join this organization with a role — by signing up, even while sign-up is closed, or by signing in. Links work once and expire."
    >
      <div className="stack">
        {created && (
          <div className="callout" data-tone="warning" role="status" data-testid="new-invitation">
            <Icon name="alert" />
            <div className="stack stack-sm" style={{ minWidth: 0, flex: 1 }}>
              {created.email && (
                <span data-testid="invitation-email-status">
                  {created.email.sent ? (
                    <>
                      <Icon name="check" /> Emailed to <strong>{created.email.to}</strong>.
                    </>
                  ) : (
                    <>
                      Email not sent: {created.email.reason}; share the link.
                    </>
                  )}
                </span>
              )}
              <strong>Copy this {created.role} invitation link now — you won’t see it again.</strong>
              <code className="code dash2-key-value" data-testid="invitation-link">
                {created.link}
              </code>
              <div className="row row-wrap">
                <Button
                  size="sm"
                  variant="primary"
                  onClick={async () => {
                    try {
                      await navigator.clipboard.writeText(created.link);
                      setCopied(true);
                    } catch {
                      toast.error("Could not copy", "Select the link and copy it instead.");
                    }
                  }}
                >
                  <Icon name={copied ? "check" : "copy"} />
                  {copied ? "Copied" : "Copy link"}
                </Button>
                <Button size="sm" variant="ghost" onClick={() => setCreated(null)}>
                  Done
                </Button>
              </div>
              <span className="text-sm muted">
                Send it to the person you invite. It expires <RelativeTime date={created.expiresAt} />; only a hash of it is stored.
              </span>
            </div>
          </div>
        )}
        <form className="card card-body stack" noValidate onSubmit={onSubmit}>
          {emailEnabled && (
            <Field label="Email the link to" optional hint="Leave empty for a link only." error={errs.email}>
              <TextInput type="email" name="invite-email" autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} placeholder="name@example.com" />
            </Field>
          )}
          <div className="dash2-key-form">
            <Field label="Role" error={errs.role}>
              <Select
                name="invite-role"
                value={role}
                onChange={(e) => setRole(e.target.value as RoleName)}
                options={ROLE_OPTIONS.filter((o) => canInviteOwners || o.value !== "owner")}
              />
            </Field>
            <Field label="Expires after" error={errs.expiresInDays}>
              <Select name="invite-expiry" value={days} onChange={(e) => setDays(e.target.value)} options={EXPIRY_OPTIONS} />
            </Field>
            <Button type="submit" variant="primary" loading={create.isPending}>
              <Icon name="plus" />
              Create invitation link
            </Button>
          </div>
        </form>
        <FormError message={create.error && !errs.role && !errs.expiresInDays && !errs.email ? errorMessage(create.error) : null} />
        <DataTable
          label="Pending invitations"
          columns={columns}
          rows={invitations}
          rowKey={(i) => i.id}
          maxHeight="none"
          empty={<span className="muted">No pending invitations.</span>}
        />
      </div>
      <ConfirmDialog
        open={revoking !== null}
        onOpenChange={(o) => !o && setRevoking(null)}
        title="Revoke this invitation?"
        tone="danger"
        confirmLabel="Revoke"
        description={revoking && <>The {revoking.role} link stops working at once. Anyone who opens it is told it was revoked.</>}
        onConfirm={async () => {
          if (!revoking) return;
          try {
            await revoke.mutateAsync({ organizationId, invitationId: revoking.id });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success("Invitation revoked", `${revoking.role} link`);
          router.refresh();
        }}
      />
    </Section>
  );
}
