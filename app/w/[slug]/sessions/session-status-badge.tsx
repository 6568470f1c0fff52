import { Badge } from "@/components/state-badge";
import type { SessionStatus } from "@/server/dashboard/sessions-data";

export function SessionStatusBadge({ status }: { status: SessionStatus }) {
  if (status === "paused")
    return (
      <Badge tone="escalated" dot>
        Paused
      </Badge>
    );
  if (status === "ended") return <Badge tone="neutral">Ended</Badge>;
  return (
    <Badge tone="trusted" dot>
      Active
    </Badge>
  );
}
