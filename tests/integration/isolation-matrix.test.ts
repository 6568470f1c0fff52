/**
 * Isolation matrix (SPEC 1): every tRPC procedure of the app router × every way a caller may try
 * to reach what it must not — no credentials, another workspace's API key, an agent-scope key on
 * an admin procedure, a user of another organization, each role below the one required, a revoked
 * key, a signed-in user on the agent API, an API key on a dashboard procedure — must get the SPEC
 * status (401/403/404), write nothing (row counts of every table unchanged) and read nothing (no
 * data of the target workspace in the body). Procedures are enumerated from `appRouter`, so a new
 * one fails here until it is classified and given a sample input; a positive control per procedure
 * proves each sample input and classification right (the required principal gets 200).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import type { TestApp } from "../support/app";
import { ingestAccepted, useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { agentSession, globalToolPattern, member, type Role } from "@/db/schema";
import { appRouter } from "@/server/trpc/root";
import type { ProcedureMeta } from "@/server/trpc/init";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { createApiKey, revokeApiKey } from "@/server/services/api-keys";
import { createOrganization, createWorkspace } from "@/server/services/tenancy";
import { createChannel } from "@/server/services/notification-channels";
import { createInvitation } from "@/server/services/invitations";
import { and, eq } from "drizzle-orm";

// --- The principals and data --------------------------------------------------------------------

const ROLE_ORDER: Role[] = ["viewer", "member", "admin", "owner"];
const TARGET_DOMAIN = "api.zeta-secret.example";
const TARGET_AGENT = "zeta-agent-secret";

interface Ws {
  id: string;
  slug: string;
  agentKey: string;
  adminKey: string;
}
interface Org {
  id: string;
  name: string;
  users: Record<Role, { userId: string; cookie: string; email: string }>;
  a: Ws;
  b: Ws;
}
interface World {
  org1: Org;
  org2: Org;
  /** The workspace every negative case aims at: org1's first workspace. */
  target: Ws;
  revokedKey: string;
  victimKeyId: string;
  liveSessionId: string;
  pausedSessions: [string, string];
  approvals: [string, string];
  failureKey: string;
  channels: { main: string; victim: string };
  shifterUserId: string;
  leaverUserId: string;
  /** A pending invitation of the target's organization (revoked by the positive control). */
  invitationId: string;
  /** A link to org2, accepted by org1's viewer in the positive control (a link to org1 would be 409: already a member). */
  foreignInviteToken: string;
  /** Strings only the target workspace/organization holds: none may appear in a rejected body. */
  markers: string[];
}

async function makeOrg(app: TestApp, name: string, slugs: [string, string], tag: string): Promise<Org> {
  const users = {} as Org["users"];
  for (const role of [...ROLE_ORDER].reverse()) {
    const email = `${tag}-${role}-${uid("u")}@example.com`;
    users[role] = { ...(await app.signUp(email)), email };
  }
  const org = await createOrganization(app.db, { name, ownerUserId: users.owner.userId, actor: SYSTEM_ACTOR });
  for (const role of ["admin", "member", "viewer"] as const) await app.addMember(org.id, users[role].userId, role);
  const ws = async (slug: string): Promise<Ws> => {
    const w = await createWorkspace(app.db, { organizationId: org.id, slug, actor: SYSTEM_ACTOR });
    const key = (scope: "agent" | "admin") => createApiKey(app.db, { workspaceId: w.id, organizationId: org.id, name: `${slug}-${scope}`, scope, actor: SYSTEM_ACTOR });
    return { id: w.id, slug, agentKey: (await key("agent")).value, adminKey: (await key("admin")).value };
  };
  return { id: org.id, name, users, a: await ws(slugs[0]), b: await ws(slugs[1]) };
}

async function buildWorld(app: TestApp): Promise<World> {
  const org1 = await makeOrg(app, "Zeta Holdings Secret", ["zeta-main", "zeta-side"], "zeta");
  const org2 = await makeOrg(app, "Omega Labs", ["omega-main", "omega-side"], "omega");
  const target = org1.a;
  const key = target.adminKey;
  const ingest = (events: unknown[]) => ingestAccepted(app, key, events);

  // A live session with an escalated key and two pending tool-call approvals.
  const liveSessionId = "zeta-session-live";
  await ingest([{ type: "session.start", id: uid(), sessionId: liveSessionId, agent: TARGET_AGENT, model: "zeta-model" }]);
  // Two escalated keys (v1, v2), each with a pending tool-call approval: resetting v1 (keys.reset)
  // cancels only v1's approval, so the dashboard's resolve still finds v2's pending.
  const approvals: string[] = [];
  const failureKeys: string[] = [];
  for (const version of ["v1", "v2"]) {
    const url = `https://${TARGET_DOMAIN}/${version}/users`;
    const out = await ingest([1, 2, 3].map(() => result(liveSessionId, "http_request", { url }, { success: false, httpStatus: 503, error: "zeta upstream down" })));
    const escalated = out.effects.find((e: any) => e.type === "escalated");
    expect(escalated).toBeTruthy();
    failureKeys.push(escalated.failureKey);
    const g = await app.mutation("guard.check", { id: uid(), sessionId: liveSessionId, callId: `zeta-call-${version}`, toolName: "http_request", args: { url }, waitForApprovalSeconds: 0.05 }, { key });
    expect(g.body.result!.data.approvalId).toEqual(expect.any(String));
    approvals.push(g.body.result!.data.approvalId);
  }
  const failureKey = failureKeys[0];

  // Two paused sessions (one to resume through the agent API, one through the dashboard).
  const pausedSessions = ["zeta-session-paused-1", "zeta-session-paused-2"] as [string, string];
  await ingest(pausedSessions.map((sessionId) => ({ type: "session.start", id: uid(), sessionId, agent: TARGET_AGENT })));
  for (const sessionId of pausedSessions)
    await app.db.update(agentSession).set({ paused: true, pauseReason: "zeta stall", pausedAt: new Date() }).where(and(eq(agentSession.workspaceId, target.id), eq(agentSession.sessionId, sessionId)));

  const scope = { workspaceId: target.id, organizationId: org1.id, actor: SYSTEM_ACTOR };
  const channel = (name: string) =>
    createChannel(app.db, scope, { name, type: "webhook", url: "https://hooks.zeta-secret.invalid/notify", events: ["key_escalated"], minSeverity: "info", quietPeriodSeconds: 0 });
  const main = await channel("zeta-channel-main");
  const channels = { main: main.channel.id, victim: (await channel("zeta-channel-victim")).channel.id };

  await app.db.insert(globalToolPattern).values({ organizationId: org1.id, toolName: "http_request", status: "active", workspaceIds: [target.id, org1.b.id], avgFailureRate: 0.9, detectedAt: new Date() });

  const revoked = await createApiKey(app.db, { ...scope, name: "zeta-revoked", scope: "admin" });
  await revokeApiKey(app.db, { ...scope, keyId: revoked.key.id });
  const victim = await createApiKey(app.db, { ...scope, name: "zeta-victim", scope: "agent" });

  const extra = async (tag: string) => {
    const u = await app.signUp(`zeta-${tag}-${uid("u")}@example.com`);
    await app.addMember(org1.id, u.userId, "viewer");
    return u.userId;
  };

  const invitation = await createInvitation(app.db, { organizationId: org1.id, role: "viewer", inviterRole: "owner", actor: SYSTEM_ACTOR });
  const foreignInvite = await createInvitation(app.db, { organizationId: org2.id, role: "viewer", inviterRole: "owner", actor: SYSTEM_ACTOR });

  const markers = [
    org1.name, TARGET_AGENT, TARGET_DOMAIN, "hooks.zeta-secret.invalid", main.secret!, "zeta upstream down", "zeta-model", "zeta-channel", "zeta stall",
    target.id, liveSessionId, ...pausedSessions, ...approvals, revoked.key.prefix, victim.key.prefix,
    ...ROLE_ORDER.map((r) => org1.users[r].email),
  ];
  return {
    org1, org2, target, revokedKey: revoked.value, victimKeyId: victim.key.id, liveSessionId, pausedSessions,
    approvals: approvals as [string, string], failureKey, channels,
    shifterUserId: await extra("shifter"), leaverUserId: await extra("leaver"), markers,
    invitationId: invitation.id, foreignInviteToken: foreignInvite.token,
  };
}

// --- Classification and sample inputs -----------------------------------------------------------

/**
 * Who may call a procedure:
 *  - `user`: any signed-in user (no workspace);
 *  - `workspace`/`org`: a member of the workspace's (organization's) organization with at least `role`;
 *  - `key`: an API key of at least `scope`. `foreign` is what another workspace's key gets for the
 *    target's sample input: `404` (the input names the target's objects) or `own` (the procedure
 *    acts on the key's own workspace: allowed, but nothing of the target is read or written).
 */
type Access =
  | { kind: "user" }
  | { kind: "workspace"; role: Role }
  | { kind: "org"; role: Role }
  | { kind: "key"; scope: "agent" | "admin"; foreign: 404 | "own" };

interface Spec {
  access: Access;
  /** A valid input aimed at the target workspace (undefined: the procedure takes none). */
  input: (w: World) => unknown;
}

const ws = (w: World, extra: Record<string, unknown> = {}) => ({ workspaceSlug: w.target.slug, ...extra });
const org = (w: World, extra: Record<string, unknown> = {}) => ({ organizationId: w.org1.id, ...extra });
const none = () => undefined;
const channelFields = { name: "zeta-channel-renamed", events: ["key_blocked"], minSeverity: "warning", quietPeriodSeconds: 60 };

const PROCEDURES: Record<string, Spec> = {
  // Agent API (SPEC 7).
  "ingest.events": {
    access: { kind: "key", scope: "agent", foreign: "own" },
    input: () => ({ events: [{ type: "tool.result", id: uid("probe"), sessionId: "probe-session", callId: uid("c"), toolName: "bash", args: { command: "ls" }, success: true }] }),
  },
  "guard.check": {
    access: { kind: "key", scope: "agent", foreign: "own" },
    input: () => ({ id: uid("probe"), sessionId: "probe-session", callId: uid("c"), toolName: "bash", args: { command: "ls" } }),
  },
  "reliability.status": { access: { kind: "key", scope: "agent", foreign: "own" }, input: () => ({ includeHistory: true }) },
  "config.get": { access: { kind: "key", scope: "admin", foreign: "own" }, input: none },
  "config.put": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({ settings: { nudge_level: "gentle" } }) },
  "approvals.get": { access: { kind: "key", scope: "agent", foreign: 404 }, input: (w) => ({ approvalId: w.approvals[0] }) },
  "approvals.list": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({}) },
  "approvals.resolve": { access: { kind: "key", scope: "admin", foreign: 404 }, input: (w) => ({ approvalId: w.approvals[0], decision: "approve" }) },
  "keys.reset": { access: { kind: "key", scope: "admin", foreign: 404 }, input: (w) => ({ failureKey: w.failureKey }) },
  "sessions.get": { access: { kind: "key", scope: "agent", foreign: 404 }, input: (w) => ({ sessionId: w.liveSessionId }) },
  "sessions.setSettings": { access: { kind: "key", scope: "agent", foreign: "own" }, input: (w) => ({ sessionId: w.liveSessionId, settings: { nudgeLevel: "off" } }) },
  "sessions.resume": { access: { kind: "key", scope: "admin", foreign: 404 }, input: (w) => ({ sessionId: w.pausedSessions[0] }) },
  "account.whoami": { access: { kind: "key", scope: "agent", foreign: "own" }, input: none },
  // Revision 3 (SPEC 4.5, 4.6, 7.6). A pause comes before its resume: the foreign keys' own
  // workspaces are paused by the pause cases, and the positive control resumes what it paused.
  "policies.test": { access: { kind: "key", scope: "agent", foreign: "own" }, input: () => ({ toolName: "Bash", args: { command: "rm -rf ~" } }) },
  "keys.requestReset": { access: { kind: "key", scope: "agent", foreign: 404 }, input: (w) => ({ failureKey: w.failureKey, reason: "probe" }) },
  "keys.setState": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({ failureKey: "@tool:probe_tool", state: "escalated", reason: "probe" }) },
  // sessions.setSettings (above) made a session of that name in each foreign key's own workspace.
  "sessions.pause": { access: { kind: "key", scope: "admin", foreign: "own" }, input: (w) => ({ sessionId: w.liveSessionId, reason: "probe" }) },
  "sessions.message": { access: { kind: "key", scope: "admin", foreign: "own" }, input: (w) => ({ sessionId: w.liveSessionId, text: "probe message" }) },
  "agents.pause": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({ agent: "probe-agent", reason: "probe" }) },
  "agents.resume": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({ agent: "probe-agent" }) },
  "workspace.holds": { access: { kind: "key", scope: "admin", foreign: "own" }, input: none },
  "workspace.pause": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({ reason: "probe" }) },
  "workspace.resume": { access: { kind: "key", scope: "admin", foreign: "own" }, input: () => ({}) },
  "patterns.summary": { access: { kind: "key", scope: "agent", foreign: "own" }, input: () => ({ range: "all" }) },
  "models.list": { access: { kind: "key", scope: "agent", foreign: "own" }, input: none },
  "failures.groups": { access: { kind: "key", scope: "agent", foreign: "own" }, input: () => ({ range: "all" }) },
  // Dashboard.
  "account.me": { access: { kind: "user" }, input: none },
  "account.createOrganization": { access: { kind: "user" }, input: () => ({ name: "Probe Org", workspaceSlug: uid("probe").toLowerCase() }) },
  "organization.workspaces": { access: { kind: "org", role: "viewer" }, input: (w) => org(w) },
  "organization.createWorkspace": { access: { kind: "org", role: "admin" }, input: (w) => org(w, { slug: uid("probe").toLowerCase() }) },
  "organization.members": { access: { kind: "org", role: "viewer" }, input: (w) => org(w) },
  "organization.setMemberRole": { access: { kind: "org", role: "owner" }, input: (w) => org(w, { userId: w.shifterUserId, role: "member" }) },
  "organization.removeMember": { access: { kind: "org", role: "owner" }, input: (w) => org(w, { userId: w.leaverUserId }) },
  "apiKeys.list": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w) },
  "apiKeys.create": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { name: "probe key", scope: "agent" }) },
  "apiKeys.revoke": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { keyId: w.victimKeyId }) },
  "ws.approvals.pending": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w, { withHistory: true }) },
  "ws.approvals.resolve": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { approvalId: w.approvals[1], decision: "deny", comment: "not now" }) },
  "ws.keys.reset": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { failureKey: w.failureKey }) },
  "ws.keys.setState": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { failureKey: "@tool:probe_tool", state: "blocked", reason: "probe" }) },
  "ws.holds.list": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "ws.holds.pauseAgent": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { agent: "probe-agent", reason: "probe" }) },
  "ws.holds.resumeAgent": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { agent: "probe-agent" }) },
  "ws.holds.pauseWorkspace": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { reason: "probe" }) },
  "ws.holds.resumeWorkspace": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, {}) },
  "ws.overview.live": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "ws.connect.lastEvent": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "ws.connect.cliLastEvents": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "wsConfig.get": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "wsConfig.put": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { document: { settings: { nudge_level: "gentle" } } }) },
  "wsConfig.explainRule": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w, { toolName: "http_request" }) },
  "wsPolicies.test": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w, { toolName: "Bash", args: { command: "rm -rf ~" } }) },
  "wsConfig.effectiveSettings": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "wsConfig.sessions.timeline": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w, { sessionId: w.liveSessionId }) },
  "wsConfig.sessions.resume": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { sessionId: w.pausedSessions[1], guidance: "try again" }) },
  "wsConfig.sessions.pause": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { sessionId: w.liveSessionId, reason: "probe" }) },
  "wsConfig.sessions.message": { access: { kind: "workspace", role: "member" }, input: (w) => ws(w, { sessionId: w.liveSessionId, text: "probe message" }) },
  "invitations.list": { access: { kind: "org", role: "admin" }, input: (w) => org(w) },
  "invitations.create": { access: { kind: "org", role: "admin" }, input: (w) => org(w, { role: "viewer", expiresInDays: 3 }) },
  "invitations.revoke": { access: { kind: "org", role: "admin" }, input: (w) => org(w, { invitationId: w.invitationId }) },
  "invitations.accept": { access: { kind: "user" }, input: (w) => ({ token: w.foreignInviteToken }) },
  "orgConfig.get": { access: { kind: "org", role: "viewer" }, input: (w) => org(w) },
  "orgConfig.put": { access: { kind: "org", role: "admin" }, input: (w) => org(w, { document: { settings: { nudge_level: "gentle" } } }) },
  "orgConfig.explainRule": { access: { kind: "org", role: "viewer" }, input: (w) => org(w, { toolName: "http_request" }) },
  "orgPolicies.test": { access: { kind: "org", role: "viewer" }, input: (w) => org(w, { toolName: "Bash", args: { command: "rm -rf ~" } }) },
  "orgConfig.effectiveSettings": { access: { kind: "org", role: "viewer" }, input: (w) => org(w) },
  "orgConfig.globalPatterns.list": { access: { kind: "org", role: "viewer" }, input: (w) => org(w, { includeCleared: true }) },
  "orgConfig.globalPatterns.clear": { access: { kind: "org", role: "admin" }, input: (w) => org(w, { toolName: "http_request" }) },
  "notifications.list": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w) },
  "notifications.create": {
    access: { kind: "workspace", role: "admin" },
    input: (w) => ws(w, { ...channelFields, type: "webhook", url: "https://hooks.example.invalid/probe" }),
  },
  "notifications.update": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { channelId: w.channels.main, ...channelFields }) },
  "notifications.setEnabled": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { channelId: w.channels.main, enabled: false }) },
  "notifications.rotateSecret": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { channelId: w.channels.main }) },
  "notifications.delete": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { channelId: w.channels.victim }) },
  "notifications.sendTest": { access: { kind: "workspace", role: "admin" }, input: (w) => ws(w, { channelId: w.channels.main }) },
  "notifications.deliveries": { access: { kind: "workspace", role: "viewer" }, input: (w) => ws(w, { channelId: w.channels.main }) },
};

// --- Cases ---------------------------------------------------------------------------------------

interface Caller {
  key?: string;
  cookie?: string;
}
interface Case {
  name: string;
  caller: Caller;
  /** The SPEC status, or `own`: allowed on the caller's own workspace, nothing of the target touched. */
  expect: 401 | 403 | 404 | "own";
}

function casesFor(access: Access, w: World): Case[] {
  const cases: Case[] = [{ name: "no auth", caller: {}, expect: 401 }];
  const foreignKeys = [
    { name: "key of another workspace (same org)", key: w.org1.b.adminKey },
    { name: "key of another organization's workspace", key: w.org2.a.adminKey },
  ];
  if (access.kind === "key") {
    for (const f of foreignKeys) cases.push({ name: f.name, caller: { key: f.key }, expect: access.foreign });
    cases.push({ name: "revoked key of the workspace", caller: { key: w.revokedKey }, expect: 401 });
    if (access.scope === "admin") cases.push({ name: "agent-scope key on an admin procedure", caller: { key: w.target.agentKey }, expect: 403 });
    cases.push({ name: "owner's session cookie on the agent API", caller: { cookie: w.org1.users.owner.cookie }, expect: 401 });
    return cases;
  }
  // Dashboard procedures: an API key never signs a user in.
  for (const f of foreignKeys) cases.push({ name: `${f.name} on a dashboard procedure`, caller: { key: f.key }, expect: 401 });
  cases.push({ name: "the workspace's own admin key on a dashboard procedure", caller: { key: w.target.adminKey }, expect: 401 });
  if (access.kind === "user") return cases;
  for (const role of ROLE_ORDER) cases.push({ name: `another organization's ${role}`, caller: { cookie: w.org2.users[role].cookie }, expect: 404 });
  for (const role of ROLE_ORDER.slice(0, ROLE_ORDER.indexOf(access.role)))
    cases.push({ name: `${role} (below ${access.role})`, caller: { cookie: w.org1.users[role].cookie }, expect: 403 });
  return cases;
}

/** The principal that must succeed: the lowest allowed role, or the target's key of the needed scope. */
function allowedCaller(access: Access, w: World): Caller {
  if (access.kind === "key") return { key: access.scope === "admin" ? w.target.adminKey : w.target.agentKey };
  if (access.kind === "user") return { cookie: w.org1.users.viewer.cookie };
  return { cookie: w.org1.users[access.role].cookie };
}

// --- Row counts -----------------------------------------------------------------------------------

const rowsOf = (res: unknown): Record<string, unknown>[] => (Array.isArray(res) ? res : (res as { rows: Record<string, unknown>[] }).rows);

interface TableInfo {
  name: string;
  /** The column that scopes a row to the target: workspace_id, else organization_id, else none. */
  scope: "workspace_id" | "organization_id" | null;
}

async function listTables(app: TestApp): Promise<TableInfo[]> {
  const res = await app.db.execute(sql`
    select c.relname as name,
      bool_or(a.attname = 'workspace_id') as has_ws,
      bool_or(a.attname = 'organization_id') as has_org
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
    group by c.relname order by c.relname`);
  return rowsOf(res).map((r) => ({ name: String(r.name), scope: r.has_ws ? "workspace_id" : r.has_org ? "organization_id" : null }));
}

/** `table → rows`: every row, or (scoped) only the rows of the target workspace/organization. */
async function rowCounts(app: TestApp, tables: TableInfo[], scoped?: { workspaceId: string; organizationId: string }): Promise<Record<string, number>> {
  const parts = tables
    .filter((t) => !scoped || t.scope)
    .map((t) => {
      const where = !scoped ? sql`` : t.scope === "workspace_id" ? sql` where workspace_id = ${scoped.workspaceId}` : sql` where organization_id = ${scoped.organizationId}`;
      return sql`select ${t.name} as name, count(*)::int as n from ${sql.identifier(t.name)}${where}`;
    });
  const res = await app.db.execute(sql.join(parts, sql` union all `));
  return Object.fromEntries(rowsOf(res).map((r) => [String(r.name), Number(r.n)]));
}

function countDiff(before: Record<string, number>, after: Record<string, number>): string[] {
  return Object.keys(before).filter((t) => before[t] !== after[t]).map((t) => `${t}: ${before[t]} → ${after[t]}`);
}

// --- The matrix -----------------------------------------------------------------------------------

const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { type: "query" | "mutation" | "subscription"; meta?: ProcedureMeta } }> }).procedures;

describe("the procedure table", () => {
  it("classifies every procedure of the app router and nothing else", () => {
    const routed = Object.keys(procedures).sort();
    const unclassified = routed.filter((p) => !(p in PROCEDURES));
    const stale = Object.keys(PROCEDURES).filter((p) => !(p in procedures));
    expect(unclassified, "procedures without a classification and sample input in PROCEDURES").toEqual([]);
    expect(stale, "PROCEDURES entries that are no longer routed").toEqual([]);
  });

  it("classifies each procedure with the access its procedure kind declares (init.ts)", () => {
    const routed = Object.keys(PROCEDURES).filter((path) => path in procedures);
    const classified = Object.fromEntries(
      routed.map((path) => {
        // `foreign` is this test's expectation for another workspace's key, not part of the access.
        const { foreign: _foreign, ...access } = PROCEDURES[path].access as Access & { foreign?: unknown };
        return [path, access];
      }),
    );
    const declared = Object.fromEntries(routed.map((path) => [path, procedures[path]._def.meta?.access]));
    expect(classified, "PROCEDURES access against each procedure's meta.access").toEqual(declared);
  });
});

describe.each(DATABASE_KINDS)("isolation matrix on %s", (kind) => {
  let world: World;
  let tables: TableInfo[];

  const app = useTestApp(kind);
  beforeAll(async () => {
    world = await buildWorld(app);
    tables = await listTables(app);
  });

  const call = (path: string, input: unknown, caller: Caller) =>
    procedures[path]._def.type === "query" ? app.query(path, input, caller) : app.mutation(path, input, caller);

  it("every procedure × every unauthorised caller: the SPEC status, nothing written, nothing of the target read", async () => {
    const violations: string[] = [];
    let cases = 0;
    const scope = { workspaceId: world.target.id, organizationId: world.org1.id };
    for (const [path, spec] of Object.entries(PROCEDURES)) {
      if (!(path in procedures)) continue;
      for (const c of casesFor(spec.access, world)) {
        cases++;
        const input = spec.input(world);
        const echoed = JSON.stringify(input ?? null);
        const before = await rowCounts(app, tables, c.expect === "own" ? scope : undefined);
        const res = await call(path, input, c.caller);
        const after = await rowCounts(app, tables, c.expect === "own" ? scope : undefined);
        const where = `${path} [${c.name}]`;
        const body = JSON.stringify(res.body);
        if (c.expect === "own" ? res.status !== 200 : res.status !== c.expect) violations.push(`${where}: status ${res.status}, expected ${c.expect === "own" ? 200 : c.expect}: ${body.slice(0, 200)}`);
        const written = countDiff(before, after);
        if (written.length) violations.push(`${where}: wrote ${c.expect === "own" ? "into the target " : ""}${written.join(", ")}`);
        const leaked = world.markers.filter((m) => body.includes(m) && !echoed.includes(m));
        if (leaked.length) violations.push(`${where}: body holds the target's ${leaked.join(", ")}`);
      }
    }
    console.log(`[isolation-matrix] ${kind}: ${Object.keys(PROCEDURES).length} procedures × unauthorised callers = ${cases} cases, ${violations.length} violations`);
    expect(violations).toEqual([]);
  });

  it("positive control: the lowest allowed caller gets 200 for every sample input", async () => {
    const failures: string[] = [];
    for (const [path, spec] of Object.entries(PROCEDURES)) {
      if (!(path in procedures)) continue;
      const res = await call(path, spec.input(world), allowedCaller(spec.access, world));
      if (res.status !== 200) failures.push(`${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    // The allowed calls did act: the dashboard resume and the revoke really happened.
    const [paused] = await app.db.select().from(agentSession).where(and(eq(agentSession.workspaceId, world.target.id), eq(agentSession.sessionId, world.pausedSessions[1])));
    expect(paused.paused).toBe(false);
    const members = await app.db.select().from(member).where(eq(member.organizationId, world.org1.id));
    expect(members.some((m) => m.userId === world.leaverUserId)).toBe(false);
  });
});
