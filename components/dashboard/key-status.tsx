import { formatCount, formatDecimal, formatDuration } from "@/components/format";
import { Meter } from "@/components/meter";
import { Badge, type TrustState } from "@/components/state-badge";

/** "Recovery 1/3", "expires in 12m", "until reset" … for a key row (server-safe). */
export function KeyProgress({
  state,
  recovery,
  escalationExpires,
  approvalPending,
  now,
}: {
  state: string;
  recovery: { successes: number; needed: number } | null;
  escalationExpires: string | null;
  approvalPending?: boolean;
  now: Date;
}) {
  if (state === "recovering" && recovery) {
    return (
      <span className="stack" style={{ gap: 2 }}>
        <RecoveryMeter recovery={recovery} noun="ok" />
        {approvalPending && <span className="text-xs text-warning">awaiting approval</span>}
      </span>
    );
  }
  if (state === "escalated") {
    if (!escalationExpires) return <span className="subtle text-sm">escalated</span>;
    const left = new Date(escalationExpires).getTime() - now.getTime();
    return left > 0 ? (
      <span className="text-sm nowrap" title={`Escalation expires ${escalationExpires}`}>
        expires in {formatDuration(left)}
      </span>
    ) : (
      <span className="text-sm subtle nowrap" title="The escalation window has passed; the next success after the cooldown starts recovery">
        cooldown / next success
      </span>
    );
  }
  if (state === "blocked") return <span className="text-sm text-danger nowrap">until reset</span>;
  return <span className="subtle">—</span>;
}

/**
 * Recovery progress. In ask mode the engine keeps counting successes while the recovery waits for
 * a person (SPEC 4.3), so past `needed` it reads "3 / 3 · ready" with the full count in its title —
 * the same on Tools, key detail and Approvals.
 */
export function RecoveryMeter({ recovery, noun }: { recovery: { successes: number; needed: number }; noun: "ok" | "successes" }) {
  const { successes, needed } = recovery;
  const ready = successes >= needed;
  return (
    <span title={`${formatCount(successes, "successful call")} since recovery started; ${needed} needed`}>
      <Meter
        value={Math.min(successes, needed)}
        max={needed}
        tone="recovering"
        label={ready ? `${needed} / ${needed} ${noun} · ready` : `${successes} / ${needed} ${noun}`}
        ariaLabel="Recovery progress"
      />
    </span>
  );
}

/** Effective failures vs threshold. */
export function FailuresMeter({ value, threshold, state }: { value: number; threshold: number | null; state: string }) {
  if (!threshold) return <span className="num">{formatDecimal(value)}</span>;
  const tone: TrustState | "neutral" = state === "trusted" ? (value >= threshold * 0.66 ? "escalated" : "neutral") : (state as TrustState);
  return <Meter value={value} max={threshold} tone={tone} ariaLabel="Effective failures versus threshold" />;
}

export function LevelBadge({ level }: { level: string }) {
  if (level === "key") return null;
  return (
    <Badge tone="outline" square title={level === "domain" ? "Domain-level state: all keys of this domain together" : "Tool-level state: every key of this tool"}>
      {level}
    </Badge>
  );
}
