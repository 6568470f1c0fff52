import type { Metadata } from "next";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { PageHeader } from "@/components/page-header";
import { PoliciesEditor, type HitMap } from "@/components/policies/policies-editor";
import { requireOrgPage } from "@/server/dashboard/access";
import { policyHitCounts, RISK_RULE_INFO } from "@/server/dashboard/policies";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import type { SearchParams } from "@/server/dashboard/util";
import { toSnakeDocument } from "@/server/engine/config";
import { getRuntime } from "@/server/runtime";
import { getConfigDocument } from "@/server/services/workspace-config";

export const metadata: Metadata = { title: "Organization policies" };
export const dynamic = "force-dynamic";

export default async function OrgPoliciesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const page = await requireOrgPage();
  const db = (await getRuntime()).database.db;
  const { sp, window } = await pageTimeWindow(await searchParams);
  const [doc, counts] = await Promise.all([
    getConfigDocument(db, { level: "organization", organizationId: page.organization.id }),
    policyHitCounts(
      db,
      page.orgWorkspaces.map((w) => w.id),
      window,
    ),
  ]);
  // Organization policies and the built-in rules, summed over the organization's workspaces.
  const hits: HitMap = {};
  for (const c of counts) {
    if (c.level === "workspace") continue;
    const h = (hits[`${c.level}:${c.name}`] ??= { hits: 0, wouldAsk: 0, wouldDeny: 0 });
    h.hits += c.hits;
    h.wouldAsk += c.wouldAsk;
    h.wouldDeny += c.wouldDeny;
  }

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Organization policies"
        description={`Policies for every workspace of ${page.organization.name}: a workspace adds its own and cannot remove these. Hits are summed over the organization's workspaces.`}
      />
      <TimeRangePicker path="/org/policies" searchParams={sp} window={window} />
      <PoliciesEditor
        scope={{ level: "organization", organizationId: page.organization.id }}
        document={toSnakeDocument(doc)}
        inheritedDocument={null}
        canEdit={page.permissions.canConfigure}
        hits={hits}
        riskRules={RISK_RULE_INFO}
        rangeLabel={window.label}
      />
    </div>
  );
}
