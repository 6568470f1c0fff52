"use client";

import Link from "next/link";
import { useMutation } from "@tanstack/react-query";
import { AccountForm } from "@/components/auth/account-form";
import { Button, FormError } from "@/components/form";
import { RelativeTime } from "@/components/relative-time";
import { SignOutLink } from "@/components/dashboard/sign-out-link";
import { errorMessage, useTRPC } from "@/lib/trpc/client";

/** Must match INVITATION_HEADER in server/services/invitations.ts (a server module). */
const INVITATION_HEADER = "x-vigil-invitation";

export function InviteForm({
  token,
  organizationName,
  role,
  expiresAt,
  signedInAs,
}: {
  token: string;
  organizationName: string;
  role: string;
  expiresAt: string;
  signedInAs: string | null;
}) {
  const intro = (
    <div className="stack stack-sm">
      <p className="auth-step subtle text-sm">Invitation</p>
      <h1 className="auth-title">Join {organizationName}</h1>
      <p className="muted">
        You are invited as <span className="strong">{role}</span>. The link expires <RelativeTime date={expiresAt} /> and works once.
      </p>
    </div>
  );
  return (
    <div className="card center-card stack">
      {intro}
      {signedInAs ? <AcceptAsSignedIn token={token} organizationName={organizationName} role={role} email={signedInAs} /> : <SignUpWithInvitation token={token} />}
    </div>
  );
}

function AcceptAsSignedIn({ token, organizationName, role, email }: { token: string; organizationName: string; role: string; email: string }) {
  const trpc = useTRPC();
  const accept = useMutation(trpc.invitations.accept.mutationOptions());
  return (
    <>
      <FormError message={accept.error ? errorMessage(accept.error) : null} />
      <p className="text-sm">
        Signed in as <span className="strong">{email}</span>.
      </p>
      <Button
        variant="primary"
        className="btn-block"
        loading={accept.isPending}
        onClick={async () => {
          try {
            const joined = await accept.mutateAsync({ token });
            window.location.assign(joined.workspaceSlug ? `/w/${joined.workspaceSlug}/overview` : "/");
          } catch {
            /* shown above */
          }
        }}
      >
        Join {organizationName} as {role}
      </Button>
      <p className="text-sm muted auth-switch">
        Not you? <SignOutLink />
      </p>
    </>
  );
}

function SignUpWithInvitation({ token }: { token: string }) {
  return (
    <>
      {/* The new account is a member now: "/" leads to the organization's first workspace. */}
      <AccountForm submitLabel="Create account and join" headers={{ [INVITATION_HEADER]: token }} onCreated={() => window.location.assign("/")} />
      <p className="text-sm muted auth-switch">
        Already have an account? <Link href={`/sign-in?next=${encodeURIComponent(`/invite/${token}`)}`}>Sign in to accept</Link>
      </p>
    </>
  );
}
