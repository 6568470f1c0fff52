/**
 * Watch mode (SPEC 4.6): a banner on every workspace page while the workspace or its organization
 * watches (guard.check answers allow and reports what it would have decided).
 */
import Link from "next/link";
import { Icon } from "@/components/icons";
import { enforcementOf } from "@/server/dashboard/policies";
import { getRuntime } from "@/server/runtime";
import { loadEffectiveConfig } from "@/server/services/workspace-config";

export async function WatchModeBanner({ workspaceId, slug }: { workspaceId: string; slug: string }) {
  const { workspaceDoc, orgDoc } = await loadEffectiveConfig((await getRuntime()).database.db, workspaceId);
  const state = enforcementOf(workspaceDoc, orgDoc);
  if (state.mode !== "watch") return null;
  return (
    <div className="callout watch-banner" data-tone="info" role="status" data-testid="watch-banner" style={{ marginBottom: "var(--space-4)" }}>
      <Icon name="shield" />
      <span>
        <strong>Watch mode</strong>
        {state.source === "organization" ? " (set by the organization)" : ""}: Vigil records and decides every call but answers{" "}
        <span className="mono">allow</span>; what it would have asked, denied or paused is counted on Overview, Tools, Policies and each session.{" "}
        <Link href={`/w/${encodeURIComponent(slug)}/settings?tab=settings`}>Enforcement setting</Link>
      </span>
    </div>
  );
}
