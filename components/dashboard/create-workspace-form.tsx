"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { Button, Field, FormError, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { toast } from "@/components/toast";
import { errorMessage, fieldErrors, useTRPC } from "@/lib/trpc/client";
import { SLUG_HINT, validateSlug } from "./create-org-form";

/** Admin+: a new workspace in the current organization. */
export function CreateWorkspaceForm({ organizationId }: { organizationId: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<{ slug?: string; name?: string; form?: string }>({});
  const create = useMutation(trpc.organization.createWorkspace.mutationOptions());

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const slugError = validateSlug(slug.trim());
    setErrors(slugError ? { slug: slugError } : {});
    if (slugError) return;
    try {
      const ws = await create.mutateAsync({ organizationId, slug: slug.trim(), name: name.trim() || undefined });
      toast.success("Workspace created", ws.slug);
      setSlug("");
      setName("");
      router.refresh();
    } catch (err) {
      const fe = fieldErrors(err);
      setErrors({ slug: fe.slug, name: fe.name, form: fe.slug || fe.name ? undefined : errorMessage(err) });
    }
  };

  return (
    <form className="form" onSubmit={onSubmit} noValidate style={{ maxWidth: "none" }}>
      <FormError message={errors.form} />
      <div className="form-row">
        <Field label="Slug" hint={SLUG_HINT} error={errors.slug} required>
          <TextInput name="slug" mono value={slug} maxLength={63} placeholder="staging" autoCapitalize="off" spellCheck={false} onChange={(e) => setSlug(e.target.value.toLowerCase())} />
        </Field>
        <Field label="Display name" optional error={errors.name} hint="Defaults to the slug">
          <TextInput name="name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
        </Field>
      </div>
      <div className="form-actions">
        <Button type="submit" variant="primary" loading={create.isPending}>
          <Icon name="plus" />
          Create workspace
        </Button>
      </div>
    </form>
  );
}
