/**
 * Workspace / organization configuration through the dashboard procedures (wsConfig, orgConfig)
 * and the services behind them: seed-format round trip, validation (400 naming the field path,
 * nothing saved), settings sources, roles, rule preview, global patterns and session resume access.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { auditLog, globalToolPattern, organization, workspace } from "@/db/schema";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { effectiveSettingsFor, getConfigDocument, loadEffectiveConfig, putConfigDocument } from "@/server/services/workspace-config";

/** The seed's `.jaato/reliability.json` example, extended with every section of SPEC 7.2. */
const SEED_DOCUMENT = {
  default_rule: { count_threshold: 3, window_seconds: 3600, escalation_duration_seconds: 1800 },
  plugin_rules: {
    cli: { count_threshold: 5, severity_filter: ["crash", "security"] },
    service_connector: { rate_threshold: 0.4, window_seconds: 300 },
  },
  domain_rules: {
    "api.production.com": { count_threshold: 2, consecutive_threshold: 2, escalation_duration_seconds: 3600 },
  },
  tool_rules: { bash: { count_threshold: 2, notify_user: false, block_threshold: 6 } },
  settings: { recovery_mode: "ask", nudge_level: "direct", preferred_models: ["claude-sonnet-4", "gpt-4.1"] },
  model_switch: { failure_threshold: 4, min_success_rate_diff: 0.25, min_attempts: 5 },
  patterns: { action_tools: ["writeFile", "bash"], announce_phrases: ["let me"], read_only_loop: { minor: 6, moderate: 9, severe: 14 } },
  extractors: [{ tool: "mcp__jira__*", kind: "mcp", field: "_mcp_server" }],
  security_patterns: ["\\bsudo\\b", "\\bmkfs\\b"],
  retention_days: 14,
};

describe.each(DATABASE_KINDS)("workspace configuration on %s", (kind) => {
  let owner: { userId: string; cookie: string };
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;
  let viewer: { userId: string; cookie: string };
  let memberUser: { userId: string; cookie: string };

  const app = useTestApp(kind);
  beforeAll(async () => {
    owner = await app.signUp(`cfg-owner-${kind}@example.com`);
    ws = await app.seedWorkspace({ ownerUserId: owner.userId });
    viewer = await app.signUp(`cfg-viewer-${kind}@example.com`);
    await app.addMember(ws.organizationId, viewer.userId, "viewer");
    memberUser = await app.signUp(`cfg-member-${kind}@example.com`);
    await app.addMember(ws.organizationId, memberUser.userId, "member");
  });

  const storedWorkspaceConfig = async () => (await app.db.select({ c: workspace.config }).from(workspace).where(eq(workspace.id, ws.workspaceId)))[0].c;
  const auditCount = async () =>
    (await app.db.select().from(auditLog).where(and(eq(auditLog.organizationId, ws.organizationId), eq(auditLog.action, "config.put")))).length;

  it("round-trips a seed-format document: put returns it, get returns it, storage is camelCase, audit has before/after", async () => {
    const put = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: SEED_DOCUMENT }, { cookie: owner.cookie });
    expect(put.status).toBe(200);
    expect(put.body.result?.data.document).toEqual(SEED_DOCUMENT);

    const get = await app.query("wsConfig.get", { workspaceSlug: ws.slug }, { cookie: owner.cookie });
    expect(get.status).toBe(200);
    expect(get.body.result?.data.document).toEqual(SEED_DOCUMENT);
    expect(get.body.result?.data.canEdit).toBe(true);

    const camel = await getConfigDocument(app.db, { level: "workspace", workspaceId: ws.workspaceId });
    expect(camel.defaultRule).toEqual({ countThreshold: 3, windowSeconds: 3600, escalationDurationSeconds: 1800 });
    expect(camel.toolRules?.bash).toEqual({ countThreshold: 2, notify: false, blockThreshold: 6 });
    expect(camel.patterns?.thresholds?.read_only_loop).toEqual({ minor: 6, moderate: 9, severe: 14 });
    expect(await storedWorkspaceConfig()).toEqual(camel);

    const [entry] = await app.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.workspaceId, ws.workspaceId), eq(auditLog.action, "config.put")));
    expect(entry.actorLabel).toBe(`cfg-owner-${kind}@example.com`);
    expect(entry.before).toEqual({});
    expect(entry.after).toEqual(SEED_DOCUMENT);

    // The merged view sees it.
    const { effective } = await loadEffectiveConfig(app.db, ws.workspaceId);
    expect(effective.retentionDays).toBe(14);
    expect(effective.patterns.actionTools).toEqual(["writeFile", "bash"]);
    expect(effective.patterns.readOnlyTools).toContain("readFile"); // not set → built-in default
  });

  it("answers 400 naming the field path for unknown fields and bad values, and saves nothing", async () => {
    const before = await storedWorkspaceConfig();
    const audits = await auditCount();

    const unknown = await app.mutation(
      "wsConfig.put",
      { workspaceSlug: ws.slug, document: { ...SEED_DOCUMENT, default_rule: { count_treshold: 3 } } },
      { cookie: owner.cookie },
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.error?.data.code).toBe("BAD_REQUEST");
    expect(unknown.body.error?.data.issues?.[0]).toMatchObject({ path: ["default_rule", "count_treshold"], code: "unrecognized_keys" });
    expect(unknown.body.error?.message).toContain("default_rule.count_treshold");

    const topLevel = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: { retention: 5 } }, { cookie: owner.cookie });
    expect(topLevel.status).toBe(400);
    expect(topLevel.body.error?.data.issues?.[0].path).toEqual(["retention"]);

    const bad = await app.mutation(
      "wsConfig.put",
      {
        workspaceSlug: ws.slug,
        document: {
          settings: { nudge_level: "loud" },
          tool_rules: { bash: { rate_threshold: 2 } },
          security_patterns: ["(unclosed"],
          extractors: [{ tool: "x*", kind: "path", field: "" }],
        },
      },
      { cookie: owner.cookie },
    );
    expect(bad.status).toBe(400);
    const message = bad.body.error?.message ?? "";
    // Every issue is listed in the message and in data.issues.
    for (const p of ["settings.nudge_level", "tool_rules.bash.rate_threshold", "security_patterns[0]", "extractors[0].field"]) expect(message).toContain(p);
    expect(bad.body.error?.data.issues?.map((i) => i.path.join(".")).sort()).toEqual(["extractors.0.field", "security_patterns.0", "settings.nudge_level", "tool_rules.bash.rate_threshold"]);

    const notObject = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: [1, 2] }, { cookie: owner.cookie });
    expect(notObject.status).toBe(400);

    expect(await storedWorkspaceConfig()).toEqual(before);
    expect(await auditCount()).toBe(audits);
  });

  it("pattern ladders: an unknown pattern or a ladder that decreases is a 400 naming the field on every path; org defaults still apply", async () => {
    const before = await storedWorkspaceConfig();
    const bad = { patterns: { repetitive_calls: { minor: 3, moderate: 2 } } };
    const viaDashboard = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: bad }, { cookie: owner.cookie });
    expect(viaDashboard.status).toBe(400);
    expect(viaDashboard.body.error?.data.issues?.[0].path).toEqual(["patterns", "repetitive_calls", "moderate"]);
    const viaApi = await app.mutation("config.put", { patterns: { stuck_forever: { minor: 1 } } }, { key: ws.key });
    expect(viaApi.status).toBe(400);
    expect(viaApi.body.error?.message).toContain("patterns.stuck_forever");
    const viaOrg = await app.mutation("orgConfig.put", { organizationId: ws.organizationId, document: { patterns: { empty_response: { moderate: 4, severe: 2 } } } }, { cookie: owner.cookie });
    expect(viaOrg.status).toBe(400);
    expect(viaOrg.body.error?.data.issues?.[0].path).toEqual(["patterns", "empty_response", "severe"]);
    expect(await storedWorkspaceConfig()).toEqual(before);

    // Organization defaults for the new settings reach the workspace's effective configuration.
    const org = await app.mutation(
      "orgConfig.put",
      { organizationId: ws.organizationId, document: { patterns: { empty_response: { minor: 2, moderate: 3, severe: 4 }, volatile_arg_fields: ["nonce"] } } },
      { cookie: owner.cookie },
    );
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    const { effective } = await loadEffectiveConfig(app.db, ws.workspaceId);
    expect(effective.patterns.thresholds.empty_response).toEqual({ minor: 2, moderate: 3, severe: 4 });
    expect(effective.patterns.volatileArgFields).toEqual(["nonce"]);
    const reset = await app.mutation("orgConfig.put", { organizationId: ws.organizationId, document: {} }, { cookie: owner.cookie });
    expect(reset.status).toBe(200);
  });

  it("the service throws a 400 ServiceError with the first field path and every issue in the message", async () => {
    await expect(
      putConfigDocument(app.db, {
        level: "organization",
        organizationId: ws.organizationId,
        document: { default_rule: { window_seconds: 0 }, bogus: true },
        actor: SYSTEM_ACTOR,
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", field: expect.stringMatching(/^(default_rule\.window_seconds|bogus)$/), message: expect.stringContaining("bogus") });
    const [org] = await app.db.select({ c: organization.config }).from(organization).where(eq(organization.id, ws.organizationId));
    expect(org.c).toEqual({});
  });

  it("shows every setting's source: workspace, organization or default (and session above them)", async () => {
    const orgPut = await app.mutation(
      "orgConfig.put",
      { organizationId: ws.organizationId, document: { settings: { recovery_mode: "auto", blocked_decision: "deny", nudge_level: "gentle" } } },
      { cookie: owner.cookie },
    );
    expect(orgPut.status).toBe(200);
    const res = await app.query("wsConfig.effectiveSettings", { workspaceSlug: ws.slug }, { cookie: viewer.cookie });
    expect(res.status).toBe(200);
    const s = res.body.result!.data.settings;
    expect(s.nudgeLevel).toEqual({ value: "direct", source: "workspace" });
    expect(s.recoveryMode).toEqual({ value: "ask", source: "workspace" });
    expect(s.blockedDecision).toEqual({ value: "deny", source: "organization" });
    expect(s.patternDetectionEnabled).toEqual({ value: true, source: "default" });
    expect(s.modelSwitchStrategy).toEqual({ value: "suggest", source: "default" });
    expect(s.preferredModels).toEqual({ value: ["claude-sonnet-4", "gpt-4.1"], source: "workspace" });

    // Clearing the workspace value falls back to the organization's.
    const { settings: _s, ...rest } = SEED_DOCUMENT;
    await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: { ...rest, settings: { recovery_mode: "ask" } } }, { cookie: owner.cookie });
    const after = (await app.query("wsConfig.effectiveSettings", { workspaceSlug: ws.slug }, { cookie: viewer.cookie })).body.result!.data.settings;
    expect(after.nudgeLevel).toEqual({ value: "gentle", source: "organization" });
    expect(after.preferredModels).toEqual({ value: [], source: "default" });

    const withSession = await effectiveSettingsFor(app.db, ws.workspaceId, { nudgeLevel: "off" });
    expect(withSession.nudgeLevel).toEqual({ value: "off", source: "session" });
    expect(withSession.recoveryMode).toEqual({ value: "ask", source: "workspace" });

    const org = await app.query("orgConfig.effectiveSettings", { organizationId: ws.organizationId }, { cookie: viewer.cookie });
    expect(org.body.result?.data.settings.blockedDecision).toEqual({ value: "deny", source: "organization" });
    expect(org.body.result?.data.settings.nudgeEnabled).toEqual({ value: true, source: "default" });
  });

  it("refuses put to viewers and members (403) and saves nothing; viewers can read", async () => {
    const before = await storedWorkspaceConfig();
    const asViewer = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: { retention_days: 3 } }, { cookie: viewer.cookie });
    expect(asViewer.status).toBe(403);
    const asMember = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: { retention_days: 3 } }, { cookie: memberUser.cookie });
    expect(asMember.status).toBe(403);
    const orgAsViewer = await app.mutation("orgConfig.put", { organizationId: ws.organizationId, document: {} }, { cookie: viewer.cookie });
    expect(orgAsViewer.status).toBe(403);
    expect(await storedWorkspaceConfig()).toEqual(before);

    const get = await app.query("wsConfig.get", { workspaceSlug: ws.slug }, { cookie: viewer.cookie });
    expect(get.status).toBe(200);
    expect(get.body.result?.data.canEdit).toBe(false);

    const stranger = await app.signUp(`cfg-stranger-${kind}@example.com`);
    expect((await app.query("wsConfig.get", { workspaceSlug: ws.slug }, { cookie: stranger.cookie })).status).toBe(404);
    expect((await app.query("wsConfig.get", { workspaceSlug: ws.slug })).status).toBe(401);
  });

  it("explains which rule applies to a call", async () => {
    const q = (input: Record<string, unknown>) => app.query("wsConfig.explainRule", { workspaceSlug: ws.slug, ...input }, { cookie: viewer.cookie });
    const tool = (await q({ toolName: "bash", pluginName: "cli" })).body.result!.data;
    expect(tool.level).toBe("tool");
    expect(tool.name).toBe("bash");
    expect(tool.rule.countThreshold).toBe(2);
    expect(tool.fields.windowSeconds.origin).toEqual({ from: "workspace_default" });
    expect(tool.summary[0]).toContain("tool rule 'bash'");

    const domain = (await q({ toolName: "http_request", pluginName: "cli", domain: "api.production.com" })).body.result!.data;
    expect(domain.level).toBe("domain");
    expect(domain.rule.consecutiveThreshold).toBe(2);

    const plugin = (await q({ toolName: "ls", pluginName: "cli" })).body.result!.data;
    expect(plugin.level).toBe("plugin");
    expect(plugin.rule.severityFilter).toEqual(["crash", "security"]);

    const dflt = (await q({ toolName: "readFile" })).body.result!.data;
    expect(dflt.level).toBe("default");
    expect(dflt.rule.countThreshold).toBe(3);
    expect(dflt.fields.cooldownSeconds.origin).toEqual({ from: "builtin" });

    // A draft document previews unsaved edits.
    const draft = (await q({ toolName: "readFile", draft: { default_rule: { count_threshold: 9 } } })).body.result!.data;
    expect(draft.rule.countThreshold).toBe(9);
    expect(draft.draftUsed).toBe(true);

    expect((await q({ toolName: "" })).status).toBe(400);
  });

  it("lists and clears global tool patterns (admin only, audited)", async () => {
    await app.db.insert(globalToolPattern).values({
      organizationId: ws.organizationId,
      toolName: "http_request",
      status: "active",
      workspaceIds: [ws.workspaceId],
      avgFailureRate: 0.8,
      detectedAt: new Date(),
    });
    const list = await app.query("orgConfig.globalPatterns.list", { organizationId: ws.organizationId }, { cookie: viewer.cookie });
    expect(list.status).toBe(200);
    expect(list.body.result?.data).toMatchObject([{ toolName: "http_request", status: "active", workspaces: [{ slug: ws.slug }], avgFailureRate: 0.8 }]);
    expect(typeof list.body.result?.data[0].detectedAt).toBe("string");

    const denied = await app.mutation("orgConfig.globalPatterns.clear", { organizationId: ws.organizationId, toolName: "http_request" }, { cookie: viewer.cookie });
    expect(denied.status).toBe(403);
    const cleared = await app.mutation("orgConfig.globalPatterns.clear", { organizationId: ws.organizationId, toolName: "http_request" }, { cookie: owner.cookie });
    expect(cleared.status).toBe(200);
    const again = await app.mutation("orgConfig.globalPatterns.clear", { organizationId: ws.organizationId, toolName: "http_request" }, { cookie: owner.cookie });
    expect(again.status).toBe(404);
    const active = await app.query("orgConfig.globalPatterns.list", { organizationId: ws.organizationId }, { cookie: viewer.cookie });
    expect(active.body.result?.data).toEqual([]);
    const audit = await app.db.select().from(auditLog).where(and(eq(auditLog.organizationId, ws.organizationId), eq(auditLog.action, "global_pattern.clear")));
    expect(audit).toHaveLength(1);
  });

  it("checks roles on session resume and timeline", async () => {
    const asViewer = await app.mutation("wsConfig.sessions.resume", { workspaceSlug: ws.slug, sessionId: "nope" }, { cookie: viewer.cookie });
    expect(asViewer.status).toBe(403);
    const unknown = await app.mutation("wsConfig.sessions.resume", { workspaceSlug: ws.slug, sessionId: "nope" }, { cookie: memberUser.cookie });
    expect(unknown.status).toBe(404);
    const timeline = await app.query("wsConfig.sessions.timeline", { workspaceSlug: ws.slug, sessionId: "nope" }, { cookie: viewer.cookie });
    expect(timeline.status).toBe(200);
    expect(timeline.body.result?.data).toEqual({ items: [], nextCursor: null });
  });

  it("shows a resume with its guidance in the session timeline right away", async () => {
    const events = [
      { type: "session.start", id: "tl-start", sessionId: "tl-1", agent: "coder" },
      ...[1, 2, 3, 4].map((i) => ({ type: "model.text", id: `tl-t${i}`, sessionId: "tl-1", text: "Proceeding now with the fix." })),
    ];
    // Earlier tests leave settings on this workspace and its organization: start from built-ins.
    expect((await app.mutation("config.put", {}, { key: ws.key })).status).toBe(200);
    await putConfigDocument(app.db, { level: "organization", organizationId: ws.organizationId, document: {}, actor: SYSTEM_ACTOR });
    const ingest = await app.mutation("ingest.events", { events }, { key: ws.key });
    expect(ingest.body.result!.data.effects.map((e: { type: string }) => e.type)).toContain("paused");
    const resume = await app.mutation("wsConfig.sessions.resume", { workspaceSlug: ws.slug, sessionId: "tl-1", guidance: "Edit src/tax.ts now." }, { cookie: memberUser.cookie });
    expect(resume.status).toBe(200);
    const timeline = await app.query("wsConfig.sessions.timeline", { workspaceSlug: ws.slug, sessionId: "tl-1" }, { cookie: viewer.cookie });
    const items = timeline.body.result!.data.items as { kind: string; actor?: string; guidance?: string }[];
    expect(items.at(-1)).toMatchObject({ kind: "resume", actor: `cfg-member-${kind}@example.com`, guidance: "Edit src/tax.ts now." });
  });
});
