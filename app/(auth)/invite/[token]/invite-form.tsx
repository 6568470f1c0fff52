"use client";

import Link from "next/link";
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Button, Field, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { SignOutLink } from "@/components/dashboard/sign-out-link";
import { authClient, authErrorMessage } from "@/lib/auth-client";
import { errorMessage, useTRPC } from "@/lib/trpc/client";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD = 8;
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
      {accept.error && (
        <div className="callout" data-tone="danger" role="alert">
          <Icon name="alertCircle" />
          <span>{errorMessage(accept.error)}</span>
        </div>
      )}
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
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<{ name?: string; email?: string; password?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const next: typeof errors = {};
    if (!name.trim()) next.name = "Name is required";
    if (!EMAIL.test(email.trim())) next.email = "Enter a valid email address";
    if (password.length < MIN_PASSWORD) next.password = `Password must be at least ${MIN_PASSWORD} characters`;
    setErrors(next);
    if (Object.keys(next).length) return;
    setBusy(true);
    try {
      const { error } = await authClient.signUp.email({
        email: email.trim(),
        password,
        name: name.trim(),
        fetchOptions: { headers: { [INVITATION_HEADER]: token } },
      });
      if (error) {
        const msg = authErrorMessage(error);
        if (error.code === "PASSWORD_TOO_SHORT" || error.code === "PASSWORD_TOO_LONG") setErrors({ password: msg });
        else if (error.code === "INVALID_EMAIL") setErrors({ email: msg });
        else setErrors({ form: msg });
        setBusy(false);
        return;
      }
      // The new account is a member now: "/" leads to the organization's first workspace.
      window.location.assign("/");
    } catch {
      setErrors({ form: "Could not reach the server. Try again." });
      setBusy(false);
    }
  };

  return (
    <>
      <form className="form" onSubmit={onSubmit} noValidate>
        {errors.form && (
          <div className="callout" data-tone="danger" role="alert">
            <Icon name="alertCircle" />
            <span>{errors.form}</span>
          </div>
        )}
        <Field label="Name" error={errors.name} required>
          <TextInput name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} autoFocus maxLength={100} />
        </Field>
        <Field label="Email" error={errors.email} required>
          <TextInput name="email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Password" hint={`At least ${MIN_PASSWORD} characters`} error={errors.password} required>
          <TextInput name="password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <Button type="submit" variant="primary" className="btn-block" loading={busy}>
          Create account and join
        </Button>
      </form>
      <p className="text-sm muted auth-switch">
        Already have an account? <Link href={`/sign-in?next=${encodeURIComponent(`/invite/${token}`)}`}>Sign in to accept</Link>
      </p>
    </>
  );
}
