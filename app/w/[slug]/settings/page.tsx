import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CONFIG_TABS, ConfigTabBody, ConfigTabNav, readTab, type ConfigTabId } from "@/components/config/config-tabs";
import { requireWorkspacePage } from "@/server/dashboard/access";
import type { SearchParams } from "@/server/dashboard/util";
import { toSnakeDocument } from "@/server/engine/config";
import { getRuntime } from "@/server/runtime";
import { loadEffectiveConfig } from "@/server/services/workspace-config";
import { ApiKeysPanel } from "./api-keys";
import { NotificationsPanel } from "./notifications";

export const metadata: Metadata = { title: "Settings" };
export const dynamic = "force-dynamic";

export default async function SettingsPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const sp = await searchParams;
  const page = await requireWorkspacePage(slug);
  const db = (await getRuntime()).database.db;
  const { workspaceDoc, orgDoc } = await loadEffectiveConfig(db, page.access.workspace.id);
  const canEdit = page.permissions.canConfigure;
  // API keys are an admin matter: the tab is not shown to members and viewers.
  const tabs: ConfigTabId[] = CONFIG_TABS.map((t) => t.id).filter((t) => canEdit || t !== "api-keys");
  const tab = readTab(sp.tab, tabs);
  const base = `/w/${encodeURIComponent(slug)}/settings`;

  return (
    <>
      <PageHeader
        title="Settings"
        description={`Escalation rules, settings and pattern detection for ${page.access.workspace.name}. Values not set here inherit the organization defaults, then the built-in values.`}
      />
      <ConfigTabNav base={base} active={tab} tabs={tabs} />
      <div className="dash2-tab-body">
        <ConfigTabBody
          key={tab}
          tab={tab}
          scope={{ level: "workspace", workspaceSlug: page.access.workspace.slug }}
          document={toSnakeDocument(workspaceDoc)}
          inheritedDocument={toSnakeDocument(orgDoc)}
          canEdit={canEdit}
          fileName={`vigil-${page.access.workspace.slug}-config.json`}
          apiKeys={canEdit ? <ApiKeysPanel workspaceSlug={page.access.workspace.slug} /> : null}
          notifications={<NotificationsPanel workspaceSlug={page.access.workspace.slug} canEdit={canEdit} />}
        />
      </div>
    </>
  );
}
