import Link from "next/link";
import { humanize } from "@/components/format";
import { FailureKey } from "@/components/failure-key";
import { RelativeTime } from "@/components/relative-time";
import { StateBadge } from "@/components/state-badge";
import { keyHref } from "@/server/dashboard/paths";
import type { SessionFailureSummary } from "@/server/services/session-failure-summary";

/** The foot of a session's page (SPEC 8): what failed, its groups, the keys it escalated, its patterns, how it ended. */
export function FailureSummary({ summary, slug, now }: { summary: SessionFailureSummary; slug: string; now: string }) {
  const { outcome } = summary;
  const ending =
    outcome.status === "ended"
      ? `Ended${outcome.lastFailure ? "; its last failure was " + outcome.lastFailure.toolName : " without a failure"}`
      : `${humanize(outcome.status)}${outcome.lastFailure ? "; last failure on " + outcome.lastFailure.toolName : ""}`;
  return (
    <section className="card" aria-labelledby="failure-summary-title" data-testid="failure-summary">
      <div className="card-head">
        <div>
          <h2 className="card-title" id="failure-summary-title">
            Failure summary
          </h2>
          <p className="card-subtitle">
            {summary.failures === 0 ? "No tool call failed in this session." : `${summary.failures.toLocaleString("en-US")} failed tool call${summary.failures === 1 ? "" : "s"}.`}{" "}
            {ending}
            {outcome.endedAt && (
              <>
                {" "}
                (<RelativeTime date={outcome.endedAt} now={now} />)
              </>
            )}
            .
          </p>
        </div>
      </div>
      {summary.failures > 0 && (
        <div className="card-body stack">
          <div>
            <h3 className="text-sm muted">What failed</h3>
            <ul className="stack stack-sm dash2-plain-list">
              {summary.failed.slice(0, 10).map((f) => (
                <li key={f.failureKey} className="row">
                  <Link href={keyHref(slug, f.failureKey)}>
                    <FailureKey value={f.failureKey} wrap />
                  </Link>
                  <span className="spacer" />
                  <span className="num">{f.count.toLocaleString("en-US")}</span>
                </li>
              ))}
            </ul>
          </div>
          <div>
            <h3 className="text-sm muted">Failure groups</h3>
            <ul className="stack stack-sm dash2-plain-list">
              {summary.groups.slice(0, 10).map((g) => (
                <li key={g.fingerprint} className="row">
                  <Link href={`/w/${slug}/failures?fp=${g.fingerprint}`}>
                    <code style={{ whiteSpace: "pre-wrap", wordBreak: "break-word" }}>{g.sample}</code>
                  </Link>
                  <span className="spacer" />
                  <span className="num">{g.count.toLocaleString("en-US")}</span>
                </li>
              ))}
            </ul>
          </div>
          {summary.escalatedKeys.length > 0 && (
            <div>
              <h3 className="text-sm muted">Keys it escalated</h3>
              <ul className="stack stack-sm dash2-plain-list">
                {summary.escalatedKeys.map((k) => (
                  <li key={`${k.failureKey}-${k.at}`} className="row">
                    <Link href={keyHref(slug, k.failureKey)}>
                      <FailureKey value={k.failureKey} wrap />
                    </Link>
                    <span className="spacer" />
                    <StateBadge state={k.toState} />
                    {k.reason && <span className="muted text-sm">{k.reason}</span>}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {summary.patterns.length > 0 && (
            <div>
              <h3 className="text-sm muted">Patterns</h3>
              <p className="text-sm">{summary.patterns.map((p) => `${humanize(p.patternType)} (${p.severity}) × ${p.count}`).join(" · ")}</p>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
