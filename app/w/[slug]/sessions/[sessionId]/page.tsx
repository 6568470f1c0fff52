import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { CopyValueButton } from "@/components/copy-value-button";
import { ButtonLink } from "@/components/form";
import { formatNumber, humanize } from "@/components/format";
import { Icon } from "@/components/icons";
import { KeyValue } from "@/components/key-value";
import { MiddleTruncate } from "@/components/middle-truncate";
import { PageHeader } from "@/components/page-header";
import { WatchCounts } from "@/components/policies/watch-counts";
import { RelativeTime } from "@/components/relative-time";
import { Badge } from "@/components/state-badge";
import { requireWorkspacePage } from "@/server/dashboard/access";
import { getSessionRow, loadSessionControl, sessionMessages, sessionPatternSummary, sessionTimeline } from "@/server/dashboard/sessions-data";
import { AgentHoldButton, PauseSessionButton } from "@/components/controls/session-controls";
import { SessionMessageBox } from "@/components/controls/session-message";
import { SETTINGS } from "@/server/engine/registry";
import { SETTING_NAMES } from "@/server/engine/settings";
import { getRuntime } from "@/server/runtime";
import { effectiveSettingsFor } from "@/server/services/workspace-config";
import { SessionStatusBadge } from "../session-status-badge";
import { OpenCallsCallout } from "../open-calls";
import { openCallsOf } from "@/server/services/open-calls";
import { ResumeSession } from "./resume-session";
import { SessionTimeline } from "./session-timeline";
import { FailureSummary } from "./failure-summary";
import { sessionFailureSummary } from "@/server/services/session-failure-summary";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ sessionId: string }> }): Promise<Metadata> {
  const { sessionId } = await params;
  return { title: `Session ${safeDecode(sessionId)}` };
}

function safeDecode(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A name shown whole (wrapping when long: the side card is narrow) with a copy button. */
function CopyableName({ value, label, mono = false }: { value: string; label: string; mono?: boolean }) {
  return (
    <span className={mono ? "copyable-name mono" : "copyable-name"}>
      {value}
      <CopyValueButton value={value} label={label} />
    </span>
  );
}

function formatSettingValue(v: unknown): string {
  if (Array.isArray(v)) return v.length ? v.join(", ") : "(none)";
  if (typeof v === "boolean") return v ? "on" : "off";
  return String(v);
}

export default async function SessionPage({ params }: { params: Promise<{ slug: string; sessionId: string }> }) {
  const { slug, sessionId: rawId } = await params;
  const sessionId = safeDecode(rawId);
  const page = await requireWorkspacePage(slug);
  const db = (await getRuntime()).database.db;
  const workspaceId = page.access.workspace.id;
  const control = await loadSessionControl(db, workspaceId);
  const session = await getSessionRow(db, workspaceId, sessionId, control);
  if (!session) notFound();
  const [timeline, patterns, settings, messages, failureSummary, openCalls] = await Promise.all([
    sessionTimeline(db, { workspaceId, sessionId }),
    sessionPatternSummary(db, workspaceId, sessionId),
    effectiveSettingsFor(db, workspaceId, session.settings),
    sessionMessages(db, workspaceId, sessionId),
    sessionFailureSummary(db, workspaceId, {
      sessionId,
      status: session.status,
      endedAt: session.endedAt ? new Date(session.endedAt) : null,
      failureCount: session.failureCount,
    }),
    openCallsOf(db, workspaceId, [sessionId]),
  ]);
  const held = session.held;
  const running = session.status !== "ended";
  const now = new Date().toISOString();
  const base = `/w/${encodeURIComponent(slug)}`;
  const canResume = page.permissions.canOperate;

  return (
    <>
      <PageHeader
        title={<MiddleTruncate value={session.sessionId} mono copy copyLabel="session id" className="dash2-session-title" tail={16} />}
        badge={<SessionStatusBadge status={session.status} held={held} />}
        description={
          <>
            Agent <strong><MiddleTruncate value={session.agent} maxWidth="40ch" /></strong>
            {session.model && (
              <>
                {" "}
                · model <MiddleTruncate value={session.model} mono maxWidth="40ch" />
              </>
            )}
            {session.startedAt && (
              <>
                {" "}
                · started <RelativeTime date={session.startedAt} now={now} />
              </>
            )}
          </>
        }
        actions={
          <>
            <ButtonLink href={`${base}/sessions`} size="sm" variant="ghost">
              <Icon name="chevronLeft" /> All sessions
            </ButtonLink>
            {session.paused && canResume && <ResumeSession workspaceSlug={slug} sessionId={session.sessionId} />}
            {running && !session.paused && !held && <PauseSessionButton slug={slug} sessionId={session.sessionId} canOperate={canResume} />}
          </>
        }
      />

      {held && held.scope === "agent" && running && (
        <div className="callout dash2-callout" data-tone="warning" role="status" data-testid="agent-hold-callout">
          <Icon name="pause" />
          <div className="stack-sm stack" style={{ flex: "1 1 auto" }}>
            <div>
              <strong>Agent {session.agent} is paused</strong> by {held.by} <RelativeTime date={held.since} now={now} />: {held.reason}. Every session of this
              agent answers <span className="mono">pause</span> until the agent is resumed.
            </div>
          </div>
          <AgentHoldButton slug={slug} agent={session.agent} held canOperate={canResume} />
        </div>
      )}

      {session.paused && (
        <div className="callout dash2-callout" data-tone="warning" role="status">
          <Icon name="pause" />
          <div className="stack-sm stack">
            <div>
              <strong>This session is paused.</strong> Every <span className="mono">guard.check</span> of it answers{" "}
              <span className="mono">pause</span> until someone resumes it
              {session.pausedAt && (
                <>
                  {" "}
                  (paused <RelativeTime date={session.pausedAt} now={now} />
                  {session.held?.scope === "session" && session.held.by !== "vigil" ? ` by ${session.held.by}` : ""})
                </>
              )}
              .
            </div>
            {session.pauseReason && <div className="muted">Reason: {session.pauseReason}</div>}
            {!canResume && <div className="muted text-sm">Resuming needs the member role or higher.</div>}
          </div>
        </div>
      )}

      <OpenCallsCallout calls={openCalls.get(sessionId) ?? []} openCallSeconds={settings.openCallSeconds.value} now={now} />

      <WatchCounts workspaceId={workspaceId} sessionId={session.sessionId} scopeLabel="this session" />

      <div className="dash2-session-grid">
        <section className="card" aria-labelledby="timeline-title">
          <div className="card-head">
            <div>
              <h2 className="card-title" id="timeline-title">
                Timeline
              </h2>
              <p className="card-subtitle">Tool calls with Vigil’s answers, results, model text, detected patterns, nudges, approvals and resumes, oldest first.</p>
            </div>
          </div>
          <div className="card-body">
            <SessionTimeline workspaceSlug={slug} sessionId={session.sessionId} initial={timeline} now={now} />
          </div>
        </section>

        <aside className="stack">
          {(running || messages.length > 0) && (
            <SessionMessageBox slug={slug} sessionId={session.sessionId} canOperate={canResume} running={running} messages={messages} />
          )}
          <section className="card">
            <div className="card-head">
              <h2 className="card-title">Session</h2>
            </div>
            <div className="card-body">
              <KeyValue
                layout="grid"
                items={[
                  { label: "Agent", value: <CopyableName value={session.agent} label="agent name" />, wide: session.agent.length > 9 },
                  { label: "Model", value: session.model ? <CopyableName value={session.model} mono label="model name" /> : "—", wide: (session.model?.length ?? 0) > 9 },
                  { label: "Started", value: session.startedAt ? <RelativeTime date={session.startedAt} now={now} /> : "—" },
                  { label: "Last event", value: session.lastEventAt ? <RelativeTime date={session.lastEventAt} now={now} /> : "—" },
                  { label: "Ended", value: session.endedAt ? <RelativeTime date={session.endedAt} now={now} /> : "—" },
                  { label: "Events", value: formatNumber(session.eventCount) },
                  { label: "Tool calls", value: formatNumber(session.callCount) },
                  { label: "Failures", value: formatNumber(session.failureCount) },
                  { label: "Patterns", value: formatNumber(session.patternCount) },
                ]}
              />
            </div>
          </section>

          <section className="card">
            <div className="card-head">
              <div>
                <h2 className="card-title">Effective settings</h2>
                <p className="card-subtitle">Session overrides win over workspace, organization and built-in defaults.</p>
              </div>
            </div>
            <div className="card-body">
              <ul className="dash2-plain-list dash2-settings-list">
                {SETTING_NAMES.map((name) => (
                  <li key={name}>
                    <span className="muted">{SETTINGS[name].label}</span>
                    <span className="dash2-setting-value">
                      <span className="mono text-sm">{formatSettingValue(settings[name].value)}</span>
                      <Badge tone={settings[name].source === "default" ? "outline" : settings[name].source === "session" ? "info" : "neutral"} square>
                        {settings[name].source}
                      </Badge>
                    </span>
                  </li>
                ))}
              </ul>
            </div>
          </section>

          {patterns.length > 0 && (
            <section className="card">
              <div className="card-head">
                <h2 className="card-title">Detected patterns</h2>
              </div>
              <div className="card-body">
                <ul className="stack stack-sm dash2-plain-list">
                  {patterns.map((p) => (
                    <li key={p.patternType} className="row">
                      <span>{humanize(p.patternType)}</span>
                      <span className="spacer" />
                      <span className="num">{formatNumber(p.count)}</span>
                    </li>
                  ))}
                </ul>
              </div>
            </section>
          )}
        </aside>
      </div>
      <FailureSummary summary={failureSummary} slug={slug} now={now} />
    </>
  );
}
