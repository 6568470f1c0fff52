import type { Metadata } from "next";
import { PageHeader } from "@/components/page-header";
import { CONFIG_TABS, ConfigTabBody, ConfigTabNav, readTab, type ConfigTabId } from "@/components/config/config-tabs";
import { requireOrgPage } from "@/server/dashboard/access";
import type { SearchParams } from "@/server/dashboard/util";
import { toSnakeDocument } from "@/server/engine/config";
import { getRuntime } from "@/server/runtime";
import { getConfigDocument } from "@/server/services/workspace-config";

export const metadata: Metadata = { title: "Organization defaults" };
export const dynamic = "force-dynamic";

export default async function OrgDefaultsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const page = await requireOrgPage();
  const db = (await getRuntime()).database.db;
  const doc = await getConfigDocument(db, { level: "organization", organizationId: page.organization.id });
  const tabs: ConfigTabId[] = CONFIG_TABS.map((t) => t.id).filter((t) => t !== "api-keys" && t !== "notifications");
  const tab = readTab(sp.tab, tabs);
  const slugPart = page.organization.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "organization";

  return (
    <>
      <PageHeader
        title="Organization defaults"
        description={`Defaults for every workspace of ${page.organization.name}: a workspace's own values win, and anything neither sets uses the built-in values.`}
      />
      <ConfigTabNav base="/org/defaults" active={tab} tabs={tabs} />
      <div className="dash2-tab-body">
        <ConfigTabBody
          key={tab}
          tab={tab}
          scope={{ level: "organization", organizationId: page.organization.id }}
          document={toSnakeDocument(doc)}
          inheritedDocument={null}
          canEdit={page.permissions.canConfigure}
          fileName={`vigil-${slugPart}-defaults.json`}
        />
      </div>
    </>
  );
}
