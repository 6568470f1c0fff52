"use client";

import { useState, type ReactNode } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Field, Textarea } from "@/components/form";
import { errorMessage } from "@/lib/trpc/client";

/**
 * A confirmation that asks for a text: a required reason (pausing, blocking) or optional guidance
 * (resuming). The text is trimmed; a required one left blank is refused in the dialog.
 */
export function TextDialog({
  open,
  onOpenChange,
  title,
  description,
  label,
  hint,
  placeholder,
  required,
  maxLength,
  tone = "primary",
  confirmLabel,
  onSubmit,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description: ReactNode;
  label: string;
  hint?: ReactNode;
  placeholder?: string;
  required: boolean;
  maxLength: number;
  tone?: "primary" | "danger";
  confirmLabel: string;
  /** Throws to keep the dialog open with the error shown. */
  onSubmit: (text: string) => Promise<void>;
  children?: ReactNode;
}) {
  const [text, setText] = useState("");
  return (
    <ConfirmDialog
      open={open}
      onOpenChange={(o) => {
        onOpenChange(o);
        if (!o) setText("");
      }}
      title={title}
      tone={tone}
      description={description}
      confirmLabel={confirmLabel}
      onConfirm={async () => {
        const value = text.trim();
        if (required && !value) throw new Error(`${label}: give one — it is shown to the agent and kept in the audit log.`);
        try {
          await onSubmit(value);
        } catch (err) {
          throw new Error(errorMessage(err));
        }
        setText("");
      }}
    >
      <Field label={label} required={required} optional={!required} hint={hint}>
        <Textarea rows={3} value={text} maxLength={maxLength} placeholder={placeholder} onChange={(e) => setText(e.target.value)} autoFocus />
      </Field>
      {children}
    </ConfirmDialog>
  );
}
