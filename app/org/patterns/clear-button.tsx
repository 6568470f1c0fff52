"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Button } from "@/components/form";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";

export function ClearGlobalPattern({ organizationId, toolName }: { organizationId: string; toolName: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const clear = useMutation(trpc.orgConfig.globalPatterns.clear.mutationOptions());
  return (
    <>
      <Button size="xs" variant="secondary" onClick={() => setOpen(true)} aria-label={`Clear global pattern ${toolName}`}>
        Clear
      </Button>
      <ConfirmDialog
        open={open}
        onOpenChange={setOpen}
        title={`Clear the global pattern for “${toolName}”?`}
        description="guard.check stops asking for approval of this tool in every workspace (each workspace's own trust states still apply)."
        confirmLabel="Clear pattern"
        onConfirm={async () => {
          try {
            await clear.mutateAsync({ organizationId, toolName });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success(`Global pattern for ${toolName} cleared`);
          router.refresh();
        }}
      />
    </>
  );
}
