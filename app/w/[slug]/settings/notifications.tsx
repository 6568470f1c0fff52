"use client";

import { formatDuration } from "@/components/format";

/**
 * Settings → Notifications: webhook and Slack channels (admins edit, others read), each with its
 * actions in a menu, Send test of a chosen event, and its paginated delivery log under it. Secrets
 * are shown once, at creation or rotation, with a copy button.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ActionMenu, type ActionMenuItem } from "@/components/action-menu";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { CopyValueButton } from "@/components/copy-value-button";
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
import { DEFAULT_NOTIFICATION_EVENTS, NOTIFICATION_EVENT_DEFS, type NotificationEvent } from "@/server/notifications/events";

const EVENTS = NOTIFICATION_EVENT_DEFS;
type EventId = NotificationEvent;
type Severity = "info" | "warning" | "critical";
type Channel = { id: string; name: string; type: "webhook" | "slack"; url: string; events: EventId[]; minSeverity: Severity; quietPeriodSeconds: number; enabled: boolean; createdAt: string };
type Draft = { name: string; type: "webhook" | "slack"; url: string; events: EventId[]; minSeverity: Severity; quietPeriodSeconds: number };
const EMPTY: Draft = { name: "", type: "webhook", url: "", events: DEFAULT_NOTIFICATION_EVENTS, minSeverity: "warning", quietPeriodSeconds: 300 };
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
  const [logFor, setLogFor] = useState<string | null>(null);
  const [testing, setTesting] = useState<{ channelId: string; event: EventId } | null>(null);
  const refresh = async () => {
    await qc.invalidateQueries(trpc.notifications.list.queryFilter({ workspaceSlug }));
    await qc.invalidateQueries({ queryKey: trpc.notifications.deliveries.pathKey() });
  };
  const active = editing ? update : create;
  const errs = fieldErrors(active.error);

  const test = async (c: Channel, event: EventId) => {
    try {
      const r = await sendTest.mutateAsync({ workspaceSlug, channelId: c.id, event });
      if (r.status === "sent") toast.success(`Test of ${event} delivered`, `HTTP ${r.statusCode}`);
      else toast.error("Test not delivered", r.statusCode ? `HTTP ${r.statusCode} — see the delivery log` : "See the delivery log");
      setTesting(null);
      setLogFor(c.id);
      await refresh();
    } catch (err) {
      toast.error("Send test failed", errorMessage(err));
    }
  };

  const menuFor = (c: Channel): ActionMenuItem[] => [
    { label: logFor === c.id ? "Hide delivery log" : "Delivery log", onSelect: () => setLogFor(logFor === c.id ? null : c.id) },
    ...(canEdit
      ? [
          { label: "Send test…", onSelect: () => setTesting({ channelId: c.id, event: c.events[0] ?? "key_escalated" }) },
          { label: "Edit", onSelect: () => { setEditing(c); setDraft({ name: c.name, type: c.type, url: "", events: c.events, minSeverity: c.minSeverity, quietPeriodSeconds: c.quietPeriodSeconds }); } },
          { label: c.enabled ? "Disable" : "Enable", onSelect: async () => { try { await setEnabled.mutateAsync({ workspaceSlug, channelId: c.id, enabled: !c.enabled }); await refresh(); } catch (err) { toast.error("Could not change", errorMessage(err)); } } },
          ...(c.type === "webhook"
            ? [{ label: "Rotate secret", onSelect: async () => { try { const r = await rotate.mutateAsync({ workspaceSlug, channelId: c.id }); setSecret({ name: c.name, value: r.secret }); } catch (err) { toast.error("Could not rotate", errorMessage(err)); } } }]
            : []),
          { label: "Delete…", danger: true, onSelect: () => setDeleting(c) },
        ]
      : []),
  ];

  const channelCard = (c: Channel) => (
    <article key={c.id} className="card" data-testid="notification-channel" aria-labelledby={`ch-${c.id}`}>
      <div className="card-head channel-head">
        <div className="stack stack-sm" style={{ minWidth: 0, flex: 1 }}>
          <div className="row row-wrap" style={{ gap: 8 }}>
            <h3 className="card-title" id={`ch-${c.id}`}>{c.name}</h3>
            <Badge tone="neutral" square>{c.type}</Badge>
            {c.enabled ? <Badge tone="trusted" dot>Enabled</Badge> : <Badge tone="neutral" dot>Disabled</Badge>}
          </div>
          <span className="mono text-sm channel-url" title={c.url}>{c.url}</span>
          <span className="text-sm muted">
            <span title={c.events.join(", ")}>{c.events.length} of {EVENTS.length} events</span> · {c.minSeverity} and above · quiet period {c.quietPeriodSeconds ? formatDuration(c.quietPeriodSeconds * 1000) : "none"}
          </span>
        </div>
        <ActionMenu label={`Actions for ${c.name}`} trigger={<><span className="channel-actions-label">Actions</span> <Icon name="more" size={14} /></>} items={menuFor(c)} />
      </div>
      {testing?.channelId === c.id && (
        <form
          className="card-body row row-wrap channel-test"
          onSubmit={(e) => {
            e.preventDefault();
            void test(c, testing.event);
          }}
        >
          <Field label="Send a test of">
            <Select value={testing.event} onChange={(e) => setTesting({ channelId: c.id, event: e.target.value as EventId })} options={EVENTS.map((ev) => ({ value: ev.name, label: `${ev.label} (${ev.name})` }))} />
          </Field>
          <div className="row">
            <Button type="submit" size="sm" variant="primary" loading={sendTest.isPending}>Send test</Button>
            <Button size="sm" variant="ghost" onClick={() => setTesting(null)}>Cancel</Button>
          </div>
        </form>
      )}
      {logFor === c.id && <DeliveryLog workspaceSlug={workspaceSlug} channel={c} onClose={() => setLogFor(null)} />}
    </article>
  );

  return (
    <div className="stack stack-lg">
      {secret && (
        <div className="callout" data-tone="warning" role="status" data-testid="channel-secret">
          <Icon name="alert" />
          <div className="stack stack-sm" style={{ minWidth: 0, flex: 1 }}>
            <strong>Signing secret of “{secret.name}” — copy it now, you won’t see it again.</strong>
            <div className="row row-wrap">
              <code className="code" data-testid="channel-secret-value">{secret.value}</code>
              <CopyValueButton value={secret.value} label="signing secret" />
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
          <div className="stack" aria-label="Notification channels">
            {(list.data ?? []).length === 0 ? (
              <EmptyState compact icon="settings" title="No channels" description={canEdit ? "Add a webhook or Slack channel below." : "An admin can add a webhook or Slack channel."} />
            ) : (
              ((list.data ?? []) as Channel[]).map(channelCard)
            )}
          </div>
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
                    key={ev.name}
                    label={ev.label}
                    hint={ev.defaultOn ? ev.severity : `${ev.severity} · off by default`}
                    title={ev.description}
                    checked={draft.events.includes(ev.name)}
                    onChange={(e) => setDraft({ ...draft, events: e.target.checked ? [...draft.events, ev.name] : draft.events.filter((x) => x !== ev.name) })}
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
          if (logFor === deleting?.id) setLogFor(null);
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
    <section className="card-body stack stack-sm channel-log" aria-label={`Delivery log of ${channel.name}`}>
      <div className="row" style={{ justifyContent: "space-between" }}>
        <h4 className="text-sm" style={{ fontWeight: 500, margin: 0 }}>Delivery log</h4>
        <Button size="xs" variant="ghost" onClick={onClose}>Close</Button>
      </div>
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
    </section>
  );
}
