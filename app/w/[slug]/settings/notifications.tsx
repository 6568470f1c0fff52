"use client";

import { formatDuration } from "@/components/format";

/**
 * Settings → Notifications: webhook and Slack channels (admins edit, others read), Send test, and a
 * paginated delivery log per channel. Secrets are shown once, at creation or rotation.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { DataTable, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { Button, Checkbox, Field, NumberInput, Select, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { LoadingBlock } from "@/components/loading";
import { Section } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { toast } from "@/components/toast";
import { errorMessage, fieldErrors, useTRPC } from "@/lib/trpc/client";

const EVENTS = [
  { id: "tool_call_approval_waiting", label: "Tool call waiting for approval", severity: "warning" },
  { id: "recovery_pending", label: "Recovery pending approval", severity: "warning" },
  { id: "key_escalated", label: "Key escalated", severity: "warning" },
  { id: "key_blocked", label: "Key or tool blocked", severity: "critical" },
  { id: "session_paused", label: "Session paused", severity: "warning" },
  { id: "global_pattern_raised", label: "Global tool pattern raised", severity: "critical" },
] as const;
type EventId = (typeof EVENTS)[number]["id"];
type Severity = "info" | "warning" | "critical";
type Channel = { id: string; name: string; type: "webhook" | "slack"; url: string; events: EventId[]; minSeverity: Severity; quietPeriodSeconds: number; enabled: boolean; createdAt: string };
type Draft = { name: string; type: "webhook" | "slack"; url: string; events: EventId[]; minSeverity: Severity; quietPeriodSeconds: number };
const EMPTY: Draft = { name: "", type: "webhook", url: "", events: EVENTS.map((e) => e.id), minSeverity: "warning", quietPeriodSeconds: 300 };
const PAGE = 10;

export function NotificationsPanel({ workspaceSlug, canEdit }: { workspaceSlug: string; canEdit: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.notifications.list.queryOptions({ workspaceSlug }));
  const create = useMutation(trpc.notifications.create.mutationOptions());
  const update = useMutation(trpc.notifications.update.mutationOptions());
  const setEnabled = useMutation(trpc.notifications.setEnabled.mutationOptions());
  const rotate = useMutation(trpc.notifications.rotateSecret.mutationOptions());
  const remove = useMutation(trpc.notifications.delete.mutationOptions());
  const sendTest = useMutation(trpc.notifications.sendTest.mutationOptions());
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [editing, setEditing] = useState<Channel | null>(null);
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const [deleting, setDeleting] = useState<Channel | null>(null);
  const [logFor, setLogFor] = useState<Channel | null>(null);
  const refresh = async () => {
    await qc.invalidateQueries(trpc.notifications.list.queryFilter({ workspaceSlug }));
    await qc.invalidateQueries({ queryKey: trpc.notifications.deliveries.pathKey() });
  };
  const active = editing ? update : create;
  const errs = fieldErrors(active.error);

  const columns: Column<Channel>[] = [
    { id: "name", header: "Name", cell: (c) => <span style={{ fontWeight: 500 }}>{c.name}</span> },
    { id: "type", header: "Type", cell: (c) => <Badge tone="neutral" square>{c.type}</Badge> },
    { id: "url", header: "URL", cell: (c) => <span className="mono text-sm">{c.url}</span> },
    { id: "events", header: "Events", cell: (c) => <span className="text-sm" title={c.events.join(", ")}>{c.events.length} of {EVENTS.length}</span> },
    { id: "sev", header: "Min. severity", cell: (c) => c.minSeverity },
    { id: "quiet", header: "Quiet period", cell: (c) => (c.quietPeriodSeconds ? formatDuration(c.quietPeriodSeconds * 1000) : "none") },
    { id: "status", header: "Status", cell: (c) => (c.enabled ? <Badge tone="trusted" dot>Enabled</Badge> : <Badge tone="neutral" dot>Disabled</Badge>) },
    {
      id: "actions",
      header: <span className="sr-only">Actions</span>,
      align: "right",
      cell: (c) => (
        <div className="row" style={{ justifyContent: "flex-end", gap: 4, flexWrap: "nowrap", whiteSpace: "nowrap" }}>
          <Button size="xs" variant="ghost" onClick={() => setLogFor(c)} aria-label={`Delivery log of ${c.name}`}>Log</Button>
          {canEdit && (
            <>
              <Button
                size="xs"
                variant="ghost"
                loading={sendTest.isPending && sendTest.variables?.channelId === c.id}
                onClick={async () => {
                  try {
                    const r = await sendTest.mutateAsync({ workspaceSlug, channelId: c.id });
                    if (r.status === "sent") toast.success("Test delivered", `HTTP ${r.statusCode}`);
                    else toast.error("Test not delivered", r.statusCode ? `HTTP ${r.statusCode} — see the delivery log` : "See the delivery log");
                    setLogFor(c);
                    await refresh();
                  } catch (err) {
                    toast.error("Send test failed", errorMessage(err));
                  }
                }}
              >
                Send test
              </Button>
              <Button size="xs" variant="ghost" onClick={() => { setEditing(c); setDraft({ name: c.name, type: c.type, url: "", events: c.events, minSeverity: c.minSeverity, quietPeriodSeconds: c.quietPeriodSeconds }); }}>Edit</Button>
              <Button size="xs" variant="ghost" onClick={async () => { try { await setEnabled.mutateAsync({ workspaceSlug, channelId: c.id, enabled: !c.enabled }); await refresh(); } catch (err) { toast.error("Could not change", errorMessage(err)); } }}>
                {c.enabled ? "Disable" : "Enable"}
              </Button>
              {c.type === "webhook" && (
                <Button size="xs" variant="ghost" onClick={async () => { try { const r = await rotate.mutateAsync({ workspaceSlug, channelId: c.id }); setSecret({ name: c.name, value: r.secret }); } catch (err) { toast.error("Could not rotate", errorMessage(err)); } }}>
                  Rotate secret
                </Button>
              )}
              <Button size="xs" variant="ghost" onClick={() => setDeleting(c)} aria-label={`Delete channel ${c.name}`}>Delete</Button>
            </>
          )}
        </div>
      ),
    },
  ];

  return (
    <div className="stack stack-lg">
      {secret && (
        <div className="callout" data-tone="warning" role="status" data-testid="channel-secret">
          <Icon name="alert" />
          <div className="stack stack-sm" style={{ minWidth: 0, flex: 1 }}>
            <strong>Signing secret of “{secret.name}” — copy it now, you won’t see it again.</strong>
            <div className="row row-wrap">
              <code className="code">{secret.value}</code>
              <Button size="sm" variant="ghost" onClick={() => setSecret(null)}>I’ve stored it</Button>
            </div>
            <span className="text-sm muted">Verify <span className="mono">X-Vigil-Signature</span> = sha256 HMAC of <span className="mono">{"<X-Vigil-Timestamp>.<body>"}</span> (see docs/dashboard.md in the Vigil repository).</span>
          </div>
        </div>
      )}

      <Section title="Channels" description="Vigil posts to these when a person is needed. Delivery is retried with backoff for up to a day; receivers deduplicate on X-Vigil-Idempotency-Key.">
        {list.isLoading ? (
          <LoadingBlock />
        ) : list.error ? (
          <div className="field-error">{errorMessage(list.error)}</div>
        ) : (
          <DataTable
            label="Notification channels"
            columns={columns}
            rows={(list.data ?? []) as Channel[]}
            rowKey={(c) => c.id}
            maxHeight="none"
            empty={<EmptyState compact icon="settings" title="No channels" description={canEdit ? "Add a webhook or Slack channel below." : "An admin can add a webhook or Slack channel."} />}
          />
        )}
      </Section>

      {canEdit && (
        <Section title={editing ? `Edit “${editing.name}”` : "Add a channel"}>
          <form
            className="card card-body stack"
            noValidate
            onSubmit={async (e) => {
              e.preventDefault();
              try {
                if (editing) {
                  await update.mutateAsync({ workspaceSlug, channelId: editing.id, name: draft.name, events: draft.events, minSeverity: draft.minSeverity, quietPeriodSeconds: draft.quietPeriodSeconds, ...(draft.url ? { url: draft.url } : {}) });
                  toast.success("Channel saved");
                  setEditing(null);
                } else {
                  const r = await create.mutateAsync({ workspaceSlug, ...draft });
                  if (r.secret) setSecret({ name: r.channel.name, value: r.secret });
                  toast.success("Channel added");
                }
                setDraft(EMPTY);
                await refresh();
              } catch {
                /* shown by the fields */
              }
            }}
          >
            <div className="row row-wrap" style={{ alignItems: "flex-start" }}>
              <Field label="Name" error={errs.name}>
                <TextInput value={draft.name} maxLength={100} placeholder="on-call" onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
              </Field>
              <Field label="Type">
                <Select value={draft.type} disabled={!!editing} onChange={(e) => setDraft({ ...draft, type: e.target.value as Draft["type"] })} options={[{ value: "webhook", label: "Webhook (signed JSON)" }, { value: "slack", label: "Slack incoming webhook" }]} />
              </Field>
              {/* URLs are long: the field takes the rest of the row (a line of its own when narrow). */}
              <div style={{ flex: "1 1 360px", minWidth: 0, maxWidth: 640 }}>
                <Field label="URL" error={errs.url} hint={editing ? "Leave empty to keep the current URL" : draft.type === "slack" ? "https://hooks.slack.com/services/…" : "https://…"}>
                  <TextInput value={draft.url} mono size="md" type="url" onChange={(e) => setDraft({ ...draft, url: e.target.value })} />
                </Field>
              </div>
            </div>
            <fieldset className="stack stack-sm" style={{ border: 0, padding: 0, margin: 0 }}>
              <legend className="text-sm" style={{ fontWeight: 500 }}>Events</legend>
              <div className="row row-wrap">
                {EVENTS.map((ev) => (
                  <Checkbox
                    key={ev.id}
                    label={ev.label}
                    hint={ev.severity}
                    checked={draft.events.includes(ev.id)}
                    onChange={(e) => setDraft({ ...draft, events: e.target.checked ? [...draft.events, ev.id] : draft.events.filter((x) => x !== ev.id) })}
                  />
                ))}
              </div>
              {errs.events && <div className="field-error">{errs.events}</div>}
            </fieldset>
            <div className="row row-wrap" style={{ alignItems: "flex-start" }}>
              <Field label="Minimum severity" hint="info < warning < critical">
                <Select value={draft.minSeverity} onChange={(e) => setDraft({ ...draft, minSeverity: e.target.value as Severity })} options={[{ value: "info", label: "info (everything)" }, { value: "warning", label: "warning" }, { value: "critical", label: "critical only" }]} />
              </Field>
              <Field label="Quiet period per key/session" error={errs.quietPeriodSeconds} hint="Repeats inside it are counted, not sent">
                <NumberInput value={draft.quietPeriodSeconds} min={0} max={604800} suffix="s" onChange={(e) => setDraft({ ...draft, quietPeriodSeconds: Math.max(0, Math.round(Number(e.target.value) || 0)) })} />
              </Field>
            </div>
            <div className="row">
              <Button type="submit" variant="primary" loading={active.isPending}>{editing ? "Save channel" : <><Icon name="plus" /> Add channel</>}</Button>
              {editing && <Button variant="ghost" onClick={() => { setEditing(null); setDraft(EMPTY); }}>Cancel</Button>}
            </div>
            {active.error && !Object.keys(errs).length && <div className="field-error">{errorMessage(active.error)}</div>}
          </form>
        </Section>
      )}

      {logFor && <DeliveryLog workspaceSlug={workspaceSlug} channel={logFor} onClose={() => setLogFor(null)} />}

      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(o) => !o && setDeleting(null)}
        title={`Delete “${deleting?.name ?? ""}”?`}
        description="Undelivered notifications and the delivery log of this channel are deleted with it."
        tone="danger"
        confirmLabel="Delete channel"
        onConfirm={async () => {
          try {
            await remove.mutateAsync({ workspaceSlug, channelId: deleting!.id });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          if (logFor?.id === deleting?.id) setLogFor(null);
          toast.success("Channel deleted");
          await refresh();
        }}
      />
    </div>
  );
}

type Delivery = { id: string; createdAt: string; event: string; status: string; statusCode: number | null; attempts: number; nextAttemptAt: string | null; response: string | null };

function DeliveryLog({ workspaceSlug, channel, onClose }: { workspaceSlug: string; channel: Channel; onClose: () => void }) {
  const trpc = useTRPC();
  const [offset, setOffset] = useState(0);
  const q = useQuery(trpc.notifications.deliveries.queryOptions({ workspaceSlug, channelId: channel.id, limit: PAGE, offset }));
  const total = q.data?.total ?? 0;
  const tone = (s: string) => (s === "sent" ? "trusted" : s === "failed" ? "blocked" : s === "pending" ? "escalated" : "neutral");
  const columns: Column<Delivery>[] = [
    { id: "time", header: "Time", cell: (d) => <RelativeTime date={d.createdAt} /> },
    { id: "event", header: "Event", cell: (d) => <span className="mono text-sm">{d.event}</span> },
    { id: "status", header: "Status", cell: (d) => <Badge tone={tone(d.status) as "trusted"} dot>{d.status}</Badge> },
    { id: "code", header: "HTTP", cell: (d) => d.statusCode ?? <span className="subtle">—</span> },
    { id: "attempts", header: "Attempts", align: "right", cell: (d) => d.attempts },
    { id: "next", header: "Next retry", cell: (d) => (d.nextAttemptAt ? <RelativeTime date={d.nextAttemptAt} /> : <span className="subtle">—</span>) },
    { id: "resp", header: "Response", cell: (d) => <span className="mono text-sm" title={d.response ?? ""}>{(d.response ?? "").slice(0, 80)}</span> },
  ];
  return (
    <Section
      title={`Delivery log — ${channel.name}`}
      actions={<Button size="xs" variant="ghost" onClick={onClose}>Close</Button>}
    >
      {q.isLoading ? (
        <LoadingBlock />
      ) : q.error ? (
        <div className="field-error">{errorMessage(q.error)}</div>
      ) : (
        <div className="stack stack-sm" data-testid="delivery-log">
          <DataTable label="Deliveries" columns={columns} rows={(q.data?.rows ?? []) as Delivery[]} rowKey={(d) => d.id} maxHeight="none" empty={<EmptyState compact icon="settings" title="Nothing delivered yet" description="Use Send test to check the channel." />} />
          <div className="row" style={{ justifyContent: "space-between" }}>
            <span className="text-sm muted">{total ? `${offset + 1}–${Math.min(offset + PAGE, total)} of ${total}` : ""}</span>
            <div className="row">
              <Button size="xs" variant="ghost" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</Button>
              <Button size="xs" variant="ghost" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>Next</Button>
            </div>
          </div>
        </div>
      )}
    </Section>
  );
}
