/** What is sent: the generic webhook JSON body and Slack's Block Kit message. Pure. */
import type { NotificationDraft } from "./events";

/** Stored in the outbox row; rendered per channel type at delivery. */
export interface StoredNotification extends NotificationDraft {
  id: string;
  workspaceSlug: string;
  createdAt: string;
  /** Notifications about the same subject held back by the channel's quiet period since the last one sent. */
  suppressedCount: number;
  test?: boolean;
}

function dashboardUrl(baseUrl: string, n: StoredNotification): string {
  const base = baseUrl.replace(/\/+$/, "");
  // Organization pages (global patterns) are not under a workspace.
  return n.actionPath.startsWith("/org/") ? `${base}${n.actionPath}` : `${base}/w/${n.workspaceSlug}${n.actionPath}`;
}

export function webhookBody(n: StoredNotification, baseUrl: string) {
  return {
    id: n.id,
    event: n.event,
    severity: n.severity,
    workspace: n.workspaceSlug,
    subject: { kind: n.subjectKind, id: n.subject },
    title: n.title,
    reason: n.reason,
    url: dashboardUrl(baseUrl, n),
    suppressedCount: n.suppressedCount,
    createdAt: n.createdAt,
    test: n.test ?? false,
    details: n.details,
  };
}

const SEVERITY_MARK = { info: ":information_source:", warning: ":warning:", critical: ":rotating_light:" } as const;
const SUBJECT_LABEL = { failure_key: "Key", session: "Session", tool: "Tool", workspace: "Workspace" } as const;

export function slackMessage(n: StoredNotification, baseUrl: string) {
  const url = dashboardUrl(baseUrl, n);
  const title = `${SEVERITY_MARK[n.severity]} ${n.test ? "[test] " : ""}${n.title}`;
  const fields = [
    { type: "mrkdwn", text: `*${SUBJECT_LABEL[n.subjectKind]}*\n\`${n.subject.slice(0, 500)}\`` },
    { type: "mrkdwn", text: `*Workspace*\n${n.workspaceSlug}` },
  ];
  const blocks: unknown[] = [
    { type: "header", text: { type: "plain_text", text: title.slice(0, 150), emoji: true } },
    { type: "section", text: { type: "mrkdwn", text: n.reason.slice(0, 2900) }, fields },
  ];
  if (n.suppressedCount > 0)
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `${n.suppressedCount} similar notification(s) suppressed by the quiet period` }] });
  blocks.push({
    type: "actions",
    elements: [{ type: "button", text: { type: "plain_text", text: "Open in Vigil" }, url, style: n.severity === "critical" ? "danger" : "primary" }],
  });
  return { text: `${n.title}: ${n.reason}`.slice(0, 3000), blocks };
}
