/**
 * `GET /api/metrics` (SPEC 7.8) after real traffic — ingest, guard.check answered by a policy, a
 * hold, the trust state and a person — read back with a Prometheus text parser, series by series.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import parsePrometheus from "parse-prometheus-text-format";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { createApiKey } from "@/server/services/api-keys";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { handleMetrics } from "@/server/agent-api/metrics";
import { MAX_TOOLS_PER_WORKSPACE } from "@/server/metrics";
import { setConcurrencyLimit, withCapacity } from "@/server/http/capacity";

const METRICS_TOKEN = "metrics-token-for-tests-0123456789";
const URL_V1 = "https://api.example.com/v1/users";

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

/** Families as the parser reads them, and every sample by name (histogram TYPE lines left out so their _bucket/_sum/_count samples keep their labels). */
function parseExposition(text: string) {
  const families = parsePrometheus(text) as Family[];
  const untyped = parsePrometheus(text.replace(/^# TYPE \S+ histogram\n/gm, "")) as Family[];
  const samples = new Map<string, { labels: Record<string, string>; value: number }[]>();
  for (const f of untyped) if (f.type !== "HISTOGRAM") samples.set(f.name, (samples.get(f.name) ?? []).concat(f.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }))));
  return { families, samples };
}

/** The value of the one sample with exactly these labels (among others), else undefined. */
function valueOf(samples: Map<string, { labels: Record<string, string>; value: number }[]>, name: string, labels: Record<string, string>): number | undefined {
  const found = (samples.get(name) ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

describe.each(DATABASE_KINDS)("GET /api/metrics on %s", (kind) => {
  const app = useTestApp(kind);
  let previousToken: string | undefined;
  beforeAll(() => {
    previousToken = process.env.VIGIL_METRICS_TOKEN;
    process.env.VIGIL_METRICS_TOKEN = METRICS_TOKEN;
  });
  afterAll(() => {
    if (previousToken === undefined) delete process.env.VIGIL_METRICS_TOKEN;
    else process.env.VIGIL_METRICS_TOKEN = previousToken;
  });

  const scrape = (bearer: string | null, accept?: string) => {
    const headers = new Headers();
    if (bearer) headers.set("authorization", `Bearer ${bearer}`);
    if (accept) headers.set("accept", accept);
    return handleMetrics(new Request("http://localhost/api/metrics", { headers }), async () => app.runtime);
  };
  const ok = async (path: string, input: unknown, key: string, method: "mutation" | "query" = "mutation") => {
    const res = await app[method](path, input, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };

  it("counts the traffic series by series; an admin key sees its workspace only, the token every workspace, an agent key gets 403", async () => {
    const a = await app.seedWorkspace();
    const b = await app.seedWorkspace();
    const agentKey = (await createApiKey(app.db, { workspaceId: a.workspaceId, organizationId: a.organizationId, name: "agent", scope: "agent", actor: SYSTEM_ACTOR })).value;
    await ok("config.put", { policies: [{ name: "no-wipes", tool: "wipe_disk", decision: "deny", reason: "Never wipe disks" }] }, a.key);

    const s = uid("s");
    const held = uid("s");
    await ok("ingest.events", { events: [
      { type: "session.start", id: uid(), sessionId: s, agent: "crawler", model: "gpt-x" },
      { type: "session.start", id: uid(), sessionId: held, agent: "crawler", model: "gpt-x" },
      result(s, "read_file", { path: "/a" }, { success: true }),
      result(s, "read_file", { path: "/b" }, { success: true }),
      ...[1, 2, 3].map(() => result(s, "http_request", { url: URL_V1 }, { success: false, httpStatus: 503, error: "Service Unavailable" })),
    ] }, a.key);
    await ok("ingest.events", { events: [result(uid("s"), "read_file", { path: "/c" }, { success: true })] }, b.key);

    const guard = (sessionId: string, toolName: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      ok("guard.check", { id: uid(), sessionId, callId: uid("c"), toolName, args, ...extra }, a.key);
    expect(await guard(s, "wipe_disk", { device: "/dev/sda" })).toMatchObject({ decision: "deny" });
    expect(await guard(s, "read_file", { path: "/d" })).toMatchObject({ decision: "allow" });
    await ok("sessions.pause", { sessionId: held, reason: "Reviewing" }, a.key);
    expect(await guard(held, "read_file", { path: "/e" })).toMatchObject({ decision: "pause" });
    const timedOut = await guard(s, "http_request", { url: URL_V1 }, { waitForApprovalSeconds: 0.2 });
    expect(timedOut).toMatchObject({ decision: "ask" });
    // A person approves while the check waits.
    const waiting = guard(s, "http_request", { url: URL_V1 }, { waitForApprovalSeconds: 10 });
    let approvalId: string | undefined;
    for (let i = 0; i < 200 && !approvalId; i++) {
      const pending = (await ok("approvals.list", { status: "pending" }, a.key, "query")).approvals as { id: string; kind: string }[];
      approvalId = pending.find((p) => p.kind === "tool_call" && p.id !== timedOut.approvalId)?.id;
      if (!approvalId) await new Promise((r) => setTimeout(r, 20));
    }
    await ok("approvals.resolve", { approvalId, decision: "approve" }, a.key);
    expect(await waiting).toMatchObject({ decision: "allow" });

    // Refusals: an unauthenticated scrape, a bad key, an agent key.
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape("vgl_not-a-key")).status).toBe(401);
    const agentAnswer = await scrape(agentKey);
    expect(agentAnswer.status).toBe(403);
    expect(await agentAnswer.json()).toMatchObject({ error: { message: expect.stringContaining("admin-scope") } });

    const res = await scrape(a.key);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await res.text();
    const { families, samples } = parseExposition(text);
    const types = Object.fromEntries(families.map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      vigil_tool_calls_total: "COUNTER",
      vigil_guard_decisions_total: "COUNTER",
      vigil_guard_check_duration_seconds: "HISTOGRAM",
      vigil_trust_transitions_total: "COUNTER",
      vigil_failure_keys: "GAUGE",
      vigil_approvals_pending: "GAUGE",
      vigil_approval_wait_seconds: "HISTOGRAM",
      vigil_patterns_detected_total: "COUNTER",
      vigil_nudges_total: "COUNTER",
      vigil_sessions: "GAUGE",
      vigil_ingest_events_total: "COUNTER",
      vigil_requests_rejected_total: "COUNTER",
    });
    const ws = { workspace: a.slug };
    expect(valueOf(samples, "vigil_tool_calls_total", { ...ws, agent: "crawler", tool: "read_file", outcome: "success", severity: "none" })).toBe(2);
    const failures = (samples.get("vigil_tool_calls_total") ?? []).filter((x) => x.labels.workspace === a.slug && x.labels.outcome === "failure");
    expect(failures.map((x) => [x.labels.tool, x.labels.agent, x.value])).toEqual([["http_request", "crawler", 3]]);
    expect(failures[0].labels.severity).toMatch(/^[a-z_]+$/);
    expect(valueOf(samples, "vigil_guard_decisions_total", { ...ws, tool: "wipe_disk", decision: "deny", cause: "policy" })).toBe(1);
    expect(valueOf(samples, "vigil_guard_decisions_total", { ...ws, tool: "read_file", decision: "allow", cause: "none", agent: "crawler" })).toBe(1);
    expect(valueOf(samples, "vigil_guard_decisions_total", { ...ws, tool: "read_file", decision: "pause", cause: "hold" })).toBe(1);
    expect(valueOf(samples, "vigil_guard_decisions_total", { ...ws, tool: "http_request", decision: "ask", cause: "trust" })).toBe(1);
    expect(valueOf(samples, "vigil_guard_decisions_total", { ...ws, tool: "http_request", decision: "allow", cause: "trust" })).toBe(1);
    expect(valueOf(samples, "vigil_guard_check_duration_seconds_count", { ...ws, decision: "allow" })).toBe(2);
    expect(valueOf(samples, "vigil_guard_check_duration_seconds_bucket", { ...ws, decision: "deny", le: "+Inf" })).toBe(1);
    expect(valueOf(samples, "vigil_trust_transitions_total", { ...ws, tool: "http_request", to: "escalated" })).toBe(1);
    expect(valueOf(samples, "vigil_approval_wait_seconds_count", { ...ws, result: "timeout" })).toBe(1);
    expect(valueOf(samples, "vigil_approval_wait_seconds_count", { ...ws, result: "approved" })).toBe(1);
    expect(valueOf(samples, "vigil_approval_wait_seconds_sum", { ...ws, result: "timeout" })).toBeGreaterThan(0);
    expect(valueOf(samples, "vigil_approvals_pending", { ...ws, kind: "tool_call" })).toBe(1);
    expect(valueOf(samples, "vigil_approvals_pending", { ...ws, kind: "recovery" })).toBe(0);
    expect(valueOf(samples, "vigil_failure_keys", { ...ws, state: "escalated" })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, "vigil_failure_keys", { ...ws, state: "blocked" })).toBe(0);
    expect(valueOf(samples, "vigil_sessions", { ...ws, status: "paused" })).toBe(1);
    expect(valueOf(samples, "vigil_sessions", { ...ws, status: "active" })).toBe(1);
    expect(valueOf(samples, "vigil_ingest_events_total", { ...ws, source: "trpc" })).toBe(7);
    // The admin key's answer holds its own workspace only: no other workspace, no unlabelled refusal.
    for (const [name, list] of samples) for (const x of list) expect([name, x.labels.workspace]).toEqual([name, a.slug]);
    expect(text).not.toContain(b.slug);

    // The token: every workspace, the refusals counted before any key was read too.
    const previous = setConcurrencyLimit(1);
    try {
      await withCapacity(async () => withCapacity(async () => "served", () => "refused"), () => "refused");
    } finally {
      setConcurrencyLimit(previous);
    }
    const all = parseExposition(await (await scrape(METRICS_TOKEN)).text()).samples;
    expect(valueOf(all, "vigil_tool_calls_total", { workspace: b.slug, tool: "read_file", outcome: "success" })).toBe(1);
    expect(valueOf(all, "vigil_tool_calls_total", { workspace: a.slug, tool: "read_file", outcome: "success" })).toBe(2);
    expect(valueOf(all, "vigil_sessions", { workspace: b.slug, status: "active" })).toBe(1);
    expect(valueOf(all, "vigil_sessions", { workspace: b.slug, status: "paused" })).toBe(0);
    expect((all.get("vigil_requests_rejected_total") ?? []).find((x) => x.labels.reason === "capacity" && !("workspace" in x.labels))?.value).toBeGreaterThanOrEqual(1);
  });

  it("answers OpenMetrics when asked, ending with # EOF, the same samples as the text format", async () => {
    const a = await app.seedWorkspace();
    await ok("ingest.events", { events: [result(uid("s"), "read_file", { path: "/a" }, { success: true })] }, a.key);
    const om = await scrape(a.key, "application/openmetrics-text; version=1.0.0,text/plain;q=0.5");
    expect(om.headers.get("content-type")).toContain("application/openmetrics-text");
    const omText = await om.text();
    expect(omText.endsWith("# EOF\n")).toBe(true);
    expect(omText).toMatch(/^# TYPE vigil_tool_calls counter$/m);
    const parsed = parseExposition(omText.replace(/# EOF\n$/, ""));
    expect(valueOf(parsed.samples, "vigil_tool_calls_total", { workspace: a.slug, tool: "read_file", outcome: "success" })).toBe(1);
    expect(valueOf(parsed.samples, "vigil_sessions", { workspace: a.slug, status: "active" })).toBe(1);
  });

  it(`counts tool names beyond ${MAX_TOOLS_PER_WORKSPACE} per workspace as "other"`, async () => {
    const a = await app.seedWorkspace();
    const s = uid("s");
    const tools = Array.from({ length: MAX_TOOLS_PER_WORKSPACE + 3 }, (_, i) => `tool_${String(i).padStart(3, "0")}`);
    await ok("ingest.events", { events: tools.map((t) => result(s, t, { n: 1 }, { success: true })) }, a.key);
    const { samples } = parseExposition(await (await scrape(a.key)).text());
    const mine = (samples.get("vigil_tool_calls_total") ?? []).filter((x) => x.labels.workspace === a.slug);
    expect(new Set(mine.map((x) => x.labels.tool)).size).toBe(MAX_TOOLS_PER_WORKSPACE + 1);
    expect(valueOf(samples, "vigil_tool_calls_total", { workspace: a.slug, tool: "other" })).toBe(3);
    expect(valueOf(samples, "vigil_tool_calls_total", { workspace: a.slug, tool: "tool_000" })).toBe(1);
  });
});
