import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { DEFAULT_NOTIFICATION_EVENTS, draftFromEffect, EVENT_SEVERITY, NOTIFICATION_EVENT_DEFS, notificationEventsMarkdownTable, severityAtLeast, NOTIFICATION_EVENTS } from "@/server/notifications/events";
import { checkChannelUrl, isPrivateAddress } from "@/server/notifications/url-guard";
import { signWebhook, verifyWebhook } from "@/server/notifications/signature";
import { backoffDelayMs } from "@/server/notifications/worker";
import { slackMessage, webhookBody, type StoredNotification } from "@/server/notifications/payload";

describe("notification events", () => {
  it("maps the tool-call approval effect of the approvals feature to tool_call_approval_waiting", () => {
    const d = draftFromEffect({ type: "approval_pending", approvalId: "a1", toolName: "deploy", failureKey: "deploy|env=prod", callId: "c1", sessionId: "s9", reason: "deploy needs approval" });
    expect(d).toMatchObject({ event: "tool_call_approval_waiting", severity: "warning", subject: "deploy|env=prod", subjectKind: "failure_key", actionPath: "/approvals", reason: "deploy needs approval" });
    expect(d?.details).toMatchObject({ sessionId: "s9", callId: "c1" });
    const noReason = draftFromEffect({ type: "approval_pending", approvalId: "a2", toolName: "deploy", failureKey: "deploy", callId: "c2", sessionId: "s9", reason: null });
    expect(noReason?.reason).toMatch(/waiting for a person/);
  });

  it("maps escalated, blocked, recovery_pending, paused, recovered, severe patterns and model suggestions; ignores the rest", () => {
    expect(draftFromEffect({ type: "escalated", failureKey: "k|a=b", toolName: "k", reason: "3 failures", expiresAt: "x", message: "m" })).toMatchObject({ event: "key_escalated", actionPath: "/tools/k%7Ca%3Db" });
    expect(draftFromEffect({ type: "blocked", failureKey: "k", toolName: "k", reason: "security", message: "m" })?.event).toBe("key_blocked");
    expect(draftFromEffect({ type: "recovery_pending", failureKey: "k", approvalId: "a" })?.event).toBe("recovery_pending");
    expect(draftFromEffect({ type: "paused", sessionId: "s1", reason: "loop" })).toMatchObject({ event: "session_paused", subject: "s1", actionPath: "/sessions/s1" });
    expect(draftFromEffect({ type: "recovered", failureKey: "k", toolName: "k", message: "m" })).toMatchObject({ event: "key_recovered", severity: "info" });
    const pattern = (severity: "minor" | "moderate" | "severe") => draftFromEffect({ type: "pattern", patternType: "error_retry_loop", severity, count: 5, sessionId: "s1", toolSequence: [] });
    expect(pattern("severe")).toMatchObject({ event: "pattern_detected", subject: "s1" });
    expect(pattern("moderate")).toBeNull();
    expect(pattern("minor")).toBeNull();
    expect(draftFromEffect({ type: "model_suggestion", strategy: "suggest", currentModel: "a", suggestedModel: "b", failureKey: "k", currentSuccessRate: 0.5, suggestedSuccessRate: 0.9 })?.event).toBe("model_switch_suggested");
    expect(draftFromEffect({ type: "recovering", failureKey: "k", successes: 1, needed: 3 })).toBeNull();
  });

  it("orders severities info < warning < critical and gives every event one", () => {
    expect(severityAtLeast("critical", "warning")).toBe(true);
    expect(severityAtLeast("warning", "critical")).toBe(false);
    expect(severityAtLeast("info", "info")).toBe(true);
    for (const e of NOTIFICATION_EVENTS) expect(EVENT_SEVERITY[e]).toMatch(/^(info|warning|critical)$/);
    expect(EVENT_SEVERITY.key_blocked).toBe("critical");
  });
});

describe("channel URL validation", () => {
  it("accepts public http(s) URLs", () => {
    expect(checkChannelUrl("https://hooks.slack.com/services/T/B/X", false)).toBeNull();
    expect(checkChannelUrl("http://example.com/hook", false)).toBeNull();
  });
  it("rejects other schemes, credentials, and loopback/link-local/private hosts unless allowed", () => {
    expect(checkChannelUrl("ftp://example.com/x", false)).toMatch(/http/);
    expect(checkChannelUrl("not a url", false)).toMatch(/valid/);
    expect(checkChannelUrl("https://u:p@example.com/", false)).toMatch(/credentials/);
    for (const u of ["http://127.0.0.1:8080/", "http://localhost/", "http://[::1]/", "http://169.254.169.254/latest", "http://10.1.2.3/", "http://192.168.0.1/", "http://172.20.0.1/", "http://[fd00::1]/", "http://[::ffff:127.0.0.1]/"])
      expect(checkChannelUrl(u, false), u).toMatch(/loopback|private/);
    expect(checkChannelUrl("http://127.0.0.1:8080/", true)).toBeNull();
    expect(isPrivateAddress("8.8.8.8")).toBe(false);
    expect(isPrivateAddress("172.32.0.1")).toBe(false);
  });
});

describe("webhook signature", () => {
  it("verifies what was signed and rejects tampering and stale timestamps", () => {
    const body = JSON.stringify({ a: 1 });
    const sig = signWebhook("s3cret", 1_700_000_000, body);
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    const ok = (b: string, s = sig, ts = "1700000000", now = 1_700_000_010) => verifyWebhook("s3cret", { signature: s, timestamp: ts }, b, { nowSeconds: now });
    expect(ok(body)).toBe(true);
    expect(ok(body + " ")).toBe(false);
    expect(ok(body, sig, "1700000001")).toBe(false);
    expect(ok(body, sig, "1700000000", 1_700_001_000)).toBe(false);
  });
});

describe("backoff", () => {
  it("doubles from 30 s to a 1 h cap with ±20 % jitter", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((a) => backoffDelayMs(a, () => 0.5))).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000]);
    expect(backoffDelayMs(1, () => 0)).toBe(24_000);
    expect(backoffDelayMs(1, () => 1)).toBe(36_000);
  });
});

describe("payloads", () => {
  const n: StoredNotification = {
    id: "n1", workspaceSlug: "prod", createdAt: "2026-01-01T00:00:00.000Z", suppressedCount: 4,
    event: "key_blocked", severity: "critical", subject: "shell|cmd=rm", subjectKind: "failure_key",
    title: "Blocked: shell", reason: "security pattern", actionPath: "/tools/shell%7Ccmd%3Drm", details: {},
  };
  it("Slack: header, reason with the key, suppressed count, a button to the page where a person acts", () => {
    const m = slackMessage(n, "https://vigil.example.com/") as any;
    expect(m.text).toContain("security pattern");
    expect(m.blocks.map((b: any) => b.type)).toEqual(["header", "section", "context", "actions"]);
    expect(m.blocks[1].fields[0].text).toContain("shell|cmd=rm");
    expect(m.blocks[2].elements[0].text).toContain("4 similar");
    expect(m.blocks[3].elements[0]).toMatchObject({ type: "button", url: "https://vigil.example.com/w/prod/tools/shell%7Ccmd%3Drm" });
  });
  it("webhook body names the event, severity, subject and dashboard URL", () => {
    expect(webhookBody(n, "http://x")).toMatchObject({ id: "n1", event: "key_blocked", severity: "critical", subject: { kind: "failure_key", id: "shell|cmd=rm" }, url: "http://x/w/prod/tools/shell%7Ccmd%3Drm", suppressedCount: 4 });
  });
});

describe("notification events, declared once", () => {
  it("the docs' table is the declaration's", () => {
    const doc = readFileSync(new URL("../../docs/dashboard.md", import.meta.url), "utf8");
    expect(doc).toContain(notificationEventsMarkdownTable());
  });
  it("every event has a severity, a label and a description; policy_denied is off by default", () => {
    for (const d of NOTIFICATION_EVENT_DEFS) expect(d.label && d.description && EVENT_SEVERITY[d.name]).toBeTruthy();
    expect(DEFAULT_NOTIFICATION_EVENTS).not.toContain("policy_denied");
    expect(DEFAULT_NOTIFICATION_EVENTS).toContain("workspace_paused");
  });
});
