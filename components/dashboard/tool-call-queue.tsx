"use client";

/**
 * Tool calls an agent is waiting on (SPEC 7.2), polled every 1.5 s: an agent is blocked until a
 * person answers, so this list is live and first on the Approvals page. Keyboard: j/k move,
 * a approves once, s approves for the session, d denies (focuses the required comment).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { Button, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { Badge } from "@/components/state-badge";
import { toast } from "@/components/toast";
import { errorMessage, useTRPC } from "@/lib/trpc/client";
import type { ApprovalRow, PendingApproval } from "@/server/dashboard/approvals";

const TOOL_CALL_QUEUE_POLL_MS = 1_500;

type Decision = { decision: "approve"; scope: "once" | "session" } | { decision: "deny"; comment: string };

export function ToolCallQueue({ slug, initial, canOperate }: { slug: string; initial: { count: number; approvals: PendingApproval[] }; canOperate: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  // Same cache entry as the shell's approvals badge, so both stay current.
  const q = useQuery(
    trpc.ws.approvals.pending.queryOptions(
      { workspaceSlug: slug },
      { initialData: { count: initial.count, approvals: initial.approvals }, refetchInterval: TOOL_CALL_QUEUE_POLL_MS, staleTime: 1_000 },
    ),
  );
  // Decided here: hidden at once, so the next key press acts on the next call, not on a stale row.
  const [decided, setDecided] = useState<ReadonlySet<string>>(new Set());
  const calls = (q.data ?? initial).approvals.filter((a) => a.kind === "tool_call" && a.status === "pending" && !decided.has(a.id));
  const [active, setActive] = useState(0);
  const [denying, setDenying] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const itemRefs = useRef(new Map<string, HTMLElement>());
  const resolve = useMutation(trpc.ws.approvals.resolve.mutationOptions());
  const index = Math.min(active, Math.max(0, calls.length - 1));
  const current = calls[index];

  const decide = useCallback(
    async (a: ApprovalRow, d: Decision) => {
      setBusy(a.id);
      try {
        await resolve.mutateAsync({ workspaceSlug: slug, approvalId: a.id, ...d });
        setDecided((prev) => new Set(prev).add(a.id));
        toast({
          tone: "success",
          title: d.decision === "deny" ? "Tool call denied" : d.scope === "session" ? "Approved for this session" : "Tool call approved",
          description: `${a.toolName} · ${a.sessionId ?? ""}`,
        });
        setDenying(null);
      } catch (err) {
        toast({ tone: "error", title: "Could not record the decision", description: errorMessage(err) });
      } finally {
        setBusy(null);
        await queryClient.invalidateQueries({ queryKey: trpc.ws.approvals.pending.pathKey() });
        router.refresh();
      }
    },
    [resolve, slug, queryClient, trpc, router],
  );

  useEffect(() => {
    if (!canOperate) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
      if (document.querySelector("[role=dialog]")) return;
      if (!calls.length) return;
      const move = (to: number) => {
        const next = Math.max(0, Math.min(calls.length - 1, to));
        setActive(next);
        itemRefs.current.get(calls[next].id)?.focus();
      };
      if (e.key === "j") move(index + 1);
      else if (e.key === "k") move(index - 1);
      else if (current && busy === null && e.key === "a") void decide(current, { decision: "approve", scope: "once" });
      else if (current && busy === null && e.key === "s") void decide(current, { decision: "approve", scope: "session" });
      else if (current && e.key === "d") setDenying(current.id);
      else return;
      e.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [calls, index, current, busy, decide, canOperate]);

  return (
    <section className="stack" aria-labelledby="waiting-tool-calls">
      <div className="section-head">
        <h2 className="section-title" id="waiting-tool-calls">
          Waiting tool calls {calls.length > 0 && <span className="muted">({calls.length})</span>}
        </h2>
        {canOperate && calls.length > 0 && (
          <p className="text-sm muted" data-testid="keyboard-hint">
            <kbd className="kbd">j</kbd>/<kbd className="kbd">k</kbd> move · <kbd className="kbd">a</kbd> approve once · <kbd className="kbd">s</kbd> approve for the session ·{" "}
            <kbd className="kbd">d</kbd> deny
          </p>
        )}
      </div>
      {calls.length === 0 ? (
        <EmptyState
          bordered
          icon="checkCircle"
          title="No agent is waiting"
          description="When guard.check would ask and the agent sends waitForApprovalSeconds, the call waits here for a person. New calls appear within two seconds."
        />
      ) : (
        <ul className="approval-list">
          {calls.map((a, i) => (
            <li key={a.id}>
              <article
                ref={(el) => {
                  if (el) itemRefs.current.set(a.id, el);
                  else itemRefs.current.delete(a.id);
                }}
                tabIndex={0}
                onFocus={() => setActive(i)}
                className={`card approval-card tool-call-card${i === index ? " is-active" : ""}`}
                aria-label={`Tool call ${a.toolName} waiting for approval`}
                aria-current={i === index || undefined}
              >
                <div className="card-head">
                  <div className="stack" style={{ gap: 4, minWidth: 0 }}>
                    <span className="row row-wrap" style={{ gap: 8 }}>
                      <strong className="mono">{a.toolName}</strong>
                      <WaitingFor since={a.createdAt} />
                    </span>
                    <span className="row row-wrap text-sm muted" style={{ gap: 12 }}>
                      <span>
                        agent <strong>{a.agent ?? "—"}</strong>
                      </span>
                      <span>
                        model <strong>{a.model ?? "—"}</strong>
                      </span>
                      {a.sessionId && (
                        <span>
                          session{" "}
                          <Link href={`/w/${slug}/sessions/${encodeURIComponent(a.sessionId)}`} className="mono">
                            {a.sessionId}
                          </Link>
                        </span>
                      )}
                    </span>
                  </div>
                  {canOperate && (
                    <div className="card-actions">
                      <Button size="sm" variant="primary" loading={busy === a.id} onClick={() => decide(a, { decision: "approve", scope: "once" })}>
                        <Icon name="check" />
                        Approve once
                      </Button>
                      <Button size="sm" variant="secondary" disabled={busy === a.id} onClick={() => decide(a, { decision: "approve", scope: "session" })}>
                        Approve for session
                      </Button>
                      <Button size="sm" variant="secondary" disabled={busy === a.id} onClick={() => setDenying(a.id)}>
                        <Icon name="x" />
                        Deny
                      </Button>
                    </div>
                  )}
                </div>
                <div className="card-body stack stack-sm">
                  {a.reason && (
                    <p className="text-sm">
                      <span className="muted">Why Vigil asks: </span>
                      {a.reason}
                    </p>
                  )}
                  <div className="text-sm muted">
                    <FailureKey value={a.failureKey} wrap />
                  </div>
                  {a.argsPreview && <pre className="code tool-call-args">{a.argsPreview}</pre>}
                  {denying === a.id && (
                    <DenyForm
                      busy={busy === a.id}
                      onCancel={() => {
                        setDenying(null);
                        itemRefs.current.get(a.id)?.focus();
                      }}
                      onDeny={(comment) => decide(a, { decision: "deny", comment })}
                    />
                  )}
                </div>
              </article>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function DenyForm({
  busy,
  onCancel,
  onDeny,
}: {
  busy: boolean;
  onCancel: () => void;
  onDeny: (comment: string) => void;
}) {
  const [comment, setComment] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = () => {
    if (!comment.trim()) {
      setError("A comment is required: the agent's model reads it.");
      document.getElementById("deny-comment")?.focus();
      return;
    }
    onDeny(comment.trim());
  };
  return (
    <form
      className="stack stack-sm"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <label className="text-sm" htmlFor="deny-comment">
        Why deny? <span className="muted">(required — the agent reads this; Enter to deny, Esc to cancel)</span>
      </label>
      <Textarea
        id="deny-comment"
        autoFocus
        rows={2}
        maxLength={2000}
        value={comment}
        aria-invalid={!!error || undefined}
        aria-describedby={error ? "deny-comment-error" : undefined}
        onChange={(e) => {
          setComment(e.target.value);
          setError(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Escape") onCancel();
          if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            submit();
          }
        }}
      />
      {error && (
        <p className="text-sm field-error" id="deny-comment-error" role="alert">
          {error}
        </p>
      )}
      <div className="row" style={{ gap: 8 }}>
        <Button type="submit" size="sm" variant="danger" loading={busy}>
          Deny
        </Button>
        <Button size="sm" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

/** "waiting 1m 12s", ticking every second. */
function WaitingFor({ since }: { since: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const h = window.setInterval(() => setNow(Date.now()), 1_000);
    return () => window.clearInterval(h);
  }, []);
  if (now === null) return <span className="text-sm muted">waiting</span>;
  const s = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const text = s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return (
    <Badge tone="warning" dot title={`Waiting since ${new Date(since).toLocaleString()}`}>
      waiting {text}
    </Badge>
  );
}
