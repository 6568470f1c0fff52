/**
 * Dashboard (session-cookie) calls: a mutation another site's page sends is refused (403) and
 * changes nothing, the dashboard's own pages and non-browser clients are served, agent calls with a
 * Bearer key are not affected; a batch carries at most MAX_BATCH_CALLS calls (400 naming the
 * limit); each user's calls are rate-limited (429 + Retry-After), each user on their own.
 */
import { afterEach, describe, expect, it } from "vitest";
import { useTestApp } from "../support/use-test-app";
import { result, uid } from "../support/agent";
import { handleTrpcRequest, MAX_BATCH_CALLS } from "@/server/agent-api/trpc";

describe("dashboard request guard", () => {
  const app = useTestApp("pglite");
  afterEach(() => {
    delete process.env.VIGIL_DASHBOARD_RATE_LIMIT_PER_MINUTE;
    delete process.env.VIGIL_TRUSTED_ORIGINS;
  });

  const newOrg = () => ({ name: "Acme", workspaceSlug: `ws-${uid().toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 12)}` });
  const organizationCount = async (cookie: string) => (await app.query("account.me", undefined, { cookie })).body.result!.data.organizations.length;

  /** The same mutation as one batched call through the fetch adapter (the other entry). */
  async function batchedMutation(path: string, input: unknown, headers: Record<string, string>) {
    const res = await handleTrpcRequest(
      new Request(`http://localhost/api/trpc/${path}?batch=1`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ 0: input }) }),
      app.runtime,
    );
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  }

  describe("origin of cookie-authenticated mutations", () => {
    const crossOrigin: [string, Record<string, string>][] = [
      ["a foreign Origin", { origin: "https://evil.example" }],
      ["a foreign Origin marked cross-site", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }],
      ["a sibling subdomain (same-site)", { origin: "http://evil.localhost", "sec-fetch-site": "same-site" }],
      ["an opaque Origin (null)", { origin: "null" }],
      ["the right host over another scheme", { origin: "https://localhost" }],
      ["cross-site without Origin", { "sec-fetch-site": "cross-site" }],
    ];
    it.each(crossOrigin)("%s: 403 and nothing changes (direct and batched entry)", async (_, headers) => {
      const owner = await app.signUp(`o-${uid()}@example.com`);
      const direct = await app.request("POST", "account.createOrganization", { input: newOrg(), cookie: owner.cookie, headers });
      expect(direct.status).toBe(403);
      expect(direct.body.error!.message).toMatch(/^Cross-origin request refused/);
      const batched = await batchedMutation("account.createOrganization", newOrg(), { cookie: owner.cookie, ...headers });
      expect(batched.status).toBe(403);
      expect(batched.body[0].error.data.code).toBe("FORBIDDEN");
      expect(await organizationCount(owner.cookie)).toBe(0);
    });

    const sameOrigin: [string, Record<string, string>][] = [
      ["Sec-Fetch-Site same-origin", { origin: "http://localhost", "sec-fetch-site": "same-origin" }],
      ["the request's own origin", { origin: "http://localhost" }],
      ["the Host the browser used", { origin: "https://vigil.example.com:8443", host: "vigil.example.com:8443" }],
      ["no Origin and no Sec-Fetch-Site (not a browser)", {}],
    ];
    it.each(sameOrigin)("%s: served", async (_, headers) => {
      const owner = await app.signUp(`o-${uid()}@example.com`);
      const res = await app.request("POST", "account.createOrganization", { input: newOrg(), cookie: owner.cookie, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await organizationCount(owner.cookie)).toBe(1);
    });

    it("an origin named in VIGIL_TRUSTED_ORIGINS is served", async () => {
      process.env.VIGIL_TRUSTED_ORIGINS = "https://admin.example.org";
      const owner = await app.signUp(`o-${uid()}@example.com`);
      const res = await app.request("POST", "account.createOrganization", { input: newOrg(), cookie: owner.cookie, headers: { origin: "https://admin.example.org", "sec-fetch-site": "cross-site" } });
      expect(res.status).toBe(200);
    });

    it("queries are not refused for their origin (a cross-origin page cannot read them)", async () => {
      const owner = await app.signUp(`o-${uid()}@example.com`);
      const res = await app.request("GET", "account.me", { cookie: owner.cookie, headers: { origin: "https://evil.example" } });
      expect(res.status).toBe(200);
    });

    it("agent calls with a Bearer key are not affected by Origin", async () => {
      const ws = await app.seedWorkspace();
      const res = await app.request("POST", "ingest.events", {
        input: { events: [result(uid("s"), "read_file", { path: "/a" }, { success: true })] },
        key: ws.key,
        headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      });
      expect(res.status).toBe(200);
    });
  });

  describe("batch size", () => {
    const batchGet = (calls: number, cookie: string) =>
      handleTrpcRequest(
        new Request(`http://localhost/api/trpc/${Array(calls).fill("account.me").join(",")}?batch=1&input=${encodeURIComponent(JSON.stringify({}))}`, { headers: { cookie } }),
        app.runtime,
      );

    it(`a batch of ${MAX_BATCH_CALLS} calls is served`, async () => {
      const owner = await app.signUp(`b-${uid()}@example.com`);
      const res = await batchGet(MAX_BATCH_CALLS, owner.cookie);
      expect(res.status).toBe(200);
      expect((await res.json()) as unknown[]).toHaveLength(MAX_BATCH_CALLS);
    });

    it("a batch of more is a 400 naming the limit, before any call runs", async () => {
      const owner = await app.signUp(`b-${uid()}@example.com`);
      process.env.VIGIL_DASHBOARD_RATE_LIMIT_PER_MINUTE = "3";
      const res = await batchGet(230, owner.cookie);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string; data: { code: string } } };
      expect(body.error.data.code).toBe("BAD_REQUEST");
      expect(body.error.message).toBe(`A batch may carry at most ${MAX_BATCH_CALLS} calls; this one has 230`);
      // Nothing ran: the user's allowance is untouched.
      expect((await app.query("account.me", undefined, { cookie: owner.cookie })).status).toBe(200);
    });

    it("commas encoded in the path count too", async () => {
      const owner = await app.signUp(`b-${uid()}@example.com`);
      const res = await handleTrpcRequest(
        new Request(`http://localhost/api/trpc/${Array(MAX_BATCH_CALLS + 1).fill("account.me").join("%2C")}?batch=1`, { headers: { cookie: owner.cookie } }),
        app.runtime,
      );
      expect(res.status).toBe(400);
    });
  });

  describe("per-user rate limit", () => {
    it("over the limit a user's calls get 429 with Retry-After; another user is still served", async () => {
      const limit = 5;
      process.env.VIGIL_DASHBOARD_RATE_LIMIT_PER_MINUTE = String(limit);
      const busy = await app.signUp(`r-${uid()}@example.com`);
      const other = await app.signUp(`r-${uid()}@example.com`);
      for (let i = 0; i < limit; i++) expect((await app.query("account.me", undefined, { cookie: busy.cookie })).status).toBe(200);
      const limited = await app.query("account.me", undefined, { cookie: busy.cookie });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(limited.body.error!.data.code).toBe("TOO_MANY_REQUESTS");
      const mutation = await app.request("POST", "account.createOrganization", { input: newOrg(), cookie: busy.cookie });
      expect(mutation.status).toBe(429);
      expect(Number(mutation.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await app.query("account.me", undefined, { cookie: other.cookie })).status).toBe(200);
    });

    it("each call of a batch counts", async () => {
      process.env.VIGIL_DASHBOARD_RATE_LIMIT_PER_MINUTE = "4";
      const owner = await app.signUp(`r-${uid()}@example.com`);
      const res = await handleTrpcRequest(new Request(`http://localhost/api/trpc/${Array(6).fill("account.me").join(",")}?batch=1`, { headers: { cookie: owner.cookie } }), app.runtime);
      const answers = (await res.json()) as { error?: { data: { code: string } } }[];
      expect(answers.filter((a) => a.error?.data.code === "TOO_MANY_REQUESTS")).toHaveLength(2);
      expect(res.headers.get("retry-after")).not.toBeNull();
    });
  });
});
