"use client";

/** API keys of the workspace (admin): list, create (value shown once), revoke. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { DataTable, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { Button, Field, Select, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { LoadingBlock } from "@/components/loading";
import { Section } from "@/components/page-header";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { toast } from "@/components/toast";
import { errorMessage, fieldErrors, useTRPC } from "@/lib/trpc/client";

type KeyRow = { id: string; name: string; prefix: string; scope: "agent" | "admin"; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };

export function ApiKeysPanel({ workspaceSlug }: { workspaceSlug: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.apiKeys.list.queryOptions({ workspaceSlug }));
  const create = useMutation(trpc.apiKeys.create.mutationOptions());
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions());
  const [name, setName] = useState("");
  const [scope, setScope] = useState<"agent" | "admin">("agent");
  const [created, setCreated] = useState<{ value: string; name: string; scope: string } | null>(null);
  const [revoking, setRevoking] = useState<KeyRow | null>(null);
  const [copied, setCopied] = useState(false);
  const errs = fieldErrors(create.error);

  const columns: Column<KeyRow>[] = [
    { id: "name", header: "Name", cell: (k) => <span style={{ fontWeight: 500 }}>{k.name}</span> },
    { id: "prefix", header: "Key", cell: (k) => <span className="mono text-sm">{k.prefix}…</span> },
    {
      id: "scope",
      header: "Scope",
      cell: (k) => (
        <Badge tone={k.scope === "admin" ? "admin" : "neutral"} square>
          {k.scope}
        </Badge>
      ),
    },
    { id: "created", header: "Created", cell: (k) => <RelativeTime date={k.createdAt} /> },
    { id: "used", header: "Last used", cell: (k) => (k.lastUsedAt ? <RelativeTime date={k.lastUsedAt} /> : <span className="subtle">never</span>) },
    {
      id: "status",
      header: "Status",
      cell: (k) =>
        k.revokedAt ? (
          <Badge tone="blocked" dot title={`Revoked ${k.revokedAt}`}>
            Revoked
          </Badge>
        ) : (
          <Badge tone="trusted" dot>
            Active
          </Badge>
        ),
    },
    {
      id: "actions",
      header: <span className="sr-only">Actions</span>,
      align: "right",
      cell: (k) =>
        k.revokedAt ? null : (
          <Button size="xs" variant="ghost" onClick={() => setRevoking(k)} aria-label={`Revoke key ${k.name}`}>
            Revoke
          </Button>
        ),
    },
  ];

  return (
    <div className="stack stack-lg">
      {created && (
        <div className="callout dash2-new-key" data-tone="warning" role="status" data-testid="new-api-key">
          <Icon name="alert" />
          <div className="stack stack-sm" style={{ minWidth: 0, flex: 1 }}>
            <strong>
              Copy the key “{created.name}” ({created.scope} scope) now — you won’t see it again.
            </strong>
            <div className="row row-wrap">
              <code className="code dash2-key-value">{created.value}</code>
              <Button
                size="sm"
                variant="primary"
                onClick={async () => {
                  try {
                    await navigator.clipboard.writeText(created.value);
                    setCopied(true);
                  } catch {
                    toast.error("Could not copy", "Select the key and copy it instead.");
                  }
                }}
              >
                {copied ? <Icon name="check" /> : null}
                {copied ? "Copied" : "Copy"}
              </Button>
              <Button size="sm" variant="ghost" onClick={() => setCreated(null)}>
                I’ve stored it
              </Button>
            </div>
            <span className="text-sm muted">
              Agents send it as <span className="mono">Authorization: Bearer {created.value.slice(0, 12)}…</span>. Only a hash is stored.
            </span>
          </div>
        </div>
      )}

      <Section title="Create a key" description="Agent keys post events, guard checks and sessions. Admin keys can also read and change configuration, approvals, resets and resumes (for provisioning scripts).">
        <form
          className="card card-body dash2-key-form"
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              const r = await create.mutateAsync({ workspaceSlug, name, scope });
              setCreated({ value: r.value, name, scope: r.scope });
              setCopied(false);
              setName("");
              await qc.invalidateQueries(trpc.apiKeys.list.queryFilter({ workspaceSlug }));
            } catch {
              /* shown below */
            }
          }}
        >
          <Field label="Name" error={errs.name}>
            <TextInput value={name} placeholder="production fleet" maxLength={100} onChange={(e) => setName(e.target.value)} />
          </Field>
          <Field label="Scope">
            <Select
              value={scope}
              onChange={(e) => setScope(e.target.value as "agent" | "admin")}
              options={[
                { value: "agent", label: "agent — events, guard, sessions, status" },
                { value: "admin", label: "admin — also configuration and operations" },
              ]}
            />
          </Field>
          <div className="dash2-key-submit">
            <Button type="submit" variant="primary" loading={create.isPending}>
              <Icon name="plus" /> Create key
            </Button>
          </div>
          {create.error && !errs.name && <div className="field-error">{errorMessage(create.error)}</div>}
        </form>
      </Section>

      <Section title="Keys">
        {list.isLoading ? (
          <LoadingBlock />
        ) : list.error ? (
          <div className="field-error">{errorMessage(list.error)}</div>
        ) : (
          <DataTable
            label="API keys"
            columns={columns}
            rows={(list.data ?? []) as KeyRow[]}
            rowKey={(k) => k.id}
            maxHeight="none"
            empty={<EmptyState compact icon="settings" title="No API keys" description="Create a key for your agents to post events." />}
          />
        )}
      </Section>

      <ConfirmDialog
        open={revoking !== null}
        onOpenChange={(o) => !o && setRevoking(null)}
        title={`Revoke “${revoking?.name ?? ""}”?`}
        description={`Requests with ${revoking?.prefix ?? ""}… are refused (401) from now on. This cannot be undone.`}
        tone="danger"
        confirmLabel="Revoke key"
        onConfirm={async () => {
          try {
            await revoke.mutateAsync({ workspaceSlug, keyId: revoking!.id });
          } catch (err) {
            throw new Error(errorMessage(err));
          }
          toast.success("Key revoked");
          await qc.invalidateQueries(trpc.apiKeys.list.queryFilter({ workspaceSlug }));
        }}
      />
    </div>
  );
}
