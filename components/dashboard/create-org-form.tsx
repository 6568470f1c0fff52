"use client";

/** Organization name + first workspace slug → `account.createOrganization`, then into the workspace. */
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Button, Field, FormError, TextInput } from "@/components/form";
import { errorMessage, fieldErrors, useTRPC } from "@/lib/trpc/client";

const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;
export const SLUG_HINT = "2–63 characters: lowercase letters, digits and '-'. Agents post to this workspace.";

function slugify(s: string): string {
  return s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);
}

export function validateSlug(slug: string): string | undefined {
  if (!slug) return "Workspace slug is required";
  if (!SLUG_PATTERN.test(slug)) return "Use 2–63 lowercase letters, digits or '-', starting with a letter or digit";
  return undefined;
}

export function CreateOrganizationForm({ submitLabel = "Create organization" }: { submitLabel?: string }) {
  const trpc = useTRPC();
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [slugTouched, setSlugTouched] = useState(false);
  const [errors, setErrors] = useState<{ name?: string; slug?: string; form?: string }>({});
  const create = useMutation(trpc.account.createOrganization.mutationOptions());

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const next: typeof errors = {};
    if (!name.trim()) next.name = "Organization name is required";
    const slugError = validateSlug(slug.trim());
    if (slugError) next.slug = slugError;
    setErrors(next);
    if (next.name || next.slug) return;
    try {
      const res = await create.mutateAsync({ name: name.trim(), workspaceSlug: slug.trim() });
      window.location.assign(`/w/${res.workspaceSlug}/overview`);
    } catch (err) {
      const fe = fieldErrors(err);
      setErrors({
        name: fe.name,
        slug: fe.slug ?? fe.workspaceSlug,
        form: fe.name || fe.slug || fe.workspaceSlug ? undefined : errorMessage(err),
      });
    }
  };

  return (
    <form className="form" onSubmit={onSubmit} noValidate>
      <FormError message={errors.form} />
      <Field label="Organization name" error={errors.name} required>
        <TextInput
          name="organization"
          autoComplete="organization"
          value={name}
          maxLength={100}
          onChange={(e) => {
            setName(e.target.value);
            if (!slugTouched) setSlug(slugify(e.target.value));
          }}
          autoFocus
        />
      </Field>
      <Field label="First workspace slug" hint={SLUG_HINT} error={errors.slug} required>
        <TextInput
          name="workspaceSlug"
          mono
          value={slug}
          maxLength={63}
          placeholder="production"
          autoCapitalize="off"
          spellCheck={false}
          onChange={(e) => {
            setSlugTouched(true);
            setSlug(e.target.value.toLowerCase());
          }}
        />
      </Field>
      <Button type="submit" variant="primary" className="btn-block" loading={create.isPending}>
        {submitLabel}
      </Button>
    </form>
  );
}
