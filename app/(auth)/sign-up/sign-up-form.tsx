"use client";

import Link from "next/link";
import { useState, type FormEvent } from "react";
import { Button, Field, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { CreateOrganizationForm } from "@/components/dashboard/create-org-form";
import { authClient, authErrorMessage } from "@/lib/auth-client";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD = 8;

export function SignUpForm({ firstUser, startAtOrganization = false }: { firstUser: boolean; startAtOrganization?: boolean }) {
  const [step, setStep] = useState<"account" | "organization">(startAtOrganization ? "organization" : "account");
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
      const { error } = await authClient.signUp.email({ email: email.trim(), password, name: name.trim() });
      if (error) {
        const msg = authErrorMessage(error);
        if (error.code === "PASSWORD_TOO_SHORT" || error.code === "PASSWORD_TOO_LONG") setErrors({ password: msg });
        else if (error.code?.startsWith("USER_ALREADY_EXISTS") || error.code === "INVALID_EMAIL") setErrors({ email: msg });
        else setErrors({ form: msg });
        return;
      }
      setStep("organization");
    } catch {
      setErrors({ form: "Could not reach the server. Try again." });
    } finally {
      setBusy(false);
    }
  };

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
        <Field label="Password" hint={errors.password ? undefined : `At least ${MIN_PASSWORD} characters`} error={errors.password} required>
          <TextInput name="password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <Button type="submit" variant="primary" className="btn-block" loading={busy}>
          Create account
        </Button>
      </form>
      <p className="text-sm muted auth-switch">
        Already have an account? <Link href="/sign-in">Sign in</Link>
      </p>
    </div>
  );
}
