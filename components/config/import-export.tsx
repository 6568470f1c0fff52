"use client";

/** Export this level's document (seed snake_case format) and import / paste a whole one. */
import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Button, Field, Textarea } from "@/components/form";
import { Icon } from "@/components/icons";
import { Section } from "@/components/page-header";
import { toast } from "@/components/toast";
import { parseConfigDocument, type ConfigIssue, type SnakeConfigDocument } from "@/server/engine/config";
import { ReadOnlyNotice, useConfigEditor } from "./config-context";

export function ImportExport({ fileName }: { fileName: string }) {
  const { doc, level, canEdit, save } = useConfigEditor();
  const json = JSON.stringify(doc, null, 2);
  const [text, setText] = useState("");
  const [checked, setChecked] = useState<{ ok: true; value: SnakeConfigDocument } | { ok: false; issues: ConfigIssue[] } | null>(null);
  const [confirming, setConfirming] = useState(false);

  const validate = (src: string): boolean => {
    let value: unknown;
    try {
      value = JSON.parse(src);
    } catch (e) {
      setChecked({ ok: false, issues: [{ path: "", message: `Not valid JSON: ${(e as Error).message}` }] });
      return false;
    }
    const r = parseConfigDocument(value);
    setChecked(r.ok ? { ok: true, value: value as SnakeConfigDocument } : { ok: false, issues: r.issues });
    return r.ok;
  };

  const download = () => {
    const blob = new Blob([json + "\n"], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = fileName;
    document.body.appendChild(a);
    a.click();
    a.remove();
    URL.revokeObjectURL(url);
  };

  return (
    <div className="stack stack-lg">
      <ReadOnlyNotice />
      <Section
        title="Export"
        description={`The ${level} level's configuration document in the seed's .jaato/reliability.json format (snake_case). Only values set at this level are included.`}
        actions={
          <>
            <Button
              size="sm"
              onClick={async () => {
                try {
                  await navigator.clipboard.writeText(json);
                  toast.success("Copied to the clipboard");
                } catch {
                  toast.error("Could not copy", "Select the text and copy it instead.");
                }
              }}
            >
              Copy
            </Button>
            <Button size="sm" variant="primary" onClick={download}>
              <Icon name="arrowDown" /> Download JSON
            </Button>
          </>
        }
      >
        <pre className="code dash2-export" data-testid="config-export" tabIndex={0}>
          {json}
        </pre>
      </Section>

      {canEdit && (
        <Section
          title="Import"
          description={`Upload or paste a whole document. It replaces the ${level} level entirely (fields it leaves out are cleared and inherit). Invalid documents are rejected with every problem listed; nothing partial is saved.`}
        >
          <div className="card">
            <div className="card-body stack">
              <Field label="Document file">
                <input
                  type="file"
                  accept="application/json,.json"
                  className="input"
                  onChange={async (e) => {
                    const f = e.target.files?.[0];
                    if (!f) return;
                    if (f.size > 1024 * 1024) {
                      setChecked({ ok: false, issues: [{ path: "", message: "The file is larger than 1 MiB" }] });
                      return;
                    }
                    const t = await f.text();
                    setText(t);
                    validate(t);
                  }}
                />
              </Field>
              <Field label="…or paste JSON">
                <Textarea
                  mono
                  rows={12}
                  value={text}
                  placeholder={'{\n  "default_rule": { "count_threshold": 5 },\n  "settings": { "recovery_mode": "ask" }\n}'}
                  onChange={(e) => {
                    setText(e.target.value);
                    setChecked(null);
                  }}
                />
              </Field>
              <div className="form-actions">
                <Button onClick={() => validate(text)} disabled={!text.trim()}>
                  Validate
                </Button>
                <Button
                  variant="primary"
                  disabled={!text.trim()}
                  onClick={() => {
                    if (validate(text)) setConfirming(true);
                  }}
                >
                  Replace configuration…
                </Button>
              </div>
              {checked && !checked.ok && (
                <div className="callout" data-tone="danger" role="alert" data-testid="import-issues">
                  <Icon name="alertCircle" />
                  <div className="stack stack-sm">
                    <strong>
                      {checked.issues.length} problem{checked.issues.length === 1 ? "" : "s"}; nothing will be saved:
                    </strong>
                    <ul className="dash2-issues">
                      {checked.issues.map((i, k) => (
                        <li key={k}>
                          {i.path && <code className="mono">{i.path}</code>} {i.message.startsWith(i.path) && i.path ? i.message.slice(i.path.length).replace(/^:\s*/, "— ") : i.message}
                        </li>
                      ))}
                    </ul>
                  </div>
                </div>
              )}
              {checked && checked.ok && (
                <div className="callout" data-tone="info" role="status">
                  <Icon name="checkCircle" />
                  <div>The document is valid.</div>
                </div>
              )}
            </div>
          </div>
        </Section>
      )}
      <ConfirmDialog
        open={confirming && !!checked?.ok}
        onOpenChange={(o) => !o && setConfirming(false)}
        title={`Replace the ${level} configuration?`}
        description="The imported document replaces every value set at this level. The change is recorded in the audit log."
        confirmLabel="Replace"
        tone="danger"
        onConfirm={async () => {
          if (!checked?.ok) return;
          const r = await save(checked.value, { successMessage: "Configuration imported" });
          if (!r.ok) {
            setChecked({ ok: false, issues: r.issues.length ? r.issues : [{ path: "", message: r.message }] });
            throw new Error(r.message);
          }
          setText("");
          setChecked(null);
        }}
      />
    </div>
  );
}
