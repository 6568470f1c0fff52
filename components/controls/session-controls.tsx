"use client";

/** Pause one session or every session of an agent, and lift an agent's hold (SPEC 4.6). Member role and up. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Icon } from "@/components/icons";
import { toast } from "@/components/toast";
import { useTRPC } from "@/lib/trpc/client";
import { GatedButton } from "./gated-button";
import { TextDialog } from "./text-dialog";
import "./controls.css";

export function PauseSessionButton({ slug, sessionId, canOperate, size = "sm", compact = false }: { slug: string; sessionId: string; canOperate: boolean; size?: "xs" | "sm"; compact?: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const pause = useMutation(trpc.wsConfig.sessions.pause.mutationOptions());
  return (
    <>
      <GatedButton allowed={canOperate} size={size} variant="secondary" onClick={() => setOpen(true)} aria-label={compact ? `Pause session ${sessionId}` : undefined} title={compact ? "Pause this session" : undefined}>
        <Icon name="pause" />
        {!compact && " Pause"}
      </GatedButton>
      <TextDialog
        open={open}
        onOpenChange={setOpen}
        tone="danger"
        title="Pause this session?"
        description={
          <>
            Its next <span className="mono">guard.check</span> or hook call answers <span className="mono">pause</span> with your reason, until someone resumes it.
          </>
        }
        label="Reason"
        placeholder="Looping on the same failing migration"
        required
        maxLength={1000}
        confirmLabel="Pause session"
        onSubmit={async (reason) => {
          await pause.mutateAsync({ workspaceSlug: slug, sessionId, reason });
          toast.success("Session paused", sessionId);
          router.refresh();
        }}
      />
    </>
  );
}

export function AgentHoldButton({ slug, agent, held, canOperate }: { slug: string; agent: string; held: boolean; canOperate: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const pause = useMutation(trpc.ws.holds.pauseAgent.mutationOptions());
  const resume = useMutation(trpc.ws.holds.resumeAgent.mutationOptions());
  const done = async () => {
    await qc.invalidateQueries({ queryKey: trpc.ws.holds.list.queryKey({ workspaceSlug: slug }) });
    router.refresh();
  };
  return (
    <>
      <GatedButton
        allowed={canOperate}
        size="xs"
        variant={held ? "primary" : "ghost"}
        onClick={() => setOpen(true)}
        aria-label={held ? `Resume agent ${agent}` : `Pause agent ${agent}`}
        title={held ? `Resume every session of ${agent}` : `Pause every session of ${agent}, present and future`}
      >
        <Icon name={held ? "play" : "pause"} />
        {held ? "Resume" : "Pause"}
      </GatedButton>
      {held ? (
        <TextDialog
          open={open}
          onOpenChange={setOpen}
          title={`Resume agent ${agent}?`}
          description="Its sessions' next guard.check is allowed again (a session paused on its own, or the workspace's kill switch, still holds). Guidance reaches each running session once."
          label="Guidance for the agent"
          required={false}
          maxLength={4000}
          confirmLabel="Resume agent"
          onSubmit={async (guidance) => {
            await resume.mutateAsync({ workspaceSlug: slug, agent, guidance: guidance || undefined });
            toast.success(`Agent ${agent} resumed`);
            await done();
          }}
        />
      ) : (
        <TextDialog
          open={open}
          onOpenChange={setOpen}
          tone="danger"
          title={`Pause agent ${agent}?`}
          description="Every session of this agent name, running or started later, answers pause with your reason on its next call, until someone resumes the agent."
          label="Reason"
          required
          maxLength={1000}
          confirmLabel="Pause agent"
          onSubmit={async (reason) => {
            await pause.mutateAsync({ workspaceSlug: slug, agent, reason });
            toast.success(`Agent ${agent} paused`, reason);
            await done();
          }}
        />
      )}
    </>
  );
}
