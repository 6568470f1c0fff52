/**
 * Policies, watch mode and budgets (SPEC 4.5, 4.6, 7.6) through the real HTTP handler and hooks,
 * on a real database: config.put's validation (400 naming the field, nothing saved), guard.check's
 * `policy` and `wouldDecide`, `policies.test`, the tool-call budget, and a captured Claude Code hook.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { agentSession, event, workspace } from "@/db/schema";
import { handleHookRequest } from "@/server/agent-api/hooks";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-hooks");
const capture = (name: string): Record<string, any> => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")).body;

const call = (sessionId: string, toolName: string, args: Record<string, unknown>) => ({ id: uid(), sessionId, callId: uid("c"), toolName, args });

describe.each(DATABASE_KINDS)("policies on %s", (kind) => {
  const app = useTestApp(kind);
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let owner: { userId: string; cookie: string };

  beforeAll(async () => {
    owner = await app.signUp(`pol-owner-${kind}-${uid()}@example.com`);
    ws = await app.seedWorkspace({ ownerUserId: owner.userId });
  });

  const put = (document: unknown) => app.mutation("config.put", document, { key: ws.key });
  const putOk = async (document: unknown) => {
    const res = await put(document);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const guard = async (c: ReturnType<typeof call>) => {
    const res = await app.mutation("guard.check", c, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };
  const storedConfig = async () => (await app.db.select({ c: workspace.config }).from(workspace).where(eq(workspace.id, ws.workspaceId)))[0].c;

  it("config.put refuses an invalid pattern or a regex that could backtrack with a 400 naming the field, and saves nothing", async () => {
    await putOk({ policies: [{ name: "keep", tool: "deploy", decision: "ask" }] });
    const before = await storedConfig();
    const bad = [
      [{ command: { regex: "(a" } }, ["policies", "2", "args", "command", "regex"]],
      [{ command: { regex: "^(\\w+)\\s\\1$" } }, ["policies", "2", "args", "command", "regex"]],
      [{ command: { regex: "x".repeat(513) } }, ["policies", "2", "args", "command", "regex"]],
      [{ command: 42 }, ["policies", "2", "args", "command"]],
    ] as const;
    for (const [args, field] of bad) {
      const res = await put({ policies: [{ name: "a", tool: "Bash", decision: "deny" }, { name: "b", tool: "Bash", decision: "ask" }, { name: "c", tool: "Bash", args, decision: "deny" }] });
      expect(res.status, JSON.stringify(args)).toBe(400);
      expect(res.body.error!.data.issues!.map((i: { path: string[] }) => i.path)).toContainEqual([...field]);
    }
    const dup = await put({ policies: [{ name: "a", tool: "x", decision: "deny" }, { name: "a", tool: "y", decision: "deny" }] });
    expect(dup.status).toBe(400);
    expect(dup.body.error!.data.issues![0].path).toEqual(["policies", "1", "name"]);
    const rule = await put({ risk_rules: { disabled: ["shell.no_such_rule"] } });
    expect(rule.status).toBe(400);
    expect(rule.body.error!.data.issues![0].path).toEqual(["risk_rules", "disabled", "0"]);
    expect(await storedConfig()).toEqual(before);
  });

  it("config.put takes the seed's own fields: auto recovery as recovery_mode, the others ignored with a warning — never a 400", async () => {
    const out = await putOk({ default_rule: { count_threshold: 3 }, enable_auto_recovery: false, persist_across_sessions: true, max_history_entries: 1000 });
    expect(out.settings).toEqual({ recovery_mode: "ask" });
    expect(out.warnings.map((w: { path: string[] }) => w.path)).toEqual([["persist_across_sessions"], ["max_history_entries"]]);
    expect((await app.query("config.get", undefined, { key: ws.key })).body.result!.data).toEqual({ default_rule: { count_threshold: 3 }, settings: { recovery_mode: "ask" } });
  });

  it("guard.check: built-in risk rules on by default, `policy` in every answer, a deny policy's reason, near misses allowed", async () => {
    await putOk({});
    const s = uid("s");
    const home = await guard(call(s, "Bash", { command: "cd /tmp && rm -rf ~" }));
    expect(home).toMatchObject({ decision: "deny", state: "trusted", policy: { name: "shell.delete_root_or_home", level: "builtin", decision: "deny" }, wouldDecide: null });
    expect(home.reason).toBe(home.policy.reason);
    const build = await guard(call(s, "Bash", { command: "rm -rf ./build" }));
    expect(build).toEqual({ decision: "allow", failureKey: build.failureKey, state: "trusted", reason: null, escalation: null, approvalId: null, effects: [], policy: null, wouldDecide: null });
    // Existing fields first, in their order; the new ones after.
    expect(Object.keys(build)).toEqual(["decision", "failureKey", "state", "reason", "escalation", "approvalId", "effects", "policy", "wouldDecide"]);
    expect(await guard(call(s, "Read", { file_path: "/home/u/project/.env" }))).toMatchObject({ decision: "ask", policy: { name: "files.secrets" } });
    expect((await guard(call(s, "Read", { file_path: "/home/u/project/.envrc" }))).decision).toBe("allow");
    expect((await guard(call(s, "Bash", { command: "git push origin main" }))).decision).toBe("allow");

    await putOk({
      policies: [
        { name: "no-prod-writes", tool: "http_request", args: { url: "https://prod.example.com/**", method: "POST" }, decision: "deny", reason: "Production is written by the release pipeline only" },
        { name: "installs", tool: "bash", args: { command: "sudo apt-get install *" }, decision: "allow" },
      ],
    });
    const prod = await guard(call(s, "HTTP_Request", { url: "https://prod.example.com/v1/users", method: "POST" }));
    expect(prod).toMatchObject({ decision: "deny", reason: "Production is written by the release pipeline only", policy: { name: "no-prod-writes", level: "workspace" } });
    expect((await guard(call(s, "http_request", { url: "https://prod.example.com/v1/users", method: "GET" }))).policy).toBeNull();
    // `allow` exempts from the built-in rules (here shell.privilege), named in the answer.
    expect(await guard(call(s, "Bash", { command: "sudo apt-get install jq" }))).toMatchObject({ decision: "allow", reason: null, policy: { name: "installs", decision: "allow" } });
    expect((await guard(call(s, "Bash", { command: "sudo reboot" }))).policy).toMatchObject({ name: "shell.privilege" });

    // The decision is recorded on the call, with the policy.
    const calls = await app.db.select({ payload: event.payload }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s), eq(event.type, "tool.call")));
    const guards = calls.map((r) => (r.payload as any).guard);
    expect(guards).toContainEqual({ decision: "deny", reason: "Production is written by the release pipeline only", failureKey: prod.failureKey, policy: { name: "no-prod-writes", level: "workspace", decision: "deny" } });
    // A call no policy matched is recorded as before.
    expect(guards).toContainEqual({ decision: "allow", reason: null, failureKey: build.failureKey });
  });

  it("organization policies apply to the workspace and it cannot remove them; the strictest decision wins", async () => {
    const org = await app.mutation("orgConfig.put", { organizationId: ws.organizationId, document: { policies: [{ name: "ask-deploys", tool: "deploy*", decision: "ask", reason: "Deploys are reviewed" }] } }, { cookie: owner.cookie });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    await putOk({ policies: [{ name: "ask-deploys", tool: "deploy*", decision: "allow" }] });
    const s = uid("s");
    expect(await guard(call(s, "Deploy_Service", { env: "prod" }))).toMatchObject({ decision: "ask", reason: "Deploys are reviewed", policy: { name: "ask-deploys", level: "organization" } });
    await putOk({ policies: [{ name: "no-deploys", tool: "deploy*", decision: "deny", reason: "Frozen" }] });
    expect(await guard(call(s, "deploy", {}))).toMatchObject({ decision: "deny", reason: "Frozen", policy: { name: "no-deploys", level: "workspace" } });
    await app.mutation("orgConfig.put", { organizationId: ws.organizationId, document: {} }, { cookie: owner.cookie });
  });

  it("policies.test (agent scope) says what the policies say and records nothing", async () => {
    await putOk({ policies: [{ name: "no-force", tool: "bash", args: { command: "git push --force*" }, decision: "deny", reason: "No force pushes" }] });
    const agent = await app.seedWorkspace({ scope: "agent" });
    const own = await app.query("policies.test", { toolName: "Bash", args: { command: "git push --force origin main" } }, { key: ws.key });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.result!.data).toEqual({ decision: "deny", policy: { name: "no-force", level: "workspace", decision: "deny", reason: "No force pushes" }, riskRule: "shell.force_push" });
    const other = await app.query("policies.test", { toolName: "Bash", args: { command: "git push --force origin main" } }, { key: agent.key });
    expect(other.body.result!.data).toMatchObject({ decision: "ask", policy: { name: "shell.force_push", level: "builtin" }, riskRule: "shell.force_push" });
    expect((await app.query("policies.test", { toolName: "Bash", args: { command: "ls" } }, { key: agent.key })).body.result!.data).toEqual({ decision: "allow", policy: null, riskRule: null });
    expect((await app.query("policies.test", { toolName: "", args: {} }, { key: agent.key })).status).toBe(400);
    const events = await app.db.select({ id: event.id }).from(event).where(eq(event.workspaceId, agent.workspaceId));
    expect(events).toHaveLength(0);
  });

  it("watch mode: guard.check answers allow with wouldDecide, and records the decision", async () => {
    await putOk({ settings: { enforcement: "watch" }, policies: [{ name: "no-deploys", tool: "deploy", decision: "deny", reason: "Frozen" }] });
    const s = uid("s");
    const denied = await guard(call(s, "deploy", {}));
    expect(denied).toMatchObject({ decision: "allow", wouldDecide: "deny", reason: "Frozen", policy: { name: "no-deploys" } });
    expect(await guard(call(s, "Read", { file_path: ".env" }))).toMatchObject({ decision: "allow", wouldDecide: "ask", approvalId: null });
    expect(await guard(call(s, "Read", { file_path: "src/a.ts" }))).toMatchObject({ decision: "allow", wouldDecide: "allow", reason: null });
    // A session can enforce while its workspace watches.
    const enforced = uid("s");
    await app.mutation("sessions.setSettings", { sessionId: enforced, settings: { enforcement: "enforce" } }, { key: ws.key });
    expect(await guard(call(enforced, "deploy", {}))).toMatchObject({ decision: "deny", wouldDecide: null });
    const rows = await app.db.select({ payload: event.payload }).from(event).where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, s)));
    expect(rows.map((r) => (r.payload as any).guard).find((g) => g.policy?.name === "no-deploys")).toMatchObject({ decision: "allow", wouldDecide: "deny" });
  });

  it("budget: the call beyond max_tool_calls_per_session answers pause and pauses the session; raising the session's budget and resuming lets it go on", async () => {
    await putOk({ settings: { max_tool_calls_per_session: 3 } });
    const s = uid("s");
    for (let i = 0; i < 3; i++) expect((await guard(call(s, "Read", { file_path: `src/${i}.ts` }))).decision).toBe("allow");
    const spent = await guard(call(s, "Read", { file_path: "src/4.ts" }));
    expect(spent).toMatchObject({ decision: "pause", reason: "tool-call budget of 3 calls reached" });
    expect(spent.effects).toContainEqual({ type: "paused", sessionId: s, reason: "tool-call budget of 3 calls reached" });
    const [row] = await app.db.select({ paused: agentSession.paused, reason: agentSession.pauseReason }).from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, s)));
    expect(row).toEqual({ paused: true, reason: "tool-call budget of 3 calls reached" });
    expect(await guard(call(s, "Read", { file_path: "src/5.ts" }))).toMatchObject({ decision: "pause", reason: "tool-call budget of 3 calls reached" });
    expect((await app.mutation("sessions.setSettings", { sessionId: s, settings: { maxToolCallsPerSession: 100 } }, { key: ws.key })).status).toBe(200);
    expect((await app.mutation("sessions.resume", { sessionId: s }, { key: ws.key })).status).toBe(200);
    expect((await guard(call(s, "Read", { file_path: "src/6.ts" }))).decision).toBe("allow");
    // A deny policy comes before the budget.
    const t = uid("s");
    for (let i = 0; i < 3; i++) await guard(call(t, "Read", { file_path: `src/${i}.ts` }));
    expect((await guard(call(t, "Bash", { command: "rm -rf /" }))).decision).toBe("deny");
    await putOk({});
  });

  it("a real Claude Code PreToolUse hook for `rm -rf ~` is answered deny with the rule's reason", async () => {
    await putOk({});
    const body = { ...capture("PreToolUse.Bash"), session_id: uid("cc"), tool_use_id: uid("toolu"), tool_input: { command: "rm -rf ~", description: "Clean up" } };
    const req = new Request("http://vigil.test/api/hooks/claude-code", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ws.key}` },
      body: JSON.stringify(body),
    });
    const res = await handleHookRequest(req, app.runtime, "claude-code");
    expect(res.status).toBe(200);
    const out = JSON.parse(await res.text());
    expect(out.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(out.hookSpecificOutput.permissionDecisionReason).toContain("Recursive forced delete of the root or home directory");
    // The captured command itself (a near miss of every rule) is still allowed: an empty answer.
    const plain = new Request("http://vigil.test/api/hooks/claude-code", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ws.key}` },
      body: JSON.stringify({ ...capture("PreToolUse.Bash"), session_id: uid("cc"), tool_use_id: uid("toolu") }),
    });
    expect(await (await handleHookRequest(plain, app.runtime, "claude-code")).text()).toBe("");
  });

  it("tool_rules compare tool names case-insensitively: a `bash` rule covers Claude Code's `Bash`", async () => {
    await putOk({ tool_rules: { bash: { consecutive_threshold: 1 } } });
    const s = uid("s");
    const ingest = await app.mutation(
      "ingest.events",
      { events: [{ type: "tool.result", id: uid(), sessionId: s, callId: uid("c"), toolName: "Bash", args: { command: "make" }, success: false, error: "internal server error" }] },
      { key: ws.key },
    );
    expect(ingest.status).toBe(200);
    expect(ingest.body.result!.data.effects.map((e: { type: string }) => e.type)).toContain("escalated");
    await putOk({});
  });
});
