import { Badge } from "@/components/state-badge";
import type { Hold } from "@/server/services/holds";
import type { SessionStatus } from "@/server/dashboard/sessions-data";

/** What holds a paused session, for the badge's tooltip. */
function heldBy(held: Hold | null | undefined): string | undefined {
  if (!held) return undefined;
  const what = held.scope === "workspace" ? "Workspace kill switch" : held.scope === "agent" ? "Agent paused" : "Session paused";
  return `${what} by ${held.by}: ${held.reason}`;
}

export function SessionStatusBadge({ status, held }: { status: SessionStatus; held?: Hold | null }) {
  if (status === "paused")
    return (
      <Badge tone="escalated" dot title={heldBy(held)}>
        {held && held.scope !== "session" ? `Paused (${held.scope})` : "Paused"}
      </Badge>
    );
  if (status === "ended") return <Badge tone="neutral">Ended</Badge>;
  if (status === "idle")
    return (
      <Badge tone="outline" dot title="Running, but no event for longer than session_idle_minutes">
        Idle
      </Badge>
    );
  return (
    <Badge tone="trusted" dot>
      Active
    </Badge>
  );
}
