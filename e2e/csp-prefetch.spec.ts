import { expect, test } from "@playwright/test";
import { signIn } from "./support";

/** Every page answer of the built app carries the nonce CSP, prefetches included; dashboard mutations from another site are refused. */
const PREFETCHES: [string, Record<string, string>][] = [
  ["a document", {}],
  ["an RSC prefetch", { rsc: "1", "next-router-prefetch": "1" }],
  ["a browser prefetch", { purpose: "prefetch" }],
  ["a Sec-Purpose prefetch", { "sec-purpose": "prefetch" }],
];

test("page answers, prefetches included, carry the nonce CSP", async ({ page }) => {
  await signIn(page);
  // The last one is the not-found page: an HTML answer too.
  for (const [path, status] of [["/w/e2e/overview", 200], ["/w/e2e/settings", 200], ["/sign-in", 200], ["/w/no-such-workspace-x/overview", 404]] as const) {
    for (const [what, headers] of PREFETCHES) {
      const res = await page.request.get(path, { headers }); // an RSC request without its cache-busting _rsc parameter is redirected to it first
      // An RSC payload of the not-found page may answer 200 with the not-found tree inside.
      expect([status, 200], `${what} ${path}`).toContain(res.status());
      const csp = res.headers()["content-security-policy"];
      expect(csp, `${what} ${path}`).toMatch(/script-src 'self' 'nonce-[^']+' 'strict-dynamic'/);
      expect(csp, `${what} ${path}`).toContain("frame-ancestors 'none'");
    }
  }
});

test("a dashboard mutation from another site's page is refused (403); from the app's own page it is served", async ({ page, baseURL }) => {
  await signIn(page);
  const me = await page.request.get("/api/trpc/account.me");
  const organizationId = (await me.json()).result.data.organizations[0].id as string;
  const slug = `csrf-${Date.now().toString(36)}`;
  const post = (origin: string, site: string) =>
    page.request.post("/api/trpc/organization.createWorkspace", { data: { organizationId, slug }, headers: { "content-type": "application/json", origin, "sec-fetch-site": site } });
  const cross = await post("https://evil.example", "cross-site");
  expect(cross.status()).toBe(403);
  const same = await post(new URL(baseURL!).origin, "same-origin");
  expect(same.status()).toBe(200);
});
