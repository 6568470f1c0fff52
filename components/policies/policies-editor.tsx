"use client";

/**
 * The Policies page's interactive part (SPEC 4.5, 8): the level's policies in order with their hits,
 * add / edit / delete / reorder, the built-in risk rules with a switch each, and the test box.
 * Every change replaces the level's document through `wsConfig.put` / `orgConfig.put` (admin,
 * validated by the same schema as here, audit-logged), via the settings editors' ConfigEditorProvider.
 */
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { ConfigEditorProvider, ReadOnlyNotice, cloneDoc, useConfigEditor, type ConfigScope } from "@/components/config/config-context";
import { DataTable, type Column } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { Button, Toggle } from "@/components/form";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { Badge } from "@/components/state-badge";
import type { SnakeConfigDocument } from "@/server/engine/config";
import type { ArgPattern, Policy } from "@/server/engine/policies";
import type { RiskRuleInfo } from "@/server/dashboard/policies";
import { DecisionBadge } from "./decision-badge";
import { PolicyForm, withPolicy } from "./policy-form";
import { PolicyTestBox } from "./test-box";
import "./policies.css";

/** Hits of a policy or built-in rule over the page's range, keyed `level:name`. */
export type HitMap = Record<string, { hits: number; wouldAsk: number; wouldDeny: number }>;

const EDIT_NEEDS_ADMIN = "Changing policies needs the admin role";

function patternText(p: ArgPattern): string {
  if (typeof p === "string") return p;
  if ("regex" in p) return `/${p.regex}/`;
  return `= ${JSON.stringify(p.equals)}`;
}

function ArgsSummary({ args }: { args: Policy["args"] }) {
  const entries = Object.entries(args ?? {});
  if (!entries.length) return <span className="subtle text-sm">any arguments</span>;
  return (
    <span className="pol-args-summary">
      {entries.map(([path, p]) => (
        <span key={path} className="mono text-sm">
          <span className="subtle">{path}</span> {patternText(p)}
        </span>
      ))}
    </span>
  );
}

/** A rule's one-line description: `code` spans (the docs' markdown) shown in monospace. */
function MatchesText({ text }: { text: string }) {
  return (
    <>
      {text.split("`").map((part, i) =>
        i % 2 === 1 ? (
          <code key={i} className="pol-code">
            {part}
          </code>
        ) : (
          part
        ),
      )}
    </>
  );
}

function HitsCell({ hit, unit = false }: { hit: HitMap[string] | undefined; unit?: boolean }) {
  const n = hit?.hits ?? 0;
  const would = (hit?.wouldAsk ?? 0) + (hit?.wouldDeny ?? 0);
  return (
    <span className="pol-hits">
      <span className={n ? "num strong" : "num subtle"}>
        {n.toLocaleString("en-US")}
        {unit ? (n === 1 ? " hit" : " hits") : ""}
      </span>
      {would > 0 && (
        <span className="text-xs subtle" title="Calls answered allow in watch mode that this policy would have stopped">
          {hit!.wouldDeny ? `${hit!.wouldDeny} would deny` : `${hit!.wouldAsk} would ask`}
        </span>
      )}
    </span>
  );
}

/** A control a viewer sees disabled, with the reason on hover. */
function Guarded({ canEdit, children }: { canEdit: boolean; children: React.ReactNode }) {
  if (canEdit) return <>{children}</>;
  return (
    <span title={EDIT_NEEDS_ADMIN} className="pol-guarded">
      {children}
    </span>
  );
}

export interface PoliciesEditorProps {
  scope: ConfigScope;
  document: SnakeConfigDocument;
  inheritedDocument: SnakeConfigDocument | null;
  canEdit: boolean;
  hits: HitMap;
  riskRules: RiskRuleInfo[];
  rangeLabel: string;
}

export function PoliciesEditor(props: PoliciesEditorProps) {
  return (
    <ConfigEditorProvider scope={props.scope} initialDocument={props.document} inheritedDocument={props.inheritedDocument} canEdit={props.canEdit}>
      <PoliciesBody {...props} />
    </ConfigEditorProvider>
  );
}

function PoliciesBody({ hits, riskRules, rangeLabel }: PoliciesEditorProps) {
  const { doc, inherited, level, canEdit, saving, save, scope } = useConfigEditor();
  const policies = doc.policies ?? [];
  const orgPolicies = level === "workspace" ? (inherited?.policies ?? []) : [];
  /** The row being edited: an index, `policies.length` for a new one, or null. */
  const [editing, setEditing] = useState<number | null>(null);
  const [deleting, setDeleting] = useState<number | null>(null);
  const [draftDoc, setDraftDoc] = useState<SnakeConfigDocument | null>(null);

  const savePolicies = async (next: Policy[], message: string) => {
    const r = await save({ ...cloneDoc(doc), policies: next }, { successMessage: message });
    return r.ok;
  };
  const move = (i: number, by: -1 | 1) => {
    const next = policies.slice();
    [next[i], next[i + by]] = [next[i + by], next[i]];
    void savePolicies(next, `Moved ${policies[i].name} ${by < 0 ? "up" : "down"}`);
  };

  const ownLevel = level === "workspace" ? "workspace" : "organization";
  const columns: Column<Policy>[] = [
    { id: "order", header: "#", width: 36, cell: (_p, i) => <span className="num subtle">{i + 1}</span> },
    {
      id: "policy",
      header: "Policy",
      minWidth: 180,
      cell: (p) => (
        <span className="stack" style={{ gap: 2 }}>
          <span className="mono strong">{p.name}</span>
          {p.reason && <span className="text-xs subtle pol-reason">{p.reason}</span>}
        </span>
      ),
    },
    {
      id: "match",
      header: "Matches",
      minWidth: 200,
      cell: (p) => (
        <span className="stack" style={{ gap: 2 }}>
          <span className="mono text-sm">{p.tool}</span>
          <ArgsSummary args={p.args} />
        </span>
      ),
    },
    { id: "decision", header: "Decision", width: 90, cell: (p) => <DecisionBadge decision={p.decision} /> },
    { id: "hits", header: "Hits", headerTitle: `Calls this policy decided, ${rangeLabel}`, align: "right", width: 90, cell: (p) => <HitsCell hit={hits[`${ownLevel}:${p.name}`]} /> },
    {
      id: "actions",
      header: <span className="sr-only">Actions</span>,
      cardLabel: "",
      align: "right",
      width: 150,
      cell: (p, i) => (
        <Guarded canEdit={canEdit}>
          <span className="row pol-row-actions">
            <Button size="xs" variant="ghost" iconOnly aria-label={`Move ${p.name} up`} disabled={!canEdit || saving || i === 0} onClick={() => move(i, -1)}>
              <Icon name="chevronUp" />
            </Button>
            <Button size="xs" variant="ghost" iconOnly aria-label={`Move ${p.name} down`} disabled={!canEdit || saving || i === policies.length - 1} onClick={() => move(i, 1)}>
              <Icon name="chevronDown" />
            </Button>
            <Button size="xs" variant="ghost" disabled={!canEdit} onClick={() => setEditing(i)} aria-label={`Edit ${p.name}`}>
              Edit
            </Button>
            <Button size="xs" variant="ghost" iconOnly disabled={!canEdit} aria-label={`Delete ${p.name}`} onClick={() => setDeleting(i)}>
              <Icon name="x" />
            </Button>
          </span>
        </Guarded>
      ),
    },
  ];

  const orgColumns: Column<Policy>[] = [
    ...columns.slice(0, 4),
    { id: "hits", header: "Hits here", headerTitle: `Calls of this workspace it decided, ${rangeLabel}`, align: "right", width: 90, cell: (p) => <HitsCell hit={hits[`organization:${p.name}`]} /> },
  ];

  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      {level === "workspace" && orgPolicies.length > 0 && (
        <Section
          title={
            <span className="row" style={{ gap: 8 }}>
              Organization policies <Badge tone="outline">read-only here</Badge>
            </span>
          }
          description="Apply to every workspace of the organization and are evaluated with this workspace's; a workspace cannot remove them. Edit them under Organization → Policies."
        >
          <DataTable label="Organization policies" columns={orgColumns} rows={orgPolicies} rowKey={(p) => p.name} maxHeight="none" />
        </Section>
      )}

      <Section
        id="policies"
        title={level === "workspace" ? "Workspace policies" : "Policies"}
        description="Checked by guard.check before a call runs. Of every matching policy the strictest decision wins (deny > ask > allow); allow only exempts calls from the built-in risk rules."
        actions={
          <Guarded canEdit={canEdit}>
            <Button size="sm" variant="primary" disabled={!canEdit || editing !== null} onClick={() => setEditing(policies.length)}>
              <Icon name="plus" /> Add policy
            </Button>
          </Guarded>
        }
      >
        {editing !== null && canEdit && (
          <div className="card">
            <div className="card-head">
              <h3 className="card-title">{editing < policies.length ? `Edit ${policies[editing].name}` : "New policy"}</h3>
            </div>
            <div className="card-body">
              <PolicyForm
                key={editing}
                doc={doc}
                index={editing}
                initial={editing < policies.length ? policies[editing] : null}
                saving={saving}
                onDraft={setDraftDoc}
                onCancel={() => {
                  setEditing(null);
                  setDraftDoc(null);
                }}
                onSave={async (p) => {
                  const ok = await savePolicies(withPolicy(policies, editing, p), editing < policies.length ? `Policy ${p.name} saved` : `Policy ${p.name} added`);
                  if (ok) {
                    setEditing(null);
                    setDraftDoc(null);
                  }
                  return ok;
                }}
              />
            </div>
          </div>
        )}
        <DataTable
          label={level === "workspace" ? "Workspace policies" : "Organization policies"}
          columns={columns}
          rows={policies}
          rowKey={(p) => p.name}
          maxHeight="none"
          empty={
            <EmptyState
              compact
              icon="shield"
              title="No policies yet"
              description={
                level === "workspace"
                  ? "Add one to deny, ask about or allow calls before they run, e.g. deny Bash with command “git push --force*”."
                  : "Policies added here apply to every workspace of the organization."
              }
            />
          }
        />
      </Section>

      <RiskRulesSection riskRules={riskRules} hits={hits} rangeLabel={rangeLabel} />

      <PolicyTestBox scope={scope} draft={draftDoc} />

      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(o) => !o && setDeleting(null)}
        tone="danger"
        title={deleting !== null && policies[deleting] ? `Delete policy ${policies[deleting].name}?` : "Delete policy?"}
        description="Calls it matched are decided by the other policies and the built-in rules from the next check on. The change is recorded in the audit log."
        confirmLabel="Delete"
        onConfirm={async () => {
          if (deleting === null) return;
          const name = policies[deleting].name;
          const ok = await savePolicies(
            policies.filter((_, j) => j !== deleting),
            `Policy ${name} deleted`,
          );
          if (!ok) throw new Error("Nothing was deleted");
          setDeleting(null);
          if (editing !== null) setEditing(null);
        }}
      />
    </div>
  );
}

function RiskRulesSection({ riskRules, hits, rangeLabel }: { riskRules: RiskRuleInfo[]; hits: HitMap; rangeLabel: string }) {
  const { doc, inherited, level, canEdit, saving, save } = useConfigEditor();
  const own = doc.risk_rules ?? {};
  const org = level === "workspace" ? (inherited?.risk_rules ?? {}) : {};
  const enabled = own.enabled ?? org.enabled ?? true;
  const disabled = new Set(own.disabled ?? org.disabled ?? []);
  const fromOrg = level === "workspace" && own.disabled === undefined && org.disabled !== undefined;
  const [pending, setPending] = useState<string | null>(null);

  const write = async (risk: NonNullable<SnakeConfigDocument["risk_rules"]>, message: string) => {
    const next = cloneDoc(doc);
    next.risk_rules = risk;
    await save(next, { successMessage: message });
  };
  const toggle = async (name: string, on: boolean) => {
    const list = new Set(disabled);
    if (on) list.delete(name);
    else list.add(name);
    setPending(name);
    try {
      await write({ ...own, disabled: riskRules.map((r) => r.name).filter((n) => list.has(n)) }, `${name} turned ${on ? "on" : "off"}`);
    } finally {
      setPending(null);
    }
  };

  return (
    <Section
      id="risk-rules"
      title="Built-in risk rules"
      description={`Calls that can do lasting harm on their first try, checked for shell tools (command) and file tools (path). On by default; an allow policy exempts the calls it matches. Hits: ${rangeLabel}.`}
    >
      {!enabled && (
        <div className="callout" data-tone="warning" role="status">
          <Icon name="alert" />
          <span className="row row-wrap" style={{ gap: 8 }}>
            Every built-in rule is off (<span className="mono">risk_rules.enabled: false</span>
            {level === "workspace" && own.enabled === undefined ? " in the organization" : ""}).
            <Guarded canEdit={canEdit}>
              <Button size="xs" disabled={!canEdit || saving} onClick={() => void write({ ...own, enabled: true }, "Built-in risk rules turned on")}>
                Turn them on
              </Button>
            </Guarded>
          </span>
        </div>
      )}
      {fromOrg && <p className="subtle text-sm">The switches below follow the organization until you change one here.</p>}
      <ul className="pol-rules card" aria-label="Built-in risk rules">
        {riskRules.map((r) => {
          const on = enabled && !disabled.has(r.name);
          const hit = hits[`builtin:${r.name}`];
          return (
            <li key={r.name} className="pol-rule">
              <div className="pol-rule-text">
                <span className="row row-wrap" style={{ gap: 8 }}>
                  <span className="mono strong">{r.name}</span>
                  <DecisionBadge decision={r.decision} />
                  <Badge tone="outline">{r.appliesTo === "shell" ? "shell tools" : "file tools"}</Badge>
                </span>
                <span className="text-sm muted">
                  <MatchesText text={r.matches} />
                </span>
              </div>
              <HitsCell hit={hit} unit />
              <Guarded canEdit={canEdit}>
                <Toggle
                  aria-label={`${r.name} ${on ? "on" : "off"}`}
                  checked={on}
                  disabled={!canEdit || !enabled || saving || pending !== null}
                  onChange={(e) => void toggle(r.name, e.target.checked)}
                />
              </Guarded>
            </li>
          );
        })}
      </ul>
    </Section>
  );
}
