"use client";

import Link from "next/link";
import { useState, type FormEvent } from "react";
import { Button, Field, FormError, TextInput } from "@/components/form";
import { authClient, authErrorMessage } from "@/lib/auth-client";
import { sameOriginNext } from "./same-origin-next";

export function SignInForm({ next, signupOpen = true }: { next?: string; signupOpen?: boolean }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<{ email?: string; password?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const nextErrors: typeof errors = {};
    if (!email.trim()) nextErrors.email = "Email is required";
    if (!password) nextErrors.password = "Password is required";
    setErrors(nextErrors);
    if (Object.keys(nextErrors).length) return;
    setBusy(true);
    try {
      const { error } = await authClient.signIn.email({ email: email.trim(), password });
      if (error) {
        setErrors({ form: authErrorMessage(error) });
        setBusy(false);
        return;
      }
      // Full navigation: the server components read the fresh session cookie.
      window.location.assign(sameOriginNext(next, window.location.origin));
    } catch {
      setErrors({ form: "Could not reach the server. Try again." });
      setBusy(false);
    }
  };

  return (
    <div className="card center-card stack">
      <div className="stack stack-sm">
        <h1 className="auth-title">Sign in</h1>
        <p className="muted">to your Vigil dashboard</p>
      </div>
      <form className="form" onSubmit={onSubmit} noValidate>
        <FormError message={errors.form} />
        <Field label="Email" error={errors.email}>
          <TextInput name="email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        </Field>
        <Field label="Password" error={errors.password}>
          <TextInput name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <Button type="submit" variant="primary" className="btn-block" loading={busy}>
          Sign in
        </Button>
      </form>
      {signupOpen ? (
        <p className="text-sm muted auth-switch">
          No account yet? <Link href="/sign-up">Create one</Link>
        </p>
      ) : (
        <p className="text-sm muted auth-switch" data-testid="signup-closed-note">
          No account yet? Sign-up is closed on this server: ask an owner for an invitation.
        </p>
      )}
    </div>
  );
}
