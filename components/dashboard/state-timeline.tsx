import { RelativeTime } from "@/components/relative-time";
import { StateBadge } from "@/components/state-badge";

export type TransitionItem = { id: number; fromState: string; toState: string; reason: string | null; actor: string | null; at: string };

/** A key's state changes, newest first (server-safe). */
export function StateTimeline({ items, now }: { items: TransitionItem[]; now?: Date }) {
  return (
    <ol className="timeline">
      {items.map((t) => (
        <li key={t.id} className="timeline-item">
          <span className="timeline-dot" data-tone={t.toState} aria-hidden="true" />
          <span className="stack" style={{ gap: 2 }}>
            <span className="row row-wrap" style={{ gap: 6 }}>
              <StateBadge state={t.fromState} />
              <span className="subtle" aria-label="to">
                →
              </span>
              <StateBadge state={t.toState} />
            </span>
            {(t.reason || t.actor) && (
              <span className="text-sm muted">
                {t.reason}
                {t.actor && (
                  <>
                    {t.reason ? " · " : ""}by <span className="strong">{t.actor}</span>
                  </>
                )}
              </span>
            )}
          </span>
          <span className="timeline-time">
            <RelativeTime date={t.at} now={now} />
          </span>
        </li>
      ))}
    </ol>
  );
}
