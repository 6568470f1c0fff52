"use client";

import Link from "next/link";
import { useState } from "react";
import { keyHref } from "@/server/dashboard/paths";
import { EmptyState } from "@/components/empty-state";
import { FailureKey } from "@/components/failure-key";
import { Button } from "@/components/form";
import { formatAbsoluteUTC, formatNumber, humanize } from "@/components/format";
import { Icon } from "@/components/icons";
import { Badge, PatternSeverityBadge, SeverityBadge } from "@/components/state-badge";
import { errorMessage, useTRPCClient } from "@/lib/trpc/client";
import type { TimelineItem, TimelinePage } from "@/server/dashboard/sessions-data";

const LONG_TEXT = 600;

function timeOf(ts: string) {
  const d = new Date(ts);
  return `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}:${String(d.getUTCSeconds()).padStart(2, "0")}`;
}

function str(v: unknown): string | null {
  return typeof v === "string" && v !== "" ? v : null;
}
function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function formatMs(ms: number) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function Collapsible({ text, mono = false }: { text: string; mono?: boolean }) {
  const long = text.length > LONG_TEXT || text.split("\n").length > 8;
  const [open, setOpen] = useState(false);
  return (
    <div className="dash2-text-wrap">
      <div className={["dash2-text", mono && "mono", long && !open && "dash2-text-clamped"].filter(Boolean).join(" ")}>{text}</div>
      {long && (
        <button type="button" className="btn btn-ghost btn-xs dash2-more" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
          <Icon name={open ? "chevronUp" : "chevronDown"} size={12} />
          {open ? "Show less" : `Show all (${formatNumber(text.length)} characters)`}
        </button>
      )}
    </div>
  );
}

/** A failure key in the timeline, linked to its page. */
function KeyLink({ slug, value }: { slug: string; value: string }) {
  return (
    <Link href={keyHref(slug, value)} className="timeline-key-link" title={`Open ${value}`}>
      {/* Wrapping: a link has no width of its own to ellipsize against, and the whole key is shown. */}
      <FailureKey value={value} wrap />
    </Link>
  );
}

const GUARD_LOOK: Record<string, { icon: "shieldCheck" | "help" | "ban" | "pause"; tone: "trusted" | "escalated" | "blocked" | "recovering"; label: string }> = {
  allow: { icon: "shieldCheck", tone: "trusted", label: "Vigil allowed the call" },
  ask: { icon: "help", tone: "escalated", label: "Vigil asked for approval" },
  deny: { icon: "ban", tone: "blocked", label: "Vigil denied the call" },
  pause: { icon: "pause", tone: "blocked", label: "Vigil held the call: session paused" },
};

function guardTone(guard: unknown): string {
  const d = guard && typeof guard === "object" ? (guard as { decision?: unknown }).decision : undefined;
  return typeof d === "string" && d !== "allow" && GUARD_LOOK[d] ? GUARD_LOOK[d].tone : "neutral";
}

/** guard.check's answer to a call (stored with the call), shown under it. */
function GuardDecision({ guard }: { guard: unknown }) {
  if (!guard || typeof guard !== "object") return null;
  const g = guard as { decision?: unknown; reason?: unknown };
  const look = typeof g.decision === "string" ? GUARD_LOOK[g.decision] : undefined;
  if (!look) return null;
  return (
    <div className="row row-wrap text-sm timeline-guard" data-decision={String(g.decision)}>
      <Badge tone={look.tone} square>
        <Icon name={look.icon} size={12} label={`Decision: ${String(g.decision)}`} />
        {look.label}
      </Badge>
      {str(g.reason) && <span className="muted">{str(g.reason)}</span>}
    </div>
  );
}

function Row({ item, slug }: { item: TimelineItem; slug: string }) {
  const time = (
    <time className="timeline-time" dateTime={item.ts} title={formatAbsoluteUTC(item.ts)}>
      {timeOf(item.ts)}
    </time>
  );
  if (item.kind === "pattern") {
    return (
      <li className="timeline-item dash2-tl-pattern" data-kind="pattern">
        <span className="timeline-dot" data-tone="escalated" />
        <div className="stack stack-sm" style={{ gap: 4 }}>
          <div className="row row-wrap">
            <Icon name="patterns" size={14} />
            <strong>Pattern: {humanize(item.patternType)}</strong>
            <PatternSeverityBadge severity={item.severity} />
            <span className="muted text-sm">count {item.count}</span>
          </div>
          {item.toolSequence.length > 0 && (
            <div className="text-sm muted mono dash2-seq" title={item.toolSequence.join(" → ")}>
              {item.toolSequence.slice(-10).join(" → ")}
            </div>
          )}
        </div>
        {time}
      </li>
    );
  }
  if (item.kind === "resume") {
    return (
      <li className="timeline-item" data-kind="resume">
        <span className="timeline-dot" data-tone="trusted" />
        <div className="stack stack-sm" style={{ gap: 4 }}>
          <div className="row row-wrap">
            <Icon name="play" size={14} />
            <strong>Resumed by {item.actor}</strong>
          </div>
          {item.guidance ? (
            <div className="dash2-nudge" data-tone="info">
              <Collapsible text={item.guidance} />
            </div>
          ) : (
            <span className="text-sm muted">No guidance given.</span>
          )}
        </div>
        {time}
      </li>
    );
  }
  if (item.kind === "approval") {
    const resolved = item.phase === "resolved";
    const denied = resolved && item.status === "denied";
    const icon = !resolved ? "help" : denied ? "ban" : "check";
    const tone = !resolved ? "escalated" : denied ? "blocked" : "trusted";
    return (
      <li className="timeline-item" data-kind="approval" data-status={resolved ? item.status : "requested"}>
        <span className="timeline-dot" data-tone={tone} />
        <div className="stack stack-sm" style={{ gap: 4 }}>
          <div className="row row-wrap">
            <Icon name={icon} size={14} label={resolved ? item.status : "approval requested"} />
            <strong>
              {!resolved
                ? `Approval requested for ${item.toolName}`
                : denied
                  ? `Call of ${item.toolName} denied by ${item.resolvedBy ?? "a person"}`
                  : `Call of ${item.toolName} approved ${item.scope === "session" ? "for the session" : "once"} by ${item.resolvedBy ?? "a person"}`}
            </strong>
            {!resolved && item.status === "pending" && (
              <Badge tone="warning" square>
                Waiting
              </Badge>
            )}
          </div>
          <div className="text-sm">
            <KeyLink slug={slug} value={item.failureKey} />
          </div>
          {!resolved && item.reason && <span className="text-sm muted">{item.reason}</span>}
          {resolved && item.comment && (
            <div className="dash2-nudge" data-tone={denied ? "danger" : "info"}>
              <Collapsible text={item.comment} />
            </div>
          )}
        </div>
        {time}
      </li>
    );
  }
  if (item.kind === "nudge") {
    const tone = item.nudgeType === "interrupt" ? "danger" : item.nudgeType === "guidance" ? "info" : item.nudgeType === "direct" ? "warning" : "neutral";
    return (
      <li className="timeline-item dash2-tl-nudge" data-kind="nudge">
        <span className="timeline-dot" data-tone={item.nudgeType === "interrupt" ? "blocked" : "recovering"} />
        <div className="dash2-nudge" data-tone={tone}>
          <div className="row row-wrap" style={{ marginBottom: 4 }}>
            <Icon name={item.nudgeType === "interrupt" ? "pause" : "info"} size={14} />
            <Badge tone={tone} square>
              {item.nudgeType === "guidance" ? "Guidance" : `${humanize(item.nudgeType)} nudge`}
            </Badge>
            {item.patternType && <span className="muted text-sm">{humanize(item.patternType)}</span>}
            {item.nudgeType === "interrupt" && <span className="text-sm text-danger">Session paused</span>}
          </div>
          <Collapsible text={item.message} />
        </div>
        {time}
      </li>
    );
  }
  const p = item.payload;
  switch (item.type) {
    case "turn.start":
      return (
        <li className="dash2-turn" data-kind="turn">
          <span>Turn {item.turnIndex ?? "?"}</span>
          {time}
        </li>
      );
    case "session.start":
    case "session.end":
      return (
        <li className="timeline-item" data-kind="session">
          <span className="timeline-dot" />
          <div className="row row-wrap">
            <Icon name={item.type === "session.start" ? "play" : "check"} size={14} />
            <strong>{item.type === "session.start" ? "Session started" : "Session ended"}</strong>
            {item.type === "session.start" && str(p.agent) && <span className="muted">agent {str(p.agent)}</span>}
            {item.model && <span className="muted mono text-sm">{item.model}</span>}
            {item.type === "session.start" && p.settings && typeof p.settings === "object" && Object.keys(p.settings).length > 0 ? (
              <span className="muted text-sm mono">settings {JSON.stringify(p.settings)}</span>
            ) : null}
          </div>
          {time}
        </li>
      );
    case "tool.call": {
      const preview = str(p.preview);
      return (
        <li className="timeline-item" data-kind="call">
          <span className="timeline-dot" data-tone={guardTone(p.guard)} />
          <div className="stack" style={{ gap: 4 }}>
            <div className="row row-wrap">
              <Icon name="arrowUp" size={12} />
              <span className="dash2-tl-label">Call</span>
              {item.failureKey ? <KeyLink slug={slug} value={item.failureKey} /> : <strong className="mono">{item.toolName}</strong>}
              {str(p.pluginName) && <span className="muted text-sm">plugin {str(p.pluginName)}</span>}
            </div>
            <GuardDecision guard={p.guard} />
            {preview && preview !== "{}" && (
              <details className="dash2-details">
                <summary className="text-sm muted">Arguments (redacted preview)</summary>
                <pre className="code">{preview}</pre>
              </details>
            )}
          </div>
          {time}
        </li>
      );
    }
    case "tool.result": {
      const failed = item.failed === true;
      const duration = num(p.durationMs);
      const http = num(p.httpStatus);
      const error = str(p.error);
      return (
        <li className="timeline-item" data-kind="result" data-failed={failed || undefined}>
          <span className="timeline-dot" data-tone={failed ? "blocked" : "trusted"} />
          <div className="stack" style={{ gap: 4 }}>
            <div className="row row-wrap">
              <Icon name="arrowDown" size={12} />
              <span className="dash2-tl-label">Result</span>
              <strong className="mono">{item.toolName}</strong>
              {failed ? (
                <Badge tone="blocked" dot>
                  Failed
                </Badge>
              ) : (
                <Badge tone="trusted" dot>
                  OK
                </Badge>
              )}
              {failed && item.severity && <SeverityBadge severity={item.severity} />}
              {http !== null && <span className="muted text-sm mono">HTTP {http}</span>}
              {duration !== null && <span className="muted text-sm">{formatMs(duration)}</span>}
            </div>
            {failed && item.failureKey && (
              <div className="text-sm">
                <KeyLink slug={slug} value={item.failureKey} />
              </div>
            )}
            {error && (
              <div className="dash2-error text-sm">
                <Collapsible text={error} mono />
              </div>
            )}
          </div>
          {time}
        </li>
      );
    }
    case "model.text": {
      const text = str(p.text) ?? "";
      return (
        <li className="timeline-item" data-kind="text">
          <span className="timeline-dot" data-tone="recovering" />
          <div className="dash2-model-text">
            <div className="row text-xs muted" style={{ marginBottom: 2 }}>
              <Icon name="sessions" size={12} /> Model text{item.model ? ` · ${item.model}` : ""}
              {p.truncated === true && <span>· stored truncated</span>}
              {p.reasoningOnly === true && <span>· reasoning only</span>}
            </div>
            <Collapsible text={text} />
          </div>
          {time}
        </li>
      );
    }
    case "user.message": {
      const text = str(p.text);
      return (
        <li className="timeline-item" data-kind="user">
          <span className="timeline-dot" data-tone="trusted" />
          <div className="dash2-model-text">
            <div className="row text-xs muted" style={{ marginBottom: 2 }}>
              <Icon name="sessions" size={12} />{" "}
              {p.automated === true ? "Automated message · stall detection continues" : "Person's message · stall detection starts over"}
              {p.truncated === true && <span>· stored truncated</span>}
            </div>
            {text ? <Collapsible text={text} /> : <span className="muted text-sm">(no text)</span>}
          </div>
          {time}
        </li>
      );
    }
    case "model.error":
      return (
        <li className="timeline-item" data-kind="model-error">
          <span className="timeline-dot" data-tone="blocked" />
          <div className="dash2-model-text">
            <div className="row text-xs muted" style={{ marginBottom: 2 }}>
              <Icon name="ban" size={12} /> Model API failed{item.model ? ` · ${item.model}` : ""} · not counted against a tool
            </div>
            <div className="dash2-error text-sm">
              <Collapsible text={str(p.error) ?? ""} mono />
            </div>
          </div>
          {time}
        </li>
      );
    case "permission.resolved":
      return (
        <li className="timeline-item" data-kind="permission" data-granted={p.granted === true}>
          <span className="timeline-dot" data-tone={p.granted === true ? "trusted" : "blocked"} />
          <div className="row row-wrap">
            <Icon name={p.granted === true ? "check" : "ban"} size={14} label={p.granted === true ? "granted" : "denied"} />
            <span>
              Permission for <strong className="mono">{item.toolName}</strong> {p.granted === true ? "granted" : "denied"}
            </span>
            {str(p.method) && <span className="muted text-sm">via {str(p.method)}</span>}
          </div>
          {time}
        </li>
      );
    default:
      return (
        <li className="timeline-item">
          <span className="timeline-dot" />
          <span className="mono text-sm">{item.type}</span>
          {time}
        </li>
      );
  }
}

/** A session's timeline: the newest page server-rendered, older pages loaded on demand. */
export function SessionTimeline({
  workspaceSlug,
  sessionId,
  initial,
}: {
  workspaceSlug: string;
  sessionId: string;
  initial: TimelinePage;
  now?: string;
}) {
  const client = useTRPCClient();
  const [pages, setPages] = useState<TimelinePage[]>([initial]);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cursor = pages[0].nextCursor;

  const loadOlder = async () => {
    if (!cursor) return;
    setLoading(true);
    setError(null);
    try {
      const page = await client.wsConfig.sessions.timeline.query({ workspaceSlug, sessionId, before: cursor });
      setPages((ps) => [page, ...ps]);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setLoading(false);
    }
  };

  const items = pages.flatMap((p) => p.items);
  if (items.length === 0) {
    return <EmptyState compact icon="sessions" title="No events recorded" description="This session has no stored events (they may have been pruned by retention)." />;
  }
  let lastDay = "";
  return (
    <div className="stack">
      {cursor ? (
        <div className="row">
          <Button size="sm" onClick={loadOlder} loading={loading}>
            <Icon name="chevronUp" /> Load older events
          </Button>
          {error && <span className="field-error">{error}</span>}
        </div>
      ) : (
        <div className="text-sm subtle">Start of the session.</div>
      )}
      <ol className="timeline dash2-timeline">
        {items.map((item) => {
          const day = item.ts.slice(0, 10);
          const showDay = day !== lastDay;
          lastDay = day;
          return (
            <DayGroup key={item.key} day={showDay ? day : null}>
              <Row item={item} slug={workspaceSlug} />
            </DayGroup>
          );
        })}
      </ol>
    </div>
  );
}

function DayGroup({ day, children }: { day: string | null; children: React.ReactNode }) {
  if (!day) return <>{children}</>;
  return (
    <>
      <li className="dash2-day" aria-hidden="false">
        {day} (UTC)
      </li>
      {children}
    </>
  );
}
