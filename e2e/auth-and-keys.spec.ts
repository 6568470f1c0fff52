import { expect, test } from "@playwright/test";

/**
 * Sign-up → organization + first workspace → sign-out / bad sign-in / sign-in → API key created in
 * Settings → API keys → the key authenticates an agent call (account.whoami).
 */
test("sign up, create an organization and an API key, and use it", async ({ page, request }) => {
  test.setTimeout(120_000);
  const id = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
  const email = `e2e-${id}@example.com`;
  const password = "correct-horse-battery";
  const slug = `e2e-${id}`;

  await page.goto("/sign-up");
  // Bad input is refused next to the field, nothing is sent.
  await page.getByLabel("Email").fill("not-an-email");
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByText("Enter a valid email address")).toBeVisible();
  await expect(page.getByText("Password must be at least 8 characters", { exact: false }).first()).toBeVisible();

  await page.getByLabel("Name").fill("E2E Owner");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Create account" }).click();

  await page.getByLabel("Organization name").fill(`E2E Org ${id}`);
  await page.getByLabel("First workspace slug").fill("Not A Slug");
  await page.getByRole("button", { name: "Create and continue" }).click();
  await expect(page.getByText("lowercase letters, digits or '-'", { exact: false })).toBeVisible();
  await page.getByLabel("First workspace slug").fill(slug);
  await page.getByRole("button", { name: "Create and continue" }).click();
  await page.waitForURL(`**/w/${slug}/overview`);
  await expect(page.getByRole("heading", { name: "Connect an agent" })).toBeVisible();
  await expect(page.getByText(`/api/trpc/ingest.events`, { exact: false }).first()).toBeVisible();

  // Sign out, a wrong password is refused with a clear message, the right one signs in.
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL("**/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("wrong-password-1");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Wrong email or password" })).toBeVisible();
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**/w/${slug}/overview`);

  // API key through Settings → API keys (falls back to the tRPC endpoint if the tab is missing).
  let value: string | null = null;
  await page.goto(`/w/${slug}/settings?tab=api-keys`);
  const createButton = page.getByRole("button", { name: "Create key" });
  if (await createButton.isVisible().catch(() => false)) {
    await page.getByPlaceholder("production fleet").fill("e2e agent");
    await createButton.click();
    const box = page.getByTestId("new-api-key");
    await expect(box).toBeVisible();
    value = (await box.locator("code").first().textContent())?.trim() ?? null;
  } else {
    value = await page.evaluate(async (workspaceSlug) => {
      const r = await fetch("/api/trpc/apiKeys.create", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ workspaceSlug, name: "e2e agent", scope: "agent" }),
      });
      return (await r.json()).result.data.value as string;
    }, slug);
  }
  expect(value).toMatch(/^vgl_[A-Za-z0-9_-]{40,}$/);

  const res = await request.get("/api/trpc/account.whoami", { headers: { authorization: `Bearer ${value}` } });
  expect(res.status()).toBe(200);
  expect((await res.json()).result.data).toMatchObject({ workspace: slug, scope: "agent" });

  // The same request without the key is refused.
  const anon = await request.get("/api/trpc/account.whoami");
  expect(anon.status()).toBe(401);
});

test("the first visit to / without a session goes to sign-in or sign-up", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-(in|up)$/);
});

/**
 * `next=` after sign-in stays on the origin, however it is spelled: a backslash or a tab makes
 * `/\host` and `/\t/host` read as `//host` (another host) in the browser; `/.//host` normalises to
 * `//host`. Each lands on the dashboard instead; a same-origin `next` is still followed.
 */
test("sign-in with a next= that names another host stays on the origin", async ({ browser, baseURL }) => {
  test.setTimeout(120_000);
  const origin = new URL(baseURL!).origin;
  const signInWith = async (next: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const visited: string[] = [];
    page.on("framenavigated", (frame) => frame === page.mainFrame() && visited.push(frame.url()));
    try {
      await page.goto(`/sign-in?next=${next}`);
      await page.getByLabel("Email").fill("owner@e2e.test");
      await page.getByLabel("Password").fill("owner-password-123");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((url) => !url.pathname.startsWith("/sign-in"), { timeout: 20_000 });
      await page.waitForLoadState("load");
      return { final: new URL(page.url()), visited };
    } finally {
      await context.close();
    }
  };
  for (const hostile of ["/%5Cevil.example", "/%09/evil.example", "/.//evil.example", "%5C%5Cevil.example"]) {
    const { final, visited } = await signInWith(hostile);
    expect(final.origin, `next=${hostile}`).toBe(origin);
    for (const url of visited) expect(new URL(url).origin, `next=${hostile} visited ${url}`).toBe(origin);
  }
  const followed = await signInWith(encodeURIComponent("/org/members"));
  expect(followed.final.href).toBe(`${origin}/org/members`);
});
