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
import { GatedButton } from "@/components/controls/gated-button";

/** A domain- or tool-level state over the key that is not trusted, with what it stops. */
export interface BlockingLevel {
  failureKey: string;
  state: string;
  keys: number;
  stoppedCalls: number;
  stoppedAgents: number;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/**
 * Reset one key (→ trusted). Under a domain or tool level that is not trusted, the key's reset alone
 * does not let agents call it: the dialog names the level, what it stops, and offers to reset it too.
 */
export function ResetKeyButton({
  slug,
  failureKey,
  state,
  size = "sm",
  levels = [],
  canOperate = true,
}: {
  slug: string;
  failureKey: string;
  state: string;
  size?: "sm" | "md";
  levels?: BlockingLevel[];
  /** False for a viewer: the button shows, disabled, with the reason. */
  canOperate?: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [withLevels, setWithLevels] = useState(true);
  const reset = useMutation(trpc.ws.keys.reset.mutationOptions());
  const strict = levels.some((l) => l.state === "blocked") ? "blocked" : (levels[0]?.state ?? null);
  const clearsAll = levels.length === 0 || withLevels;
  return (
    <>
      <GatedButton allowed={canOperate} size={size} variant={state === "blocked" ? "danger" : "secondary"} onClick={() => setOpen(true)}>
        <Icon name="refresh" />
        Reset
      </GatedButton>
      <ConfirmDialog
        open={open}
        onOpenChange={(o) => {
          setOpen(o);
          if (o) setWithLevels(true);
        }}
        title={levels.length ? "Reset this key and its level?" : "Reset this key?"}
        tone={state === "blocked" || strict === "blocked" ? "danger" : "primary"}
        confirmLabel={levels.length && withLevels ? `Reset key and ${levels.length === 1 ? "level" : "levels"}` : "Reset key to trusted"}
        description={
          <>
            <span className="mono">{failureKey}</span> goes back to <strong>trusted</strong> and its counters are cleared.{" "}
            {clearsAll ? (
              <>Agents can call it again without approval.</>
            ) : (
              <>
                <strong>Agents still cannot call it freely</strong>: it stays {strict} while{" "}
                {levels.map((l, i) => (
                  <span key={l.failureKey}>
                    {i > 0 && " and "}
                    <span className="mono">{l.failureKey}</span>
                  </span>
                ))}{" "}
                {levels.length === 1 ? "is" : "are"} {strict}.
              </>
            )}{" "}
            Every reset is written to the audit log.
          </>
        }
        onConfirm={async () => {
          const keys = [failureKey, ...(withLevels ? levels.map((l) => l.failureKey) : [])];
          try {
            for (const k of keys) await reset.mutateAsync({ workspaceSlug: slug, failureKey: k });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success(keys.length > 1 ? `Reset ${keys.length} states` : "Key reset", keys.join(", "));
          router.refresh();
        }}
      >
        {levels.length > 0 && (
          <div className="callout" data-tone={strict === "blocked" ? "danger" : "warning"} data-testid="reset-level-reach">
            <Icon name="alertCircle" />
            <div className="stack stack-sm">
              {levels.map((l) => (
                <div key={l.failureKey}>
                  <span className="mono">{l.failureKey}</span> is <strong>{l.state}</strong>: it covers {plural(l.keys, "key")} and since then stopped{" "}
                  {plural(l.stoppedCalls, "call")} from {plural(l.stoppedAgents, "agent")}.
                </div>
              ))}
              <label className="row" style={{ gap: 8 }}>
                <input type="checkbox" checked={withLevels} onChange={(e) => setWithLevels(e.target.checked)} />
                <span>
                  Also reset {levels.length === 1 ? <span className="mono">{levels[0].failureKey}</span> : "these levels"} to trusted (every key under it
                  that is not {strict} itself becomes callable)
                </span>
              </label>
            </div>
          </div>
        )}
      </ConfirmDialog>
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
