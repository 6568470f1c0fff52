import type { Metadata } from "next";
import Link from "next/link";
import { Icon } from "@/components/icons";
import { getSessionUser } from "@/server/dashboard/access";
import { homePathFor } from "@/server/dashboard/home";
import { getRuntime } from "@/server/runtime";
import { inspectInvitation, invitationProblem } from "@/server/services/invitations";
import { getMembership } from "@/server/services/tenancy";
import { InviteForm } from "./invite-form";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Invitation", robots: { index: false, follow: false } };

/** An invitation link: join the organization by signing up (even while sign-up is closed) or signing in. */
export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token: raw } = await params;
  let token = "";
  try {
    token = decodeURIComponent(raw);
  } catch {
    /* not a token: "unknown" below */
  }
  const { database } = await getRuntime();
  const [view, user] = await Promise.all([inspectInvitation(database.db, token), getSessionUser()]);

  if (view.status !== "pending") {
    const problem = invitationProblem(view.status);
    return (
      <div className="card center-card stack" data-testid="invitation-problem" data-status={view.status}>
        <div className="stack stack-sm">
          <h1 className="auth-title">{problem.title}</h1>
          <p className="muted">{problem.message}</p>
        </div>
        <div className="callout" data-tone="warning">
          <Icon name="alert" />
          <span>Invitation links work once, until they expire, and an admin can revoke them.</span>
        </div>
        <p className="text-sm muted auth-switch">
          {user ? (
            <Link href={await homePathFor(user)}>Go to your dashboard</Link>
          ) : (
            <>
              Have an account? <Link href="/sign-in">Sign in</Link>
            </>
          )}
        </p>
      </div>
    );
  }

  const already = user ? await getMembership(database.db, user.id, view.organizationId!) : null;
  if (user && already) {
    // Leave the link for the person it was meant for.
    return (
      <div className="card center-card stack" data-testid="invitation-already-member">
        <div className="stack stack-sm">
          <h1 className="auth-title">You are already in {view.organizationName}</h1>
          <p className="muted">
            Signed in as <span className="strong">{user.email}</span> ({already.role}). This link stays unused for the person it was meant for.
          </p>
        </div>
        <p className="text-sm muted auth-switch">
          <Link href={await homePathFor(user)}>Go to your dashboard</Link>
        </p>
      </div>
    );
  }

  return (
    <InviteForm
      token={token}
      organizationName={view.organizationName!}
      role={view.role!}
      expiresAt={view.expiresAt!.toISOString()}
      signedInAs={user?.email ?? null}
    />
  );
}
