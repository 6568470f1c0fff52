/**
 * @vigil/sdk as users get it: `npm pack` of packages/sdk installed into a scratch project, its
 * exports imported by package name, against the real agent API behind a real HTTP server. The AI
 * SDK adapter runs real `ai` 7 and 6 loops with their mock models; the `vigil` CLI runs as a process.
 */
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { generateText as generateTextV6, stepCountIs as stepCountIsV6, tool as toolV6 } from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { z } from "zod";
import { useTestApp } from "../support/use-test-app";
import { HttpError, closedPort, usePackedSdk } from "../support/packed-sdk";
import { agentSession, approval, event } from "@/db/schema";
import { claudeCodeSettings } from "@/components/dashboard/connect-configs";

const run = promisify(execFile);
const URL_V1 = "https://api.example.com/v1/users";
const KEY_V1 = "http_request|domain=api.example.com|path_prefix=v1";

type Sdk = typeof import("../../packages/sdk/src/index");
type SdkAi = typeof import("../../packages/sdk/src/ai");

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const toolCall = (id: string, toolName: string, input: unknown) => ({
  content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
  response: { id: `r-${id}`, modelId: "scripted-model", timestamp: new Date() },
});
const text = (t: string) => ({ content: [{ type: "text", text: t }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [], response: { id: "r-text", modelId: "scripted-model", timestamp: new Date() } });

/** A model that plays its steps in order and keeps every prompt it was sent. */
function scriptedModel(steps: unknown[]) {
  const prompts: string[] = [];
  const doGenerate = async (options: { prompt: unknown }) => {
    prompts.push(JSON.stringify(options.prompt));
    return (steps[prompts.length - 1] ?? text("done")) as never;
  };
  return { prompts, v7: new MockLanguageModelV4({ modelId: "scripted-model", doGenerate: doGenerate as never }), v6: new MockLanguageModelV3({ modelId: "scripted-model", doGenerate: doGenerate as never }) };
}

describe("@vigil/sdk, packed and installed", () => {
  const app = useTestApp("pglite");
  const packed = usePackedSdk<{ core: Sdk; ai: SdkAi }>(app, { peers: ["ai", "ai-v6"], entries: { core: "@vigil/sdk", ai: "@vigil/sdk/ai" } });

  const events = (workspaceId: string, sessionId: string) =>
    app.db.select().from(event).where(and(eq(event.workspaceId, workspaceId), eq(event.sessionId, sessionId))).orderBy(event.ts, event.seq);
  const failingFetch = () => {
    throw new HttpError("Service Unavailable", 503);
  };

  it("installs from the tarball with no dependencies and exposes its entry points and bin", async () => {
    const manifest = JSON.parse(await readFile(path.join(packed.sdk.project, "node_modules/@vigil/sdk/package.json"), "utf8"));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.exports)).toEqual(expect.arrayContaining([".", "./ai"]));
    expect(await readdir(path.join(packed.sdk.project, "node_modules/@vigil/sdk/dist"))).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "ai.js", "ai.d.ts", "cli.js"]));
    expect(typeof packed.sdk.core.createVigil).toBe("function");
    expect(typeof packed.sdk.ai.vigilAI).toBe("function");
  });

  it("core: guardTool reports failures, then the escalated key asks; sessions carry the agent", async () => {
    const ws = await app.seedWorkspace();
    const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key, agent: "sdk-crawler" });
    const fetchUrl = vigil.guardTool("http_request", failingFetch);
    for (let i = 0; i < 3; i++) await expect(fetchUrl({ url: URL_V1 })).rejects.toThrow("Service Unavailable");
    const answer = await vigil.check({ toolName: "http_request", args: { url: URL_V1 } });
    expect(answer).toMatchObject({ decision: "ask", failureKey: KEY_V1, state: "escalated", sessionId: vigil.sessionId });
    expect(answer.reason).toContain("3 failures");
    let ran = false;
    const guarded = vigil.guardTool("http_request", () => (ran = true));
    // Another run of the agent (its own session, so no loop of this one): the key's escalation holds it.
    const refused = await guarded({ url: URL_V1 }, { sessionId: `${vigil.sessionId}-second` }).catch((e) => e);
    expect(refused).toBeInstanceOf(packed.sdk.core.VigilDecisionError);
    expect(refused).toMatchObject({ decision: "ask", message: answer.reason });
    expect(ran).toBe(false);
    await vigil.endSession();
    await vigil.close();

    const rows = await events(ws.workspaceId, vigil.sessionId);
    const results = rows.filter((r) => r.type === "tool.result");
    expect(results).toHaveLength(3);
    expect(results.map((r) => [r.failed, (r.payload as any).error])).toEqual(Array(3).fill([true, "Service Unavailable"]));
    expect(rows.map((r) => r.type)).toContain("session.end");
    const [session] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, ws.workspaceId), eq(agentSession.sessionId, vigil.sessionId)));
    expect(session.agent).toBe("sdk-crawler");
  });

  it("core: a person's deny in Approvals throws VigilDecisionError with their comment; the tool never runs", async () => {
    const ws = await app.seedWorkspace();
    const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key });
    const fetchUrl = vigil.guardTool("http_request", failingFetch);
    for (let i = 0; i < 3; i++) await fetchUrl({ url: URL_V1 }).catch(() => {});
    let ran = false;
    const waiting = vigil.guardTool("http_request", () => (ran = true), { waitForApprovalSeconds: 20 })({ url: URL_V1 }, { callId: "call-held" }).catch((e) => e);
    let pending: { id: string } | undefined;
    for (let i = 0; i < 200 && !pending; i++) {
      [pending] = await app.db.select().from(approval).where(and(eq(approval.workspaceId, ws.workspaceId), eq(approval.callId, "call-held")));
      if (!pending) await new Promise((r) => setTimeout(r, 20));
    }
    const resolved = await app.mutation("approvals.resolve", { approvalId: pending!.id, decision: "deny", comment: "Use the v2 endpoint instead" }, { key: ws.key });
    expect(resolved.status).toBe(200);
    const error = await waiting;
    expect(error).toBeInstanceOf(packed.sdk.core.VigilDecisionError);
    expect(error).toMatchObject({ decision: "deny", message: "Use the v2 endpoint instead" });
    expect(ran).toBe(false);
    await vigil.close();
  });

  it("core: fails open when Vigil cannot be reached, refuses with failOpen: false", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const errors: Error[] = [];
    const open = packed.sdk.core.createVigil({ url, apiKey: "vgl_unused", onError: (e) => errors.push(e) });
    const answer = await open.check({ toolName: "bash", args: { command: "ls" } });
    expect(answer.decision).toBe("allow");
    expect(answer.failedOpen).toContain(url);
    expect(await open.guardTool("bash", () => "listed")({ command: "ls" })).toBe("listed");
    expect(errors.length).toBeGreaterThan(0);

    const strict = packed.sdk.core.createVigil({ url, apiKey: "vgl_unused", failOpen: false });
    const refused = await strict.check({ toolName: "bash", args: { command: "ls" } }).catch((e) => e);
    expect(refused).toBeInstanceOf(packed.sdk.core.VigilUnreachableError);
    expect(refused.message).toContain(url);
    let ran = false;
    await expect(strict.guardTool("bash", () => (ran = true))({ command: "ls" })).rejects.toBeInstanceOf(packed.sdk.core.VigilUnreachableError);
    expect(ran).toBe(false);
    // A wrong key is not "unreachable": it is said, fail-open or not.
    const wrongKey = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: "vgl_not_a_key" });
    await expect(wrongKey.check({ toolName: "bash", args: { command: "ls" } })).rejects.toThrow("401: the API key was not accepted (VIGIL_API_KEY)");
  });

  it("core: a 429 is retried after its Retry-After", async () => {
    const ws = await app.seedWorkspace();
    const vigil = packed.sdk.core.createVigil({ url: `${packed.api.url}/busy`, apiKey: ws.key });
    const started = Date.now();
    const answer = await vigil.check({ toolName: "bash", args: { command: "ls" } });
    expect(answer.decision).toBe("allow");
    expect(answer.failedOpen).toBeUndefined();
    // session.start (flushed before the check) met the 429 and went again after 1 s.
    expect(packed.api.busyRequests.length).toBeGreaterThanOrEqual(3);
    expect(packed.api.busyRequests[1] - packed.api.busyRequests[0]).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    await vigil.close();
  });

  for (const version of ["7", "6"] as const) {
    describe(`AI SDK ${version} adapter`, () => {
      const generate = (options: Record<string, any>) => (version === "7" ? generateText(options as never) : generateTextV6(options as never)) as Promise<any>;
      const makeTool = (execute: (input: { url: string }) => unknown) =>
        version === "7" ? tool({ inputSchema: z.object({ url: z.string() }), execute: execute as never }) : toolV6({ inputSchema: z.object({ url: z.string() }), execute: execute as never });
      const steps = (n: number) => (version === "7" ? stepCountIs(n) : stepCountIsV6(n));

      it("results and their failures land in Vigil, a nudge reaches the next model call, the escalated key asks", async () => {
        const ws = await app.seedWorkspace();
        const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key, agent: `ai-sdk-${version}` });
        const guard = packed.sdk.ai.vigilAI(vigil);
        const model = scriptedModel([toolCall("c1", "http_request", { url: URL_V1 }), toolCall("c2", "http_request", { url: URL_V1 }), toolCall("c3", "http_request", { url: URL_V1 }), toolCall("c4", "http_request", { url: URL_V1 }), text("unreachable")]);
        let runs = 0;
        const result = await generate({
          model: version === "7" ? model.v7 : model.v6,
          prompt: "Fetch the users",
          tools: guard.tools({ http_request: makeTool(() => (runs++, failingFetch())) }),
          ...(version === "7" ? { toolApproval: guard.toolApproval } : {}),
          prepareStep: guard.prepareStep,
          stopWhen: [steps(10), guard.stopWhenPaused],
          onStepFinish: guard.onStepFinish,
        });
        await vigil.flush();
        expect(runs).toBe(3);
        // The 4th call: escalated → the SDK's tool-approval request, with Vigil's reason.
        const request = result.content.find((p: any) => p.type === "tool-approval-request");
        expect(request).toBeDefined();
        expect(request.toolCall.toolCallId).toBe("c4");
        if (version === "7") expect(request.reason).toContain("3 failures");
        expect(model.prompts).toHaveLength(4);
        // Three identical failing calls are a loop: Vigil's nudge is in the 4th model call, not before.
        expect(model.prompts[3]).toContain("[Vigil]");
        expect(model.prompts.slice(0, 3).join("")).not.toContain("[Vigil]");

        const rows = await events(ws.workspaceId, vigil.sessionId);
        const results = rows.filter((r) => r.type === "tool.result");
        expect(results.map((r) => [r.callId, r.failed, (r.payload as any).error])).toEqual([
          ["c1", true, "Service Unavailable"],
          ["c2", true, "Service Unavailable"],
          ["c3", true, "Service Unavailable"],
        ]);
        expect(rows.filter((r) => r.type === "tool.call").map((r) => r.callId)).toEqual(["c1", "c2", "c3", "c4"]);
        const status = await app.query("reliability.status", { toolName: "http_request" }, { key: ws.key });
        expect(status.body.result!.data.keys.find((k: any) => k.failureKey === KEY_V1).state).toBe("escalated");
        await vigil.close();
      });

      it("a paused session: the tool does not run, the model reads Vigil's reason, the loop stops", async () => {
        const ws = await app.seedWorkspace();
        const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key });
        // Three empty responses in a row pause a session (severe empty_response).
        for (let i = 0; i < 3; i++) vigil.report({ type: "model.text", text: "" });
        const flushed = await vigil.flush();
        expect(flushed.effects.some((e) => e.type === "paused")).toBe(true);
        const guard = packed.sdk.ai.vigilAI(vigil);
        const model = scriptedModel([toolCall("p1", "http_request", { url: URL_V1 }), text("should not be asked")]);
        let runs = 0;
        const result = await generate({
          model: version === "7" ? model.v7 : model.v6,
          prompt: "Fetch the users",
          tools: guard.tools({ http_request: makeTool(() => runs++) }),
          ...(version === "7" ? { toolApproval: guard.toolApproval } : {}),
          prepareStep: guard.prepareStep,
          stopWhen: [steps(10), guard.stopWhenPaused],
          onStepFinish: guard.onStepFinish,
        });
        expect(runs).toBe(0);
        expect(model.prompts).toHaveLength(1);
        expect(guard.paused).toBeTruthy();
        // The tool's answer in the conversation is Vigil's reason.
        expect(JSON.stringify(result.response.messages)).toContain(guard.paused!.slice(0, 40));
        await vigil.close();
      });
    });
  }

  describe("the vigil CLI as a process", () => {
    const vigilCli = async (args: string[], env: Record<string, string>, cwd?: string) => {
      try {
        const { stdout, stderr } = await run(process.execPath, [packed.sdk.bin, ...args], { env: { PATH: process.env.PATH ?? "", HOME: env.HOME ?? tmpdir(), ...env } as unknown as NodeJS.ProcessEnv, cwd });
        return { code: 0, stdout, stderr };
      } catch (e: any) {
        return { code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string };
      }
    };

    it("whoami, status, reset, approvals, deny, nudge and settings against Vigil; exit status 0 / 1 / 2", async () => {
      const ws = await app.seedWorkspace();
      const env = { VIGIL_URL: packed.api.url, VIGIL_API_KEY: ws.key };
      const me = await vigilCli(["whoami", "--json"], env);
      expect(me.code).toBe(0);
      expect(JSON.parse(me.stdout)).toMatchObject({ workspace: ws.slug, scope: "admin" });
      expect((await vigilCli(["whoami"], env)).stdout).toContain(ws.slug);

      const wrong = await vigilCli(["whoami"], { ...env, VIGIL_API_KEY: "vgl_wrong" });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain("401: the API key was not accepted (VIGIL_API_KEY)");
      const away = `http://127.0.0.1:${await closedPort()}`;
      const unreachable = await vigilCli(["status"], { ...env, VIGIL_URL: away });
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toContain(away);
      expect((await vigilCli(["deny", "some-id"], env)).code).toBe(2);
      expect((await vigilCli(["frobnicate"], env)).code).toBe(2);
      expect((await vigilCli(["reset", "--bogus"], env)).code).toBe(2);
      const help = await vigilCli(["--help"], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("connect");
      expect((await vigilCli(["approve", "--help"], env)).stdout).toContain("vigil approve <id> [--session]");

      // An escalated key, a held call waiting in Approvals.
      const vigil = packed.sdk.core.createVigil({ url: packed.api.url, apiKey: ws.key, agent: "cli-test" });
      const fetchUrl = vigil.guardTool("http_request", failingFetch);
      for (let i = 0; i < 3; i++) await fetchUrl({ url: URL_V1 }).catch(() => {});
      const held = await vigil.check({ toolName: "http_request", args: { url: URL_V1 }, callId: "cli-held", waitForApprovalSeconds: 0.1 });
      expect(held.decision).toBe("ask");

      const status = await vigilCli(["status", KEY_V1, "--json"], env);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ failureKey: KEY_V1, state: "escalated" });
      expect((await vigilCli(["status"], env)).stdout).toMatch(/FAILURE KEY\s+STATE/);

      const list = await vigilCli(["approvals", "--json"], env);
      const pending = JSON.parse(list.stdout).approvals.find((a: any) => a.callId === "cli-held");
      expect(pending).toMatchObject({ id: held.approvalId, kind: "tool_call" });
      expect((await vigilCli(["approvals"], env)).stdout).toContain(held.approvalId!);
      expect((await vigilCli(["deny", held.approvalId!, "--comment", "Not during the freeze"], env)).code).toBe(0);
      const after = await vigil.check({ toolName: "http_request", args: { url: URL_V1 }, callId: "cli-held" });
      expect(after).toMatchObject({ decision: "deny", reason: "Not during the freeze" });

      expect((await vigilCli(["reset", KEY_V1], env)).code).toBe(0);
      expect(JSON.parse((await vigilCli(["status", KEY_V1, "--json"], env)).stdout).state).toBe("trusted");

      expect((await vigilCli(["nudge", "direct", "--session", vigil.sessionId], env)).code).toBe(0);
      const settings = JSON.parse((await vigilCli(["settings", "--session", vigil.sessionId, "--json"], env)).stdout);
      expect(settings.nudgeLevel).toEqual({ value: "direct", source: "session" });
      expect((await vigilCli(["recovery", "ask"], env)).code).toBe(0);
      expect(JSON.parse((await vigilCli(["settings", "--json"], env)).stdout)).toMatchObject({ recovery_mode: "ask" });
      expect((await vigilCli(["recovery", "sometimes"], env)).code).toBe(2);

      // pause names the procedure Vigil answered for; a server without it says so, exit 1.
      const pause = await vigilCli(["pause", "--session", vigil.sessionId, "--reason", "maintenance"], env);
      if (pause.code !== 0) {
        expect(pause.code).toBe(1);
        expect(pause.stderr).toContain("sessions.pause");
      }
      expect((await vigilCli(["pause", "--session", "a", "--workspace"], env)).code).toBe(2);
      await vigil.close();
    });

    it("connect claude-code: --dry-run shows the diff and writes nothing; then merges, keeping the person's settings, with a backup", async () => {
      const home = await mkdtemp(path.join(tmpdir(), "vigil-home-"));
      const project = await mkdtemp(path.join(tmpdir(), "vigil-project-"));
      const file = path.join(project, ".claude/settings.json");
      await mkdir(path.dirname(file), { recursive: true });
      const mine = { model: "opus", permissions: { allow: ["Bash(npm test)"] }, hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./lint.sh" }] }] } };
      const original = JSON.stringify(mine, null, 2);
      await writeFile(file, original);
      const env = { VIGIL_URL: "https://vigil.example.com", HOME: home };

      const dry = await vigilCli(["connect", "claude-code", "--scope", "project", "--agent", "builder", "--dry-run"], env, project);
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain(`+++ ${file}`);
      expect(dry.stdout).toMatch(/^\+.*https:\/\/vigil\.example\.com\/api\/hooks\/claude-code\?agent=builder/m);
      expect(await readFile(file, "utf8")).toBe(original);

      const wrote = await vigilCli(["connect", "claude-code", "--scope", "project", "--agent", "builder"], env, project);
      expect(wrote.code).toBe(0);
      const merged = JSON.parse(await readFile(file, "utf8"));
      const expected = JSON.parse(claudeCodeSettings({ baseUrl: "https://vigil.example.com", agent: "builder", waitSeconds: 0 }));
      expect(merged.model).toBe("opus");
      expect(merged.permissions).toEqual(mine.permissions);
      expect(merged.hooks.PreToolUse).toEqual([...mine.hooks.PreToolUse, ...expected.hooks.PreToolUse]);
      for (const name of Object.keys(expected.hooks).filter((n) => n !== "PreToolUse")) expect(merged.hooks[name]).toEqual(expected.hooks[name]);
      expect(JSON.stringify(merged)).not.toContain("vgl_");
      const backups = (await readdir(path.dirname(file))).filter((n) => n.startsWith("settings.json.vigil-backup-"));
      expect(backups).toHaveLength(1);
      expect(await readFile(path.join(path.dirname(file), backups[0]), "utf8")).toBe(original);

      // Again: nothing to change (Vigil's hooks are replaced, never doubled).
      const again = await vigilCli(["connect", "claude-code", "--scope", "project", "--agent", "builder"], env, project);
      expect(again.stdout).toContain("already up to date");
      // User scope lands in $HOME; codex also turns hooks on in config.toml.
      expect((await vigilCli(["connect", "codex"], env)).code).toBe(0);
      expect(await readFile(path.join(home, ".codex/config.toml"), "utf8")).toContain("[features]\nhooks = true");
      expect(JSON.parse(await readFile(path.join(home, ".codex/hooks.json"), "utf8")).hooks.PreToolUse[0].hooks[0].command).toContain("/api/hooks/codex");
      expect((await vigilCli(["connect", "claude-code", "--scope", "team"], env)).code).toBe(2);
      await rm(home, { recursive: true, force: true });
      await rm(project, { recursive: true, force: true });
    });
  });
});
