import { Icon } from "@/components/icons";
import { MiddleTruncate } from "@/components/middle-truncate";
import { RelativeTime } from "@/components/relative-time";
import type { OpenCallView } from "@/server/services/open-calls";

const plural = (n: number) => (n === 1 ? "1 open call" : `${n} open calls`);

/** The list's note under a session's status: how many calls wait for a result, their tools on hover. */
export function OpenCallsNote({ calls }: { calls: readonly OpenCallView[] }) {
  if (!calls.length) return null;
  const tools = [...new Set(calls.map((c) => c.toolName))].join(", ");
  return (
    <div className="text-xs text-warning" title={`No result after open_call_seconds: ${tools}`} data-testid="open-calls-note">
      {plural(calls.length)}
    </div>
  );
}

/** The session page's callout: each call still without a result after open_call_seconds (SPEC 5.1). */
export function OpenCallsCallout({ calls, openCallSeconds, now }: { calls: readonly OpenCallView[]; openCallSeconds: number; now: string }) {
  if (!calls.length) return null;
  return (
    <div className="callout dash2-callout" data-tone="warning" role="status" data-testid="open-calls">
      <Icon name="clock" />
      <div className="stack-sm stack" style={{ flex: "1 1 auto", minWidth: 0 }}>
        <div>
          <strong>{plural(calls.length)}</strong>: no result after {openCallSeconds} s (<span className="mono">open_call_seconds</span>). Each is raised once as{" "}
          <span className="mono">hung_call</span> in the session’s next answer; its result closes it.
        </div>
        <ul className="dash2-plain-list stack-sm stack">
          {calls.map((c) => (
            <li key={c.callId} className="row" style={{ gap: 8, flexWrap: "wrap", minWidth: 0 }}>
              <span className="mono text-sm">{c.toolName}</span>
              <span className="muted text-sm" style={{ minWidth: 0, maxWidth: "100%" }}>
                <MiddleTruncate value={c.callId} mono maxWidth="32ch" />
              </span>
              <span className="muted text-sm">
                called <RelativeTime date={c.since} now={now} />
              </span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
