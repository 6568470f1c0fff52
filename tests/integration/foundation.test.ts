import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { apiKey, auditLog, member, organization, user, workspace } from "@/db/schema";
import { applyHeadlessInit } from "@/server/headless-init";
import { hashApiKey } from "@/server/services/api-keys";

describe.each(DATABASE_KINDS)("foundation on %s", (kind) => {
  const app = useTestApp(kind);

  describe("API key authentication", () => {
    it("answers 401 without a key, with an unknown key and with a revoked key", async () => {
      const { key, workspaceId } = await app.seedWorkspace();
      expect((await app.query("account.whoami", undefined)).status).toBe(401);
      const unknown = await app.query("account.whoami", undefined, { key: "vgl_" + "x".repeat(43) });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error?.data.code).toBe("UNAUTHORIZED");

      const ok = await app.query("account.whoami", undefined, { key });
      expect(ok.status).toBe(200);
      expect(ok.body.result?.data.scope).toBe("admin");

      await app.db.update(apiKey).set({ revokedAt: new Date() }).where(eq(apiKey.workspaceId, workspaceId));
      expect((await app.query("account.whoami", undefined, { key })).status).toBe(401);
    });

    it("stores only the SHA-256 hash and tracks lastUsedAt", async () => {
      const { key, workspaceId } = await app.seedWorkspace();
      const [row] = await app.db.select().from(apiKey).where(eq(apiKey.workspaceId, workspaceId));
      expect(row.hash).toBe(hashApiKey(key));
      expect(JSON.stringify(row)).not.toContain(key);
      expect(row.prefix).toBe(key.slice(0, 12));
      expect(row.lastUsedAt).toBeNull();
      await app.query("account.whoami", undefined, { key });
      const [after] = await app.db.select().from(apiKey).where(eq(apiKey.workspaceId, workspaceId));
      expect(after.lastUsedAt).not.toBeNull();
    });

    it("answers 429 with Retry-After over the rate limit", async () => {
      const { key } = await app.seedWorkspace();
      process.env.VIGIL_RATE_LIMIT_PER_MINUTE = "3";
      try {
        const statuses: number[] = [];
        let last;
        for (let i = 0; i < 5; i++) {
          last = await app.query("account.whoami", undefined, { key });
          statuses.push(last.status);
        }
        expect(statuses).toEqual([200, 200, 200, 429, 429]);
        expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
      } finally {
        delete process.env.VIGIL_RATE_LIMIT_PER_MINUTE;
      }
    });

    it("answers 413 for a body over 1 MiB", async () => {
      const { key } = await app.seedWorkspace();
      const res = await app.request("POST", "account.whoami", { key, rawBody: JSON.stringify({ pad: "x".repeat(1024 * 1024) }) });
      expect(res.status).toBe(413);
      expect(res.body.error?.data.code).toBe("PAYLOAD_TOO_LARGE");
    });
  });

  describe("dashboard procedures", () => {
    it("signs up, creates an organization and workspace, manages API keys with audit entries", async () => {
      const { cookie } = await app.signUp("ada@example.com");
      const created = await app.mutation("account.createOrganization", { name: "Ada Labs", workspaceSlug: "ada-prod" }, { cookie });
      expect(created.status).toBe(200);
      const me = await app.query("account.me", undefined, { cookie });
      expect(me.body.result?.data.organizations).toMatchObject([{ name: "Ada Labs", role: "owner", workspaces: [{ slug: "ada-prod" }] }]);

      const k = await app.mutation("apiKeys.create", { workspaceSlug: "ada-prod", name: "fleet", scope: "agent" }, { cookie });
      expect(k.status).toBe(200);
      const value: string = k.body.result!.data.value;
      expect(value).toMatch(/^vgl_[A-Za-z0-9_-]{43}$/);
      const who = await app.query("account.whoami", undefined, { key: value });
      expect(who.body.result?.data).toMatchObject({ workspace: "ada-prod", scope: "agent" });

      const list = await app.query("apiKeys.list", { workspaceSlug: "ada-prod" }, { cookie });
      expect(list.body.result?.data).toHaveLength(1);
      expect(JSON.stringify(list.body)).not.toContain(value);

      const revoke = await app.mutation("apiKeys.revoke", { workspaceSlug: "ada-prod", keyId: k.body.result!.data.id }, { cookie });
      expect(revoke.status).toBe(200);
      expect((await app.query("account.whoami", undefined, { key: value })).status).toBe(401);

      const orgId = created.body.result!.data.organizationId;
      const audit = await app.db.select().from(auditLog).where(eq(auditLog.organizationId, orgId));
      expect(audit.map((a) => a.action)).toEqual(
        expect.arrayContaining(["organization.create", "workspace.create", "api_key.create", "api_key.revoke"]),
      );
      const revokeEntry = audit.find((a) => a.action === "api_key.revoke")!;
      expect(revokeEntry.actorLabel).toBe("ada@example.com");
    });

    it("rejects bad input with 400 naming the field and writes nothing", async () => {
      const { cookie } = await app.signUp("bob@example.com");
      const before = await app.db.select().from(organization);
      const res = await app.mutation("account.createOrganization", { name: "Bob Co", workspaceSlug: "Bad Slug!" }, { cookie });
      expect(res.status).toBe(400);
      expect(res.body.error?.data.issues?.[0].path).toEqual(["slug"]);
      expect(await app.db.select().from(organization)).toHaveLength(before.length);

      const missing = await app.mutation("account.createOrganization", { workspaceSlug: "ok-slug" }, { cookie });
      expect(missing.status).toBe(400);
      expect(missing.body.error?.message).toContain("name");
    });

    it("enforces roles: viewer cannot create keys (403), strangers get 404, no session is 401", async () => {
      const owner = await app.signUp("owner2@example.com");
      const ws = await app.seedWorkspace({ ownerUserId: owner.userId });
      const viewer = await app.signUp("viewer@example.com");
      await app.addMember(ws.organizationId, viewer.userId, "viewer");
      const stranger = await app.signUp("stranger@example.com");

      const asViewer = await app.mutation("apiKeys.create", { workspaceSlug: ws.slug, name: "x", scope: "agent" }, { cookie: viewer.cookie });
      expect(asViewer.status).toBe(403);
      const asStranger = await app.query("apiKeys.list", { workspaceSlug: ws.slug }, { cookie: stranger.cookie });
      expect(asStranger.status).toBe(404);
      expect((await app.query("apiKeys.list", { workspaceSlug: ws.slug })).status).toBe(401);
      const keys = await app.db.select().from(apiKey).where(eq(apiKey.workspaceId, ws.workspaceId));
      expect(keys).toHaveLength(1);

      // The stranger joins by accepting the owner's invitation; then they may read.
      const invited = await app.mutation("invitations.create", { organizationId: ws.organizationId, role: "member" }, { cookie: owner.cookie });
      expect(invited.status).toBe(200);
      const accepted = await app.mutation("invitations.accept", { token: invited.body.result!.data.token }, { cookie: stranger.cookie });
      expect(accepted.status).toBe(200);
      const memberList = await app.query("apiKeys.list", { workspaceSlug: ws.slug }, { cookie: stranger.cookie });
      expect(memberList.status).toBe(403); // members are below admin
      const lastOwner = await app.mutation("organization.setMemberRole", { organizationId: ws.organizationId, userId: owner.userId, role: "admin" }, { cookie: owner.cookie });
      expect(lastOwner.status).toBe(400);
    });
  });

  describe("headless initialization", () => {
    it("creates organization, workspace, admin key and owner once, idempotently", async () => {
      const env = {
        VIGIL_INIT_ORG: "Headless Inc",
        VIGIL_INIT_WORKSPACE: "headless",
        VIGIL_INIT_API_KEY: "vgl_headless_test_key_0123456789",
        VIGIL_INIT_USER_EMAIL: "ops@example.com",
        VIGIL_INIT_USER_PASSWORD: "s3cret-password",
      };
      const first = await applyHeadlessInit(app.db, app.runtime.auth, env);
      expect(first).toEqual(["organization Headless Inc", "user ops@example.com", "workspace headless", "api key"]);
      const second = await applyHeadlessInit(app.db, app.runtime.auth, env);
      expect(second).toEqual([]);

      const orgs = await app.db.select().from(organization).where(eq(organization.name, "Headless Inc"));
      expect(orgs).toHaveLength(1);
      const [ws] = await app.db.select().from(workspace).where(eq(workspace.slug, "headless"));
      expect(ws.organizationId).toBe(orgs[0].id);
      const [u] = await app.db.select().from(user).where(eq(user.email, "ops@example.com"));
      const [m] = await app.db.select().from(member).where(eq(member.userId, u.id));
      expect(m.role).toBe("owner");

      const who = await app.query("account.whoami", undefined, { key: env.VIGIL_INIT_API_KEY });
      expect(who.body.result?.data).toMatchObject({ workspace: "headless", scope: "admin" });

      const signIn = await app.runtime.auth.api.signInEmail({ body: { email: "ops@example.com", password: "s3cret-password" } });
      expect(signIn.user.email).toBe("ops@example.com");
      await expect(
        app.runtime.auth.api.signInEmail({ body: { email: "ops@example.com", password: "wrong-password" } }),
      ).rejects.toThrow();
    });
  });
});
