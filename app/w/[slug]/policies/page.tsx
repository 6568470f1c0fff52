import type { Metadata } from "next";
import { TimeRangePicker } from "@/components/dashboard/time-range-picker";
import { PageHeader } from "@/components/page-header";
import { PoliciesEditor, type HitMap } from "@/components/policies/policies-editor";
import { WatchCounts } from "@/components/policies/watch-counts";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { policyHitCounts, RISK_RULE_INFO } from "@/server/dashboard/policies";
import { pageTimeWindow } from "@/components/dashboard/remembered-range";
import type { SearchParams } from "@/server/dashboard/util";
import { toSnakeDocument } from "@/server/engine/config";
import { getRuntime } from "@/server/runtime";
import { loadEffectiveConfig } from "@/server/services/workspace-config";

export const metadata: Metadata = { title: "Policies" };
export const dynamic = "force-dynamic";

export default async function PoliciesPage({ params, searchParams }: { params: Promise<{ slug: string }>; searchParams: Promise<SearchParams> }) {
  const { slug } = await params;
  const page = await requireWorkspacePage(slug);
  const ws = page.access.workspace;
  const db = (await getRuntime()).database.db;
  const { sp, window } = await pageTimeWindow(await searchParams);
  const [{ workspaceDoc, orgDoc }, counts] = await Promise.all([loadEffectiveConfig(db, ws.id), policyHitCounts(db, [ws.id], window)]);
  const hits: HitMap = Object.fromEntries(counts.map((c) => [`${c.level}:${c.name}`, { hits: c.hits, wouldAsk: c.wouldAsk, wouldDeny: c.wouldDeny }]));

  return (
    <div className="stack stack-lg">
      <PageHeader
        title="Policies"
        description={`What agents in ${ws.name} may do before anything failed: declared policies, the organization's, and the built-in risk rules.`}
      />
      <TimeRangePicker path={`/w/${encodeURIComponent(slug)}/policies`} searchParams={sp} window={window} />
      <WatchCounts workspaceId={ws.id} window={window} scopeLabel={window.label} />
      <PoliciesEditor
        scope={{ level: "workspace", workspaceSlug: ws.slug }}
        document={toSnakeDocument(workspaceDoc)}
        inheritedDocument={toSnakeDocument(orgDoc)}
        canEdit={page.permissions.canConfigure}
        hits={hits}
        riskRules={RISK_RULE_INFO}
        rangeLabel={window.label}
      />
    </div>
  );
}
