/**
 * The Policies page's procedures and read model (SPEC 4.5, 4.6, 8): the test box (`wsPolicies.test`,
 * `orgPolicies.test`) against the agent API's `policies.test`, saves through the config services
 * with their roles and audit rows, hits per policy and "would have" counts from recorded decisions.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { auditLog, organization, workspace } from "@/db/schema";
import { enforcementOf, policyHitCounts, wouldDecideCounts } from "@/server/dashboard/policies";
import { loadEffectiveConfig } from "@/server/services/workspace-config";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";

const call = (sessionId: string, toolName: string, args: Record<string, unknown>) => ({ id: uid(), sessionId, callId: uid("c"), toolName, args });

describe.each(DATABASE_KINDS)("Policies page procedures on %s", (kind) => {
  const app = useTestApp(kind);
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let owner: { cookie: string };
  let member: { cookie: string };
  let viewer: { cookie: string };
  let outsider: { cookie: string };

  beforeAll(async () => {
    const o = await app.signUp(`pol-owner-${kind}-${uid()}@example.com`);
    owner = o;
    ws = await app.seedWorkspace({ ownerUserId: o.userId });
    const m = await app.signUp(`pol-member-${kind}-${uid()}@example.com`);
    await app.addMember(ws.organizationId, m.userId, "member");
    member = m;
    const v = await app.signUp(`pol-viewer-${kind}-${uid()}@example.com`);
    await app.addMember(ws.organizationId, v.userId, "viewer");
    viewer = v;
    outsider = await app.signUp(`pol-outsider-${kind}-${uid()}@example.com`);
    await app.seedWorkspace({ ownerUserId: (await app.signUp(`pol-other-${kind}-${uid()}@example.com`)).userId });
  });

  const wsTest = (input: Record<string, unknown>, cookie = viewer.cookie) => app.query("wsPolicies.test", { workspaceSlug: ws.slug, ...input }, { cookie });
  const wsPut = (document: unknown, cookie = owner.cookie) => app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document }, { cookie });
  const orgPut = (document: unknown, cookie = owner.cookie) => app.mutation("orgConfig.put", { organizationId: ws.organizationId, document }, { cookie });
  const storedPolicies = async () => ((await app.db.select({ c: workspace.config }).from(workspace).where(eq(workspace.id, ws.workspaceId)))[0].c as { policies?: unknown }).policies;
  const guard = async (c: ReturnType<typeof call>) => {
    const res = await app.mutation("guard.check", c, { key: ws.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result!.data;
  };

  it("the test box answers as the agent API's policies.test: deny for rm -rf ~ by the built-in rule, for a viewer too", async () => {
    const args = { command: "cd /tmp && rm -rf ~" };
    const res = await wsTest({ toolName: "Bash", args });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const dashboard = res.body.result!.data;
    expect(dashboard).toMatchObject({ decision: "deny", riskRule: "shell.delete_root_or_home", policy: { name: "shell.delete_root_or_home", level: "builtin" }, draftUsed: false });
    const api = (await app.query("policies.test", { toolName: "Bash", args }, { key: ws.key })).body.result!.data;
    const { draftUsed: _unused, ...same } = dashboard;
    expect(same).toEqual(api);
    // A near miss stays allowed.
    expect((await wsTest({ toolName: "Bash", args: { command: "rm -rf ./build" } })).body.result!.data).toMatchObject({ decision: "allow", policy: null, riskRule: null });
  });

  it("the test box tests a valid unsaved draft, and the stored document when the draft is invalid", async () => {
    const draft = { policies: [{ name: "no-force-push", tool: "bash", args: { command: "git push --force*" }, decision: "deny", reason: "Ask the release manager" }] };
    const withDraft = (await wsTest({ toolName: "Bash", args: { command: "git push --force origin main" }, draft })).body.result!.data;
    expect(withDraft).toMatchObject({ decision: "deny", policy: { name: "no-force-push", level: "workspace", reason: "Ask the release manager" }, draftUsed: true });
    const badDraft = { policies: [{ name: "x", tool: "bash", args: { command: { regex: "([a-z" } }, decision: "deny" }] };
    const stored = (await wsTest({ toolName: "Bash", args: { command: "git push --force origin main" }, draft: badDraft })).body.result!.data;
    // Without the draft the built-in force-push rule asks.
    expect(stored).toMatchObject({ decision: "ask", policy: { name: "shell.force_push", level: "builtin" }, draftUsed: false });
    expect(await storedPolicies()).toBeUndefined();
  });

  it("bad test input is a 400 naming the field; another organization's workspace is a 404", async () => {
    const notObject = await wsTest({ toolName: "Bash", args: ["rm"] });
    expect(notObject.status).toBe(400);
    expect(JSON.stringify(notObject.body)).toContain("args");
    const noTool = await wsTest({ toolName: "  ", args: {} });
    expect(noTool.status).toBe(400);
    expect(JSON.stringify(noTool.body)).toContain("toolName");
    expect((await wsTest({ toolName: "Bash", args: {} }, outsider.cookie)).status).toBe(404);
    expect((await app.query("orgPolicies.test", { organizationId: ws.organizationId, toolName: "Bash", args: {} }, { cookie: outsider.cookie })).status).toBe(404);
  });

  it("saving policies: viewers and members are refused and nothing is saved; an admin's save is validated and audit-logged", async () => {
    const doc = { policies: [{ name: "no-prod-writes", tool: "http_request", args: { url: "https://prod.example.com/**", method: { equals: "POST" } }, decision: "deny" }] };
    for (const cookie of [viewer.cookie, member.cookie]) {
      const refused = await wsPut(doc, cookie);
      expect(refused.status).toBe(403);
      expect(await storedPolicies()).toBeUndefined();
    }
    const badRegex = await wsPut({ policies: [{ name: "bad", tool: "Bash", args: { command: { regex: "([a-z" } }, decision: "deny" }] });
    expect(badRegex.status).toBe(400);
    expect(JSON.stringify(badRegex.body)).toContain("regex");
    expect(await storedPolicies()).toBeUndefined();

    const saved = await wsPut(doc);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(await storedPolicies()).toEqual(doc.policies);
    const audits = await app.db.select().from(auditLog).where(and(eq(auditLog.workspaceId, ws.workspaceId), eq(auditLog.action, "config.put")));
    expect(audits.some((a) => JSON.stringify(a.after).includes("no-prod-writes"))).toBe(true);
    expect((await wsTest({ toolName: "http_request", args: { url: "https://prod.example.com/v1/users", method: "POST" } })).body.result!.data).toMatchObject({
      decision: "deny",
      policy: { name: "no-prod-writes", level: "workspace" },
    });
  });

  it("organization policies: a viewer cannot save them; saved by an admin they decide on the workspace's test box, labelled organization", async () => {
    const doc = { policies: [{ name: "ask-deploys", tool: "deploy*", decision: "ask", reason: "Deploys need a person" }], risk_rules: { disabled: ["shell.privilege"] } };
    expect((await orgPut(doc, viewer.cookie)).status).toBe(403);
    expect((await app.db.select({ c: organization.config }).from(organization).where(eq(organization.id, ws.organizationId)))[0].c).not.toHaveProperty("policies");
    expect((await orgPut(doc)).status).toBe(200);
    expect((await wsTest({ toolName: "deploy_service", args: {} })).body.result!.data).toMatchObject({ decision: "ask", policy: { name: "ask-deploys", level: "organization" } });
    const orgTest = await app.query("orgPolicies.test", { organizationId: ws.organizationId, toolName: "Bash", args: { command: "sudo ls" } }, { cookie: viewer.cookie });
    expect(orgTest.status).toBe(200);
    // The organization turned shell.privilege off.
    expect(orgTest.body.result!.data).toMatchObject({ decision: "allow", riskRule: null, draftUsed: false });
    expect((await orgPut({}, owner.cookie)).status).toBe(200);
  });

  it("hits per policy and would-have counts are read from the recorded decisions, per window and per session", async () => {
    const before = new Date(Date.now() - 1000);
    expect((await wsPut({ settings: { enforcement: "watch" }, policies: [{ name: "no-curl", tool: "curl*", decision: "deny" }, { name: "ask-npm", tool: "Bash", args: { command: "npm publish*" }, decision: "ask" }] })).status).toBe(200);
    const { workspaceDoc, orgDoc } = await loadEffectiveConfig(app.db, ws.workspaceId);
    expect(enforcementOf(workspaceDoc, orgDoc)).toEqual({ mode: "watch", source: "workspace", organization: null });

    const s1 = uid("s");
    const s2 = uid("s");
    const answers = [
      await guard(call(s1, "curl_fetch", { url: "https://x" })),
      await guard(call(s1, "curl_fetch", { url: "https://y" })),
      await guard(call(s1, "Bash", { command: "npm publish --tag next" })),
      await guard(call(s2, "Bash", { command: "rm -rf ~" })),
      await guard(call(s2, "read_file", { path: "/src/a.ts" })),
    ];
    expect(answers.map((a) => a.decision)).toEqual(["allow", "allow", "allow", "allow", "allow"]);
    expect(answers.map((a) => a.wouldDecide ?? null)).toEqual(["deny", "deny", "ask", "deny", "allow"]);

    const hits = await policyHitCounts(app.db, [ws.workspaceId], { from: before });
    const byName = Object.fromEntries(hits.map((h) => [`${h.level}:${h.name}`, h]));
    expect(byName["workspace:no-curl"]).toEqual({ level: "workspace", name: "no-curl", hits: 2, wouldAsk: 0, wouldDeny: 2 });
    expect(byName["workspace:ask-npm"]).toMatchObject({ hits: 1, wouldAsk: 1, wouldDeny: 0 });
    expect(byName["builtin:shell.delete_root_or_home"]).toMatchObject({ hits: 1, wouldDeny: 1 });
    expect(hits).toHaveLength(3);
    // A window that ended before the calls holds none.
    expect(await policyHitCounts(app.db, [ws.workspaceId], { to: before })).toEqual([]);

    expect(await wouldDecideCounts(app.db, ws.workspaceId, { from: before })).toEqual({ ask: 1, deny: 3, pause: 0 });
    expect(await wouldDecideCounts(app.db, ws.workspaceId, { sessionId: s2 })).toEqual({ ask: 0, deny: 1, pause: 0 });
    expect(await wouldDecideCounts(app.db, ws.workspaceId, { to: before })).toEqual({ ask: 0, deny: 0, pause: 0 });

    // The organization watching is seen by a workspace that does not set enforcement itself.
    expect((await wsPut({})).status).toBe(200);
    expect((await orgPut({ settings: { enforcement: "watch" } })).status).toBe(200);
    const after = await loadEffectiveConfig(app.db, ws.workspaceId);
    expect(enforcementOf(after.workspaceDoc, after.orgDoc)).toEqual({ mode: "watch", source: "organization", organization: "watch" });
    expect((await orgPut({})).status).toBe(200);
  });
});
