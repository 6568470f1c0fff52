"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Button, Field, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";

/** Resume a paused session, optionally with guidance the agent receives as a `guidance` nudge. */
export function ResumeSession({ workspaceSlug, sessionId, compact = false }: { workspaceSlug: string; sessionId: string; compact?: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [guidance, setGuidance] = useState("");
  const resume = useMutation(trpc.wsConfig.sessions.resume.mutationOptions());
  return (
    <>
      <Button variant="primary" size={compact ? "xs" : "sm"} onClick={() => setOpen(true)} aria-label={compact ? `Resume session ${sessionId}` : undefined}>
        <Icon name="play" /> Resume
      </Button>
      <ConfirmDialog
        open={open}
        onOpenChange={(o) => {
          setOpen(o);
          if (!o) resume.reset();
        }}
        title="Resume this session?"
        description="The agent's next guard.check is allowed again. Guidance, if you write any, is returned to the agent as a guidance nudge on its next call."
        confirmLabel="Resume session"
        onConfirm={async () => {
          try {
            await resume.mutateAsync({ workspaceSlug, sessionId, guidance: guidance.trim() || undefined });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success("Session resumed", guidance.trim() ? "Your guidance will reach the agent on its next call." : undefined);
          setGuidance("");
          router.refresh();
        }}
      >
        <Field label="Guidance for the agent" optional hint="For example: “Stop re-reading the config; write the migration file now.”">
          <Textarea rows={4} value={guidance} maxLength={4000} onChange={(e) => setGuidance(e.target.value)} />
        </Field>
      </ConfirmDialog>
    </>
  );
}
