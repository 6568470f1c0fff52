import { spawn, type ChildProcess } from "node:child_process";
import { expect, test } from "@playwright/test";
import { OWNER } from "./support";

/**
 * Invitations by link on a server whose sign-up is closed (the shared e2e server keeps it open for
 * the other specs, so this spec starts its own on E2E_PORT + 1002): the owner invites a viewer on
 * Organization → Members, the invitee signs up through the link and lands in the workspace as a
 * viewer; a used link gives a clear page. Also: security headers and session cookie flags on real
 * responses.
 */
const port = Number(process.env.E2E_PORT ?? "3100") + 1002;
const base = `http://127.0.0.1:${port}`;
let server: ChildProcess | undefined;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = spawn(process.execPath, ["scripts/e2e-server.mjs"], {
    env: { ...process.env, E2E_PORT: String(port), VIGIL_ALLOW_SIGNUP: "false" },
    stdio: "ignore",
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ok = await fetch(`${base}/api/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`closed-sign-up server on ${port} did not start`);
    await new Promise((r) => setTimeout(r, 500));
  }
});

test.afterAll(async () => {
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((r) => server!.once("exit", r));
  server.kill("SIGTERM");
  await exited;
});

test("an owner invites a viewer; the invitee signs up through the link while sign-up is closed and lands in the workspace as viewer", async ({ browser }) => {
  test.setTimeout(120_000);
  const id = Date.now().toString(36);
  const invitee = { email: `invitee-${id}@example.com`, password: "invitee-password-1", name: "Ivy Invitee" };

  const strangers = await browser.newContext({ baseURL: base });
  const refused = await strangers.request.post("/api/auth/sign-up/email", {
    data: { email: `stranger-${id}@example.com`, password: "stranger-password-1", name: "S" },
    headers: { origin: base },
  });
  expect(refused.status()).toBe(403);

  // Owner: Organization → Members → create a viewer invitation and copy the link.
  const owner = await browser.newContext({ baseURL: base });
  const op = await owner.newPage();
  await op.goto("/sign-in");
  await op.getByLabel("Email").fill(OWNER.email);
  await op.getByLabel("Password").fill(OWNER.password);
  await op.getByRole("button", { name: /sign in/i }).click();
  await op.waitForURL("**/w/**");
  await op.goto("/org/members");
  const invitations = op.locator("#invitations");
  await expect(invitations.getByText("No pending invitations.")).toBeVisible();
  await invitations.getByLabel("Role").selectOption("viewer");
  await invitations.getByRole("button", { name: "Create invitation link" }).click();
  const link = (await op.getByTestId("invitation-link").innerText()).trim();
  expect(link).toMatch(new RegExp(`^${base}/invite/[A-Za-z0-9_-]{40,}$`));
  await expect(invitations.getByRole("table", { name: "Pending invitations" }).getByText("viewer")).toBeVisible();

  // Invitee: opens the link signed out, signs up, lands in the workspace as a viewer.
  const guest = await browser.newContext({ baseURL: base });
  const gp = await guest.newPage();
  await gp.goto(link);
  await expect(gp.getByRole("heading", { name: "Join E2E Org" })).toBeVisible();
  await expect(gp.getByText("You are invited as")).toContainText("viewer");
  await gp.getByLabel("Name").fill(invitee.name);
  await gp.getByLabel("Email").fill(invitee.email);
  await gp.getByLabel("Password").fill(invitee.password);
  await gp.getByRole("button", { name: "Create account and join" }).click();
  await gp.waitForURL("**/w/e2e/overview");
  const me = await gp.request.get("/api/trpc/account.me");
  const orgs = (await me.json()).result.data.organizations as { name: string; role: string }[];
  expect(orgs).toEqual([expect.objectContaining({ name: "E2E Org", role: "viewer" })]);

  // The owner sees the new viewer and no pending invitation.
  await op.reload();
  await expect(op.getByRole("table", { name: "Members" }).getByText(invitee.email)).toBeVisible();
  await expect(op.locator("#invitations").getByText("No pending invitations.")).toBeVisible();

  // The link is used up: a clear page for the next person.
  const late = await browser.newContext({ baseURL: base });
  const lp = await late.newPage();
  await lp.goto(link);
  await expect(lp.getByRole("heading", { name: "This invitation has already been used" })).toBeVisible();
  await lp.goto(`${base}/invite/not-a-real-token`);
  await expect(lp.getByRole("heading", { name: "This invitation link is not valid" })).toBeVisible();

  // Revoked: the owner revokes a fresh link on the page; opening it says so.
  await op.locator("#invitations").getByRole("button", { name: "Create invitation link" }).click();
  const revokedLink = (await op.getByTestId("invitation-link").innerText()).trim();
  expect(revokedLink).not.toBe(link);
  await op.locator("#invitations").getByRole("button", { name: /^Revoke the \w+ invitation/ }).click();
  await op.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
  await expect(op.locator("#invitations").getByText("No pending invitations.")).toBeVisible();
  await lp.goto(revokedLink);
  await expect(lp.getByRole("heading", { name: "This invitation was revoked" })).toBeVisible();

  for (const c of [strangers, owner, guest, late]) await c.close();
});

test("pages and API answers carry the security headers; the session cookie is HttpOnly and SameSite=Lax", async ({ request, browser }) => {
  const expectSecurityHeaders = (headers: Record<string, string>) => {
    const csp = headers["content-security-policy"];
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/(object|default)-src 'none'/);
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    expect(headers["x-frame-options"]).toBe("DENY");
  };
  const nonces = new Set<string>();
  for (const path of ["/sign-in", "/invite/not-a-real-token", "/no-such-page", "/api/health", "/api/trpc/account.me"]) {
    const res = await request.get(`${base}${path}`, { maxRedirects: 0 });
    expect(res.status(), path).toBeLessThan(500);
    expectSecurityHeaders(res.headers());
    const csp = res.headers()["content-security-policy"];
    if (path.startsWith("/api/")) {
      expect(csp).toContain("default-src 'none'");
      continue;
    }
    // Pages: scripts only with this answer's nonce, never inline script without it.
    const scriptSrc = csp.split(";").find((d) => d.trim().startsWith("script-src"))!;
    expect(scriptSrc).not.toContain("'unsafe-inline'");
    const nonce = /'nonce-([^']+)'/.exec(scriptSrc)?.[1];
    expect(nonce, path).toBeTruthy();
    nonces.add(nonce!);
    const html = await res.text();
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag, path).toContain(`nonce="${nonce}"`);
  }
  expect(nonces.size).toBe(3); // fresh per answer

  // A page under that policy still hydrates and works: sign in through the form, no CSP violation.
  const ctx = await browser.newContext({ baseURL: base });
  const page = await ctx.newPage();
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL("**/w/**");
  await page.getByRole("link", { name: "Sessions" }).first().click();
  await page.waitForURL("**/sessions");
  expect(violations).toEqual([]);
  await ctx.close();
  const signIn = await request.post(`${base}/api/auth/sign-in/email`, { data: OWNER, headers: { origin: base } });
  expect(signIn.status()).toBe(200);
  expectSecurityHeaders(signIn.headers());
  const session = signIn
    .headersArray()
    .filter((h) => h.name.toLowerCase() === "set-cookie")
    .map((h) => h.value)
    .find((v) => v.includes("session_token="));
  expect(session).toBeDefined();
  expect(session).toMatch(/;\s*HttpOnly/i);
  expect(session).toMatch(/;\s*SameSite=Lax/i);
  // Served over http here (VIGIL_BASE_URL unset): Secure would stop the browser from sending it back.
  // Secure over https is covered by tests/integration/sign-in-abuse.test.ts.
  expect(session).not.toMatch(/;\s*Secure/i);
});
