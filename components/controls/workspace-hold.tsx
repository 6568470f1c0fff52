"use client";

/**
 * The kill switch (SPEC 4.6): the top bar's "Pause all agents" and, while the workspace is held,
 * a banner on every workspace page with the reason, who pulled it, since when and a Resume button.
 * Both read one polled query, so a switch pulled in another tab shows here within seconds.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { toast } from "@/components/toast";
import { useTRPC } from "@/lib/trpc/client";
import { GatedButton } from "./gated-button";
import { TextDialog } from "./text-dialog";
import { useWorkspaceHolds, type HoldsView } from "./use-holds";
import "./controls.css";

type Props = { slug: string; canOperate: boolean; initial: HoldsView };

function useResumeWorkspace(slug: string) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const { queryKey } = useWorkspaceHolds(slug, { workspace: null, agents: [] });
  const m = useMutation(trpc.ws.holds.resumeWorkspace.mutationOptions());
  return async (guidance: string) => {
    const r = await m.mutateAsync({ workspaceSlug: slug, guidance: guidance || undefined });
    await qc.invalidateQueries({ queryKey });
    toast.success("Agents resumed", r.guidance ? `Guidance queued for ${r.sessionsGuided} running session${r.sessionsGuided === 1 ? "" : "s"}.` : undefined);
    router.refresh();
  };
}

export function KillSwitch({ slug, canOperate, initial }: Props) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const router = useRouter();
  const { holds, queryKey } = useWorkspaceHolds(slug, initial);
  const [open, setOpen] = useState(false);
  const pause = useMutation(trpc.ws.holds.pauseWorkspace.mutationOptions());
  const resume = useResumeWorkspace(slug);
  const held = holds.workspace;
  return (
    <>
      {held ? (
        <GatedButton allowed={canOperate} size="sm" variant="primary" onClick={() => setOpen(true)} data-testid="kill-switch">
          <Icon name="play" /> Resume agents
        </GatedButton>
      ) : (
        <GatedButton allowed={canOperate} size="sm" variant="danger" onClick={() => setOpen(true)} data-testid="kill-switch" title="Pause every agent of this workspace now" aria-label="Pause all agents">
          <Icon name="pause" /> <span className="controls-kill-label">Pause all agents</span>
        </GatedButton>
      )}
      {held ? (
        <TextDialog
          open={open}
          onOpenChange={setOpen}
          title="Resume every agent?"
          description="Their next guard.check is allowed again (an agent or session paused on its own stays paused). Guidance, if you write any, reaches every running session once, on its next call."
          label="Guidance for the agents"
          hint="For example: “The deploy is fixed; carry on, but do not touch production.”"
          required={false}
          maxLength={4000}
          confirmLabel="Resume agents"
          onSubmit={resume}
        />
      ) : (
        <TextDialog
          open={open}
          onOpenChange={setOpen}
          tone="danger"
          title="Pause every agent in this workspace?"
          description={
            <>
              Every session, running or new, gets <span className="mono">pause</span> with your reason on its next{" "}
              <span className="mono">guard.check</span> or hook call, until someone resumes. The action is written to the audit log.
            </>
          }
          label="Reason"
          hint="Agents and your team see it."
          placeholder="Incident: agents are writing to the production database"
          required
          maxLength={1000}
          confirmLabel="Pause all agents"
          onSubmit={async (reason) => {
            await pause.mutateAsync({ workspaceSlug: slug, reason });
            await qc.invalidateQueries({ queryKey });
            toast.success("Every agent is paused", reason);
            router.refresh();
          }}
        />
      )}
    </>
  );
}

export function WorkspaceHoldBanner({ slug, canOperate, initial }: Props) {
  const { holds } = useWorkspaceHolds(slug, initial);
  const [open, setOpen] = useState(false);
  const resume = useResumeWorkspace(slug);
  const held = holds.workspace;
  if (!held) return null;
  return (
    <div className="callout controls-banner" data-tone="danger" role="status" aria-live="polite" data-testid="workspace-hold-banner">
      <Icon name="pause" />
      <div className="controls-banner-text">
        <strong>Every agent in this workspace is paused.</strong> <span className="controls-banner-reason">{held.reason}</span>
        <div className="text-sm muted">
          By {held.by} · <RelativeTime date={held.since} /> · each <span className="mono">guard.check</span> answers <span className="mono">pause</span>
        </div>
      </div>
      <GatedButton allowed={canOperate} size="sm" variant="secondary" onClick={() => setOpen(true)}>
        <Icon name="play" /> Resume…
      </GatedButton>
      <TextDialog
        open={open}
        onOpenChange={setOpen}
        title="Resume every agent?"
        description="Their next guard.check is allowed again (an agent or session paused on its own stays paused). Guidance, if you write any, reaches every running session once, on its next call."
        label="Guidance for the agents"
        required={false}
        maxLength={4000}
        confirmLabel="Resume agents"
        onSubmit={resume}
      />
    </div>
  );
}
