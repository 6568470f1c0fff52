/**
 * The organization's audit log (server/dashboard/org-audit.ts, app/org/audit): entries written by
 * the real invitation, member and role mutations (through the tRPC handler) are listed newest first,
 * page by page on (created_at, id); another organization's entries never appear; workspace entries
 * only with scope "all", named by their workspace; any member, a viewer too, may read it, and a
 * person outside the organization may not.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { SYSTEM_ACTOR, writeAudit } from "@/server/services/audit";
import { createInvitation } from "@/server/services/invitations";
import { createOrganization, createWorkspace } from "@/server/services/tenancy";
import { listOrgAudit, readOrgAudit, type OrgAuditRow } from "@/server/dashboard/org-audit";

describe.each(DATABASE_KINDS)("organization audit log on %s", (kind) => {
  const app = useTestApp(kind);
  let orgId: string;
  let otherOrgId: string;
  let owner: { userId: string; cookie: string };
  let viewer: { userId: string; cookie: string; email: string };
  let outsider: { userId: string; cookie: string };
  let slug: string;

  const ok = async (res: Promise<{ status: number; body: { result?: { data: unknown }; error?: unknown } }>) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.result!.data as Record<string, unknown>;
  };

  beforeAll(async () => {
    owner = await app.signUp(`owner-${uid()}@example.com`);
    orgId = (await createOrganization(app.db, { name: "Acme", ownerUserId: owner.userId, actor: SYSTEM_ACTOR })).id;
    slug = `ws-${uid()}`.toLowerCase();
    const ws = await createWorkspace(app.db, { organizationId: orgId, slug, actor: SYSTEM_ACTOR });

    // A viewer joins by invitation (invitations.create, then accept while signed in).
    const email = `viewer-${uid()}@example.com`;
    const signed = await app.signUp(email);
    viewer = { ...signed, email };
    const inv = await ok(app.mutation("invitations.create", { organizationId: orgId, role: "viewer" }, { cookie: owner.cookie }));
    await ok(app.mutation("invitations.accept", { token: inv.token }, { cookie: viewer.cookie }));
    // Role changes by the owner: viewer → member → viewer.
    await ok(app.mutation("organization.setMemberRole", { organizationId: orgId, userId: viewer.userId, role: "member" }, { cookie: owner.cookie }));
    await ok(app.mutation("organization.setMemberRole", { organizationId: orgId, userId: viewer.userId, role: "viewer" }, { cookie: owner.cookie }));
    // An invitation revoked.
    const revoked = await ok(app.mutation("invitations.create", { organizationId: orgId, role: "admin" }, { cookie: owner.cookie }));
    await ok(app.mutation("invitations.revoke", { organizationId: orgId, invitationId: revoked.id }, { cookie: owner.cookie }));
    // An entry of the workspace (an API key's action there).
    await writeAudit(app.db, { organizationId: orgId, workspaceId: ws.id, actor: { type: "api_key", id: "k1", label: "vgl_abcd" }, action: "failure_key.reset", target: "all" });

    // Another organization, with entries of its own.
    outsider = await app.signUp(`outsider-${uid()}@example.com`);
    otherOrgId = (await createOrganization(app.db, { name: "Other", ownerUserId: outsider.userId, actor: SYSTEM_ACTOR })).id;
    for (let i = 0; i < 3; i++) {
      await createInvitation(app.db, { organizationId: otherOrgId, role: "member", inviterRole: "owner", actor: { type: "user", id: outsider.userId, label: "outsider@other.test" } });
    }
  });

  it("lists the organization's invitation, member and role entries, newest first, and nothing of another organization", async () => {
    const list = (await readOrgAudit(app.db, owner.userId, orgId))!;
    expect(list).not.toBeNull();
    const actions = list.rows.map((r) => r.action);
    expect(actions).toEqual(["invitation.revoke", "invitation.create", "member.role", "member.role", "invitation.accept", "invitation.create", "organization.create"]);
    expect(list.total).toBe(7);
    const accept = list.rows.find((r) => r.action === "invitation.accept")!;
    expect(accept).toMatchObject({ actorType: "user", actorLabel: viewer.email, target: viewer.email, after: { role: "viewer" } });
    const roles = list.rows.filter((r) => r.action === "member.role");
    expect(roles.map((r) => [r.before, r.after])).toEqual([
      [{ role: "member" }, { role: "viewer" }],
      [{ role: "viewer" }, { role: "member" }],
    ]);
    // Newest first on (created_at, id).
    for (let i = 1; i < list.rows.length; i++) {
      const [a, b] = [list.rows[i - 1], list.rows[i]];
      expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)).toBe(true);
    }
    // Nothing of the other organization, nor the workspace's entry.
    expect(list.rows.some((r) => r.actorLabel === "outsider@other.test")).toBe(false);
    expect(list.rows.some((r) => r.workspaceSlug !== null)).toBe(false);
    expect(list.actions).not.toContain("failure_key.reset");

    const other = await listOrgAudit(app.db, otherOrgId);
    expect(other.rows.map((r) => r.action)).toEqual(["invitation.create", "invitation.create", "invitation.create", "organization.create"]);
  });

  it("adds the workspaces' entries, named, with scope all", async () => {
    const all = await listOrgAudit(app.db, orgId, { scope: "all" });
    expect(all.total).toBe(9); // 7 + workspace.create + the reset
    const reset = all.rows.find((r) => r.action === "failure_key.reset")!;
    expect(reset).toMatchObject({ workspaceSlug: slug, actorType: "api_key", target: "all" });
    expect(all.rows.find((r) => r.action === "workspace.create")?.workspaceSlug).toBe(slug);
    expect(all.rows.find((r) => r.action === "member.role")?.workspaceSlug).toBeNull();
  });

  it("filters by action prefix and actor type", async () => {
    const inv = await listOrgAudit(app.db, orgId, { action: "invitation." });
    expect(inv.rows.map((r) => r.action)).toEqual(["invitation.revoke", "invitation.create", "invitation.accept", "invitation.create"]);
    expect((await listOrgAudit(app.db, orgId, { action: "member.role" })).total).toBe(2);
    const system = await listOrgAudit(app.db, orgId, { actorType: "system" });
    expect(system.rows.map((r) => r.action)).toEqual(["organization.create"]);
    expect((await listOrgAudit(app.db, orgId, { actorType: "api_key", scope: "all" })).rows.map((r) => r.action)).toEqual(["failure_key.reset"]);
    // LIKE's wildcards are literal in a prefix.
    expect((await listOrgAudit(app.db, orgId, { action: "%" })).total).toBe(0);
    expect((await listOrgAudit(app.db, orgId, { action: "invitation_" })).total).toBe(0);
    // An unknown actor type filters nothing out (as the workspace page).
    expect((await listOrgAudit(app.db, orgId, { actorType: "robot" })).total).toBe(7);
  });

  it("pages older and newer by cursor, every entry once", async () => {
    const full = (await listOrgAudit(app.db, orgId)).rows.map((r) => r.id);
    const seen: number[] = [];
    let page = await listOrgAudit(app.db, orgId, { pageSize: 3 });
    expect(page.prevCursor).toBeNull();
    const pages: OrgAuditRow[][] = [page.rows];
    seen.push(...page.rows.map((r) => r.id));
    while (page.nextCursor) {
      page = await listOrgAudit(app.db, orgId, { pageSize: 3, after: page.nextCursor });
      pages.push(page.rows);
      seen.push(...page.rows.map((r) => r.id));
    }
    expect(seen).toEqual(full);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    // Back from the last page: the middle one again, then the first (no newer past it).
    const back = await listOrgAudit(app.db, orgId, { pageSize: 3, before: page.prevCursor! });
    expect(back.rows.map((r) => r.id)).toEqual(pages[1].map((r) => r.id));
    const first = await listOrgAudit(app.db, orgId, { pageSize: 3, before: back.prevCursor! });
    expect(first.rows.map((r) => r.id)).toEqual(pages[0].map((r) => r.id));
    expect(first.prevCursor).toBeNull();
    // A malformed cursor reads as none: the first page.
    expect((await listOrgAudit(app.db, orgId, { pageSize: 3, after: "not-a-cursor" })).rows.map((r) => r.id)).toEqual(pages[0].map((r) => r.id));
  });

  it("pages through entries of one millisecond, told apart by their microseconds", async () => {
    const org = (await createOrganization(app.db, { name: "Micro", ownerUserId: outsider.userId, actor: SYSTEM_ACTOR })).id;
    for (const us of ["000300", "000100", "000200"]) {
      await app.db.execute(
        sql`insert into audit_log (organization_id, actor_type, actor_label, action, target, created_at) values (${org}, 'system', 'system', 'member.role', ${us}, ${`2026-01-01T00:00:00.${us}Z`}::timestamptz)`,
      );
    }
    const targets: (string | null)[] = [];
    let page = await listOrgAudit(app.db, org, { pageSize: 1, action: "member." });
    targets.push(...page.rows.map((r) => r.target));
    while (page.nextCursor) {
      page = await listOrgAudit(app.db, org, { pageSize: 1, action: "member.", after: page.nextCursor });
      targets.push(...page.rows.map((r) => r.target));
    }
    expect(targets).toEqual(["000300", "000200", "000100"]);
    const newer = await listOrgAudit(app.db, org, { pageSize: 1, action: "member.", before: page.prevCursor! });
    expect(newer.rows.map((r) => r.target)).toEqual(["000200"]);
  });

  it("is readable by any member, a viewer too, and by nobody outside the organization", async () => {
    const asViewer = await readOrgAudit(app.db, viewer.userId, orgId);
    expect(asViewer?.total).toBe(7);
    expect(await readOrgAudit(app.db, outsider.userId, orgId)).toBeNull();
    expect(await readOrgAudit(app.db, viewer.userId, otherOrgId)).toBeNull();
    // Removed from the organization: no longer readable.
    await ok(app.mutation("organization.removeMember", { organizationId: orgId, userId: viewer.userId }, { cookie: owner.cookie }));
    expect(await readOrgAudit(app.db, viewer.userId, orgId)).toBeNull();
    const after = (await listOrgAudit(app.db, orgId)).rows[0];
    expect(after).toMatchObject({ action: "member.remove" });
  });
});
