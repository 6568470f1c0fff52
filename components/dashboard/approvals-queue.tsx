"use client";

/**
 * Pending recoveries (tool calls are in ToolCallQueue), polled every 5 s (`ws.approvals.pending` with history). Members approve or
 * deny with an optional comment; viewers only read.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { Button, Field, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { RelativeTime } from "@/components/relative-time";
import { SeverityBadge, StateBadge } from "@/components/state-badge";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";
import type { PendingApproval } from "@/server/dashboard/approvals";
import { RecoveryMeter } from "./key-status";
import { StateTimeline } from "./state-timeline";

const APPROVALS_QUEUE_POLL_MS = 5_000;

export function ApprovalsQueue({
  slug,
  initial,
  canOperate,
}: {
  slug: string;
  initial: { count: number; approvals: PendingApproval[] };
  canOperate: boolean;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const q = useQuery(
    trpc.ws.approvals.pending.queryOptions(
      { workspaceSlug: slug, withHistory: true },
      { initialData: initial, refetchInterval: APPROVALS_QUEUE_POLL_MS, staleTime: 2_000 },
    ),
  );
  const all = q.data ?? initial;
  // Waiting tool calls have their own live list (ToolCallQueue); this one is the recoveries and the agents' reset requests.
  const recoveries = all.approvals.filter((a) => a.kind === "recovery" || a.kind === "reset");
  const data = { count: all.count - (all.approvals.length - recoveries.length), approvals: recoveries };

  // When the queue changes (someone else resolved one, or a new one arrived) refresh the history below.
  const ids = data.approvals.map((a) => a.id).join(",");
  const lastIds = useRef(ids);
  useEffect(() => {
    if (lastIds.current !== ids) {
      lastIds.current = ids;
      router.refresh();
    }
  }, [ids, router]);

  if (data.approvals.length === 0) {
    return (
      <EmptyState
        bordered
        icon="checkCircle"
        title="No pending recoveries"
        description="In ask mode, a key that completes its recovery waits here for a person to approve it. New requests appear automatically."
      />
    );
  }
  return (
    <div className="stack">
      {data.count > data.approvals.length && (
        <p className="text-sm muted">
          Showing the oldest {data.approvals.length} of {data.count} pending recoveries.
        </p>
      )}
      <ul className="approval-list">
        {data.approvals.map((a) => (
          <li key={a.id}>
            <ApprovalCard slug={slug} approval={a} canOperate={canOperate} />
          </li>
        ))}
      </ul>
    </div>
  );
}

function ApprovalCard({ slug, approval: a, canOperate }: { slug: string; approval: PendingApproval; canOperate: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [decision, setDecision] = useState<"approve" | "deny" | null>(null);
  const [comment, setComment] = useState("");
  const resolve = useMutation(trpc.ws.approvals.resolve.mutationOptions());
  const h = a.history;

  const submit = async () => {
    if (!decision) return;
    try {
      await resolve.mutateAsync({ workspaceSlug: slug, approvalId: a.id, decision, comment: comment.trim() || undefined });
    } catch (err) {
      throw new Error(errorMessage(err));
    }
    if (a.kind === "reset") toast.success(decision === "approve" ? "Reset approved — key is trusted" : "Reset denied — the agent reads your comment", a.failureKey);
    else toast.success(decision === "approve" ? "Recovery approved — key is trusted" : "Recovery denied — key escalated again", a.failureKey);
    setComment("");
    await queryClient.invalidateQueries({ queryKey: trpc.ws.approvals.pending.pathKey() });
    router.refresh();
  };

  return (
    <article className="card approval-card" aria-label={a.kind === "reset" ? `Reset requested for ${a.failureKey}` : `Pending recovery of ${a.failureKey}`}>
      {a.kind === "reset" && <p className="text-sm">An agent asks for this key to be reset: {a.reason ?? "no reason given"}</p>}
      <div className="card-head">
        <div className="stack" style={{ gap: 4, minWidth: 0 }}>
          <Link href={`/w/${slug}/tools/${encodeURIComponent(a.failureKey)}`} className="approval-key">
            <FailureKey value={a.failureKey} wrap />
          </Link>
          <span className="row row-wrap text-sm muted" style={{ gap: 8 }}>
            {h.effectiveState && <StateBadge state={h.effectiveState} />}
            {h.recovery && (
              <>
                <RecoveryMeter recovery={h.recovery} noun="successes" />
                <span aria-hidden="true">·</span>
              </>
            )}
            <span>
              requested <RelativeTime date={a.createdAt} />
            </span>
          </span>
        </div>
        {canOperate && (
          <div className="card-actions">
            <Button size="sm" variant="primary" onClick={() => setDecision("approve")}>
              <Icon name="check" />
              Approve
            </Button>
            <Button size="sm" variant="secondary" onClick={() => setDecision("deny")}>
              <Icon name="x" />
              Deny
            </Button>
          </div>
        )}
      </div>
      <div className="card-body approval-history">
        <div className="stack stack-sm">
          <h3 className="approval-subhead">Recent failures</h3>
          {h.failures.length === 0 ? (
            <p className="text-sm subtle">No failures on record.</p>
          ) : (
            <ul className="plain-list plain-list-tight">
              {h.failures.map((f) => (
                <li key={f.id}>
                  <span className="row" style={{ gap: 8, minWidth: 0 }}>
                    <SeverityBadge severity={f.severity} />
                    <span className="truncate text-sm" title={f.errorMessage ?? undefined}>
                      {f.errorMessage ?? "—"}
                    </span>
                  </span>
                  <span className="text-sm subtle nowrap">
                    <RelativeTime date={f.ts} />
                  </span>
                </li>
              ))}
            </ul>
          )}
        </div>
        <div className="stack stack-sm">
          <h3 className="approval-subhead">State changes</h3>
          {h.transitions.length === 0 ? <p className="text-sm subtle">No transitions on record.</p> : <StateTimeline items={h.transitions} />}
        </div>
      </div>
      <ConfirmDialog
        open={decision !== null}
        onOpenChange={(o) => {
          if (!o) setDecision(null);
        }}
        title={a.kind === "reset" ? (decision === "approve" ? "Reset this key?" : "Deny this reset request?") : decision === "approve" ? "Approve this recovery?" : "Deny this recovery?"}
        tone={decision === "deny" ? "danger" : "primary"}
        confirmLabel={decision === "approve" ? "Approve" : "Deny"}
        description={
          decision === "approve" ? (
            <>
              <span className="mono">{a.failureKey}</span> becomes <strong>trusted</strong>: agents call it without asking.
            </>
          ) : (
            <>
              {a.kind === "reset" ? (
                <>
                  <span className="mono">{a.failureKey}</span> stays as it is; the agent reads your comment (required).
                </>
              ) : (
                <>
                  <span className="mono">{a.failureKey}</span> goes back to <strong>escalated</strong> with a fresh escalation window.
                </>
              )}
            </>
          )
        }
        onConfirm={submit}
      >
        <Field label="Comment" optional hint="Stored with the decision in the audit log.">
          <Textarea value={comment} onChange={(e) => setComment(e.target.value)} rows={3} maxLength={2000} />
        </Field>
      </ConfirmDialog>
    </article>
  );
}
