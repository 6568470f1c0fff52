"use client";

/** Escalate or block a key, a tool or a domain by hand (keys.setState): kept until a reset. Member role and up. */
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Icon } from "@/components/icons";
import { toast } from "@/components/toast";
import { useTRPC } from "@/lib/trpc/client";
import { GatedButton } from "./gated-button";
import { TextDialog } from "./text-dialog";

export function SetKeyStateButtons({ slug, failureKey, state, manual, canOperate }: { slug: string; failureKey: string; state: string; manual: boolean; canOperate: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [target, setTarget] = useState<"escalated" | "blocked" | null>(null);
  const set = useMutation(trpc.ws.keys.setState.mutationOptions());
  const escalatable = !(state === "blocked" || (state === "escalated" && manual));
  return (
    <>
      {escalatable && (
        <GatedButton allowed={canOperate} size="md" variant="secondary" onClick={() => setTarget("escalated")}>
          <Icon name="alert" /> Escalate…
        </GatedButton>
      )}
      {!(state === "blocked" && manual) && (
        <GatedButton allowed={canOperate} size="md" variant="secondary" onClick={() => setTarget("blocked")}>
          <Icon name="ban" /> Block…
        </GatedButton>
      )}
      <TextDialog
        open={target !== null}
        onOpenChange={(o) => !o && setTarget(null)}
        tone={target === "blocked" ? "danger" : "primary"}
        title={target === "blocked" ? "Block this by hand?" : "Escalate this by hand?"}
        description={
          <>
            <span className="mono">{failureKey}</span> becomes <strong>{target}</strong> (marked manual):{" "}
            {target === "blocked" ? "its calls are answered as blocked" : "agents must ask before calling it"}
            {failureKey.startsWith("@") ? ", and so is every key under it" : ""}. Vigil&apos;s own transitions leave it so until someone resets it.
          </>
        }
        label="Reason"
        placeholder="The staging database is being migrated"
        required
        maxLength={1000}
        confirmLabel={target === "blocked" ? "Block" : "Escalate"}
        onSubmit={async (reason) => {
          await set.mutateAsync({ workspaceSlug: slug, failureKey, state: target!, reason });
          toast.success(target === "blocked" ? "Blocked by hand" : "Escalated by hand", failureKey);
          router.refresh();
        }}
      />
    </>
  );
}
