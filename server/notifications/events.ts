/**
 * What a person can be notified about, and how urgent each is. Pure: maps engine effects
 * (and the tool-call approval effect of the approvals feature) to notifications.
 */
import type { Effect } from "@/server/engine/types";

/** info < warning < critical: a channel receives events at or above its minimum. */
export const NOTIFICATION_SEVERITIES = ["info", "warning", "critical"] as const;
export type NotificationSeverity = (typeof NOTIFICATION_SEVERITIES)[number];

/**
 * Every event a channel can subscribe to, declared once: its name, how urgent it is, whether a new
 * channel takes it, and what it means. The channel form, the API's schema and the docs table
 * (notificationEventsMarkdownTable) derive from this list; the drafts below build its payloads.
 */
export const NOTIFICATION_EVENT_DEFS = [
  { name: "tool_call_approval_waiting", severity: "warning", defaultOn: true, label: "Tool call waits for approval", description: "An agent's tool call waits for a person to approve it (the key is escalated, or a policy asks)." },
  { name: "recovery_pending", severity: "warning", defaultOn: true, label: "Recovery waits for approval", description: "A key passed its probation and waits for a person to approve its recovery (recovery mode `ask`)." },
  { name: "key_escalated", severity: "warning", defaultOn: true, label: "Key escalated", description: "A failure key crossed its rule's threshold: its calls now need a person's approval." },
  { name: "key_blocked", severity: "critical", defaultOn: true, label: "Key blocked", description: "A failure key was blocked (a security failure, or escalated too often)." },
  { name: "key_recovered", severity: "info", defaultOn: true, label: "Key recovered", description: "A key returned to trusted after its successes in probation." },
  { name: "session_paused", severity: "warning", defaultOn: true, label: "Session paused", description: "A session was paused by an interrupt nudge or a person; it waits to be resumed." },
  { name: "pattern_detected", severity: "warning", defaultOn: true, label: "Severe stall pattern", description: "A stall pattern reached its severe level in a session (minor and moderate detections are not sent)." },
  { name: "model_switch_suggested", severity: "info", defaultOn: true, label: "Model switch suggested", description: "Another model succeeds clearly more often with a failing key: Vigil suggested (or made) the switch." },
  { name: "budget_exhausted", severity: "warning", defaultOn: true, label: "Tool-call budget spent", description: "A session spent its tool-call budget (`max_tool_calls_per_session`) and was paused." },
  { name: "policy_denied", severity: "info", defaultOn: false, label: "Policy denied a call", description: "A deny policy refused a tool call. Off by default: a looping agent can raise many." },
  { name: "workspace_paused", severity: "critical", defaultOn: true, label: "Workspace paused", description: "A person paused every agent of the workspace (the kill switch)." },
  { name: "global_pattern_raised", severity: "critical", defaultOn: true, label: "Global tool pattern", description: "A tool fails across several workspaces of the organization." },
] as const satisfies ReadonlyArray<{ name: string; severity: NotificationSeverity; defaultOn: boolean; label: string; description: string }>;

export type NotificationEvent = (typeof NOTIFICATION_EVENT_DEFS)[number]["name"];
export const NOTIFICATION_EVENTS = NOTIFICATION_EVENT_DEFS.map((d) => d.name) as [NotificationEvent, ...NotificationEvent[]];
/** What a new channel subscribes to. */
export const DEFAULT_NOTIFICATION_EVENTS: NotificationEvent[] = NOTIFICATION_EVENT_DEFS.filter((d) => d.defaultOn).map((d) => d.name);

export const EVENT_SEVERITY = Object.fromEntries(NOTIFICATION_EVENT_DEFS.map((d) => [d.name, d.severity])) as Record<NotificationEvent, NotificationSeverity>;

/** The docs' table of events (docs/notifications.md; tests/unit/notifications.test.ts keeps them equal). */
export function notificationEventsMarkdownTable(): string {
  const rows = NOTIFICATION_EVENT_DEFS.map((d) => `| \`${d.name}\` | ${d.severity} | ${d.defaultOn ? "on" : "off"} | ${d.description} |`);
  return ["| event | severity | new channels | when |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

export function severityAtLeast(s: NotificationSeverity, min: NotificationSeverity): boolean {
  return NOTIFICATION_SEVERITIES.indexOf(s) >= NOTIFICATION_SEVERITIES.indexOf(min);
}

export interface NotificationDraft {
  event: NotificationEvent;
  severity: NotificationSeverity;
  /** The key, tool or session this is about: quiet periods group by it. */
  subject: string;
  subjectKind: "failure_key" | "session" | "tool" | "workspace";
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
    case "recovered":
      return draft("key_recovered", {
        subject: e.failureKey,
        subjectKind: "failure_key",
        title: `Recovered: ${e.toolName}`,
        reason: e.message,
        actionPath: `/tools/${enc(e.failureKey)}`,
        details: { failureKey: e.failureKey, toolName: e.toolName },
      });
    case "pattern":
      // Only the severe level: minor and moderate detections are the nudges' business.
      if (e.severity !== "severe") return null;
      return draft("pattern_detected", {
        subject: e.sessionId,
        subjectKind: "session",
        title: `Severe stall pattern: ${e.patternType}`,
        reason: `Session ${e.sessionId} shows the ${e.patternType} pattern at its severe level (${e.count} in a row${e.toolSequence.length ? `: ${e.toolSequence.slice(-5).join(" → ")}` : ""})`,
        actionPath: `/sessions/${enc(e.sessionId)}`,
        details: { sessionId: e.sessionId, patternType: e.patternType, severity: e.severity, count: e.count, toolSequence: e.toolSequence },
      });
    case "model_suggestion":
      return draft("model_switch_suggested", {
        subject: e.failureKey,
        subjectKind: "failure_key",
        title: `${e.strategy === "auto" ? "Model switched" : "Model switch suggested"}: ${e.currentModel} → ${e.suggestedModel}`,
        reason: `${e.suggestedModel} succeeds ${Math.round(e.suggestedSuccessRate * 100)}% of the time with ${e.failureKey}, ${e.currentModel} ${Math.round(e.currentSuccessRate * 100)}%`,
        actionPath: "/models",
        details: { failureKey: e.failureKey, strategy: e.strategy, currentModel: e.currentModel, suggestedModel: e.suggestedModel, currentSuccessRate: e.currentSuccessRate, suggestedSuccessRate: e.suggestedSuccessRate },
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

/** A session paused because this call spent its tool-call budget (SPEC 4.6). */
export function draftForBudgetExhausted(p: { sessionId: string; reason: string; toolName: string }): NotificationDraft {
  return {
    event: "budget_exhausted",
    severity: EVENT_SEVERITY.budget_exhausted,
    subject: p.sessionId,
    subjectKind: "session",
    title: "Tool-call budget spent",
    reason: p.reason,
    actionPath: `/sessions/${enc(p.sessionId)}`,
    details: { sessionId: p.sessionId, toolName: p.toolName },
  };
}

/** A deny policy refused a tool call. */
export function draftForPolicyDenied(p: { sessionId: string; toolName: string; failureKey: string; policy: string | null; reason: string | null }): NotificationDraft {
  return {
    event: "policy_denied",
    severity: EVENT_SEVERITY.policy_denied,
    subject: p.failureKey,
    subjectKind: "failure_key",
    title: `Policy denied: ${p.toolName}`,
    reason: p.reason ?? `A policy${p.policy ? ` (${p.policy})` : ""} denied a call of ${p.toolName}`,
    actionPath: "/policies",
    details: { sessionId: p.sessionId, toolName: p.toolName, failureKey: p.failureKey, policy: p.policy },
  };
}

/** A person paused every agent of the workspace. */
export function draftForWorkspacePaused(p: { reason: string; by: string }): NotificationDraft {
  return {
    event: "workspace_paused",
    severity: EVENT_SEVERITY.workspace_paused,
    subject: "workspace",
    subjectKind: "workspace",
    title: "Workspace paused",
    reason: `${p.by} paused every agent: ${p.reason}`,
    actionPath: "/sessions",
    details: { reason: p.reason, by: p.by },
  };
}

/**
 * What Send test posts for `event`: the event's own title and fields, marked as a test, so a
 * receiver's routing of that event can be checked.
 */
export function draftForTest(event: NotificationEvent, channelName: string): NotificationDraft {
  const def = NOTIFICATION_EVENT_DEFS.find((d) => d.name === event)!;
  return {
    event,
    severity: def.severity,
    subject: "test",
    subjectKind: "failure_key",
    title: `Test of ${event} from Vigil (${channelName})`,
    reason: `This is a test of the ${event} event (${def.label}): ${def.description}`,
    actionPath: "/settings",
    details: { simulatedEvent: event },
  };
}
