import { expect, type APIRequestContext, type Page } from "@playwright/test";

export const OWNER = { email: "owner@e2e.test", password: "owner-password-123" };

export async function signIn(page: Page, who = OWNER) {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: /sign in/i }).click();
  await page.waitForURL("**/w/**");
}

/**
 * A full-page screenshot of the current page at phone width, loaded again at that width: one taken
 * right after the resize catches the sidebar sliding into its drawer and the page's height as laid
 * out wide. `ready` waits for what the page must show.
 */
export async function phoneScreenshot(page: Page, file: string, ready: () => Promise<void>) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await ready();
  await expect(page.locator("#app-sidebar")).toBeHidden();
  await page.screenshot({ path: file, fullPage: true });
}

export async function trpc(req: APIRequestContext, path: string, input: unknown, key?: string) {
  const res = await req.post(`/api/trpc/${path}`, {
    data: input,
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
  });
  const body = await res.json().catch(() => ({}));
  return { status: res.status(), body };
}

export async function query(req: APIRequestContext, path: string, input: unknown, key?: string) {
  const res = await req.get(`/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  return { status: res.status(), body: await res.json().catch(() => ({})) };
}

/** A fresh workspace in the owner's organization with an admin API key, created through the dashboard API. */
export async function freshWorkspace(page: Page, prefix: string) {
  const me = await query(page.request, "account.me", undefined);
  const organizationId = me.body.result.data.organizations[0].id as string;
  const slug = `${prefix}-${Date.now().toString(36)}`;
  expect((await trpc(page.request, "organization.createWorkspace", { organizationId, slug })).status).toBe(200);
  const key = await trpc(page.request, "apiKeys.create", { workspaceSlug: slug, name: "e2e agent", scope: "admin" });
  expect(key.status).toBe(200);
  return { slug, key: key.body.result.data.value as string };
}

export const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

let n = 0;
export function toolResult(sessionId: string, toolName: string, args: Record<string, unknown>, ok: boolean, ts: string, extra: Record<string, unknown> = {}) {
  n += 1;
  return {
    type: "tool.result",
    id: `r-${Date.now().toString(36)}-${n}`,
    sessionId,
    callId: `c-${n}`,
    toolName,
    args,
    ts,
    ...(ok ? { success: true } : { success: false, httpStatus: 503, error: "503 Service Unavailable" }),
    ...extra,
  };
}
