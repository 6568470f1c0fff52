import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { CreateOrganizationForm } from "@/components/dashboard/create-org-form";
import { SignOutLink } from "@/components/dashboard/sign-out-link";
import { requireUser } from "@/server/dashboard/access";
import { homePathFor } from "@/server/dashboard/home";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Create an organization" };

/** A signed-in user without an organization creates one (and its first workspace). */
export default async function OnboardingPage() {
  const { user } = await requireUser();
  const home = await homePathFor(user);
  if (home !== "/onboarding") redirect(home);
  return (
    <div className="card center-card stack">
      <div className="stack stack-sm">
        <h1 className="auth-title">Create your organization</h1>
        <p className="muted">
          Signed in as <span className="strong">{user.email}</span>. You are not a member of any organization yet: create one, or ask an
          owner of an existing organization to add you.
        </p>
      </div>
      <CreateOrganizationForm />
      <p className="text-sm muted auth-switch">
        Not you? <SignOutLink />
      </p>
    </div>
  );
}
