/**
 * What a person can be notified about, and how urgent each is. Pure: maps engine effects
 * (and the tool-call approval effect of the approvals feature) to notifications.
 */
import type { Effect } from "@/server/engine/types";

export const NOTIFICATION_EVENTS = [
  "tool_call_approval_waiting",
  "recovery_pending",
  "key_escalated",
  "key_blocked",
  "session_paused",
  "global_pattern_raised",
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** info < warning < critical: a channel receives events at or above its minimum. */
export const NOTIFICATION_SEVERITIES = ["info", "warning", "critical"] as const;
export type NotificationSeverity = (typeof NOTIFICATION_SEVERITIES)[number];

export const EVENT_SEVERITY: Record<NotificationEvent, NotificationSeverity> = {
  key_escalated: "warning",
  recovery_pending: "warning",
  tool_call_approval_waiting: "warning",
  session_paused: "warning",
  key_blocked: "critical",
  global_pattern_raised: "critical",
};

export function severityAtLeast(s: NotificationSeverity, min: NotificationSeverity): boolean {
  return NOTIFICATION_SEVERITIES.indexOf(s) >= NOTIFICATION_SEVERITIES.indexOf(min);
}

export interface NotificationDraft {
  event: NotificationEvent;
  severity: NotificationSeverity;
  /** The key, tool or session this is about: quiet periods group by it. */
  subject: string;
  subjectKind: "failure_key" | "session" | "tool";
  title: string;
  reason: string;
  /** Dashboard path relative to the workspace (`/w/<slug>` prefix added by the payload), or an `/org/…` page. */
  actionPath: string;
  details: Record<string, unknown>;
}

const enc = encodeURIComponent;

export function draftFromEffect(e: Effect): NotificationDraft | null {
  const draft = (event: NotificationEvent, rest: Omit<NotificationDraft, "event" | "severity">): NotificationDraft => ({
    event,
    severity: EVENT_SEVERITY[event],
    ...rest,
  });
  switch (e.type) {
    case "escalated":
      return draft("key_escalated", {
        subject: e.failureKey,
        subjectKind: "failure_key",
        title: `Escalated: ${e.toolName}`,
        reason: e.reason,
        actionPath: `/tools/${enc(e.failureKey)}`,
        details: { failureKey: e.failureKey, toolName: e.toolName, expiresAt: e.expiresAt },
      });
    case "blocked":
      return draft("key_blocked", {
        subject: e.failureKey,
        subjectKind: "failure_key",
        title: `Blocked: ${e.toolName}`,
        reason: e.reason,
        actionPath: `/tools/${enc(e.failureKey)}`,
        details: { failureKey: e.failureKey, toolName: e.toolName },
      });
    case "recovery_pending":
      return draft("recovery_pending", {
        subject: e.failureKey,
        subjectKind: "failure_key",
        title: "Recovery waiting for approval",
        reason: `The key ${e.failureKey} passed its probation and waits for a person to approve its recovery`,
        actionPath: "/approvals",
        details: { failureKey: e.failureKey, approvalId: e.approvalId },
      });
    case "approval_pending":
      return draft("tool_call_approval_waiting", {
        subject: e.failureKey,
        subjectKind: "failure_key",
        title: `Tool call waiting for approval: ${e.toolName}`,
        reason: e.reason ?? "An agent is waiting for a person to approve a tool call",
        actionPath: "/approvals",
        details: { approvalId: e.approvalId, toolName: e.toolName, failureKey: e.failureKey, sessionId: e.sessionId, callId: e.callId },
      });
    case "paused":
      return draft("session_paused", {
        subject: e.sessionId,
        subjectKind: "session",
        title: "Session paused",
        reason: e.reason,
        actionPath: `/sessions/${enc(e.sessionId)}`,
        details: { sessionId: e.sessionId },
      });
    default:
      return null;
  }
}

export function draftForGlobalPattern(p: { toolName: string; workspaceCount: number; avgFailureRate: number }): NotificationDraft {
  return {
    event: "global_pattern_raised",
    severity: EVENT_SEVERITY.global_pattern_raised,
    subject: p.toolName,
    subjectKind: "tool",
    title: `Global tool pattern: ${p.toolName}`,
    reason: `Tool '${p.toolName}' is failing in ${p.workspaceCount} workspaces of the organization (average failure rate ${Math.round(p.avgFailureRate * 100)}%)`,
    actionPath: "/org/patterns",
    details: { toolName: p.toolName, workspaceCount: p.workspaceCount, avgFailureRate: p.avgFailureRate },
  };
}
