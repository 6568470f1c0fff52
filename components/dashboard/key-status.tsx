import { formatCount, formatDecimal, formatDuration } from "@/components/format";
import { Meter, type MeterTone } from "@/components/meter";
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
    <span className="meter-tip" title={`${formatCount(successes, "successful call")} since recovery started; ${needed} needed`}>
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

/** A key's effective failures and what its state makes of them (FailuresMeter's props). */
interface FailuresFigure {
  value: number;
  threshold: number | null;
  /** The effective state (the stricter of the key's own and its domain's or tool's). */
  state: string;
  /** The key's own state, when it can differ from `state`. */
  ownState?: string;
  recovery?: { successes: number; needed: number } | null;
  approvalPending?: boolean;
}

/**
 * What the effective-failures figure means in the key's state, for the meter's tooltip. The figure
 * is the decayed failure count (SPEC 4.2) and is shown as is; only a trusted key escalates on it,
 * so for the other states the text says what does move the key on (SPEC 4.3) — otherwise a
 * recovering key at "3.2 / 3" reads as one that should be escalated.
 */
export function failuresMeterTitle({ value, threshold, state, ownState, recovery, approvalPending }: FailuresFigure & { threshold: number }): string {
  const figure = `Effective failures (decayed by age and later sessions) ${formatDecimal(value)} of ${formatDecimal(threshold)}`;
  const own = ownState ?? state;
  if (own !== state && state !== "trusted")
    return `${figure} — the key itself is ${own}, but its domain or tool state is ${state}, so agents see it as ${state}; that level state has its own count.`;
  switch (state) {
    case "recovering": {
      let need = "it needs the rule's number of successful calls";
      if (recovery) {
        const left = recovery.needed - recovery.successes;
        need =
          left > 0
            ? `it needs ${formatCount(left, "more successful call")} (${recovery.successes} of ${recovery.needed})`
            : approvalPending
              ? `it has the ${formatCount(recovery.needed, "successful call")} it needs and waits for a person's approval`
              : `it has the ${formatCount(recovery.needed, "successful call")} it needs`;
      }
      return `${figure} — the key is recovering: recovery counts successful calls, not this figure; ${need}. A new failure in the rule's severity filter escalates it again.`;
    }
    case "escalated":
      return `${figure} — the key is escalated: agents ask before calling it. It starts recovering on the first success after the escalation window has expired and the cooldown since the last failure has passed.`;
    case "blocked":
      return `${figure} — the key is blocked: only a person's reset unblocks it (and clears its counters); this figure no longer changes its state.`;
    default:
      return `${figure} — the key escalates when the figure reaches ${formatDecimal(threshold)}.`;
  }
}

/**
 * Effective failures vs threshold, with a tooltip that says what the figure means in the key's
 * state. A recovering key's bar is muted: recovery does not look at it, so a full bar is no alarm.
 */
export function FailuresMeter(figure: FailuresFigure) {
  const { value, threshold, state } = figure;
  if (!threshold) return <span className="num">{formatDecimal(value)}</span>;
  const tone: MeterTone =
    state === "trusted" ? (value >= threshold * 0.66 ? "escalated" : "neutral") : state === "recovering" ? "muted" : (state as TrustState);
  return (
    <span className="meter-tip" title={failuresMeterTitle({ ...figure, threshold })}>
      <Meter value={value} max={threshold} tone={tone} ariaLabel="Effective failures versus threshold" />
    </span>
  );
}

export function LevelBadge({ level }: { level: string }) {
  if (level === "key") return null;
  return (
    <Badge tone="outline" square title={level === "domain" ? "Domain-level state: all keys of this domain together" : "Tool-level state: every key of this tool"}>
      {level}
    </Badge>
  );
}
