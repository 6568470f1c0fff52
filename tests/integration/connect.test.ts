/**
 * The Connect page's procedures: an admin creates the key inline (apiKeys.create, a viewer cannot),
 * and the per-CLI check turns on only for an event sent through THAT CLI's hooks — not for an SDK
 * event, nor for another CLI — using the captured hook bodies and the real hook handler.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { handleHookRequest } from "@/server/agent-api/hooks";
import type { CliName } from "@/server/hooks/shared";

const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/agent-hooks");
const capture = (name: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")).body;

describe.each(DATABASE_KINDS)("Connect page procedures on %s", (kind) => {
  const app = useTestApp(kind);
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let owner: { userId: string; cookie: string };
  let viewer: { cookie: string };

  beforeAll(async () => {
    owner = await app.signUp(`connect-owner-${kind}-${uid()}@example.com`);
    ws = await app.seedWorkspace({ ownerUserId: owner.userId });
    const v = await app.signUp(`connect-viewer-${kind}-${uid()}@example.com`);
    await app.addMember(ws.organizationId, v.userId, "viewer");
    viewer = v;
  });

  const cliLastEvents = async () => {
    const res = await app.query("ws.connect.cliLastEvents", { workspaceSlug: ws.slug }, { cookie: viewer.cookie });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data as Record<CliName, { sessionId: string; type: string; toolName: string | null; agent: string | null } | null>;
  };

  async function hook(cli: CliName, body: unknown, key: string, query = "") {
    const req = new Request(`http://vigil.test/api/hooks/${cli}${query}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const res = await handleHookRequest(req, app.runtime, cli);
    expect(res.status, await res.clone().text()).toBe(200);
  }

  it("an admin creates the key inline; a viewer is refused", async () => {
    const refused = await app.mutation("apiKeys.create", { workspaceSlug: ws.slug, name: "claude-code", scope: "agent" }, { cookie: viewer.cookie });
    expect(refused.status).toBe(403);
    const created = await app.mutation("apiKeys.create", { workspaceSlug: ws.slug, name: "claude-code", scope: "agent" }, { cookie: owner.cookie });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.result!.data.value).toMatch(/^vgl_/);
  });

  it("each CLI's check waits for that CLI's own hooks: an SDK event named like the CLI does not count, nor does another CLI", async () => {
    expect(await cliLastEvents()).toEqual({ "claude-code": null, codex: null, gemini: null });

    // An SDK agent that calls itself "claude-code" is not Claude Code's hooks.
    const sdkSession = uid("s");
    const ingest = await app.mutation("ingest.events", { events: [{ type: "session.start", id: uid(), sessionId: sdkSession, agent: "claude-code" }] }, { key: ws.key });
    expect(ingest.status).toBe(200);
    expect(await cliLastEvents()).toEqual({ "claude-code": null, codex: null, gemini: null });

    const created = await app.mutation("apiKeys.create", { workspaceSlug: ws.slug, name: "connect", scope: "agent" }, { cookie: owner.cookie });
    const key = created.body.result!.data.value as string;
    const claude = capture("PreToolUse.Bash");
    await hook("claude-code", claude, key, "?agent=builder");
    const afterClaude = await cliLastEvents();
    expect(afterClaude["claude-code"]).toMatchObject({ sessionId: claude.session_id, type: "tool.call", toolName: "Bash", agent: "builder" });
    expect(afterClaude.codex).toBeNull();
    expect(afterClaude.gemini).toBeNull();

    // A later SDK event leaves Claude Code's check on its own session.
    await app.mutation("ingest.events", { events: [{ type: "user.message", id: uid(), sessionId: sdkSession, text: "hi" }] }, { key: ws.key });
    expect((await cliLastEvents())["claude-code"]?.sessionId).toBe(claude.session_id);

    const codex = capture("codex.PreToolUse");
    await hook("codex", codex, key);
    const afterCodex = await cliLastEvents();
    expect(afterCodex.codex).toMatchObject({ sessionId: codex.session_id, agent: "codex" });
    expect(afterCodex["claude-code"]?.sessionId).toBe(claude.session_id);
    expect(afterCodex.gemini).toBeNull();
  });
});
