/**
 * "Would have asked / denied / paused" (SPEC 4.6, 8): calls answered allow in watch mode that
 * enforcement would have stopped, from the decisions recorded on the calls. Shown while the
 * workspace watches, or when the window holds such calls.
 */
import { Icon } from "@/components/icons";
import { enforcementOf, wouldDecideCounts, type TimeBounds } from "@/server/dashboard/policies";
import { getRuntime } from "@/server/runtime";
import { loadEffectiveConfig } from "@/server/services/workspace-config";
import "./policies.css";

export async function WatchCounts({
  workspaceId,
  window = {},
  sessionId,
  scopeLabel,
}: {
  workspaceId: string;
  window?: TimeBounds;
  sessionId?: string;
  /** "last 7 days", "this session". */
  scopeLabel: string;
}) {
  const db = (await getRuntime()).database.db;
  const [counts, config] = await Promise.all([wouldDecideCounts(db, workspaceId, { ...window, sessionId }), loadEffectiveConfig(db, workspaceId)]);
  const watching = enforcementOf(config.workspaceDoc, config.orgDoc).mode === "watch";
  const total = counts.ask + counts.deny + counts.pause;
  if (!watching && total === 0) return null;
  const item = (label: string, n: number) => (
    <span className="watch-counts-item">
      <span className="muted">{label}</span>
      <span className={n ? "num strong" : "num subtle"}>{n.toLocaleString("en-US")}</span>
    </span>
  );
  return (
    <div className="watch-counts" data-testid="watch-counts" aria-label={`Watch mode counts, ${scopeLabel}`}>
      <span className="watch-counts-title">
        <Icon name="shield" size={14} /> Watch mode · {scopeLabel}
      </span>
      {item("would have asked", counts.ask)}
      {item("denied", counts.deny)}
      {item("paused", counts.pause)}
    </div>
  );
}
