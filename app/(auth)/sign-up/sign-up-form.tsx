"use client";

import Link from "next/link";
import { useState } from "react";
import { AccountForm } from "@/components/auth/account-form";
import { CreateOrganizationForm } from "@/components/dashboard/create-org-form";

export function SignUpForm({ firstUser, startAtOrganization = false }: { firstUser: boolean; startAtOrganization?: boolean }) {
  const [step, setStep] = useState<"account" | "organization">(startAtOrganization ? "organization" : "account");
  if (step === "organization") {
    return (
      <div className="card center-card stack">
        <div className="stack stack-sm">
          <p className="auth-step subtle text-sm">Step 2 of 2</p>
          <h1 className="auth-title">Create your organization</h1>
          <p className="muted">An organization holds your team and its workspaces. You will be its owner.</p>
        </div>
        <CreateOrganizationForm submitLabel="Create and continue" />
      </div>
    );
  }

  return (
    <div className="card center-card stack">
      <div className="stack stack-sm">
        {firstUser && <p className="auth-step subtle text-sm">Welcome — set up this Vigil installation</p>}
        {!firstUser && <p className="auth-step subtle text-sm">Step 1 of 2</p>}
        <h1 className="auth-title">Create your account</h1>
        {firstUser && <p className="muted">You are the first user: you will own the first organization.</p>}
      </div>
      <AccountForm submitLabel="Create account" onCreated={() => setStep("organization")} />
      <p className="text-sm muted auth-switch">
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </div>
  );
}

/** Sign-up closed (server/signup-policy.ts): said up front; an invitation link still signs a person up. */
export function SignUpClosed() {
  return (
    <div className="card center-card stack" data-testid="signup-closed">
      <div className="stack stack-sm">
        <h1 className="auth-title">Sign-up is closed</h1>
        <p className="muted">Sign-up is closed on this server: ask an owner for an invitation. An invitation link lets you create your account.</p>
      </div>
      <p className="text-sm muted auth-switch">
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </div>
  );
}
