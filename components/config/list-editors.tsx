"use client";

/** Extractor rules, security patterns and retention of one level. */
import { useState } from "react";
import { Button, Checkbox, Field, NumberInput, Select, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { compileSecurityPattern, DEFAULT_SECURITY_PATTERNS } from "@/server/engine/classify";
import { DEFAULT_RETENTION_DAYS, type SnakeConfigDocument } from "@/server/engine/config";
import type { Extractor, ExtractorKind } from "@/server/engine/types";
import { cloneDoc, issuesUnder, ReadOnlyNotice, useConfigEditor } from "./config-context";
import { EXTRACTOR_KINDS } from "./meta";

/** Save for one editor: enabled only while it has unsaved changes (like every Save of the settings tabs). */
function SaveBar({ onSave, dirty, invalid, label }: { onSave: () => void; dirty: boolean; invalid: boolean; label: string }) {
  const { canEdit, saving } = useConfigEditor();
  if (!canEdit) return null;
  return (
    <div className="form-actions">
      <Button variant="primary" onClick={onSave} disabled={!dirty} loading={saving}>
        {label}
      </Button>
      {invalid && (
        <span className="field-error">
          <Icon name="alertCircle" size={14} /> Fix the highlighted fields; nothing was saved.
        </span>
      )}
    </div>
  );
}

// ---------------------------------------------------------------------------
// Extractors
// ---------------------------------------------------------------------------

function sameExtractors(a: Extractor[], b: Extractor[]): boolean {
  return a.length === b.length && a.every((x, i) => x.tool === b[i].tool && x.kind === b[i].kind && x.field === b[i].field);
}

export function ExtractorsEditor() {
  const { doc, inherited, level, canEdit, save } = useConfigEditor();
  const inheritedList = (level === "workspace" ? inherited?.extractors : undefined) ?? [];
  const [override, setOverride] = useState(doc.extractors !== undefined);
  const [rows, setRows] = useState<Extractor[]>(() => (doc.extractors ?? inheritedList).map((e) => ({ ...e })));
  const dirty = override !== (doc.extractors !== undefined) || (override && !sameExtractors(rows, doc.extractors ?? []));
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});

  const errors: Record<string, string> = {};
  if (override)
    rows.forEach((r, i) => {
      if (!r.tool.trim()) errors[`[${i}].tool`] = "Enter a tool-name glob";
      if (r.kind !== "hash" && !r.field.trim()) errors[`[${i}].field`] = `Field is required for kind ${r.kind}`;
    });
  const err = (k: string) => (submitted ? errors[k] : undefined) ?? serverErrors[k];
  const update = (i: number, patch: Partial<Extractor>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const move = (i: number, d: -1 | 1) => {
    const next = [...rows];
    const [x] = next.splice(i, 1);
    next.splice(i + d, 0, x);
    setRows(next);
  };

  const onSave = async () => {
    setSubmitted(true);
    setServerErrors({});
    if (Object.keys(errors).length) return;
    const next: SnakeConfigDocument = cloneDoc(doc);
    if (override) next.extractors = rows.map((r) => ({ tool: r.tool.trim(), kind: r.kind, field: r.field.trim() }));
    else delete next.extractors;
    const r = await save(next, { successMessage: "Extractor rules saved" });
    if (r.ok) setRows((r.document.extractors ?? inheritedList).map((e) => ({ ...e })));
    else setServerErrors(issuesUnder(r.issues, "extractors"));
  };

  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <Section
        title="Extractor rules"
        description="Which argument identifies a call in its failure key, by tool-name glob (* and ?). The first matching rule wins; tools no rule matches use the built-in extraction (file, HTTP, command and MCP tools, else an arguments hash)."
      >
        <div className="card">
          <div className="card-body stack">
            {level === "workspace" && (
              <Checkbox
                label="Set extractor rules for this workspace"
                hint={override ? "These rules replace the organization's." : `Inherited from the organization (${inheritedList.length} rule${inheritedList.length === 1 ? "" : "s"}).`}
                checked={override}
                disabled={!canEdit}
                onChange={(e) => {
                  setOverride(e.target.checked);
                  if (!e.target.checked) setRows(inheritedList.map((x) => ({ ...x })));
                }}
              />
            )}
            {rows.length === 0 ? (
              <div className="subtle text-sm">No extractor rules: every tool uses the built-in extraction.</div>
            ) : (
              <ol className="dash2-extractors">
                {rows.map((r, i) => (
                  <li key={i} className="dash2-extractor-row">
                    <span className="dash2-order num subtle">{i + 1}</span>
                    <Field label="Tool glob" error={err(`[${i}].tool`)}>
                      <TextInput mono size="sm" value={r.tool} placeholder="mcp__github__*" disabled={!canEdit || !override} onChange={(e) => update(i, { tool: e.target.value })} />
                    </Field>
                    <Field label="Kind">
                      <Select
                        size="sm"
                        value={r.kind}
                        disabled={!canEdit || !override}
                        onChange={(e) => update(i, { kind: e.target.value as ExtractorKind })}
                        options={EXTRACTOR_KINDS.map((k) => ({ value: k.value, label: k.label }))}
                      />
                    </Field>
                    <Field label="Argument field" error={err(`[${i}].field`)}>
                      <TextInput
                        mono
                        size="sm"
                        value={r.field}
                        placeholder={r.kind === "hash" ? "(not needed)" : r.kind === "url" ? "url" : r.kind === "command" ? "command" : "path"}
                        disabled={!canEdit || !override}
                        onChange={(e) => update(i, { field: e.target.value })}
                      />
                    </Field>
                    {canEdit && override && (
                      <div className="row dash2-row-actions">
                        <Button size="xs" variant="ghost" iconOnly aria-label="Move up" disabled={i === 0} onClick={() => move(i, -1)}>
                          <Icon name="chevronUp" />
                        </Button>
                        <Button size="xs" variant="ghost" iconOnly aria-label="Move down" disabled={i === rows.length - 1} onClick={() => move(i, 1)}>
                          <Icon name="chevronDown" />
                        </Button>
                        <Button size="xs" variant="ghost" iconOnly aria-label={`Remove rule ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                          <Icon name="x" />
                        </Button>
                      </div>
                    )}
                  </li>
                ))}
              </ol>
            )}
            {canEdit && override && (
              <div>
                <Button size="sm" onClick={() => setRows([...rows, { tool: "", kind: "path", field: "path" }])}>
                  <Icon name="plus" /> Add rule
                </Button>
              </div>
            )}
          </div>
        </div>
      </Section>
      <SaveBar onSave={onSave} dirty={dirty} invalid={submitted && Object.keys(errors).length > 0} label="Save extractor rules" />
    </div>
  );
}

// ---------------------------------------------------------------------------
// Security patterns
// ---------------------------------------------------------------------------

function regexError(p: string): string | null {
  if (!p.trim()) return "Enter a pattern";
  if (p.length > 2000) return "At most 2000 characters";
  try {
    compileSecurityPattern(p);
    return null;
  } catch (e) {
    return `Not a valid regular expression: ${(e as Error).message}`;
  }
}

export function SecurityPatternsEditor() {
  const { doc, inherited, level, canEdit, save } = useConfigEditor();
  const inheritedList = (level === "workspace" ? inherited?.security_patterns : undefined) ?? [...DEFAULT_SECURITY_PATTERNS];
  const inheritedFrom = level === "workspace" && inherited?.security_patterns ? "organization" : "built-in defaults";
  const [override, setOverride] = useState(doc.security_patterns !== undefined);
  const [rows, setRows] = useState<string[]>(() => [...(doc.security_patterns ?? inheritedList)]);
  const dirty = override !== (doc.security_patterns !== undefined) || (override && JSON.stringify(rows) !== JSON.stringify(doc.security_patterns));
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [test, setTest] = useState("");

  const errors: Record<string, string> = {};
  if (override)
    rows.forEach((p, i) => {
      const e = regexError(p);
      if (e) errors[`[${i}]`] = e;
    });
  const matches = test.trim()
    ? rows.filter((p) => {
        try {
          return compileSecurityPattern(p).test(test);
        } catch {
          return false;
        }
      })
    : [];

  const onSave = async () => {
    setSubmitted(true);
    setServerErrors({});
    if (Object.keys(errors).length) return;
    const next: SnakeConfigDocument = cloneDoc(doc);
    if (override) next.security_patterns = rows;
    else delete next.security_patterns;
    const r = await save(next, { successMessage: "Security patterns saved" });
    if (r.ok) setRows([...(r.document.security_patterns ?? inheritedList)]);
    else setServerErrors(issuesUnder(r.issues, "security_patterns"));
  };

  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <Section
        title="Security patterns"
        description="Regular expressions (JavaScript syntax, case-insensitive) matched against the full command of a failed command-tool call. A match makes the failure a security failure: the key and the whole tool are blocked at once."
      >
        <div className="card">
          <div className="card-body stack">
            <Checkbox
              label={`Set security patterns at ${level} level`}
              hint={override ? `These patterns replace the ${inheritedFrom}.` : `Using the ${inheritedFrom} (${inheritedList.length} patterns).`}
              checked={override}
              disabled={!canEdit}
              onChange={(e) => {
                setOverride(e.target.checked);
                if (!e.target.checked) setRows([...inheritedList]);
              }}
            />
            <ol className="dash2-regex-list">
              {rows.map((p, i) => {
                const e = (submitted || p !== "" ? errors[`[${i}]`] : undefined) ?? serverErrors[`[${i}]`];
                return (
                  <li key={i} className="dash2-regex-row">
                    <Field label={`Pattern ${i + 1}`} error={override ? e : undefined}>
                      <TextInput mono size="sm" value={p} disabled={!canEdit || !override} onChange={(ev) => setRows(rows.map((x, j) => (j === i ? ev.target.value : x)))} />
                    </Field>
                    {canEdit && override && (
                      <Button size="xs" variant="ghost" iconOnly aria-label={`Remove pattern ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                        <Icon name="x" />
                      </Button>
                    )}
                  </li>
                );
              })}
            </ol>
            {canEdit && override && (
              <div>
                <Button size="sm" onClick={() => setRows([...rows, ""])}>
                  <Icon name="plus" /> Add pattern
                </Button>
              </div>
            )}
            <div className="divider" />
            <Field label="Try a command" hint={test.trim() ? (matches.length ? `Matches ${matches.length} pattern${matches.length === 1 ? "" : "s"}: a failure of this command would be a security failure.` : "No pattern matches.") : "Type a command to see whether a pattern above matches it."}>
              <TextInput mono size="sm" value={test} placeholder="sudo rm -rf /" onChange={(e) => setTest(e.target.value)} />
            </Field>
          </div>
        </div>
      </Section>
      <SaveBar onSave={onSave} dirty={dirty} invalid={submitted && Object.keys(errors).length > 0} label="Save security patterns" />
    </div>
  );
}

// ---------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------

export function RetentionEditor() {
  const { doc, inheritedCamel, level, canEdit, save, saving } = useConfigEditor();
  const inheritedDays = (level === "workspace" ? inheritedCamel.retentionDays : undefined) ?? DEFAULT_RETENTION_DAYS;
  const inheritedLabel = level === "workspace" && inheritedCamel.retentionDays !== undefined ? "organization" : "default";
  const [text, setText] = useState(doc.retention_days === undefined ? "" : String(doc.retention_days));
  const [submitted, setSubmitted] = useState(false);
  const [serverError, setServerError] = useState<string | null>(null);
  const n = Number(text.trim());
  const error = text.trim() === "" ? null : !Number.isInteger(n) || n < 1 || n > 3650 ? "A whole number of days from 1 to 3650" : null;
  const dirty = text.trim() !== (doc.retention_days === undefined ? "" : String(doc.retention_days));
  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <Section
        title="Retention"
        description="Raw events and failure history older than this are deleted by the pruning job. Trust states, model profiles and daily roll-ups are kept."
      >
        <div className="card">
          <form
            className="card-body stack"
            noValidate
            onSubmit={async (e) => {
              e.preventDefault();
              setSubmitted(true);
              setServerError(null);
              if (error) return;
              const next: SnakeConfigDocument = cloneDoc(doc);
              if (text.trim() === "") delete next.retention_days;
              else next.retention_days = n;
              const r = await save(next, { successMessage: "Retention saved" });
              if (!r.ok) setServerError(r.issues.find((i) => i.path === "retention_days")?.message ?? r.message);
            }}
          >
            <div style={{ maxWidth: 320 }}>
              <Field label="Keep raw events for" hint={`Empty inherits ${inheritedDays} days (${inheritedLabel}).`} error={(submitted || text !== "" ? error : null) ?? serverError ?? undefined}>
                <NumberInput value={text} suffix="days" min={1} max={3650} step={1} placeholder={String(inheritedDays)} disabled={!canEdit} onChange={(e) => setText(e.target.value)} />
              </Field>
            </div>
            {canEdit && (
              <div className="form-actions">
                <Button type="submit" variant="primary" disabled={!dirty} loading={saving}>
                  Save retention
                </Button>
              </div>
            )}
          </form>
        </div>
      </Section>
    </div>
  );
}
