"use client";

/**
 * One policy's editor: name, tool glob, argument patterns (glob / regex / equals), decision and
 * reason. Validated as you type with the engine's own document parser (the same schema
 * `wsConfig.put` / `orgConfig.put` apply): the candidate list is parsed whole and each issue is
 * shown next to its field.
 */
import { useMemo, useState } from "react";
import { Button, Field, Select, TextInput, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { parseConfigDocument, type SnakeConfigDocument } from "@/server/engine/config";
import type { ArgPattern, Policy, PolicyDecision } from "@/server/engine/policies";

export type ArgKind = "glob" | "regex" | "equals";
export interface ArgRow {
  path: string;
  kind: ArgKind;
  value: string;
}
export interface PolicyDraft {
  name: string;
  tool: string;
  decision: PolicyDecision;
  reason: string;
  args: ArgRow[];
}

const DECISION_OPTIONS = [
  { value: "deny", label: "Deny" },
  { value: "ask", label: "Ask a person" },
  { value: "allow", label: "Allow (exempt from built-in rules)" },
];

const KIND_OPTIONS = [
  { value: "glob", label: "Glob" },
  { value: "regex", label: "Regex" },
  { value: "equals", label: "Equals (JSON)" },
];

function draftOf(p: Policy | null): PolicyDraft {
  if (!p) return { name: "", tool: "", decision: "deny", reason: "", args: [] };
  return {
    name: p.name,
    tool: p.tool,
    decision: p.decision,
    reason: p.reason ?? "",
    args: Object.entries(p.args ?? {}).map(([path, pat]) =>
      typeof pat === "string"
        ? { path, kind: "glob" as const, value: pat }
        : "regex" in pat
          ? { path, kind: "regex" as const, value: pat.regex }
          : { path, kind: "equals" as const, value: JSON.stringify(pat.equals) },
    ),
  };
}

/** The draft as a policy of the document, and the problems found before the schema (JSON of `equals`, paths). */
function policyOf(d: PolicyDraft): { policy: Policy; local: Record<string, string> } {
  const local: Record<string, string> = {};
  const args: Record<string, ArgPattern> = {};
  d.args.forEach((a, i) => {
    const path = a.path.trim();
    if (!path) local[`args[${i}].path`] = "Enter an argument path, e.g. command or options.force";
    else if (path.split(".").some((seg) => seg === "")) local[`args[${i}].path`] = "Dot-separated names, none empty (options.force)";
    else if (Object.prototype.hasOwnProperty.call(args, path)) local[`args[${i}].path`] = `'${path}' is listed twice`;
    let pattern: ArgPattern = a.value;
    if (a.kind === "regex") pattern = { regex: a.value };
    if (a.kind === "equals") {
      try {
        pattern = { equals: JSON.parse(a.value) as unknown };
      } catch {
        local[`args[${i}].value`] = 'Not valid JSON (a string needs quotes: "POST")';
        pattern = { equals: null };
      }
    }
    if (path) Object.defineProperty(args, path, { value: pattern, enumerable: true, writable: true, configurable: true });
  });
  const policy: Policy = { name: d.name.trim(), tool: d.tool.trim(), decision: d.decision };
  if (d.args.length) policy.args = args;
  if (d.reason.trim()) policy.reason = d.reason.trim();
  return { policy, local };
}

/** The list with `index` replaced by the draft (appended when index is the list's length). */
export function withPolicy(list: Policy[], index: number, policy: Policy): Policy[] {
  const next = list.slice();
  next[index] = policy;
  return next;
}

/** Field errors of the draft at `index` of the candidate document, keyed as the form's fields. */
function validateDraft(doc: SnakeConfigDocument, index: number, d: PolicyDraft): { errors: Record<string, string>; policy: Policy } {
  const { policy, local } = policyOf(d);
  const errors: Record<string, string> = { ...local };
  const parsed = parseConfigDocument({ ...doc, policies: withPolicy(doc.policies ?? [], index, policy) });
  if (!parsed.ok) {
    for (const issue of parsed.issues) {
      const seg = issue.segments ?? [];
      if (seg[0] !== "policies" || seg[1] !== index) continue;
      const bare = issue.message.replace(/^[^:]*: /, "");
      const message = bare.charAt(0).toUpperCase() + bare.slice(1);
      let key: string = String(seg[2] ?? "");
      if (key === "args" && seg[3] !== undefined) {
        const row = d.args.findIndex((a) => a.path.trim() === seg[3]);
        key = row >= 0 ? `args[${row}].${seg[4] === undefined || seg[4] === "regex" ? "value" : "path"}` : "args";
      }
      if (key && !errors[key]) errors[key] = message;
      else if (!key && !errors.form) errors.form = message;
    }
  }
  return { errors, policy };
}

export function PolicyForm({
  doc,
  index,
  initial,
  saving,
  onCancel,
  onSave,
  onDraft,
}: {
  doc: SnakeConfigDocument;
  index: number;
  initial: Policy | null;
  saving: boolean;
  onCancel: () => void;
  onSave: (policy: Policy) => Promise<boolean>;
  /** The candidate document while it is valid (the test box tests it), else null. */
  onDraft?: (candidate: SnakeConfigDocument | null) => void;
}) {
  const [d, setD] = useState<PolicyDraft>(() => draftOf(initial));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const { errors, policy } = useMemo(() => validateDraft(doc, index, d), [doc, index, d]);
  const shown = (key: string) => (submitted || touched.has(key) ? errors[key] : undefined);
  const touch = (key: string) => setTouched((t) => (t.has(key) ? t : new Set(t).add(key)));
  const valid = Object.keys(errors).length === 0;

  const update = (patch: Partial<PolicyDraft>, key?: string) => {
    const next = { ...d, ...patch };
    setD(next);
    if (key) touch(key);
    if (onDraft) {
      const v = validateDraft(doc, index, next);
      onDraft(Object.keys(v.errors).length === 0 ? { ...doc, policies: withPolicy(doc.policies ?? [], index, v.policy) } : null);
    }
  };
  const updateArg = (i: number, patch: Partial<ArgRow>, key: string) =>
    update({ args: d.args.map((a, j) => (j === i ? { ...a, ...patch } : a)) }, `args[${i}].${key}`);

  const submit = async () => {
    setSubmitted(true);
    if (!valid) return;
    await onSave(policy);
  };

  return (
    <form
      className="pol-form"
      aria-label={initial ? `Edit policy ${initial.name}` : "New policy"}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <div className="pol-form-grid">
        <Field label="Name" error={shown("name")} hint="a-z, 0-9, _ . - (unique)">
          <TextInput mono size="sm" value={d.name} placeholder="no-prod-writes" autoFocus onChange={(e) => update({ name: e.target.value }, "name")} />
        </Field>
        <Field label="Tool" error={shown("tool")} hint="Glob on the tool name, any case (* and ?)">
          <TextInput mono size="sm" value={d.tool} placeholder="Bash" onChange={(e) => update({ tool: e.target.value }, "tool")} />
        </Field>
        <Field label="Decision">
          <Select size="sm" value={d.decision} options={DECISION_OPTIONS} onChange={(e) => update({ decision: e.target.value as PolicyDecision }, "decision")} />
        </Field>
      </div>

      <fieldset className="pol-args">
        <legend className="field-label">Arguments</legend>
        <p className="field-hint">
          Every listed argument must match. A glob’s <span className="mono">*</span> stops at <span className="mono">/</span> except in a shell
          command, which is also tried per sub-command (<span className="mono">&&</span>, <span className="mono">|</span>, <span className="mono">;</span>).
        </p>
        {d.args.length === 0 && <p className="subtle text-sm">No argument patterns: the policy covers every call of the tool.</p>}
        {d.args.map((a, i) => (
          <div className="pol-arg-row" key={i}>
            <Field label="Path" error={shown(`args[${i}].path`)}>
              <TextInput mono size="sm" value={a.path} placeholder="command" onChange={(e) => updateArg(i, { path: e.target.value }, "path")} />
            </Field>
            <Field label="Kind">
              <Select size="sm" value={a.kind} options={KIND_OPTIONS} onChange={(e) => updateArg(i, { kind: e.target.value as ArgKind }, "value")} />
            </Field>
            <Field label="Pattern" error={shown(`args[${i}].value`)}>
              <TextInput
                mono
                size="sm"
                value={a.value}
                placeholder={a.kind === "regex" ? "^git push .*--force" : a.kind === "equals" ? '"POST"' : "rm -rf ~*"}
                onChange={(e) => updateArg(i, { value: e.target.value }, "value")}
              />
            </Field>
            <Button size="xs" variant="ghost" iconOnly className="pol-arg-remove" aria-label={`Remove argument ${i + 1}`} onClick={() => update({ args: d.args.filter((_, j) => j !== i) }, "args")}>
              <Icon name="x" />
            </Button>
          </div>
        ))}
        {shown("args") && <span className="field-error">{shown("args")}</span>}
        <div>
          <Button size="xs" onClick={() => update({ args: [...d.args, { path: d.args.length ? "" : "command", kind: "glob", value: "" }] })}>
            <Icon name="plus" /> Add argument
          </Button>
        </div>
      </fieldset>

      <Field label="Reason" optional error={shown("reason")} hint="Shown to the agent and the person asked; a default names the policy">
        <Textarea rows={2} value={d.reason} placeholder="Production is written by the release pipeline only" onChange={(e) => update({ reason: e.target.value }, "reason")} />
      </Field>

      {errors.form && (submitted || touched.size > 0) && <span className="field-error">{errors.form}</span>}
      <div className="form-actions">
        <Button type="submit" variant="primary" size="sm" loading={saving} disabled={submitted && !valid}>
          {initial ? "Save policy" : "Add policy"}
        </Button>
        <Button size="sm" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
        {submitted && !valid && (
          <span className="field-error">
            <Icon name="alertCircle" size={14} /> Fix the highlighted fields; nothing was saved.
          </span>
        )}
      </div>
    </form>
  );
}
