"use client";

import { useState, type FormEvent } from "react";
import { Button, Field, FormError, TextInput } from "@/components/form";
import { authClient, authErrorMessage } from "@/lib/auth-client";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD = 8;

type AccountErrors = { name?: string; email?: string; password?: string; form?: string };

/**
 * Name, email and password with the checks the server makes, for both ways to create an account:
 * the sign-up page and an invitation link (which sends its token in `headers`). Calls `onCreated`
 * once the account exists and its session cookie is set; the form stays busy while the page moves on.
 */
export function AccountForm({ submitLabel, headers, onCreated }: { submitLabel: string; headers?: Record<string, string>; onCreated: () => void }) {
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [errors, setErrors] = useState<AccountErrors>({});
  const [busy, setBusy] = useState(false);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const next: AccountErrors = {};
    if (!name.trim()) next.name = "Name is required";
    if (!EMAIL.test(email.trim())) next.email = "Enter a valid email address";
    if (password.length < MIN_PASSWORD) next.password = `Password must be at least ${MIN_PASSWORD} characters`;
    setErrors(next);
    if (Object.keys(next).length) return;
    setBusy(true);
    try {
      const { error } = await authClient.signUp.email({ email: email.trim(), password, name: name.trim(), ...(headers ? { fetchOptions: { headers } } : {}) });
      if (error) {
        const msg = authErrorMessage(error);
        if (error.code === "PASSWORD_TOO_SHORT" || error.code === "PASSWORD_TOO_LONG") setErrors({ password: msg });
        else if (error.code === "INVALID_EMAIL") setErrors({ email: msg });
        else setErrors({ form: msg });
        setBusy(false);
        return;
      }
      onCreated();
    } catch {
      setErrors({ form: "Could not reach the server. Try again." });
      setBusy(false);
    }
  };

  return (
    <form className="form" onSubmit={onSubmit} noValidate>
      <FormError message={errors.form} />
      <Field label="Name" error={errors.name} required>
        <TextInput name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} autoFocus maxLength={100} />
      </Field>
      <Field label="Email" error={errors.email} required>
        <TextInput name="email" type="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      {/* The hint gives way to the error: the same rule is not said twice. */}
      <Field label="Password" hint={errors.password ? undefined : `At least ${MIN_PASSWORD} characters`} error={errors.password} required>
        <TextInput name="password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
      </Field>
      <Button type="submit" variant="primary" className="btn-block" loading={busy}>
        {submitLabel}
      </Button>
    </form>
  );
}
