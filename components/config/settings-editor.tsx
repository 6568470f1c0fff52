"use client";

/**
 * Settings with their sources (SPEC 6 "Settings"): every setting's effective value and where it
 * comes from (workspace / organization / default), with save and clear of this level's value;
 * plus the model-switch thresholds.
 */
import { useState } from "react";
import { Button, Field, NumberInput, Select, TextInput } from "@/components/form";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { Badge } from "@/components/state-badge";
import { DEFAULT_MODEL_SWITCH, type SnakeConfigDocument } from "@/server/engine/config";
import { resolveSettings } from "@/server/engine/settings";
import type { SettingSource } from "@/server/engine/types";
import { cloneDoc, ReadOnlyNotice, useConfigEditor } from "./config-context";
import {
  MODEL_SWITCH_META,
  SETTING_META,
  fieldError,
  formatSettingValue,
  numberFieldChars,
  ratioToPercentText,
  validateNumberText,
  validatePercentText,
  type ModelSwitchMeta,
  type SettingMeta,
} from "./meta";

function SourceBadge({ source }: { source: SettingSource }) {
  const tone = source === "workspace" ? "info" : source === "organization" ? "admin" : "outline";
  return (
    <Badge tone={tone} square>
      {source}
    </Badge>
  );
}

function encode(meta: SettingMeta, v: unknown): string {
  if (v === undefined || v === null) return "";
  if (meta.kind === "bool") return v ? "true" : "false";
  if (meta.kind === "list") return (v as string[]).join(", ");
  return String(v);
}

/** A row's text as typed → the value to store (undefined: not set at this level), or an error. */
function parseDraft(meta: SettingMeta, draft: string): { value?: unknown; error?: string } {
  if (draft.trim() === "") return { value: undefined };
  if (meta.kind === "list") {
    const list = draft
      .split(/[,\n]/)
      .map((s) => s.trim())
      .filter(Boolean);
    const error = fieldError(meta, list);
    return error ? { error } : { value: list };
  }
  if (meta.kind === "bool") return { value: draft === "true" };
  if (meta.kind === "number") return validateNumberText(meta, draft);
  return { value: draft };
}

function SettingRow({
  meta,
  draft,
  own,
  error,
  onChange,
}: {
  meta: SettingMeta;
  draft: string;
  own: unknown;
  error: string | null;
  onChange: (draft: string) => void;
}) {
  const { camel, inheritedCamel, level, canEdit, saving } = useConfigEditor();
  const effective =
    level === "workspace" ? resolveSettings(null, camel.settings ?? null, inheritedCamel.settings ?? null) : resolveSettings(null, null, camel.settings ?? null);
  const eff = effective[meta.camel];
  const dirty = draft !== encode(meta, own);

  const control =
    meta.kind === "number" ? (
      <NumberInput
        size="sm"
        aria-label={`${meta.label} (${level} value)`}
        value={draft}
        min={meta.min}
        max={meta.max}
        step={meta.step}
        chars={numberFieldChars(meta)}
        suffix={meta.unit}
        placeholder="not set"
        disabled={!canEdit}
        onChange={(e) => onChange(e.target.value)}
      />
    ) : meta.kind === "list" ? (
      <TextInput
        mono
        size="sm"
        className="dash2-setting-list-input"
        aria-label={`${meta.label} (${level} value)`}
        value={draft}
        placeholder="e.g. claude-sonnet, gpt-4.1"
        disabled={!canEdit}
        onChange={(e) => onChange(e.target.value)}
      />
    ) : (
      <Select
        size="sm"
        aria-label={`${meta.label} (${level} value)`}
        value={draft}
        disabled={!canEdit}
        onChange={(e) => onChange(e.target.value)}
        options={[
          { value: "", label: "— not set here —" },
          ...(meta.kind === "bool"
            ? [
                { value: "true", label: "on" },
                { value: "false", label: "off" },
              ]
            : (meta.options ?? [])),
        ]}
      />
    );

  return (
    <tr data-setting={meta.key} data-dirty={dirty || undefined}>
      <th scope="row" className="dash2-setting-name">
        <div style={{ fontWeight: 500 }}>{meta.label}</div>
        <div className="text-xs muted" style={{ fontWeight: 400 }}>
          {meta.hint}
        </div>
      </th>
      <td data-label="Effective">
        <div className="row row-wrap" style={{ gap: 6 }}>
          <span className="mono text-sm" data-testid={`effective-${meta.key}`}>
            {formatSettingValue(eff.value)}
          </span>
          <SourceBadge source={eff.source} />
        </div>
      </td>
      <td data-label="Set here">
        <div className="stack" style={{ gap: 4 }}>
          <div className="row row-wrap dash2-setting-controls">
            {control}
            {canEdit && (
              <Button size="sm" variant="ghost" disabled={draft === "" || saving} onClick={() => onChange("")} title={`Remove the ${level} value and inherit (on Save)`}>
                Clear
              </Button>
            )}
            {dirty && <span className="text-xs muted">unsaved</span>}
          </div>
          {error && (
            <span className="field-error">
              <Icon name="alertCircle" size={14} />
              {error}
            </span>
          )}
        </div>
      </td>
    </tr>
  );
}

/** Every setting of this level in one table with one Save (and one Discard) for all changed rows. */
function SettingsTable() {
  const { doc, level, canEdit, save, saving } = useConfigEditor();
  const own = (doc.settings ?? {}) as Record<string, unknown>;
  const draftsOf = (settings: Record<string, unknown>) => Object.fromEntries(SETTING_META.map((m) => [m.key, encode(m, settings[m.key])]));
  const [drafts, setDrafts] = useState<Record<string, string>>(() => draftsOf(own));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const changed = SETTING_META.filter((m) => drafts[m.key] !== encode(m, own[m.key]));

  const onSave = async () => {
    const next: SnakeConfigDocument = cloneDoc(doc);
    const settings = { ...((next.settings ?? {}) as Record<string, unknown>) };
    const errs: Record<string, string> = {};
    for (const m of changed) {
      const p = parseDraft(m, drafts[m.key]);
      if (p.error) errs[m.key] = p.error;
      else if (p.value === undefined) delete settings[m.key];
      else settings[m.key] = p.value;
    }
    setErrors(errs);
    if (Object.keys(errs).length) return;
    if (Object.keys(settings).length) next.settings = settings as SnakeConfigDocument["settings"];
    else delete next.settings;
    const r = await save(next, { successMessage: `${changed.length === 1 ? changed[0].label : `${changed.length} settings`} saved at ${level} level` });
    // The drafts become the saved values as stored, so nothing reads as unsaved and Save is disabled again.
    if (r.ok) setDrafts(draftsOf((r.document.settings ?? {}) as Record<string, unknown>));
    else {
      const byKey: Record<string, string> = {};
      for (const i of r.issues) {
        const k = SETTING_META.find((m) => i.path.startsWith(`settings.${m.key}`))?.key;
        if (k) byKey[k] = i.message;
      }
      setErrors(Object.keys(byKey).length ? byKey : { [changed[0]?.key ?? ""]: r.message });
    }
  };

  return (
    <>
      <div className="table-wrap" data-phone-layout="cards">
        <div className="table-scroll">
          <table className="table dash2-settings-table" data-density="comfortable">
            <thead>
              <tr>
                <th scope="col">Setting</th>
                <th scope="col">Effective value · source</th>
                <th scope="col">{level === "workspace" ? "Workspace value" : "Organization value"}</th>
              </tr>
            </thead>
            <tbody>
              {SETTING_META.map((m) => (
                <SettingRow
                  key={m.key}
                  meta={m}
                  own={own[m.key]}
                  draft={drafts[m.key]}
                  error={errors[m.key] ?? null}
                  onChange={(v) => setDrafts((d) => ({ ...d, [m.key]: v }))}
                />
              ))}
            </tbody>
          </table>
        </div>
      </div>
      {canEdit && (
        <div className="form-actions">
          <Button variant="primary" disabled={changed.length === 0 || saving} loading={saving} onClick={() => void onSave()}>
            {changed.length > 1 ? `Save ${changed.length} settings` : "Save settings"}
          </Button>
          <Button
            variant="ghost"
            disabled={changed.length === 0 || saving}
            onClick={() => {
              setDrafts(draftsOf(own));
              setErrors({});
            }}
          >
            Discard changes
          </Button>
        </div>
      )}
    </>
  );
}

/** Ratio fields (the minimum success-rate gain) are edited as a percentage; the document keeps the fraction. */
const switchFieldText = (f: ModelSwitchMeta, v: number | undefined) => (f.ratio ? ratioToPercentText(v) : v === undefined ? "" : String(v));
const parseSwitchField = (f: ModelSwitchMeta, text: string) => (f.ratio ? validatePercentText(f, text) : validateNumberText(f, text));
const switchFieldValue = (f: ModelSwitchMeta, v: number) => (f.ratio ? `${ratioToPercentText(v)}%` : String(v));
/** A ratio field's hint names the unit its input uses. */
const switchFieldHint = (f: ModelSwitchMeta) => (f.ratio ? `${f.hint}, in percentage points` : f.hint);

function ModelSwitchCard() {
  const { doc, inheritedCamel, level, canEdit, save, saving } = useConfigEditor();
  const own = (doc.model_switch ?? {}) as Record<string, number | undefined>;
  const [draft, setDraft] = useState<Record<string, string>>(() => Object.fromEntries(MODEL_SWITCH_META.map((f) => [f.key, switchFieldText(f, own[f.key])])));
  const [submitted, setSubmitted] = useState(false);
  const errors: Record<string, string> = {};
  const values: Record<string, number> = {};
  let dirty = false;
  for (const f of MODEL_SWITCH_META) {
    const r = parseSwitchField(f, draft[f.key] ?? "");
    if (r.error) errors[f.key] = r.error;
    else if (r.value !== undefined) values[f.key] = r.value;
    if (r.error || r.value !== own[f.key]) dirty = true;
  }
  const inherited = (f: ModelSwitchMeta) => {
    const o = (level === "workspace" ? inheritedCamel.modelSwitch : undefined) as Record<string, number | undefined> | undefined;
    const v = o?.[f.camel];
    return v !== undefined ? `${switchFieldValue(f, v)} (organization)` : `${switchFieldValue(f, (DEFAULT_MODEL_SWITCH as unknown as Record<string, number>)[f.camel])} (default)`;
  };
  return (
    <Section title="Model switch" description="When the current model keeps failing on a key, suggest (or instruct) a model with a clearly better success rate there.">
      <div className="card">
        <form
          className="card-body stack"
          noValidate
          onSubmit={async (e) => {
            e.preventDefault();
            setSubmitted(true);
            if (Object.keys(errors).length) return;
            const next = cloneDoc(doc);
            if (Object.keys(values).length) next.model_switch = values;
            else delete next.model_switch;
            const r = await save(next, { successMessage: "Model switch saved" });
            if (r.ok) {
              const saved = (r.document.model_switch ?? {}) as Record<string, number | undefined>;
              setDraft(Object.fromEntries(MODEL_SWITCH_META.map((f) => [f.key, switchFieldText(f, saved[f.key])])));
              setSubmitted(false);
            }
          }}
        >
          <div className="form-row">
            {MODEL_SWITCH_META.map((f) => (
              <Field key={f.key} label={f.label} hint={switchFieldHint(f)} error={submitted || draft[f.key] !== "" ? errors[f.key] : undefined}>
                <NumberInput
                  value={draft[f.key]}
                  disabled={!canEdit}
                  placeholder={`Inherit: ${inherited(f)}`}
                  step={f.ratio ? 1 : f.step}
                  chars={numberFieldChars(f)}
                  suffix={f.ratio ? "%" : f.unit}
                  onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
                />
              </Field>
            ))}
          </div>
          {canEdit && (
            <div className="form-actions">
              <Button type="submit" variant="primary" disabled={!dirty || saving} loading={saving}>
                Save model switch
              </Button>
            </div>
          )}
        </form>
      </div>
    </Section>
  );
}

export function SettingsEditor() {
  const { level } = useConfigEditor();
  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <Section
        title="Settings"
        description={
          level === "workspace"
            ? "Resolution: session (set by the agent) > workspace > organization > built-in default. Values set here apply to every session of this workspace that does not override them."
            : "Organization values apply to every workspace that does not set its own."
        }
      >
        <SettingsTable />
      </Section>
      <ModelSwitchCard />
    </div>
  );
}
