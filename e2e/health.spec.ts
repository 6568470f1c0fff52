import { expect, test } from "@playwright/test";

const INIT_KEY = "vgl_e2e_admin_key_0123456789abcdef";

test("health reports the embedded database once migrated", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.status()).toBe(200);
  expect(await res.json()).toEqual({ status: "ok", db: "pglite" });
});

test("the headless-init API key authenticates agent calls; a wrong key is 401", async ({ request }) => {
  const ok = await request.get("/api/trpc/account.whoami", { headers: { authorization: `Bearer ${INIT_KEY}` } });
  expect(ok.status()).toBe(200);
  expect((await ok.json()).result.data).toMatchObject({ workspace: "e2e", scope: "admin" });
  const bad = await request.get("/api/trpc/account.whoami", { headers: { authorization: "Bearer vgl_nope_nope_nope_nope_nope" } });
  expect(bad.status()).toBe(401);
});

test("sign-up from another site is refused (CSRF); from the app's own origin it works", async ({ request, baseURL }) => {
  const body = (email: string) => ({ email, password: "long-enough-pw", name: "x" });
  const cross = await request.post("/api/auth/sign-up/email", { data: body(`cross-${Date.now()}@example.com`), headers: { origin: "https://evil.example" } });
  expect(cross.status()).toBe(403);
  const same = await request.post("/api/auth/sign-up/email", { data: body(`same-${Date.now()}@example.com`), headers: { origin: baseURL! } });
  expect(same.status()).toBe(200);
});
