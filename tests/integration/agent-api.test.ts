import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { at, call, result, uid } from "../support/agent";
import { auditLog, event, failure, keyState } from "@/db/schema";

describe.each(DATABASE_KINDS)("agent API on %s", (kind) => {
  const app = useTestApp(kind);

  const ingest = (key: string, events: unknown[]) => app.mutation("ingest.events", { events }, { key });
  const status = async (key: string, toolName?: string) =>
    (await app.query("reliability.status", toolName ? { toolName } : {}, { key })).body.result!.data.keys as any[];

  it("use case 1 — HTTP degradation: 3 server errors escalate the domain+path key; guard asks; other paths stay trusted", async () => {
    const { key } = await app.seedWorkspace();
    const base = Date.now() - 60 * 60_000;
    const s = uid("s");
    const url = "https://api.example.com/v1/users";
    const events = [
      { type: "session.start", id: uid(), sessionId: s, agent: "crawler", model: "gpt-x", ts: at(base, 0) },
      ...[1, 2, 3].map((m) => result(s, "http_request", { url, method: "GET" }, { success: false, httpStatus: 503, error: "Service Unavailable" }, { ts: at(base, m) })),
    ];
    const res = await ingest(key, events);
    expect(res.status).toBe(200);
    const out = res.body.result!.data;
    expect(out).toMatchObject({ accepted: 4, duplicates: 0 });
    const escalated = out.effects.filter((e: any) => e.type === "escalated");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]).toMatchObject({ failureKey: "http_request|domain=api.example.com|path_prefix=v1", toolName: "http_request", reason: "3 failures in 3600s" });

    const guard = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "http_request", args: { url: "https://api.example.com/v1/orders" }, ts: at(base, 4) }, { key });
    expect(guard.status).toBe(200);
    expect(guard.body.result!.data).toMatchObject({
      decision: "ask",
      failureKey: "http_request|domain=api.example.com|path_prefix=v1",
      state: "escalated",
      reason: "3 failures in 3600s",
    });
    expect(guard.body.result!.data.escalation).toMatchObject({ reason: "3 failures in 3600s", failureCount: 3, window: "3600s" });

    const other = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "http_request", args: { url: "https://api.example.com/v2/orders" }, ts: at(base, 4) }, { key });
    expect(other.body.result!.data).toMatchObject({ decision: "allow", state: "trusted", escalation: null });

    // Recovery in auto mode: after expiry (1800 s) and cooldown (900 s), 3 successes.
    const ok = [31, 32, 33].map((m) => result(s, "http_request", { url }, { success: true, httpStatus: 200 }, { ts: at(base, m + 3) }));
    const rec = (await ingest(key, ok)).body.result!.data;
    expect(rec.effects.map((e: any) => e.type)).toEqual(["recovering", "recovering", "recovered"]);
    const keys = await status(key, "http_request");
    expect(keys.find((k) => k.failureKey.endsWith("path_prefix=v1"))).toMatchObject({ state: "trusted", totalCalls: 6, totalFailures: 3 });
  });

  it("use case 2 — CLI security block: sudo rm -rf / blocks the whole bash tool until a reset", async () => {
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const res = await ingest(key, [result(s, "bash", { command: "sudo rm -rf /" }, { success: false, error: "Permission denied" })]);
    const effects = res.body.result!.data.effects;
    expect(effects.filter((e: any) => e.type === "blocked").map((e: any) => e.failureKey)).toEqual(["bash|command=sudo", "@tool:bash"]);
    expect(effects[0].message).toContain("blocked");

    const guard = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "bash", args: { command: "ls -la" } }, { key });
    expect(guard.body.result!.data).toMatchObject({ decision: "ask", failureKey: "bash|command=ls", state: "blocked" });

    // Successes change nothing while blocked.
    await ingest(key, [result(s, "bash", { command: "sudo ls" }, { success: true })]);
    expect((await status(key, "bash")).find((k) => k.failureKey === "bash|command=sudo").state).toBe("blocked");

    // blockedDecision=deny through the workspace config.
    const put = await app.mutation("config.put", { settings: { blocked_decision: "deny" } }, { key });
    expect(put.status).toBe(200);
    const denied = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "bash", args: { command: "ls" } }, { key });
    expect(denied.body.result!.data.decision).toBe("deny");

    // Reset all → trusted; audit logged with the key prefix.
    const reset = await app.mutation("keys.reset", { all: true }, { key });
    expect(reset.status).toBe(200);
    expect(reset.body.result!.data.reset.sort()).toEqual(["@tool:bash", "bash|command=sudo"]);
    const after = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "bash", args: { command: "ls" } }, { key });
    expect(after.body.result!.data).toMatchObject({ decision: "allow", state: "trusted" });
    const audit = await app.db.select().from(auditLog).where(eq(auditLog.action, "failure_key.reset"));
    expect(audit.some((a) => a.actorLabel === key.slice(0, 12) && a.actorType === "api_key")).toBe(true);
  });

  it("use case 3 — MCP server timeouts: a domain rule escalates the server across its tools; other servers unaffected", async () => {
    const { key } = await app.seedWorkspace();
    const put = await app.mutation("config.put", { domain_rules: { atlassian: { count_threshold: 2, severity_filter: ["timeout", "server_error"] } } }, { key });
    expect(put.status).toBe(200);
    const s = uid("s");
    const res = await ingest(key, [
      result(s, "mcp_atlassian_search", { query: "bug" }, { success: false, error: "Request timed out after 30s" }),
      result(s, "mcp_atlassian_get_issue", { id: "X-1" }, { success: false, error: "deadline exceeded" }),
    ]);
    const effects = res.body.result!.data.effects;
    expect(effects.filter((e: any) => e.type === "escalated").map((e: any) => e.failureKey)).toEqual(["@domain:atlassian"]);
    const fails = await app.db.select().from(failure).where(eq(failure.toolName, "mcp_atlassian_search"));
    expect(fails.at(-1)?.severity).toBe("timeout");

    const g1 = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "mcp_atlassian_create", args: {} }, { key });
    expect(g1.body.result!.data).toMatchObject({ decision: "ask", failureKey: "mcp_atlassian_create|mcp_server=atlassian", state: "escalated" });
    const g2 = await app.mutation("guard.check", { id: uid(), sessionId: s, callId: uid(), toolName: "mcp_github_search", args: {} }, { key });
    expect(g2.body.result!.data).toMatchObject({ decision: "allow", state: "trusted" });
    const st = await status(key);
    expect(st.find((k) => k.failureKey === "@domain:atlassian")).toMatchObject({ state: "escalated" });
    expect(st.find((k) => k.failureKey === "mcp_atlassian_search|mcp_server=atlassian")).toMatchObject({ state: "trusted", effectiveState: "escalated" });
  });

  it("ask mode: recovery waits in the approval queue; approve → trusted, deny → escalated", async () => {
    const { key } = await app.seedWorkspace();
    await app.mutation("config.put", { default_rule: { count_threshold: 2, escalation_duration_seconds: 60, cooldown_seconds: 60, success_count_to_recover: 2 }, settings: { recovery_mode: "ask" } }, { key });
    const base = Date.now() - 30 * 60_000;
    for (const [tool, decision] of [["fetch", "approve"], ["WebFetch", "deny"]] as const) {
      // A session each: the per-session clock would apply a second, older series at the first one's time.
      const s = uid("s");
      const url = `https://${tool.toLowerCase()}.example.com/a`;
      const r = await ingest(key, [
        result(s, tool, { url }, { success: false, httpStatus: 500 }, { ts: at(base, 0) }),
        result(s, tool, { url }, { success: false, httpStatus: 500 }, { ts: at(base, 1) }),
        result(s, tool, { url }, { success: true }, { ts: at(base, 5) }),
        result(s, tool, { url }, { success: true }, { ts: at(base, 6) }),
        result(s, tool, { url }, { success: true }, { ts: at(base, 7) }),
      ]);
      const types = r.body.result!.data.effects.map((e: any) => e.type);
      expect(types).toEqual(["escalated", "recovering", "recovering", "recovery_pending", "recovering"]);
      const pendingEffect = r.body.result!.data.effects.find((e: any) => e.type === "recovery_pending");
      const list = await app.query("approvals.list", { status: "pending" }, { key });
      const mine = list.body.result!.data.approvals.find((a: any) => a.id === pendingEffect.approvalId);
      expect(mine).toMatchObject({ kind: "recovery", status: "pending", failureKey: `${tool}|domain=${tool.toLowerCase()}.example.com|path_prefix=a` });
      const resolved = await app.mutation("approvals.resolve", { approvalId: mine.id, decision, comment: "checked" }, { key });
      expect(resolved.status).toBe(200);
      const st = (await status(key, tool))[0];
      expect(st.state).toBe(decision === "approve" ? "trusted" : "escalated");
      const again = await app.mutation("approvals.resolve", { approvalId: mine.id, decision }, { key });
      expect(again.status).toBe(400);
    }
  });

  it("denying a recovery uses the plugin rule the key escalated under", async () => {
    const { key } = await app.seedWorkspace();
    await app.mutation("config.put", {
      default_rule: { escalation_duration_seconds: 60 },
      plugin_rules: { web: { count_threshold: 1, escalation_duration_seconds: 600, cooldown_seconds: 60, success_count_to_recover: 1 } },
      settings: { recovery_mode: "ask" },
    }, { key });
    const s = uid("s");
    const base = Date.now() - 60 * 60_000;
    const url = "https://plug.example/x";
    const r = await ingest(key, [
      result(s, "fetch", { url }, { success: false, httpStatus: 500 }, { ts: at(base, 0), pluginName: "web" }),
      result(s, "fetch", { url }, { success: true }, { ts: at(base, 20), pluginName: "web" }),
    ]);
    const pending = r.body.result!.data.effects.find((e: any) => e.type === "recovery_pending");
    expect(pending).toBeTruthy();
    const before = Date.now();
    expect((await app.mutation("approvals.resolve", { approvalId: pending.approvalId, decision: "deny" }, { key })).status).toBe(200);
    const st = (await status(key, "fetch"))[0];
    expect(st.state).toBe("escalated");
    const expires = Date.parse(st.escalationExpires);
    expect(expires).toBeGreaterThanOrEqual(before + 600_000 - 5_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 600_000 + 5_000);
  });

  it("re-sent events are duplicates and change nothing", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const batch = [
      call(s, "readFile", { path: "/etc/passwd" }),
      result(s, "readFile", { path: "/etc/passwd" }, { success: false, error: "No such file" }),
    ];
    expect((await ingest(key, batch)).body.result!.data).toMatchObject({ accepted: 2, duplicates: 0 });
    const rows1 = await app.db.select().from(keyState).where(eq(keyState.workspaceId, workspaceId));
    expect((await ingest(key, batch)).body.result!.data).toMatchObject({ accepted: 0, duplicates: 2, effects: [] });
    const rows2 = await app.db.select().from(keyState).where(eq(keyState.workspaceId, workspaceId));
    expect(rows2.map((r) => [r.trust, r.data])).toEqual(rows1.map((r) => [r.trust, r.data]));
    const events = await app.db.select().from(event).where(eq(event.workspaceId, workspaceId));
    expect(events).toHaveLength(2);
    // Arguments are not stored verbatim; the failure carries its classification.
    const [f] = await app.db.select().from(failure).where(eq(failure.workspaceId, workspaceId));
    expect(f).toMatchObject({ failureKey: "readFile|path_prefix=/etc", severity: "not_found" });
  });

  it("ids with quotes, backslashes, commas and braces are deduplicated exactly", async () => {
    const { key } = await app.seedWorkspace();
    const weird = ['a"b', "c\\d", "e,f", "{g}", "h i", "NULL", "ünï"].map((id) => ({ type: "turn.start", id, sessionId: "s-weird", turnIndex: 1 }));
    expect((await ingest(key, weird)).body.result!.data).toMatchObject({ accepted: 7, duplicates: 0 });
    expect((await ingest(key, weird)).body.result!.data).toMatchObject({ accepted: 0, duplicates: 7 });
    expect((await ingest(key, [{ type: "turn.start", id: "a", sessionId: "s-weird", turnIndex: 2 }])).body.result!.data.accepted).toBe(1);
  });

  it("a result without args uses the args of its tool.call", async () => {
    const { key } = await app.seedWorkspace();
    const s = uid("s");
    const c = call(s, "bash", { command: "rm -rf /tmp/x" });
    const res = await ingest(key, [c, { type: "tool.result", id: uid(), sessionId: s, callId: c.callId, toolName: "bash", success: false, error: "boom" }]);
    expect(res.status).toBe(200);
    const st = await status(key, "bash");
    expect(st.map((k) => k.failureKey)).toEqual(["bash|command=rm"]);
    // And across batches.
    const c2 = call(s, "bash", { command: "git push" });
    await ingest(key, [c2]);
    await ingest(key, [{ type: "tool.result", id: uid(), sessionId: s, callId: c2.callId, toolName: "bash", success: true }]);
    expect((await status(key, "bash")).map((k) => k.failureKey).sort()).toEqual(["bash|command=git", "bash|command=rm"]);
  });

  // The agent API refuses what PostgreSQL cannot store rather than changing it (hooks and OTLP, whose
  // senders cannot be told, store U+FFFD): a 400 naming the field, and nothing of the batch written.
  it("refuses NUL characters in text and args with a 400 naming the field, writing nothing", async () => {
    const { key, workspaceId } = await app.seedWorkspace();
    const s = uid("s");
    const res = await ingest(key, [
      { type: "model.text", id: uid(), sessionId: s, text: "binary\u0000output" },
      result(s, "bash", { command: "cat a\u0000b" }, { success: false, error: "bad\u0000byte" }),
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error!.data.issues![0].path).toEqual(["events", "0", "text"]);
    const rows = await app.db.select().from(event).where(eq(event.workspaceId, workspaceId));
    expect(rows).toHaveLength(0);
  });

  it("an approval requested and superseded within one batch is not left pending", async () => {
    const { key } = await app.seedWorkspace();
    await app.mutation("config.put", { default_rule: { count_threshold: 1, escalation_duration_seconds: 60, cooldown_seconds: 60, success_count_to_recover: 1 }, settings: { recovery_mode: "ask" } }, { key });
    const s = uid("s");
    const base = Date.now() - 20 * 60_000;
    const url = "https://sup.example.com/x";
    const r = await ingest(key, [
      result(s, "fetch", { url }, { success: false, httpStatus: 500 }, { ts: at(base, 0) }),
      result(s, "fetch", { url }, { success: true }, { ts: at(base, 5) }),
      result(s, "fetch", { url }, { success: false, httpStatus: 500 }, { ts: at(base, 6) }),
    ]);
    expect(r.body.result!.data.effects.map((e: any) => e.type)).toEqual(["escalated", "recovering", "recovery_pending", "escalated"]);
    const pending = await app.query("approvals.list", { status: "pending" }, { key });
    expect(pending.body.result!.data.approvals).toEqual([]);
    const denied = await app.query("approvals.list", { status: "denied" }, { key });
    expect(denied.body.result!.data.approvals).toHaveLength(1);
  });

  describe("bad input", () => {
    it("rejects a batch with one invalid event: 400 naming the field, nothing written", async () => {
      const { key, workspaceId } = await app.seedWorkspace();
      const s = uid("s");
      const res = await ingest(key, [call(s, "bash", { command: "ls" }), { type: "tool.result", id: uid(), sessionId: s, callId: "c", success: "yes" }]);
      expect(res.status).toBe(400);
      const paths = res.body.error!.data.issues!.map((i) => i.path.join("."));
      expect(paths).toEqual(expect.arrayContaining(["events.1.toolName", "events.1.success"]));
      expect(await app.db.select().from(event).where(eq(event.workspaceId, workspaceId))).toHaveLength(0);
    });

    it("rejects unknown event types and unknown fields", async () => {
      const { key } = await app.seedWorkspace();
      const bad1 = await ingest(key, [{ type: "tool.explode", id: "x", sessionId: "s" }]);
      expect(bad1.status).toBe(400);
      expect(bad1.body.error!.data.issues![0].path).toEqual(["events", "0", "type"]);
      const bad2 = await ingest(key, [{ type: "session.end", id: "x", sessionId: "s", surprise: 1 }]);
      expect(bad2.status).toBe(400);
      expect(bad2.body.error!.message).toContain("surprise");
    });

    it("rejects more than 1000 events, an empty batch, ts out of range and oversized args", async () => {
      const { key, workspaceId } = await app.seedWorkspace();
      const many = Array.from({ length: 1001 }, (_, i) => ({ type: "turn.start", id: `t${i}`, sessionId: "s", turnIndex: i }));
      const r1 = await ingest(key, many);
      expect(r1.status).toBe(400);
      expect(r1.body.error!.data.issues![0].path).toEqual(["events"]);
      expect((await ingest(key, [])).status).toBe(400);

      const old = await ingest(key, [{ type: "session.end", id: "old", sessionId: "s", ts: new Date(Date.now() - 31 * 86400_000).toISOString() }]);
      expect(old.status).toBe(400);
      expect(old.body.error!.data.issues![0]).toMatchObject({ path: ["events", "0", "ts"], code: "custom" });
      const future = await ingest(key, [{ type: "session.end", id: "fut", sessionId: "s", ts: Date.now() + 10 * 60_000 }]);
      expect(future.status).toBe(400);
      const garbage = await ingest(key, [{ type: "session.end", id: "g", sessionId: "s", ts: "yesterday" }]);
      expect(garbage.status).toBe(400);

      const big = await ingest(key, [call("s", "fetch", { blob: "x".repeat(70 * 1024) })]);
      expect(big.status).toBe(400);
      expect(big.body.error!.data.issues![0].path).toEqual(["events", "0", "args"]);
      expect(await app.db.select().from(event).where(eq(event.workspaceId, workspaceId))).toHaveLength(0);
    });

    it("answers 403 for admin procedures with an agent-scope key and 400 for a bad config", async () => {
      const agent = await app.seedWorkspace({ scope: "agent" });
      expect((await app.query("config.get", undefined, { key: agent.key })).status).toBe(403);
      expect((await app.mutation("keys.reset", { all: true }, { key: agent.key })).status).toBe(403);
      const admin = await app.seedWorkspace();
      const bad = await app.mutation("config.put", { default_rule: { count_treshold: 3 } }, { key: admin.key });
      expect(bad.status).toBe(400);
      expect(bad.body.error!.message).toContain("count_treshold");
      const got = await app.query("config.get", undefined, { key: admin.key });
      expect(got.body.result!.data).toEqual({});
    });

    it("resuming a session that is not paused is a clear error", async () => {
      const { key } = await app.seedWorkspace();
      const s = uid("s");
      await ingest(key, [{ type: "session.start", id: uid(), sessionId: s }]);
      const r = await app.mutation("sessions.resume", { sessionId: s }, { key });
      expect(r.status).toBe(400);
      expect(r.body.error!.message).toContain("not paused");
      expect((await app.mutation("sessions.resume", { sessionId: "nope" }, { key })).status).toBe(404);
    });
  });
});
