"use client";

/**
 * Rules editor (SPEC 4.1): the default rule and the tool / domain / plugin rules of one level,
 * every rule field editable (empty = inherit), errors next to the field before anything is sent,
 * and a "which rule applies to tool X" preview backed by the engine's describeRuleResolution.
 */
import { useQuery } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Button, Checkbox, Field, NumberInput, Select, TextInput } from "@/components/form";
import { humanize } from "@/components/format";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { Badge } from "@/components/state-badge";
import { errorMessage, useTRPC } from "@/lib/trpc/client";
import type { SnakeConfigDocument, SnakeRule } from "@/server/engine/config";
import { BUILTIN_RULE } from "@/server/engine/rules";
import type { RuleInput, Severity } from "@/server/engine/types";
import { cloneDoc, issuesUnder, ReadOnlyNotice, useConfigEditor } from "./config-context";
import { RULE_FIELD_META, SEVERITY_OPTIONS, formatRuleValue, numberFieldChars, ruleSummary, validateNumberText, type RuleFieldMeta } from "./meta";

type RuleKind = "tool_rules" | "domain_rules" | "plugin_rules";
const KIND_META: Record<RuleKind, { title: string; singular: string; nameLabel: string; description: string; placeholder: string }> = {
  tool_rules: {
    title: "Tool rules",
    singular: "tool rule",
    nameLabel: "Tool name",
    description: "Apply to one tool by exact name. The most specific level: tool > domain > plugin > default.",
    placeholder: "bash",
  },
  domain_rules: {
    title: "Domain rules",
    singular: "domain rule",
    nameLabel: "Domain",
    description: "Apply to calls of a domain (event.domain, the URL host of HTTP tools or the MCP server). Domain rules also keep a domain-level state.",
    placeholder: "api.example.com",
  },
  plugin_rules: {
    title: "Plugin rules",
    singular: "plugin rule",
    nameLabel: "Plugin name",
    description: "Apply to every tool of a plugin (pluginName on the call).",
    placeholder: "github",
  },
};

type ChainLink = { rule: RuleInput | undefined; label: string };

function inheritedFrom(meta: RuleFieldMeta, chain: ChainLink[]): { value: unknown; label: string } {
  for (const link of chain) {
    const v = (link.rule as Record<string, unknown> | undefined)?.[meta.camel];
    if (v !== undefined && v !== null) return { value: v, label: link.label };
  }
  return { value: undefined, label: "not set anywhere" };
}

function snakeToCamelRule(r: SnakeRule | undefined): RuleInput | undefined {
  if (!r) return undefined;
  const out: Record<string, unknown> = {};
  for (const m of RULE_FIELD_META) if ((r as Record<string, unknown>)[m.key] !== undefined) out[m.camel] = (r as Record<string, unknown>)[m.key];
  return out as RuleInput;
}

// ---------------------------------------------------------------------------
// Rule form
// ---------------------------------------------------------------------------

interface FormState {
  name: string;
  numbers: Record<string, string>;
  notify: "inherit" | "on" | "off";
  severityInherit: boolean;
  severities: Severity[];
}

function initialState(rule: SnakeRule | undefined, name = ""): FormState {
  const r = (rule ?? {}) as Record<string, unknown>;
  const numbers: Record<string, string> = {};
  for (const m of RULE_FIELD_META) if (m.kind !== "bool" && m.kind !== "severities") numbers[m.key] = r[m.key] === undefined ? "" : String(r[m.key]);
  return {
    name,
    numbers,
    notify: r.notify_user === undefined ? "inherit" : r.notify_user ? "on" : "off",
    severityInherit: r.severity_filter === undefined,
    severities: Array.isArray(r.severity_filter) ? (r.severity_filter as Severity[]) : [],
  };
}

function validateForm(s: FormState, opts: { nameRequired: boolean; takenNames: string[]; originalName?: string }) {
  const errors: Record<string, string> = {};
  const rule: Record<string, unknown> = {};
  if (opts.nameRequired) {
    const n = s.name.trim();
    if (!n) errors.name = "Enter a name";
    else if (n.length > 256) errors.name = "At most 256 characters";
    else if (n !== opts.originalName && opts.takenNames.includes(n)) errors.name = "A rule with this name already exists at this level";
  }
  for (const m of RULE_FIELD_META) {
    if (m.kind === "bool" || m.kind === "severities") continue;
    const r = validateNumberText(m, s.numbers[m.key] ?? "");
    if (r.error) errors[m.key] = r.error;
    else if (r.value !== undefined) rule[m.key] = r.value;
  }
  if (s.notify !== "inherit") rule.notify_user = s.notify === "on";
  if (!s.severityInherit) {
    if (s.severities.length === 0) errors.severity_filter = "Pick at least one severity, or inherit";
    else rule.severity_filter = SEVERITY_OPTIONS.filter((x) => s.severities.includes(x));
  }
  return { errors, rule: rule as SnakeRule, name: s.name.trim() };
}

function RuleForm({
  title,
  initial,
  initialName,
  nameLabel,
  namePlaceholder,
  takenNames = [],
  chain,
  pathPrefix,
  onSubmit,
  onCancel,
}: {
  title: string;
  initial: SnakeRule | undefined;
  initialName?: string;
  /** Set for tool / domain / plugin rules. */
  nameLabel?: string;
  namePlaceholder?: string;
  takenNames?: string[];
  chain: ChainLink[];
  /** Document path of the rule for mapping server issues ("default_rule", "tool_rules"). */
  pathPrefix: (name: string) => string;
  onSubmit: (rule: SnakeRule, name: string) => Promise<{ ok: boolean; issues?: { path: string; message: string }[]; message?: string }>;
  onCancel: () => void;
}) {
  const { saving } = useConfigEditor();
  const [s, setS] = useState<FormState>(() => initialState(initial, initialName));
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const focusFirstInvalid = () =>
    requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
  const v = validateForm(s, { nameRequired: !!nameLabel, takenNames, originalName: initialName });
  const show = (k: string) => (submitted || touched[k] ? v.errors[k] : undefined) ?? serverErrors[k];
  const touch = (k: string) => setTouched((t) => ({ ...t, [k]: true }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSubmitted(true);
    setServerErrors({});
    setFormError(null);
    if (Object.keys(v.errors).length > 0) {
      setFormError("Fix the highlighted fields; nothing was saved.");
      focusFirstInvalid();
      return;
    }
    const res = await onSubmit(v.rule, v.name);
    if (!res.ok) {
      const mapped = issuesUnder(res.issues ?? [], pathPrefix(v.name));
      setServerErrors(mapped);
      setFormError(res.message ?? "Nothing was saved.");
      focusFirstInvalid();
    }
  };

  return (
    <form ref={formRef} className="dash2-rule-form stack" onSubmit={submit} noValidate aria-label={title}>
      <div className="row">
        <h3 className="section-title">{title}</h3>
      </div>
      {nameLabel && (
        <Field label={nameLabel} required error={show("name")}>
          <TextInput
            value={s.name}
            placeholder={namePlaceholder}
            mono
            onChange={(e) => setS({ ...s, name: e.target.value })}
            onBlur={() => touch("name")}
            autoFocus
          />
        </Field>
      )}
      <div className="dash2-rule-grid">
        {RULE_FIELD_META.map((m) => {
          const inh = inheritedFrom(m, chain);
          const inhText = `${formatRuleValue(m, inh.value)} (${inh.label})`;
          if (m.kind === "bool")
            return (
              <Field key={m.key} label={m.label} hint={m.hint} error={show(m.key)}>
                <Select
                  value={s.notify}
                  onChange={(e) => setS({ ...s, notify: e.target.value as FormState["notify"] })}
                  options={[
                    { value: "inherit", label: `Inherit — ${inhText}` },
                    { value: "on", label: "on" },
                    { value: "off", label: "off" },
                  ]}
                />
              </Field>
            );
          if (m.kind === "severities")
            return (
              <div key={m.key} className="dash2-span-all">
                <Field label={m.label} hint={m.hint} error={show(m.key)}>
                  <div className="stack stack-sm" role="group" aria-label={m.label}>
                    <Checkbox
                      label={`Inherit — ${inhText}`}
                      checked={s.severityInherit}
                      onChange={(e) => {
                        touch(m.key);
                        setS({
                          ...s,
                          severityInherit: e.target.checked,
                          severities: !e.target.checked && s.severities.length === 0 ? ((inh.value as Severity[]) ?? []) : s.severities,
                        });
                      }}
                    />
                    {!s.severityInherit && (
                      <div className="dash2-checks">
                        {SEVERITY_OPTIONS.map((sev) => (
                          <Checkbox
                            key={sev}
                            label={humanize(sev)}
                            checked={s.severities.includes(sev)}
                            onChange={(e) => {
                              touch(m.key);
                              setS({ ...s, severities: e.target.checked ? [...s.severities, sev] : s.severities.filter((x) => x !== sev) });
                            }}
                          />
                        ))}
                      </div>
                    )}
                  </div>
                </Field>
              </div>
            );
          return (
            <Field key={m.key} label={m.label} hint={m.hint} error={show(m.key)}>
              <NumberInput
                value={s.numbers[m.key]}
                placeholder={`Inherit: ${formatRuleValue(m, inh.value)}`}
                title={`Empty inherits ${inhText}`}
                suffix={m.unit}
                step={m.step}
                chars={numberFieldChars(m)}
                onChange={(e) => {
                  touch(m.key);
                  setServerErrors((se) => ({ ...se, [m.key]: "" }));
                  setS({ ...s, numbers: { ...s.numbers, [m.key]: e.target.value } });
                }}
                onBlur={() => touch(m.key)}
              />
            </Field>
          );
        })}
      </div>
      {formError && (
        <div className="field-error" role="alert">
          <Icon name="alertCircle" size={14} /> {formError}
        </div>
      )}
      <div className="form-actions">
        <Button type="submit" variant="primary" loading={saving}>
          Save rule
        </Button>
        <Button onClick={onCancel} disabled={saving}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

// ---------------------------------------------------------------------------
// Default rule
// ---------------------------------------------------------------------------

function useChains() {
  const { level, camel, inheritedCamel } = useConfigEditor();
  const builtin: ChainLink = { rule: BUILTIN_RULE as RuleInput, label: "built-in" };
  if (level === "workspace") {
    return {
      forDefault: [{ rule: inheritedCamel.defaultRule, label: "organization default" }, builtin],
      forSpecific: [{ rule: camel.defaultRule, label: "workspace default" }, { rule: inheritedCamel.defaultRule, label: "organization default" }, builtin],
    };
  }
  return { forDefault: [builtin], forSpecific: [{ rule: camel.defaultRule, label: "organization default" }, builtin] };
}

function DefaultRuleCard() {
  const { doc, canEdit, save, level } = useConfigEditor();
  const chains = useChains();
  const [editing, setEditing] = useState(false);
  const own = (doc.default_rule ?? {}) as Record<string, unknown>;
  return (
    <Section
      title="Default rule"
      description={`Applies to every call no tool, domain or plugin rule matches; specific rules inherit its fields. Empty fields inherit from ${level === "workspace" ? "the organization default, then " : ""}the built-in values.`}
      actions={
        canEdit && !editing ? (
          <Button size="sm" onClick={() => setEditing(true)}>
            <Icon name="settings" /> Edit default rule
          </Button>
        ) : null
      }
    >
      <div className="card">
        {editing ? (
          <div className="card-body">
            <RuleForm
              title="Edit default rule"
              initial={doc.default_rule}
              chain={chains.forDefault}
              pathPrefix={() => "default_rule"}
              onCancel={() => setEditing(false)}
              onSubmit={async (rule) => {
                const next = cloneDoc(doc);
                if (Object.keys(rule).length) next.default_rule = rule;
                else delete next.default_rule;
                const r = await save(next, { successMessage: "Default rule saved" });
                if (r.ok) setEditing(false);
                return r;
              }}
            />
          </div>
        ) : (
          <div className="table-scroll">
            <table className="table" data-density="compact" data-testid="default-rule-table">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Set at this level</th>
                  <th scope="col">Effective value</th>
                </tr>
              </thead>
              <tbody>
                {RULE_FIELD_META.map((m) => {
                  const v = own[m.key];
                  const inh = inheritedFrom(m, chains.forDefault);
                  return (
                    <tr key={m.key} data-field={m.key}>
                      <th scope="row" className="config-field-name" title={m.hint} style={{ fontWeight: 500 }}>
                        {m.label}
                      </th>
                      <td className="mono text-sm" data-testid={`default-${m.key}`}>
                        {v === undefined ? <span className="subtle">inherit</span> : formatRuleValue(m, v)}
                      </td>
                      <td className="text-sm">
                        {v === undefined ? (
                          <>
                            <span className="mono">{formatRuleValue(m, inh.value)}</span> <span className="subtle">· {inh.label}</span>
                          </>
                        ) : (
                          <>
                            <span className="mono">{formatRuleValue(m, v)}</span> <span className="subtle">· this level</span>
                          </>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </Section>
  );
}

// ---------------------------------------------------------------------------
// Specific rules
// ---------------------------------------------------------------------------

function SpecificRules({ kind }: { kind: RuleKind }) {
  const { doc, inherited, canEdit, save, level } = useConfigEditor();
  const chains = useChains();
  const meta = KIND_META[kind];
  const own = (doc[kind] ?? {}) as Record<string, SnakeRule>;
  const orgRules = (level === "workspace" ? (inherited?.[kind] ?? {}) : {}) as Record<string, SnakeRule>;
  const [editing, setEditing] = useState<{ name: string | null; initial?: SnakeRule } | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const names = Object.keys(own).sort();
  const orgOnly = Object.keys(orgRules)
    .filter((n) => !(n in own))
    .sort();

  const write = async (mut: (next: SnakeConfigDocument) => void, message: string) => {
    const next = cloneDoc(doc);
    mut(next);
    if (next[kind] && Object.keys(next[kind]!).length === 0) delete next[kind];
    return save(next, { successMessage: message });
  };

  return (
    <Section
      title={meta.title}
      description={meta.description}
      actions={
        canEdit && !editing ? (
          <Button size="sm" onClick={() => setEditing({ name: null })}>
            <Icon name="plus" /> Add {meta.singular}
          </Button>
        ) : null
      }
    >
      <div className="card">
        {editing && (
          <div className="card-body dash2-form-panel">
            <RuleForm
              title={editing.name === null ? `Add ${meta.singular}` : `Edit ${meta.singular} “${editing.name}”`}
              initial={editing.initial}
              initialName={editing.name ?? ""}
              nameLabel={meta.nameLabel}
              namePlaceholder={meta.placeholder}
              takenNames={names}
              chain={chains.forSpecific}
              pathPrefix={(name) => `${kind}.${name}`}
              onCancel={() => setEditing(null)}
              onSubmit={async (rule, name) => {
                const r = await write((next) => {
                  const map = { ...((next[kind] ?? {}) as Record<string, SnakeRule>) };
                  if (editing.name !== null && editing.name !== name) delete map[editing.name];
                  map[name] = rule;
                  next[kind] = map;
                }, `${humanize(meta.singular)} “${name}” saved`);
                if (r.ok) setEditing(null);
                return r;
              }}
            />
          </div>
        )}
        {names.length === 0 && orgOnly.length === 0 ? (
          !editing && <div className="card-body subtle text-sm">No {meta.title.toLowerCase()} {level === "workspace" ? "in this workspace or its organization" : "at the organization level"}.</div>
        ) : (
          <div className="table-scroll">
            <table className="table" data-density="compact" aria-label={meta.title}>
              <thead>
                <tr>
                  <th scope="col">{meta.nameLabel}</th>
                  <th scope="col">Fields set</th>
                  <th scope="col" data-align="right">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {names.map((n) => (
                  <tr key={`own-${n}`}>
                    <td className="mono">{n}</td>
                    <td className="text-sm">{ruleSummary(own[n])}</td>
                    <td data-align="right" className="nowrap">
                      {canEdit && (
                        <span className="row" style={{ justifyContent: "flex-end", gap: 4 }}>
                          <Button size="xs" variant="ghost" onClick={() => setEditing({ name: n, initial: own[n] })} aria-label={`Edit ${meta.singular} ${n}`}>
                            Edit
                          </Button>
                          <Button size="xs" variant="ghost" onClick={() => setDeleting(n)} aria-label={`Delete ${meta.singular} ${n}`}>
                            Delete
                          </Button>
                        </span>
                      )}
                    </td>
                  </tr>
                ))}
                {orgOnly.map((n) => (
                  <tr key={`org-${n}`}>
                    <td className="mono">
                      {n}{" "}
                      <Badge tone="outline" square>
                        organization
                      </Badge>
                    </td>
                    <td className="text-sm muted">{ruleSummary(orgRules[n])}</td>
                    <td data-align="right" className="nowrap">
                      {canEdit && (
                        <Button size="xs" variant="ghost" onClick={() => setEditing({ name: n, initial: orgRules[n] })} title="Create a workspace rule of the same name; it replaces the organization's rule here">
                          Override
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(o) => !o && setDeleting(null)}
        title={`Delete ${meta.singular} “${deleting ?? ""}”?`}
        description="Calls it matched fall back to the next level (domain, plugin or the default rule)."
        tone="danger"
        confirmLabel="Delete rule"
        onConfirm={async () => {
          const name = deleting!;
          const r = await write((next) => {
            const map = { ...((next[kind] ?? {}) as Record<string, SnakeRule>) };
            delete map[name];
            next[kind] = map;
          }, `${humanize(meta.singular)} “${name}” deleted`);
          if (!r.ok) throw new Error(r.message);
        }}
      />
    </Section>
  );
}

// ---------------------------------------------------------------------------
// "Which rule applies" preview
// ---------------------------------------------------------------------------

type Origin = { from: string; level?: string; name?: string; scope?: string };
function originText(o: Origin): string {
  switch (o.from) {
    case "rule":
      return `${o.level} rule “${o.name}” (${o.scope})`;
    case "workspace_default":
      return "workspace default";
    case "organization_default":
      return "organization default";
    case "builtin":
      return "built-in";
    default:
      return "not set";
  }
}

function RulePreview() {
  const trpc = useTRPC();
  const { scope } = useConfigEditor();
  const [form, setForm] = useState({ toolName: "", pluginName: "", domain: "" });
  const [query, setQuery] = useState<typeof form | null>(null);
  const wsQ = useQuery(
    trpc.wsConfig.explainRule.queryOptions(
      { workspaceSlug: scope.level === "workspace" ? scope.workspaceSlug : "", ...(query ?? form) },
      { enabled: scope.level === "workspace" && !!query },
    ),
  );
  const orgQ = useQuery(
    trpc.orgConfig.explainRule.queryOptions(
      { organizationId: scope.level === "organization" ? scope.organizationId : "", ...(query ?? form) },
      { enabled: scope.level === "organization" && !!query },
    ),
  );
  const q = scope.level === "workspace" ? wsQ : orgQ;
  const data = q.data;
  return (
    <Section
      title="Which rule applies?"
      description={
        scope.level === "workspace"
          ? "Enter a call's tool, plugin and domain to see the rule the engine uses and where each value comes from."
          : "What a workspace without rules of its own would use for a call."
      }
    >
      <div className="card">
        <div className="card-body stack">
          <form
            className="dash2-preview-form"
            aria-label="Rule preview"
            onSubmit={(e) => {
              e.preventDefault();
              if (form.toolName.trim()) setQuery({ ...form });
            }}
          >
            <Field label="Tool name" required>
              <TextInput mono value={form.toolName} placeholder="http_request" onChange={(e) => setForm({ ...form, toolName: e.target.value })} />
            </Field>
            <Field label="Plugin" optional>
              <TextInput mono value={form.pluginName} placeholder="web" onChange={(e) => setForm({ ...form, pluginName: e.target.value })} />
            </Field>
            <Field label="Domain" optional>
              <TextInput mono value={form.domain} placeholder="api.example.com" onChange={(e) => setForm({ ...form, domain: e.target.value })} />
            </Field>
            <div className="dash2-preview-submit">
              <Button type="submit" variant="secondary" disabled={!form.toolName.trim()} loading={q.isFetching}>
                <Icon name="search" /> Explain
              </Button>
            </div>
          </form>
          {q.error && <div className="field-error">{errorMessage(q.error)}</div>}
          {data && (
            <div className="stack stack-sm" data-testid="rule-explanation">
              <div className="callout" data-tone="info">
                <Icon name="info" />
                <div>{data.summary[0]}</div>
              </div>
              <ul className="dash2-checked">
                {data.checked.map((c) => (
                  <li key={c.level}>
                    <Badge tone={c.matched ? "success" : "outline"} square>
                      {c.level}
                    </Badge>{" "}
                    {c.level === "default"
                      ? c.matched
                        ? "default rule applies"
                        : "not used"
                      : !c.name
                        ? <span className="subtle">no {c.level} given</span>
                        : c.matched
                          ? <>rule “<span className="mono">{c.name}</span>” matches ({c.scope})</>
                          : <span className="subtle">no rule for “<span className="mono">{c.name}</span>”</span>}
                  </li>
                ))}
              </ul>
              <div className="table-scroll">
                <table className="table" data-density="compact">
                  <thead>
                    <tr>
                      <th scope="col">Field</th>
                      <th scope="col">Value</th>
                      <th scope="col">From</th>
                    </tr>
                  </thead>
                  <tbody>
                    {RULE_FIELD_META.map((m) => {
                      const f = (data.fields as Record<string, { value: unknown; origin: Origin }>)[m.camel];
                      return (
                        <tr key={m.key}>
                          <th scope="row" style={{ fontWeight: 500 }}>
                            {m.label}
                          </th>
                          <td className="mono text-sm">{formatRuleValue(m, f?.value)}</td>
                          <td className="text-sm muted">{f ? originText(f.origin) : "—"}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </div>
          )}
        </div>
      </div>
    </Section>
  );
}

export function RulesEditor() {
  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <DefaultRuleCard />
      <SpecificRules kind="tool_rules" />
      <SpecificRules kind="domain_rules" />
      <SpecificRules kind="plugin_rules" />
      <RulePreview />
    </div>
  );
}
