/**
 * Invitations by link (issue 11 item 5): the real better-auth handler and tRPC handler on PGlite and
 * PostgreSQL. An owner invites with a role; the link admits its holder through closed sign-up once,
 * with that role; expired, revoked and used links are refused with a clear message; every step is
 * audit-logged; only the token's hash is stored. Nobody is added by email (issue 61 item 6): joining
 * takes an invitation its holder accepts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { auditLog, invitation, member } from "@/db/schema";
import { SYSTEM_ACTOR } from "@/server/services/audit";
import { createInvitation, hashInvitationToken, INVITATION_HEADER } from "@/server/services/invitations";
import { createOrganization, createWorkspace } from "@/server/services/tenancy";
import { SIGNUP_CLOSED_MESSAGE } from "@/server/signup-policy";
import { SIGNUP_FAILED_MESSAGE } from "@/server/auth";

describe.each(DATABASE_KINDS)("invitations on %s", (kind) => {
  let organizationId: string;
  let ownerCookie: string;
  const env = { rate: process.env.VIGIL_AUTH_RATE_LIMIT, signup: process.env.VIGIL_ALLOW_SIGNUP };

  const authPost = (path: string, body: object, headers: Record<string, string> = {}) =>
    app.runtime.auth.handler(
      new Request(`http://vigil.test/api/auth${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: "http://vigil.test", host: "vigil.test", ...headers },
        body: JSON.stringify(body),
      }),
    );
  const signUp = (email: string, token?: string) =>
    authPost("/sign-up/email", { email, password: "correct-horse-battery", name: email.split("@")[0] }, token ? { [INVITATION_HEADER]: token } : {});
  const cookieOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  const userCount = async () => {
    const r = (await app.db.execute(sql`select count(*)::int as n from "user"`)) as unknown as { rows?: { n: number }[] } & { n: number }[];
    return (r.rows ?? r)[0].n;
  };
  const roleOf = async (email: string) => {
    const r = (await app.db.execute(
      sql`select m.role from member m join "user" u on u.id = m.user_id where u.email = ${email} and m.organization_id = ${organizationId}`,
    )) as unknown as { rows?: { role: string }[] } & { role: string }[];
    return (r.rows ?? r)[0]?.role ?? null;
  };
  const invite = async (role: string, cookie = ownerCookie, expiresInDays?: number) =>
    app.mutation("invitations.create", { organizationId, role, ...(expiresInDays ? { expiresInDays } : {}) }, { cookie });
  const memberWithRole = async (role: "admin" | "member" | "viewer") => {
    const created = await invite(role);
    const email = `${role}-${uid()}@example.com`;
    const res = await signUp(email, created.body.result!.data.token);
    expect(res.status).toBe(200);
    return cookieOf(res);
  };

  beforeAll(async () => {
    process.env.VIGIL_AUTH_RATE_LIMIT = "off"; // many sign-ups from one address; throttling is tested in sign-in-abuse
    delete process.env.VIGIL_ALLOW_SIGNUP; // sign-up closed after the first user: what invitations get around
  });
  const app = useTestApp(kind);
  beforeAll(async () => {
    const first = await signUp(`owner-${uid()}@example.com`);
    expect(first.status).toBe(200);
    ownerCookie = cookieOf(first);
    const ownerId = ((await first.json()) as { user: { id: string } }).user.id;
    organizationId = (await createOrganization(app.db, { name: "Acme", ownerUserId: ownerId, actor: SYSTEM_ACTOR })).id;
    await createWorkspace(app.db, { organizationId, slug: `ws-${uid()}`.toLowerCase(), actor: SYSTEM_ACTOR });
  });
  afterAll(async () => {
    process.env.VIGIL_AUTH_RATE_LIMIT = env.rate;
    process.env.VIGIL_ALLOW_SIGNUP = env.signup;
  });

  it("admits the holder of a link through closed sign-up once, with the invitation's role, and audit-logs it", async () => {
    const created = await invite("viewer");
    expect(created.status).toBe(200);
    const { token, id, expiresAt } = created.body.result!.data as { token: string; id: string; expiresAt: string };
    // Default expiry: 7 days.
    expect(Math.abs(new Date(expiresAt).getTime() - Date.now() - 7 * 86_400_000)).toBeLessThan(60_000);
    // Only the hash is stored.
    const [row] = await app.db.select().from(invitation).where(eq(invitation.id, id));
    expect(row.tokenHash).toBe(hashInvitationToken(token));
    expect(JSON.stringify(row)).not.toContain(token);
    const listed = await app.query("invitations.list", { organizationId }, { cookie: ownerCookie });
    expect(listed.body.result!.data.map((i: { id: string }) => i.id)).toContain(id);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    // A stranger without the link is refused.
    const before = await userCount();
    const stranger = await signUp(`stranger-${uid()}@example.com`);
    expect(stranger.status).toBe(403);
    expect(((await stranger.json()) as { message: string }).message).toBe(SIGNUP_CLOSED_MESSAGE);

    // The invitee signs up with the link and is a viewer of the organization.
    const email = `invitee-${uid()}@example.com`;
    const joined = await signUp(email, token);
    expect(joined.status).toBe(200);
    expect(await userCount()).toBe(before + 1);
    expect(await roleOf(email)).toBe("viewer");
    const inviteeCookie = cookieOf(joined);
    const members = await app.query("organization.members", { organizationId }, { cookie: inviteeCookie });
    expect(members.status).toBe(200);
    expect(members.body.result!.data.find((m: { email: string }) => m.email === email).role).toBe("viewer");
    // A viewer cannot see or create invitations.
    expect((await app.query("invitations.list", { organizationId }, { cookie: inviteeCookie })).status).toBe(403);
    expect((await invite("viewer", inviteeCookie)).status).toBe(403);

    // The link is used up: no longer pending, and a second sign-up with it is refused.
    const after = await app.query("invitations.list", { organizationId }, { cookie: ownerCookie });
    expect(after.body.result!.data.map((i: { id: string }) => i.id)).not.toContain(id);
    const again = await signUp(`second-${uid()}@example.com`, token);
    expect(again.status).toBe(403);
    expect(((await again.json()) as { message: string }).message).toMatch(/already been used/);
    expect(await userCount()).toBe(before + 1);

    const actions = (await app.db.select({ action: auditLog.action, target: auditLog.target }).from(auditLog).where(eq(auditLog.organizationId, organizationId))).map(
      (a) => `${a.action} ${a.target}`,
    );
    expect(actions).toContain(`invitation.create invitation ${id.slice(0, 8)}`);
    expect(actions).toContain(`invitation.accept ${email}`);
  });

  it("refuses an expired link at sign-up and at accept", async () => {
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000);
    const [owner] = await app.db.select({ userId: member.userId }).from(member).where(and(eq(member.organizationId, organizationId), eq(member.role, "owner")));
    const old = await createInvitation(app.db, {
      organizationId,
      role: "member",
      inviterRole: "owner",
      actor: { type: "user", id: owner.userId, label: "owner" },
      now: eightDaysAgo,
    });
    const listed = await app.query("invitations.list", { organizationId }, { cookie: ownerCookie });
    expect(listed.body.result!.data.map((i: { id: string }) => i.id)).not.toContain(old.id);
    const before = await userCount();
    const res = await signUp(`late-${uid()}@example.com`, old.token);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toMatch(/expired/);
    expect(await userCount()).toBe(before);

    const viewerCookie = await memberWithRole("viewer");
    const accepted = await app.mutation("invitations.accept", { token: old.token }, { cookie: viewerCookie });
    expect(accepted.status).toBe(412);
    expect(accepted.body.error!.message).toMatch(/expired/);
  });

  it("refuses a revoked link; revoking twice is a conflict; only admins and owners revoke", async () => {
    const created = await invite("member");
    const { token, id } = created.body.result!.data;
    const viewerCookie = await memberWithRole("viewer");
    expect((await app.mutation("invitations.revoke", { organizationId, invitationId: id }, { cookie: viewerCookie })).status).toBe(403);
    const revoked = await app.mutation("invitations.revoke", { organizationId, invitationId: id }, { cookie: ownerCookie });
    expect(revoked.status).toBe(200);
    const res = await signUp(`revoked-${uid()}@example.com`, token);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toMatch(/revoked/);
    expect((await app.mutation("invitations.revoke", { organizationId, invitationId: id }, { cookie: ownerCookie })).status).toBe(409);
    const [audit] = await app.db.select().from(auditLog).where(and(eq(auditLog.organizationId, organizationId), eq(auditLog.action, "invitation.revoke")));
    expect(audit.target).toBe(`invitation ${id.slice(0, 8)}`);
  });

  it("lets a signed-in user accept a link with its role, once; admins cannot invite owners", async () => {
    const adminCookie = await memberWithRole("admin");
    expect((await invite("owner", adminCookie)).status).toBe(403);
    const forMember = await invite("member", adminCookie, 2);
    expect(forMember.status).toBe(200);
    expect(new Date(forMember.body.result!.data.expiresAt).getTime() - Date.now()).toBeLessThan(2 * 86_400_000 + 60_000);

    // Someone with an account in another organization accepts.
    process.env.VIGIL_ALLOW_SIGNUP = "true";
    const outsiderEmail = `outsider-${uid()}@example.com`;
    const outsider = await signUp(outsiderEmail);
    delete process.env.VIGIL_ALLOW_SIGNUP;
    expect(outsider.status).toBe(200);
    const outsiderCookie = cookieOf(outsider);
    expect((await app.query("organization.members", { organizationId }, { cookie: outsiderCookie })).status).toBe(404);
    const accepted = await app.mutation("invitations.accept", { token: forMember.body.result!.data.token }, { cookie: outsiderCookie });
    expect(accepted.status).toBe(200);
    expect(accepted.body.result!.data).toEqual({ organizationId, role: "member", workspaceSlug: expect.stringMatching(/^ws-/) });
    expect(await roleOf(outsiderEmail)).toBe("member");

    // Used: nobody else gets in with it. A member given another link leaves it for its owner.
    const viewerCookie = await memberWithRole("viewer");
    const reuse = await app.mutation("invitations.accept", { token: forMember.body.result!.data.token }, { cookie: viewerCookie });
    expect(reuse.status).toBe(412);
    const fresh = await invite("admin");
    const alreadyMember = await app.mutation("invitations.accept", { token: fresh.body.result!.data.token }, { cookie: viewerCookie });
    expect(alreadyMember.status).toBe(409);
    expect((await app.query("invitations.list", { organizationId }, { cookie: ownerCookie })).body.result!.data.map((i: { id: string }) => i.id)).toContain(
      fresh.body.result!.data.id,
    );
    // An unknown token is a 404; bad input names the field.
    expect((await app.mutation("invitations.accept", { token: "not-a-real-token" }, { cookie: viewerCookie })).status).toBe(404);
    const bad = await app.mutation("invitations.create", { organizationId, role: "king", expiresInDays: 90 }, { cookie: ownerCookie });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.data.issues!.map((i) => i.path.join(".")).sort()).toEqual(["expiresInDays", "role"]);
  });

  it("admits one person when two sign up with the same link at once", async () => {
    const { token } = (await invite("viewer")).body.result!.data;
    const before = await userCount();
    const results = await Promise.all([signUp(`race-a-${uid()}@example.com`, token), signUp(`race-b-${uid()}@example.com`, token)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    expect(await userCount()).toBe(before + 1);
  });

  it("answers an invited sign-up with an existing email generically and leaves the link pending", async () => {
    const { token, id } = (await invite("viewer")).body.result!.data;
    const existing = (await app.db.select({ email: sql<string>`email` }).from(sql`"user"`).limit(1))[0].email;
    const res = await signUp(existing, token);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toBe(SIGNUP_FAILED_MESSAGE);
    const listed = await app.query("invitations.list", { organizationId }, { cookie: ownerCookie });
    expect(listed.body.result!.data.map((i: { id: string }) => i.id)).toContain(id);
  });

  it("adds nobody by email: an owner can neither make an account a member without its consent nor learn whether an email has one", async () => {
    process.env.VIGIL_ALLOW_SIGNUP = "true";
    const outsider = `outsider-${uid()}@example.com`;
    const signedUp = await signUp(outsider).finally(() => delete process.env.VIGIL_ALLOW_SIGNUP);
    expect(signedUp.status).toBe(200);
    const tryAdd = (email: string) => app.mutation("organization.addMember", { organizationId, email, role: "owner" }, { cookie: ownerCookie });
    const existing = await tryAdd(outsider);
    const unknown = await tryAdd(`nobody-${uid()}@example.com`);
    expect(existing.status).toBe(unknown.status);
    expect(existing.body.error?.message).toBe(unknown.body.error?.message);
    expect(existing.status).toBe(404);
    expect(await roleOf(outsider)).toBeNull();
    // The way in is an invitation the person accepts.
    const { token } = (await invite("viewer")).body.result!.data;
    expect((await app.mutation("invitations.accept", { token }, { cookie: cookieOf(signedUp) })).status).toBe(200);
    expect(await roleOf(outsider)).toBe("viewer");
  });
});
