/**
 * Coding-agent hooks (SPEC 7.5) driven by the requests the real CLIs sent: every body here is a
 * capture from Claude Code 2.1.197, Codex CLI 0.169.0 or Gemini CLI 0.61.0
 * (tests/fixtures/agent-hooks, copied from agent-hooks/captures), sent through the real handler
 * against a real database; variations change only the ids a second call of the same kind would have.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import fs from "node:fs";
import path from "node:path";
import { and, asc, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { agentSession, apiKey, event, failure } from "@/db/schema";
import { handleHookRequest } from "@/server/agent-api/hooks";
import type { CliName } from "@/server/hooks/shared";
import { requestsInFlight } from "@/server/http/capacity";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-hooks");

type Body = Record<string, any>;

/** The body of a captured request (the file name without `.json`). */
function capture(name: string): Body {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")).body;
}

/** Rewrites a capture: another session, another call — what the CLI sends for the next one. */
function variant(name: string, changes: Body): Body {
  return { ...capture(name), ...changes };
}

interface HookResponse {
  status: number;
  text: string;
  body: Body | null;
}

describe.each(DATABASE_KINDS)("agent hooks (%s)", (kind) => {
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;

  const app = useTestApp(kind);
  beforeAll(async () => {
    ws = await app.seedWorkspace({ slug: "hooks" });
  });

  async function hook(cli: CliName, body: unknown, opts: { key?: string | null; query?: string; raw?: string | Uint8Array } = {}): Promise<HookResponse> {
    const headers = new Headers({ "content-type": "application/json" });
    const key = opts.key === undefined ? ws.key : opts.key;
    if (key) headers.set("authorization", `Bearer ${key}`);
    const req = new Request(`http://vigil.test/api/hooks/${cli}${opts.query ?? ""}`, {
      method: "POST",
      headers,
      body: (opts.raw ?? JSON.stringify(body)) as BodyInit,
    });
    const res = await handleHookRequest(req, app.runtime, cli);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : null };
  }

  const eventsOf = (sessionId: string) =>
    app.db
      .select()
      .from(event)
      .where(and(eq(event.workspaceId, ws.workspaceId), eq(event.sessionId, sessionId)))
      .orderBy(asc(event.seq));
  const sessionRow = async (sessionId: string) =>
    (await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, sessionId))))[0];
  const failuresOf = (sessionId: string) =>
    app.db.select().from(failure).where(and(eq(failure.workspaceId, ws.workspaceId), eq(failure.sessionId, sessionId)));

  /** Makes failing Bash calls escalate after two consecutive failures, whatever their severity. */
  async function strictBashRule() {
    const r = await app.mutation(
      "config.put",
      {
        tool_rules: {
          Bash: {
            consecutive_threshold: 2,
            severity_filter: ["transient", "not_found", "invalid_input", "permission", "validation", "timeout", "server_error", "crash", "corruption", "security", "repeated_auth"],
          },
        },
      },
      { key: ws.key },
    );
    expect(r.status).toBe(200);
  }

  it("refuses a missing or wrong key (401) and a body over 1 MiB (413)", async () => {
    expect((await hook("claude-code", capture("PreToolUse.Bash"), { key: null })).status).toBe(401);
    expect((await hook("claude-code", capture("PreToolUse.Bash"), { key: "vgl_wrong_key_0123456789abcdef" })).status).toBe(401);
    expect((await hook("codex", capture("codex.PreToolUse"), { key: "not-a-key" })).status).toBe(401);
    const big = JSON.stringify({ ...capture("PostToolUse.Bash"), tool_response: { stdout: "x".repeat(1024 * 1024) } });
    expect((await hook("claude-code", null, { raw: big })).status).toBe(413);
    // Nothing of the refused requests was recorded.
    expect(await eventsOf(capture("PreToolUse.Bash").session_id)).toHaveLength(0);
  });

  it("a key revoked behind the app's back is refused on the very next hook of every kind, also once it was cached", async () => {
    const kinds: [string, (sid: string) => Body][] = [
      ["PreToolUse", (sid) => variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_revoke_3" })],
      ["PreToolUse of a new session", (sid) => variant("PreToolUse.Bash", { session_id: `${sid}-new`, tool_use_id: "toolu_revoke_4" })],
      ["PostToolUse", (sid) => variant("PostToolUse.Bash", { session_id: sid, tool_use_id: "toolu_revoke_2" })],
      ["PostToolBatch", (sid) => variant("PostToolBatch", { session_id: sid })],
    ];
    for (const [name, body] of kinds) {
      // A workspace (and key) per kind: the first refusal also drops the key from the cache.
      const own = await app.seedWorkspace();
      const sid = `s-revoked-${kind}`;
      // Two calls: the key is cached and the session start recorded, so the next PreToolUse writes
      // nothing before guard.check's own read.
      for (const n of [1, 2]) expect((await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: `toolu_revoke_${n}` }), { key: own.key })).status).toBe(200);
      await app.db.update(apiKey).set({ revokedAt: new Date() }).where(eq(apiKey.workspaceId, own.workspaceId));
      const before = (await app.db.select().from(event).where(eq(event.workspaceId, own.workspaceId))).length;
      expect((await hook("claude-code", body(sid), { key: own.key })).status, name).toBe(401);
      // Refused means nothing recorded.
      expect(await app.db.select().from(event).where(eq(event.workspaceId, own.workspaceId)), name).toHaveLength(before);
    }
  });

  it("answers malformed and unknown payloads with an empty 200, recording what it can", async () => {
    for (const raw of ["not json", "[]", "null", '"text"', "{}", '{"hook_event_name":"PreToolUse"}', '{"session_id":42,"hook_event_name":"PreToolUse"}']) {
      for (const cli of ["claude-code", "codex", "gemini"] as const) {
        const r = await hook(cli, null, { raw });
        expect(r.status, `${cli} ${raw}`).toBe(200);
        expect(r.text).toBe("");
      }
    }
    // Unknown event with a session: accepted and ignored.
    const unknown = await hook("claude-code", { session_id: "s-unknown", hook_event_name: "SomethingNew", x: 1 });
    expect([unknown.status, unknown.text]).toEqual([200, ""]);
    // A tool call whose input is not an object, without a tool_use_id: still recorded.
    const odd = await hook("claude-code", { session_id: "s-odd", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: "ls -la" });
    expect([odd.status, odd.text]).toEqual([200, ""]);
    const [start, call] = await eventsOf("s-odd");
    expect(start.type).toBe("session.start");
    expect(call).toMatchObject({ type: "tool.call", toolName: "Bash" });
    expect(call.callId).toMatch(/^call-/);
    // A huge Write is recorded with its content shortened, not rejected.
    const write = variant("PreToolUse.Write", { session_id: "s-big-write", tool_input: { file_path: "/tmp/a", content: "y".repeat(200 * 1024) } });
    expect((await hook("claude-code", write)).status).toBe(200);
    expect((await eventsOf("s-big-write")).map((e) => e.type)).toEqual(["session.start", "tool.call"]);
  });

  it("a captured payload with any one field replaced by arbitrary JSON is answered 200 without an internal error", async () => {
    const names = fs.readdirSync(FIXTURES).map((f) => f.replace(/\.json$/, ""));
    // Its own workspace: the mutated payloads keep the captures' ids.
    const own = await app.seedWorkspace();
    const errors = vi.spyOn(console, "error");
    try {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...names), fc.nat(), fc.jsonValue(), async (name, pick, value) => {
          const body = capture(name);
          const keys = Object.keys(body);
          const field = keys[pick % keys.length];
          const mutated = { ...body, [field]: value, session_id: field === "session_id" ? value : `prop-${name}` };
          const cli: CliName = name.startsWith("codex.") ? "codex" : name.startsWith("gemini.") ? "gemini" : "claude-code";
          const r = await hook(cli, mutated, { key: own.key });
          expect(r.status, `${name}.${field} = ${JSON.stringify(value)?.slice(0, 200)}`).toBe(200);
        }),
        { numRuns: kind === "pglite" ? 120 : 40 },
      );
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });

  it("maps a Claude Code session: prompt, tool calls, results, session end; a second delivery changes nothing", async () => {
    const sid = capture("UserPromptSubmit").session_id;
    const sequence = ["UserPromptSubmit", "InstructionsLoaded", "PreToolUse.Bash", "PostToolUse.Bash", "PreToolUse.Read", "PostToolUse.Read", "PostToolBatch", "MessageDisplay", "Stop", "SessionEnd"];
    for (const name of sequence) {
      const r = await hook("claude-code", capture(name));
      expect([name, r.status, r.text]).toEqual([name, 200, ""]);
    }
    const events = await eventsOf(sid);
    expect(events.map((e) => e.type)).toEqual(["session.start", "user.message", "tool.call", "tool.result", "tool.call", "tool.result", "model.text", "session.end"]);
    expect(events[6].payload).toMatchObject({ text: capture("Stop").last_assistant_message });
    const bash = capture("PreToolUse.Bash");
    expect(events[2]).toMatchObject({ toolName: "Bash", callId: bash.tool_use_id });
    expect(events[3]).toMatchObject({ toolName: "Bash", callId: capture("PostToolUse.Bash").tool_use_id, failed: false });
    expect(events[3].payload).toMatchObject({ durationMs: 78 });
    const session = await sessionRow(sid);
    expect(session).toMatchObject({ agent: "claude-code", eventCount: 8, callCount: 2, failureCount: 0 });
    expect(session.endedAt).not.toBeNull();

    // The same hooks delivered again (a retry, a duplicated delivery): nothing changes.
    for (const name of sequence) expect((await hook("claude-code", capture(name))).status).toBe(200);
    expect(await eventsOf(sid)).toHaveLength(8);
    expect(await sessionRow(sid)).toMatchObject({ eventCount: 8, callCount: 2 });
  });

  it("records a failing Bash call with its error, and a person's interrupt without counting it", async () => {
    const fail = capture("PostToolUseFailure.Bash");
    const sid = fail.session_id;
    expect((await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: fail.tool_use_id, tool_input: fail.tool_input }))).status).toBe(200);
    expect((await hook("claude-code", fail)).text).toBe("");
    const [row] = await failuresOf(sid);
    expect(row).toMatchObject({ toolName: "Bash", agent: "claude-code" });
    expect(row.errorMessage).toContain("Exit code 2");

    const interrupted = variant("PostToolUseFailure.Bash", { tool_use_id: "toolu_interrupted_1", is_interrupt: true, error: "Interrupted by user" });
    expect((await hook("claude-code", interrupted)).status).toBe(200);
    expect(await failuresOf(sid)).toHaveLength(1);
    const last = (await eventsOf(sid)).at(-1)!;
    expect(last).toMatchObject({ type: "permission.resolved", callId: "toolu_interrupted_1", toolName: "Bash" });
    expect(last.payload).toEqual({ granted: false, method: "interrupted" });
    expect(await sessionRow(sid)).toMatchObject({ failureCount: 1 });
  });

  it("puts a subagent's tool events in a child session named after the subagent", async () => {
    const pre = capture("PreToolUse.Bash.subagent");
    const child = `${pre.session_id}/${pre.agent_id}`;
    expect((await hook("claude-code", capture("SubagentStart"))).status).toBe(200);
    expect((await hook("claude-code", pre)).status).toBe(200);
    expect((await hook("claude-code", capture("PostToolUse.Bash.subagent"))).status).toBe(200);
    expect((await hook("claude-code", capture("SubagentStop"))).status).toBe(200);
    expect((await eventsOf(child)).map((e) => e.type)).toEqual(["session.start", "tool.call", "tool.result", "model.text", "session.end"]);
    expect((await eventsOf(child))[3].payload).toMatchObject({ text: "Subagent report: README says hello." });
    expect(await sessionRow(child)).toMatchObject({ agent: "general-purpose", callCount: 1 });
    // The parent's own Agent tool call stays in the parent session.
    expect((await hook("claude-code", capture("PreToolUse.Agent"), { query: "?agent=builder" })).status).toBe(200);
    expect(await sessionRow(pre.session_id)).toMatchObject({ agent: "builder", callCount: 1 });
  });

  it("asks (Claude Code) or denies (Codex, Gemini) an escalated call with Vigil's reason", async () => {
    await strictBashRule();
    const sid = "s-escalate";
    const answers: HookResponse[] = [];
    for (const n of [1, 2]) {
      const r = await hook("claude-code", variant("PostToolUseFailure.Bash", { session_id: sid, tool_use_id: `toolu_fail_${n}` }));
      expect(r.status).toBe(200);
      answers.push(r);
    }
    // The failure that escalated the key is told to the person (systemMessage) and the model (additionalContext).
    const escalation = answers.find((a) => a.body?.systemMessage)?.body;
    expect(escalation?.systemMessage).toMatch(/^Vigil: ⚠️ Tool 'Bash' escalated to require approval/);
    expect(escalation?.hookSpecificOutput).toMatchObject({ hookEventName: "PostToolUseFailure" });
    expect(escalation?.hookSpecificOutput.additionalContext).toContain(escalation?.systemMessage);
    const pre = await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_next", tool_input: capture("PostToolUseFailure.Bash").tool_input }));
    expect(pre.body?.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "ask" });
    // The reason names the key, the count and window, the recovery hint and the key's dashboard link.
    const reason: string = pre.body?.hookSpecificOutput.permissionDecisionReason;
    expect(reason).toMatch(/^Vigil: .*2 consecutive failures/);
    const failureKey = (await eventsOf(sid)).find((e) => e.type === "tool.call")!.failureKey!;
    expect(reason).toContain(`Key ${failureKey}: 2 failures in `);
    expect(reason).toContain("successful calls restore trust");
    expect(reason).toContain(`http://vigil.test/w/hooks/tools/${encodeURIComponent(failureKey)}`);

    const codexPre = await hook("codex", variant("codex.PreToolUse", { session_id: "s-escalate-codex", tool_input: capture("PostToolUseFailure.Bash").tool_input, tool_use_id: "call_after_escalation" }));
    expect(codexPre.body?.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(codexPre.body?.hookSpecificOutput.permissionDecisionReason).toContain("Vigil:");

    const geminiPre = await hook("gemini", variant("gemini.BeforeTool", { session_id: "s-escalate-gemini", tool_name: "Bash", tool_input: capture("PostToolUseFailure.Bash").tool_input }));
    expect(geminiPre.body).toMatchObject({ decision: "deny" });
    expect(geminiPre.body?.reason).toContain("Vigil:");
    expect(geminiPre.body?.reason).toContain("http://vigil.test/w/hooks/tools/");
    // An unrelated tool is not held up: the answer is empty.
    expect((await hook("claude-code", variant("PreToolUse.Read", { session_id: sid }))).text).toBe("");
    await app.mutation("keys.reset", { all: true }, { key: ws.key });
    await app.mutation("config.put", {}, { key: ws.key });
  });

  it("a call a policy denies is denied with the policy's name and reason, in every CLI's terms", async () => {
    const own = await app.seedWorkspace();
    expect((await app.mutation("config.put", { policies: [{ name: "no-wipes", tool: "wipe_disk", decision: "deny", reason: "Never wipe disks" }] }, { key: own.key })).status).toBe(200);
    const claude = await hook("claude-code", variant("PreToolUse.Bash", { session_id: "s-policy", tool_use_id: "toolu_wipe", tool_name: "wipe_disk", tool_input: { disk: "/dev/sda" } }), { key: own.key });
    expect(claude.body?.hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "Vigil: Policy 'no-wipes' (deny): Never wipe disks." });
    const gemini = await hook("gemini", variant("gemini.BeforeTool", { session_id: "s-policy-g", tool_name: "wipe_disk", tool_input: { disk: "/dev/sda" } }), { key: own.key });
    expect(gemini.body).toEqual({ decision: "deny", reason: "Vigil: Policy 'no-wipes' (deny): Never wipe disks." });
  });

  it("nudges a repeated failing call through additionalContext, then pauses and stops the agent; guidance reaches it after resume", async () => {
    const sid = "s-loop";
    const tool_input = { command: "ls nonexistent-dir", description: "List missing dir" };
    const pres: (Body | null)[] = [];
    const posts: (Body | null)[] = [];
    for (let n = 1; n <= 5; n++) {
      pres.push((await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: `toolu_loop_${n}`, tool_input }))).body);
      posts.push((await hook("claude-code", variant("PostToolUseFailure.Bash", { session_id: sid, tool_use_id: `toolu_loop_${n}`, tool_input }))).body);
    }
    expect(pres.slice(0, 2)).toEqual([null, null]);
    // The third identical call after identical failures is a loop (SPEC 5 rev 2): the model reads a nudge before it
    // runs — to read the error, since the calls failed (SPEC 5.1).
    expect(pres[2]?.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse" });
    expect(pres[2]?.hookSpecificOutput.permissionDecision).toBeUndefined();
    expect(pres[2]?.hookSpecificOutput.additionalContext).toContain("failed 2 times with the same error. Read the error");
    expect(pres[3]?.hookSpecificOutput.additionalContext).toContain("retrying a failing call unchanged");
    expect(pres[3]?.hookSpecificOutput.additionalContext).toContain("3 identical failures");
    // The fifth is severe: the session pauses; the call is denied with why and how to resume, and the agent stops.
    expect(pres[4]?.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    expect(pres[4]?.hookSpecificOutput.permissionDecisionReason).toContain("Vigil paused this session");
    expect(pres[4]?.hookSpecificOutput.permissionDecisionReason).not.toContain("..");
    const stop = posts[4]!;
    expect(stop.continue).toBe(false);
    expect(stop.stopReason).toContain("Vigil paused this session");
    expect(stop.stopReason).toContain(`http://vigil.test/w/hooks/sessions/${sid}`);
    expect((await sessionRow(sid)).paused).toBe(true);
    // Claude Code ignores continue:false after a failure; the PostToolBatch that follows stops it.
    const batch = await hook("claude-code", variant("PostToolBatch", { session_id: sid }));
    expect(batch.body).toMatchObject({ continue: false, stopReason: stop.stopReason });
    expect((await hook("claude-code", variant("PostToolBatch", { session_id: "s-not-paused" }))).text).toBe("");

    // While paused: the next call is denied with why and how to resume, a new prompt is blocked.
    const pre = await hook("claude-code", variant("PreToolUse.Read", { session_id: sid, tool_use_id: "toolu_after_pause" }));
    expect(pre.body?.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    expect(pre.body?.hookSpecificOutput.permissionDecisionReason).toContain("resumes the session in Vigil");
    const prompt = await hook("claude-code", variant("UserPromptSubmit", { session_id: sid, prompt_id: "p-after-pause" }));
    expect(prompt.body).toMatchObject({ decision: "block" });
    const geminiStop = await hook("gemini", variant("gemini.BeforeTool", { session_id: sid }));
    expect(geminiStop.body).toMatchObject({ decision: "deny" });

    // A person resumes with guidance: the agent's next tool call carries it to the model.
    expect((await app.mutation("sessions.resume", { sessionId: sid, guidance: "Create the directory first." }, { key: ws.key })).status).toBe(200);
    const next = await hook("claude-code", variant("PreToolUse.Read", { session_id: sid, tool_use_id: "toolu_after_resume" }));
    expect(next.body?.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse" });
    expect(next.body?.hookSpecificOutput.permissionDecision).toBeUndefined();
    expect(next.body?.hookSpecificOutput.additionalContext).toContain("Create the directory first.");
  });

  it("a model that announces and never acts is nudged at its Stop: Claude Code goes on with the nudge, then is paused", async () => {
    const sid = "s-announce";
    const stop = (n: number, text: string) => hook("claude-code", variant("Stop", { session_id: sid, prompt_id: `p-announce-${n}`, stop_hook_active: n > 1, last_assistant_message: text }));
    const answers: (Body | null)[] = [];
    const texts = ["Let me run the test suite now.", "Running the tests next.", "Let me run them now.", "Proceeding now with the tests.", "Let me start the tests."];
    for (const [n, text] of texts.entries()) answers.push((await stop(n + 1, text)).body);
    // An announcement counts once the next text shows nothing was done about it: the 2nd counted is minor.
    expect(answers.slice(0, 2)).toEqual([null, null]);
    // A nudge blocks the stop: Claude Code hands the reason to the model, which goes on.
    expect(answers[2]).toMatchObject({ decision: "block" });
    expect(answers[2]!.reason).toContain("Please execute the planned action");
    expect(answers[3]).toMatchObject({ decision: "block" });
    expect(answers[3]!.reason).toContain("NOTICE");
    // Severe: the session is paused; the stop is not blocked, the person reads why and how to resume.
    expect(answers[4]!.decision).toBeUndefined();
    expect(answers[4]!.systemMessage).toContain("Vigil paused this session");
    expect((await sessionRow(sid)).paused).toBe(true);
    expect((await eventsOf(sid)).filter((e) => e.type === "model.text")).toHaveLength(5);
  });

  it("StopFailure is the model's failure: a model.error on the session, counted per model, never against a tool", async () => {
    const body = capture("StopFailure");
    const sid = body.session_id;
    const own = await app.seedWorkspace();
    expect((await hook("claude-code", variant("UserPromptSubmit", { session_id: sid }), { key: own.key })).status).toBe(200);
    const r = await hook("claude-code", body, { key: own.key });
    expect([r.status, r.text]).toEqual([200, ""]);
    expect((await hook("claude-code", body, { key: own.key })).status).toBe(200); // delivered twice: recorded once
    const rows = (await app.db.select().from(event).where(and(eq(event.workspaceId, own.workspaceId), eq(event.sessionId, sid)))).filter((e) => e.type === "model.error");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ toolName: null, failed: null });
    expect((rows[0].payload as { error: string }).error).toBe("API Error: 400 mock: scripted bad request");
    expect(await app.db.select().from(failure).where(eq(failure.workspaceId, own.workspaceId))).toEqual([]);
    const listed = await app.query("models.list", undefined, { key: own.key });
    const models = (listed.body.result!.data as { models: { model: string; behaviour: { modelErrors: number } | null }[] }).models;
    expect(models.map((m) => [m.model, m.behaviour?.modelErrors])).toEqual([["unknown", 1]]);
  });

  it("answers a PermissionRequest for the call its PreToolUse recorded, without recording it twice", async () => {
    const perm = capture("PermissionRequest");
    const sid = perm.session_id;
    await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_perm_1", tool_input: perm.tool_input }));
    const r = await hook("claude-code", perm);
    expect([r.status, r.text]).toEqual([200, ""]);
    const calls = (await eventsOf(sid)).filter((e) => e.type === "tool.call");
    expect(calls.map((c) => c.callId)).toEqual(["toolu_perm_1"]);
    // Without a PreToolUse before it, the request is recorded as a call of its own.
    const alone = await hook("claude-code", { ...perm, session_id: "s-perm-alone" });
    expect(alone.status).toBe(200);
    expect((await eventsOf("s-perm-alone")).map((e) => e.type)).toEqual(["session.start", "tool.call"]);
  });

  it("with ?wait, an escalated call waits for a person: approved in the dashboard → runs; denied → the comment; PermissionRequest the same", async () => {
    await strictBashRule();
    const sid = "s-wait";
    const tool_input = capture("PostToolUseFailure.Bash").tool_input;
    for (const n of [1, 2]) await hook("claude-code", variant("PostToolUseFailure.Bash", { session_id: sid, tool_use_id: `toolu_wfail_${n}`, tool_input }));
    const pendingFor = async (callId: string) => {
      for (let i = 0; i < 300; i++) {
        const list = (await app.query("approvals.list", { status: "pending" }, { key: ws.key })).body.result!.data.approvals as { id: string; callId?: string }[];
        const hit = list.find((a) => a.callId === callId);
        if (hit) return hit.id;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no pending approval for ${callId}`);
    };

    // PreToolUse waits; a person approves once: the answer is empty (the CLI's own rules apply) and arrives within a second.
    const waiting = hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_w1", tool_input }), { query: "?wait=10" });
    const approvalId = await pendingFor("toolu_w1");
    // Waiting for a person, the hook holds no capacity slot (it uses no connection meanwhile).
    const until = Date.now() + 2000;
    while (requestsInFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(requestsInFlight()).toBe(0);
    const decidedAt = Date.now();
    expect((await app.mutation("approvals.resolve", { approvalId, decision: "approve", scope: "once" }, { key: ws.key })).status).toBe(200);
    const approved = await waiting;
    expect(Date.now() - decidedAt).toBeLessThan(1000);
    expect([approved.status, approved.text]).toEqual([200, ""]);

    // Denied with a comment: Claude Code denies the call and the model reads the person's comment.
    const waiting2 = hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_w2", tool_input }), { query: "?wait=10" });
    const id2 = await pendingFor("toolu_w2");
    await app.mutation("approvals.resolve", { approvalId: id2, decision: "deny", comment: "Use the staging cluster instead" }, { key: ws.key });
    const denied = await waiting2;
    expect(denied.body?.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(denied.body?.hookSpecificOutput.permissionDecisionReason).toContain("Use the staging cluster instead");

    // Nobody answers within `wait`: ask with the approval to decide later.
    const timedOut = await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_w3", tool_input }), { query: "?wait=1" });
    expect(timedOut.body?.hookSpecificOutput).toMatchObject({ permissionDecision: "ask" });
    expect(timedOut.body?.hookSpecificOutput.permissionDecisionReason).toMatch(/approval [0-9a-f-]{36}/);

    // PermissionRequest (the CLI's own prompt) waits the same way; approval answers the prompt with allow.
    const perm = { ...capture("PermissionRequest"), session_id: sid, tool_input };
    await hook("claude-code", variant("PreToolUse.Bash", { session_id: sid, tool_use_id: "toolu_w4", tool_input }));
    const waitingPerm = hook("claude-code", perm, { query: "?wait=10" });
    const id4 = await pendingFor("toolu_w4");
    await app.mutation("approvals.resolve", { approvalId: id4, decision: "approve", scope: "once" }, { key: ws.key });
    expect((await waitingPerm).body?.hookSpecificOutput).toMatchObject({ hookEventName: "PermissionRequest", decision: { behavior: "allow" } });

    await app.mutation("keys.reset", { all: true }, { key: ws.key });
    await app.mutation("config.put", {}, { key: ws.key });
  });

  it("maps a Codex session (model from the payload, results without exit status)", async () => {
    const sid = capture("codex.SessionStart").session_id;
    for (const name of ["codex.SessionStart", "codex.UserPromptSubmit", "codex.Stop", "codex.SessionEnd"]) {
      expect((await hook("codex", capture(name))).text).toBe("");
    }
    expect((await eventsOf(sid)).map((e) => [e.type, e.model])).toEqual([
      ["session.start", "gpt-5.1-codex"],
      ["user.message", "gpt-5.1-codex"],
      ["model.text", "gpt-5.1-codex"],
      ["session.end", "gpt-5.1-codex"],
    ]);
    expect((await eventsOf(sid))[2].payload).toMatchObject({ text: "hi" });
    expect(await sessionRow(sid)).toMatchObject({ agent: "codex", model: "gpt-5.1-codex" });

    const toolSid = capture("codex.PreToolUse").session_id;
    expect((await hook("codex", capture("codex.PreToolUse"), { query: "?agent=ci-bot" })).text).toBe("");
    expect((await hook("codex", capture("codex.PostToolUse"), { query: "?agent=ci-bot" })).text).toBe("");
    const events = await eventsOf(toolSid);
    expect(events.map((e) => [e.type, e.callId])).toEqual([
      ["session.start", null],
      ["tool.call", "call_332048edde89"],
      ["tool.result", "call_332048edde89"],
    ]);
    expect(events[2]).toMatchObject({ model: "gpt-5.1-codex", failed: false });
    expect(await sessionRow(toolSid)).toMatchObject({ agent: "ci-bot" });
  });

  it("maps a Gemini session: BeforeTool and AfterTool pair on a derived call id; a non-zero exit is a failure", async () => {
    const sid = capture("gemini.SessionStart").session_id;
    const sequence = ["gemini.SessionStart", "gemini.BeforeAgent", "gemini.PreCompress", "gemini.BeforeModel", "gemini.BeforeToolSelection", "gemini.AfterModel", "gemini.BeforeTool", "gemini.AfterTool", "gemini.AfterAgent", "gemini.SessionEnd"];
    for (const name of sequence) expect([name, (await hook("gemini", capture(name))).status]).toEqual([name, 200]);
    const events = await eventsOf(sid);
    expect(events.map((e) => e.type)).toEqual(["session.start", "user.message", "tool.call", "tool.result", "model.text", "session.end"]);
    expect(events[4].payload).toMatchObject({ text: capture("gemini.AfterAgent").prompt_response });
    expect(events[2].callId).toBe(events[3].callId);
    expect(events[3]).toMatchObject({ toolName: "run_shell_command", failed: true });
    const [row] = await failuresOf(sid);
    expect(row.errorMessage).toContain("Exit code 2");
    expect(await sessionRow(sid)).toMatchObject({ agent: "gemini" });
    // Delivered twice: nothing changes.
    for (const name of sequence) await hook("gemini", capture(name));
    expect(await eventsOf(sid)).toHaveLength(6);
    expect(await failuresOf(sid)).toHaveLength(1);
  });
});
