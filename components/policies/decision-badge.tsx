import { Badge } from "@/components/state-badge";

/** A guard decision as a small badge: deny red, ask and pause amber, allow green. */
export function DecisionBadge({ decision }: { decision: string }) {
  const tone = decision === "deny" ? "danger" : decision === "ask" || decision === "pause" ? "warning" : "success";
  return (
    <Badge tone={tone} square>
      {decision}
    </Badge>
  );
}
