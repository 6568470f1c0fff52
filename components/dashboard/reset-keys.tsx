"use client";

/** Reset one key (→ trusted) or every key of the workspace (typed confirmation "RESET"). Member role and up. */
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Button } from "@/components/form";
import { Icon } from "@/components/icons";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";

export function ResetKeyButton({ slug, failureKey, state, size = "sm" }: { slug: string; failureKey: string; state: string; size?: "sm" | "md" }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const reset = useMutation(trpc.ws.keys.reset.mutationOptions());
  return (
    <>
      <Button size={size} variant={state === "blocked" ? "danger" : "secondary"} onClick={() => setOpen(true)}>
        <Icon name="refresh" />
        Reset
      </Button>
      <ConfirmDialog
        open={open}
        onOpenChange={setOpen}
        title="Reset this key?"
        tone={state === "blocked" ? "danger" : "primary"}
        confirmLabel="Reset to trusted"
        description={
          <>
            <span className="mono">{failureKey}</span> goes back to <strong>trusted</strong> and its counters are cleared. Agents can call it
            again without approval. The reset is written to the audit log.
          </>
        }
        onConfirm={async () => {
          try {
            await reset.mutateAsync({ workspaceSlug: slug, failureKey });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success("Key reset", failureKey);
          router.refresh();
        }}
      />
    </>
  );
}

export function ResetAllButton({ slug, count }: { slug: string; count: number }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const reset = useMutation(trpc.ws.keys.reset.mutationOptions());
  return (
    <>
      <Button size="sm" variant="danger" onClick={() => setOpen(true)} disabled={count === 0} title={count === 0 ? "Every key is trusted" : undefined}>
        <Icon name="refresh" />
        Reset all…
      </Button>
      <ConfirmDialog
        open={open}
        onOpenChange={setOpen}
        title="Reset every key in this workspace?"
        tone="danger"
        confirmLabel="Reset all keys"
        confirmText="RESET"
        description={
          <>
            All {count.toLocaleString("en-US")} escalated, recovering and blocked keys (including domain- and tool-level states) go back to
            trusted with cleared counters. This cannot be undone.
          </>
        }
        onConfirm={async () => {
          let res;
          try {
            res = await reset.mutateAsync({ workspaceSlug: slug, all: true });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success(`Reset ${res.reset.length} key${res.reset.length === 1 ? "" : "s"}`);
          router.refresh();
        }}
      />
    </>
  );
}
