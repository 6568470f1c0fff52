/**
 * Tab navigation (search param `tab`) and tab bodies shared by the workspace settings page and the
 * organization defaults page. Server-safe: the bodies are client components.
 */
import Link from "next/link";
import type { ReactNode } from "react";
import type { SnakeConfigDocument } from "@/server/engine/config";
import { ConfigEditorProvider, type ConfigScope } from "./config-context";
import { ImportExport } from "./import-export";
import { ExtractorsEditor, RetentionEditor, SecurityPatternsEditor } from "./list-editors";
import { RulesEditor } from "./rules-editor";
import { SettingsEditor } from "./settings-editor";
import { ToolClassesEditor } from "./tool-classes-editor";

export const CONFIG_TABS = [
  { id: "rules", label: "Rules" },
  // Labelled "General": a "Settings" tab on the Settings page says nothing; the id stays for links.
  { id: "settings", label: "General" },
  { id: "tool-classes", label: "Tool classes" },
  { id: "extractors", label: "Extractors" },
  { id: "security", label: "Security patterns" },
  { id: "retention", label: "Retention" },
  { id: "api-keys", label: "API keys" },
  { id: "notifications", label: "Notifications" },
  { id: "import-export", label: "Import / Export" },
] as const;
export type ConfigTabId = (typeof CONFIG_TABS)[number]["id"];

export function readTab(v: string | string[] | undefined, allowed: readonly ConfigTabId[]): ConfigTabId {
  const s = Array.isArray(v) ? v[0] : v;
  return (allowed as readonly string[]).includes(s ?? "") ? (s as ConfigTabId) : "rules";
}

export function ConfigTabNav({ base, active, tabs }: { base: string; active: ConfigTabId; tabs: readonly ConfigTabId[] }) {
  return (
    <nav className="tabs dash2-tabs" aria-label="Configuration sections">
      {CONFIG_TABS.filter((t) => tabs.includes(t.id)).map((t) => (
        <Link key={t.id} href={`${base}?tab=${t.id}`} className="tab" aria-current={t.id === active ? "page" : undefined} scroll={false} prefetch={false}>
          {t.label}
        </Link>
      ))}
    </nav>
  );
}

export function ConfigTabBody({
  tab,
  scope,
  document,
  inheritedDocument,
  canEdit,
  fileName,
  apiKeys,
  notifications,
}: {
  tab: ConfigTabId;
  scope: ConfigScope;
  document: SnakeConfigDocument;
  inheritedDocument: SnakeConfigDocument | null;
  canEdit: boolean;
  fileName: string;
  apiKeys?: ReactNode;
  notifications?: ReactNode;
}) {
  if (tab === "api-keys") return <>{apiKeys}</>;
  if (tab === "notifications") return <>{notifications}</>;
  return (
    <ConfigEditorProvider scope={scope} initialDocument={document} inheritedDocument={inheritedDocument} canEdit={canEdit}>
      {tab === "rules" && <RulesEditor />}
      {tab === "settings" && <SettingsEditor />}
      {tab === "tool-classes" && <ToolClassesEditor />}
      {tab === "extractors" && <ExtractorsEditor />}
      {tab === "security" && <SecurityPatternsEditor />}
      {tab === "retention" && <RetentionEditor />}
      {tab === "import-export" && <ImportExport fileName={fileName} />}
    </ConfigEditorProvider>
  );
}
