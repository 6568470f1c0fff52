"use client";

import { useState } from "react";
import { ConfirmDialog } from "@/components/confirm-dialog";
import { Button, Checkbox, Field, NumberInput, Select, Textarea, TextInput, Toggle } from "@/components/form";
import { Icon } from "@/components/icons";
import { KeyValue } from "@/components/key-value";
import { RelativeTime } from "@/components/relative-time";
import { PatternSeverityBadge, StateBadge } from "@/components/state-badge";
import { Tabs } from "@/components/tabs";
import { toast } from "@/components/toast";

export function DemoForm() {
  const [saving, setSaving] = useState(false);
  return (
    <form
      className="form"
      onSubmit={(e) => {
        e.preventDefault();
        setSaving(true);
        setTimeout(() => {
          setSaving(false);
          toast.success("Rule saved", "tool rule for http_request updated");
        }, 900);
      }}
    >
      <div className="form-row">
        <Field label="Tool name glob" hint="Matches tool names, e.g. mcp_*" required>
          <TextInput mono defaultValue="http_request" />
        </Field>
        <Field label="Scope">
          <Select
            defaultValue="tool"
            options={[
              { value: "default", label: "Default" },
              { value: "plugin", label: "Plugin" },
              { value: "tool", label: "Tool" },
              { value: "domain", label: "Domain" },
            ]}
          />
        </Field>
      </div>
      <div className="form-row">
        <Field label="Failure threshold" error="Must be at least 1">
          <NumberInput defaultValue={0} min={1} suffix="failures" />
        </Field>
        <Field label="Window" hint="Failures older than this don't count">
          <NumberInput defaultValue={10} min={1} suffix="min" />
        </Field>
      </div>
      <Field label="Note" optional>
        <Textarea placeholder="Why this rule exists…" rows={3} />
      </Field>
      <Toggle label="Recovery asks for approval" hint="Recovery mode: ask — a person approves each recovery" defaultChecked />
      <Checkbox label="Apply to all workspaces in the organization" />
      <div className="form-actions">
        <Button type="submit" variant="primary" loading={saving}>
          Save rule
        </Button>
        <Button variant="secondary">Cancel</Button>
        <span className="spacer" />
        <Button variant="ghost" disabled>
          Disabled
        </Button>
      </div>
    </form>
  );
}

export function DemoActions() {
  const [open, setOpen] = useState(false);
  const [guidanceOpen, setGuidanceOpen] = useState(false);
  return (
    <div className="row row-wrap">
      <Button variant="primary">Primary</Button>
      <Button variant="secondary">
        <Icon name="refresh" />
        Secondary
      </Button>
      <Button variant="danger" onClick={() => setOpen(true)}>
        Reset all keys…
      </Button>
      <Button variant="ghost" onClick={() => setGuidanceOpen(true)}>
        <Icon name="play" />
        Resume session…
      </Button>
      <Button variant="secondary" loading>
        Saving
      </Button>
      <Button variant="secondary" size="sm" onClick={() => toast({ title: "Copied to clipboard" })}>
        Toast
      </Button>
      <Button variant="secondary" size="sm" onClick={() => toast.error("Could not approve", "The recovery was already decided by ana@acme.dev.")}>
        Error toast
      </Button>
      <Button variant="ghost" size="sm" iconOnly aria-label="More">
        <Icon name="more" />
      </Button>
      <ConfirmDialog
        open={open}
        onOpenChange={setOpen}
        tone="danger"
        title="Reset all failure keys?"
        description="Every key in acme-prod returns to Trusted and its failure counts are cleared. This is written to the audit log."
        confirmLabel="Reset all"
        confirmText="acme-prod"
        onConfirm={() => new Promise<void>((r) => { setTimeout(r, 800); }).then(() => { toast.success("All keys reset"); })}
      />
      <ConfirmDialog
        open={guidanceOpen}
        onOpenChange={setGuidanceOpen}
        title="Resume session"
        description="The agent receives your guidance as a nudge on its next call."
        confirmLabel="Resume"
        onConfirm={() => toast.success("Session resumed")}
      >
        <Field label="Guidance" optional>
          <Textarea placeholder="e.g. Stop re-reading the config; write the migration now." />
        </Field>
      </ConfirmDialog>
    </div>
  );
}

export function DemoTabs({ now }: { now: number }) {
  return (
    <Tabs
      label="Key detail"
      items={[
        {
          id: "summary",
          label: "Summary",
          content: (
            <KeyValue
              items={[
                { label: "State", value: <StateBadge state="escalated" /> },
                { label: "Effective failures", value: "3 of 3", hint: "invalid_input weighs 0.5" },
                { label: "Last failure", value: <RelativeTime date={now - 4 * 60_000} now={now} /> },
                { label: "Last pattern", value: <PatternSeverityBadge severity="moderate" /> },
                { label: "Failure key", value: <code>http_request|domain=api.example.com|path_prefix=v1</code> },
              ]}
            />
          ),
        },
        { id: "history", label: "History", count: 42, content: <p className="muted">Failure history goes here.</p> },
        { id: "models", label: "Models", count: 3, content: <p className="muted">Per-model success rates go here.</p> },
      ]}
    />
  );
}
