"use client";

/** Tool classes, announce phrases and pattern severity ladders (SPEC 5), for one level. */
import { useState } from "react";
import { Button, Checkbox, NumberInput, Textarea } from "@/components/form";
import { humanize } from "@/components/format";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { mergeEffectiveConfig, type SnakeConfigDocument } from "@/server/engine/config";
import { PATTERN_TYPES, STALL_PATTERN_BY_NAME, type PatternType } from "@/server/engine/stall-patterns";
import { cloneDoc, issuesUnder, ReadOnlyNotice, useConfigEditor } from "./config-context";

const LISTS = [
  { key: "introspection_tools", camel: "introspectionTools", label: "Introspection tools", hint: "Listing tools or schemas; consecutive calls of these form an introspection loop." },
  { key: "read_only_tools", camel: "readOnlyTools", label: "Read-only tools", hint: "Calls that only read; re-reading the same thing without acting forms a read-only loop (reading new things never counts)." },
  { key: "action_tools", camel: "actionTools", label: "Action tools", hint: "Tools that make progress; a successful action with a new call or a new result starts a new stretch." },
  { key: "announce_phrases", camel: "announcePhrases", label: "Announce phrases", hint: "Case-insensitive phrases in model text that announce an action (“let me…”)." },
  { key: "volatile_arg_fields", camel: "volatileArgFields", label: "Volatile argument fields", hint: "Top-level argument fields left out when comparing calls: they change between otherwise identical calls." },
] as const;
type ListKey = (typeof LISTS)[number]["key"];
const LEVELS = ["minor", "moderate", "severe"] as const;

/** The lists and ladders of a `patterns` object in a fixed order, to tell whether the form changed them. */
function patternsKey(p: Record<string, unknown>): string {
  return JSON.stringify([
    ...LISTS.map((l) => p[l.key] ?? null),
    ...PATTERN_TYPES.map((t) => LEVELS.map((s) => (p[t] as Record<string, number> | undefined)?.[s] ?? null)),
  ]);
}

export function ToolClassesEditor() {
  const { doc, inheritedCamel, level, canEdit, save, saving } = useConfigEditor();
  const inherited = mergeEffectiveConfig({}, level === "workspace" ? inheritedCamel : {}).patterns;
  const own = (doc.patterns ?? {}) as Record<string, unknown>;
  const [lists, setLists] = useState<Record<ListKey, { override: boolean; text: string }>>(() => {
    const out = {} as Record<ListKey, { override: boolean; text: string }>;
    for (const l of LISTS) {
      const v = own[l.key] as string[] | undefined;
      out[l.key] = { override: v !== undefined, text: (v ?? inherited[l.camel]).join("\n") };
    }
    return out;
  });
  const [ladders, setLadders] = useState<Record<string, Record<string, string>>>(() => {
    const out: Record<string, Record<string, string>> = {};
    for (const t of PATTERN_TYPES) {
      const l = (own[t] ?? {}) as Record<string, number | undefined>;
      out[t] = Object.fromEntries(LEVELS.map((s) => [s, l[s] === undefined ? "" : String(l[s])]));
    }
    return out;
  });
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});

  // Validation
  const errors: Record<string, string> = {};
  const ladderValues: Partial<Record<PatternType, Record<string, number>>> = {};
  for (const t of PATTERN_TYPES) {
    const vals: Record<string, number> = {};
    for (const s of LEVELS) {
      const text = ladders[t][s].trim();
      if (text === "") continue;
      const n = Number(text);
      if (!Number.isInteger(n) || n < 1) errors[`${t}.${s}`] = "Whole number ≥ 1";
      else vals[s] = n;
    }
    const eff = { ...inherited.thresholds[t], ...vals };
    // Non-decreasing, as the server requires (equal levels jump straight to the higher severity).
    if (!errors[`${t}.moderate`] && vals.moderate !== undefined && eff.minor > eff.moderate) errors[`${t}.moderate`] = "Must be at least minor";
    if (!errors[`${t}.severe`] && vals.severe !== undefined && eff.moderate > eff.severe) errors[`${t}.severe`] = "Must be at least moderate";
    if (!errors[`${t}.minor`] && vals.minor !== undefined && vals.moderate === undefined && eff.minor > eff.moderate) errors[`${t}.minor`] = "Must be at most moderate";
    if (Object.keys(vals).length) ladderValues[t] = vals;
  }
  const listValues: Partial<Record<ListKey, string[]>> = {};
  for (const l of LISTS) {
    if (!lists[l.key].override) continue;
    const items = lists[l.key].text
      .split("\n")
      .map((s) => s.trim())
      .filter(Boolean);
    if (items.some((i) => i.length > 256)) errors[l.key] = "Entries are at most 256 characters";
    listValues[l.key] = items;
  }
  const err = (k: string) => (submitted || k.includes(".") ? errors[k] : undefined) ?? serverErrors[k];
  const patterns: Record<string, unknown> = {};
  for (const l of LISTS) if (listValues[l.key]) patterns[l.key] = listValues[l.key];
  for (const t of PATTERN_TYPES) if (ladderValues[t]) patterns[t] = ladderValues[t];
  const dirty = Object.keys(errors).length > 0 || patternsKey(patterns) !== patternsKey(own);

  const onSave = async () => {
    setSubmitted(true);
    setServerErrors({});
    if (Object.keys(errors).length) return;
    const next: SnakeConfigDocument = cloneDoc(doc);
    if (Object.keys(patterns).length) next.patterns = patterns as SnakeConfigDocument["patterns"];
    else delete next.patterns;
    const r = await save(next, { successMessage: "Tool classes and pattern thresholds saved" });
    if (!r.ok) setServerErrors(issuesUnder(r.issues, "patterns"));
  };

  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <Section
        title="Tool classes"
        description={`Which tools count as introspection, read-only or action for pattern detection, and which argument fields to ignore when comparing calls. Unless overridden, a list is inherited from ${level === "workspace" ? "the organization or " : ""}the built-in defaults.`}
      >
        <div className="grid grid-2">
          {LISTS.map((l) => {
            const st = lists[l.key];
            return (
              <div className="card" key={l.key}>
                <div className="card-head">
                  <div>
                    <h3 className="card-title">{l.label}</h3>
                    <p className="card-subtitle">{l.hint}</p>
                  </div>
                </div>
                <div className="card-body stack stack-sm">
                  <Checkbox
                    label={`Set at ${level} level`}
                    checked={st.override}
                    disabled={!canEdit}
                    onChange={(e) =>
                      setLists({ ...lists, [l.key]: { override: e.target.checked, text: e.target.checked ? st.text : inherited[l.camel].join("\n") } })
                    }
                  />
                  {st.override ? (
                    <>
                      <Textarea
                        mono
                        rows={6}
                        aria-label={`${l.label}, one per line`}
                        value={st.text}
                        disabled={!canEdit}
                        onChange={(e) => setLists({ ...lists, [l.key]: { ...st, text: e.target.value } })}
                      />
                      <span className="text-xs muted">One per line.</span>
                      {err(l.key) && <span className="field-error">{err(l.key)}</span>}
                    </>
                  ) : (
                    <div className="dash2-chips" aria-label={`Inherited ${l.label}`}>
                      {inherited[l.camel].map((t) => (
                        <span key={t} className="dash2-chip mono">
                          {t}
                        </span>
                      ))}
                      <span className="text-xs subtle">inherited</span>
                    </div>
                  )}
                </div>
              </div>
            );
          })}
        </div>
      </Section>

      <Section title="Pattern thresholds" description="The count at which a pattern is reported as minor, moderate or severe (severe pauses the session). Each ladder must be non-decreasing; equal levels jump straight to the higher severity. Empty cells inherit.">
        <div className="table-wrap">
          <div className="table-scroll">
            <table className="table dash2-ladder" data-density="compact">
              <thead>
                <tr>
                  <th scope="col">Pattern</th>
                  {LEVELS.map((s) => (
                    <th key={s} scope="col">
                      {humanize(s)}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {PATTERN_TYPES.map((t) => (
                  <tr key={t}>
                    <th scope="row" style={{ fontWeight: 500 }}>
                      {humanize(t)}
                      <div className="text-xs muted" style={{ fontWeight: 400 }}>
                        counts {STALL_PATTERN_BY_NAME[t].counts}
                      </div>
                    </th>
                    {LEVELS.map((s) => (
                      <td key={s}>
                        <div className="stack" style={{ gap: 2 }}>
                          <NumberInput
                            size="sm"
                            aria-label={`${humanize(t)} ${s} threshold`}
                            aria-invalid={err(`${t}.${s}`) ? true : undefined}
                            value={ladders[t][s]}
                            disabled={!canEdit}
                            min={1}
                            step={1}
                            placeholder={String(inherited.thresholds[t][s])}
                            onChange={(e) => setLadders({ ...ladders, [t]: { ...ladders[t], [s]: e.target.value } })}
                          />
                          {err(`${t}.${s}`) && <span className="field-error text-xs">{err(`${t}.${s}`)}</span>}
                        </div>
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      </Section>
      {canEdit && (
        <div className="form-actions">
          <Button variant="primary" onClick={onSave} disabled={!dirty} loading={saving}>
            Save tool classes and thresholds
          </Button>
          {submitted && Object.keys(errors).length > 0 && (
            <span className="field-error">
              <Icon name="alertCircle" size={14} /> Fix the highlighted fields; nothing was saved.
            </span>
          )}
        </div>
      )}
    </div>
  );
}
