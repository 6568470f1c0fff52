/**
 * One validation-error shape from every procedure (SPEC 7): bad input is a 400 whose
 * `error.data.issues[]` are `{ path: string[], message, code }` with the path naming the field,
 * and whose message still names it — whether zod, the ingest's second pass, the configuration
 * document parser or a service raised it. Agent API (API key) and dashboard (cookie) procedures.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp, TrpcResponse } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";

/** Asserts the shape and returns the issue paths, dotted. */
function expectIssues(res: TrpcResponse, label: string): string[] {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(400);
  const error = res.body.error!;
  expect(error.data.code).toBe("BAD_REQUEST");
  const issues = error.data.issues;
  expect(Array.isArray(issues) && issues.length > 0, `${label}: data.issues`).toBe(true);
  for (const i of issues!) {
    expect(Array.isArray(i.path), label).toBe(true);
    for (const seg of i.path) expect(typeof seg).toBe("string");
    expect(typeof i.message).toBe("string");
    expect(i.message.length).toBeGreaterThan(0);
    expect(typeof i.code).toBe("string");
  }
  return issues!.map((i) => i.path.join("."));
}

describe.each(DATABASE_KINDS)("validation-error shape on %s", (kind) => {
  let owner: { userId: string; cookie: string };
  let ws: Awaited<ReturnType<TestApp["seedWorkspace"]>>;

  const app = useTestApp(kind);
  beforeAll(async () => {
    owner = await app.signUp(`shape-${kind}-${uid()}@example.com`);
    ws = await app.seedWorkspace({ ownerUserId: owner.userId });
  });

  it("ingest.events: zod issues and the second pass (ts) both name events.<i>.<field>", async () => {
    const zodBad = await app.mutation("ingest.events", { events: [{ type: "turn.start", id: "t", sessionId: "s", turnIndex: -1 }] }, { key: ws.key });
    expect(expectIssues(zodBad, "turnIndex")).toEqual(["events.0.turnIndex"]);
    expect(zodBad.body.error!.message).toContain("events.0.turnIndex");
    expect(zodBad.body.error!.data.issues![0].code).toBe("too_small");

    const unknownField = await app.mutation("ingest.events", { events: [{ type: "session.end", id: "x", sessionId: "s", surprise: 1 }] }, { key: ws.key });
    expect(expectIssues(unknownField, "unknown field")).toEqual(["events.0.surprise"]);
    expect(unknownField.body.error!.message).toContain("surprise");

    const old = new Date(Date.now() - 40 * 86400_000).toISOString();
    const late = await app.mutation("ingest.events", { events: [{ type: "session.end", id: "late", sessionId: "s", ts: old }] }, { key: ws.key });
    expect(expectIssues(late, "ts")).toEqual(["events.0.ts"]);
    expect(late.body.error!.message).toContain("events.0.ts");
  });

  it("guard.check: a missing field is named", async () => {
    const res = await app.mutation("guard.check", { id: uid(), sessionId: "s", callId: "c", args: {} }, { key: ws.key });
    expect(expectIssues(res, "guard.check")).toContain("toolName");
    expect(res.body.error!.message).toContain("toolName");
  });

  it("sessions.setSettings: every bad setting is an issue under settings", async () => {
    const res = await app.mutation("sessions.setSettings", { sessionId: "s", settings: { nudgeLevel: "loud", recoveryMode: 1 } }, { key: ws.key });
    expect(expectIssues(res, "setSettings").sort()).toEqual(["settings.nudgeLevel", "settings.recoveryMode"]);
    expect(res.body.error!.message).toContain("nudgeLevel must be one of off, gentle, direct, interrupt");
  });

  it("config.put: document issues keep their segments, also when a rule name contains dots", async () => {
    const res = await app.mutation(
      "config.put",
      { domain_rules: { "api.example.com": { rate_threshold: 2 } }, settings: { nudge_level: "loud" }, extractors: [{ tool: "x", kind: "path", field: "" }] },
      { key: ws.key },
    );
    expectIssues(res, "config.put");
    const paths = res.body.error!.data.issues!.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        ["domain_rules", "api.example.com", "rate_threshold"],
        ["settings", "nudge_level"],
        ["extractors", "0", "field"],
      ]),
    );
    expect(res.body.error!.message).toContain("domain_rules.api.example.com.rate_threshold");
  });

  it("dashboard procedures: wsConfig.put, apiKeys.create, notifications.create and createWorkspace", async () => {
    const cookie = owner.cookie;
    const put = await app.mutation("wsConfig.put", { workspaceSlug: ws.slug, document: { default_rule: { window_seconds: 0 } } }, { cookie });
    expect(expectIssues(put, "wsConfig.put")).toEqual(["default_rule.window_seconds"]);
    expect(put.body.error!.message).toContain("default_rule.window_seconds");

    const key = await app.mutation("apiKeys.create", { workspaceSlug: ws.slug, name: "  ", scope: "agent" }, { cookie });
    expect(expectIssues(key, "apiKeys.create")).toEqual(["name"]);
    expect(key.body.error!.data.issues![0].message).toBe("Give the key a name");

    // Hand-raised by a service (ServiceError naming its field).
    const channel = await app.mutation(
      "notifications.create",
      { workspaceSlug: ws.slug, name: "ops", type: "webhook", url: "ftp://example.com/h", events: ["key_escalated"], minSeverity: "warning", quietPeriodSeconds: 60 },
      { cookie },
    );
    expect(expectIssues(channel, "notifications.create")).toEqual(["url"]);
    expect(channel.body.error!.data.issues![0]).toMatchObject({ code: "custom", message: expect.stringContaining("url") });

    const slug = await app.mutation("organization.createWorkspace", { organizationId: ws.organizationId, slug: "-" }, { cookie });
    expect(expectIssues(slug, "createWorkspace")).toEqual(["slug"]);
    expect(slug.body.error!.message).toContain("Slug");
  });

  it("errors that are not about fields carry no issues", async () => {
    const unauth = await app.mutation("ingest.events", { events: [] }, {});
    expect(unauth.status).toBe(401);
    expect(unauth.body.error!.data.issues).toBeUndefined();
    const missing = await app.query("sessions.get", { sessionId: "never-started" }, { key: ws.key });
    expect(missing.status).toBe(404);
    expect(missing.body.error!.data.issues).toBeUndefined();
  });
});
