/**
 * Policies page, end to end (SPEC 4.5, 4.6, 8): an admin adds a policy in the editor (a bad regex
 * is shown next to its field as it is typed and nothing is saved), the test box answers deny for
 * `rm -rf ~` naming the built-in rule, a risk rule is switched off and stays off after a reload,
 * and watch mode shows its banner on every workspace page. Screenshots at 1440 and 390 px go to
 * POLICIES_SCREENSHOTS (default /tmp/shots).
 */
import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { query, signIn, trpc } from "./support";

const SHOTS = process.env.POLICIES_SCREENSHOTS ?? "/tmp/shots";

async function workspaceDocument(page: Page, slug: string): Promise<Record<string, any>> {
  const res = await query(page.request, "wsConfig.get", { workspaceSlug: slug });
  expect(res.status).toBe(200);
  return res.body.result.data.document;
}

/** A fresh workspace of the owner's organization with an admin API key. */
async function freshWorkspace(page: Page, prefix: string) {
  const me = await page.request.get("/api/trpc/account.me");
  expect(me.status()).toBe(200);
  const organizationId = (await me.json()).result.data.organizations[0].id as string;
  const slug = `${prefix}-${Date.now().toString(36)}`;
  expect((await trpc(page.request, "organization.createWorkspace", { organizationId, slug })).status).toBe(200);
  const key = await trpc(page.request, "apiKeys.create", { workspaceSlug: slug, name: "e2e agent", scope: "admin" });
  expect(key.status).toBe(200);
  return { slug, key: key.body.result.data.value as string };
}

async function shoot(page: Page, name: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
    // Nothing may stick out sideways at phone width.
    if (width === 390) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test("policies: add a policy with validation as you type, test rm -rf ~, switch a risk rule, watch banner", async ({ page }) => {
  // Two screenshot widths per step on a shared, slow machine.
  test.setTimeout(240_000);
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "policies");
  await page.goto(`/w/${slug}/policies`);
  await expect(page.getByRole("heading", { name: "Policies", level: 1 })).toBeVisible();
  await expect(page.getByText("No policies yet")).toBeVisible();
  await shoot(page, "policies-empty");

  // Add a policy; a bad regex shows next to its field and nothing is saved.
  await page.getByRole("button", { name: "Add policy" }).click();
  const form = page.getByRole("form", { name: "New policy" });
  await form.getByLabel("Name").fill("no-force-push");
  await form.getByLabel("Tool").fill("Bash");
  await form.getByRole("button", { name: "Add argument" }).click();
  await form.getByLabel("Kind").selectOption("regex");
  const pattern = form.getByLabel("Pattern");
  await pattern.fill("git push .*--force(");
  const patternField = form.locator(".field", { has: page.getByLabel("Pattern") });
  await expect(patternField.locator(".field-error")).toBeVisible();
  await expect(pattern).toHaveAttribute("aria-invalid", "true");
  await form.getByRole("button", { name: "Add policy" }).click();
  await expect(form.getByText("nothing was saved")).toBeVisible();
  expect((await workspaceDocument(page, slug)).policies).toBeUndefined();
  await shoot(page, "policies-editor-error");

  await pattern.fill("^git push .*--force");
  await expect(patternField.locator(".field-error")).toHaveCount(0);
  await form.getByLabel("Reason").fill("Force pushes go through review");
  await form.getByRole("button", { name: "Add policy" }).click();
  await expect(form).toHaveCount(0);
  await expect(page.getByRole("table", { name: "Workspace policies" }).getByText("no-force-push")).toBeVisible();
  expect((await workspaceDocument(page, slug)).policies).toEqual([
    { name: "no-force-push", tool: "Bash", args: { command: { regex: "^git push .*--force" } }, decision: "deny", reason: "Force pushes go through review" },
  ]);

  // The test box: rm -rf ~ is denied by the built-in rule; a force push by the new policy.
  const box = page.getByRole("form", { name: "Test a call" });
  await box.getByLabel("Tool name").fill("Bash");
  await box.getByLabel("Arguments (JSON)").fill('{ "command": "rm -rf ~" }');
  await box.getByRole("button", { name: "Test" }).click();
  const result = page.getByTestId("policy-test-result");
  await expect(result).toHaveAttribute("data-decision", "deny");
  await expect(result).toContainText("shell.delete_root_or_home");
  await box.getByLabel("Arguments (JSON)").fill('{ "command": "git push --force origin main" }');
  await box.getByRole("button", { name: "Test" }).click();
  await expect(result).toContainText("workspace policy no-force-push");
  await box.getByLabel("Arguments (JSON)").fill("{ not json");
  await expect(box.getByText(/Not valid JSON/)).toBeVisible();
  await box.getByLabel("Arguments (JSON)").fill('{ "command": "rm -rf ~" }');
  await box.getByRole("button", { name: "Test" }).click();
  await expect(result).toContainText("shell.delete_root_or_home");

  // Switch a built-in rule off: saved, and still off after a reload.
  const privilege = page.getByRole("switch", { name: /shell\.privilege/ });
  await expect(privilege).toBeChecked();
  await privilege.click();
  await expect(page.getByRole("switch", { name: "shell.privilege off" })).not.toBeChecked();
  await expect.poll(async () => (await workspaceDocument(page, slug)).risk_rules).toEqual({ disabled: ["shell.privilege"] });
  await page.reload();
  await expect(page.getByRole("switch", { name: "shell.privilege off" })).not.toBeChecked();

  // Watch mode: a banner on every workspace page; a denied call counts as "would have denied".
  await expect(page.getByTestId("watch-banner")).toHaveCount(0);
  const doc = await workspaceDocument(page, slug);
  expect((await trpc(page.request, "wsConfig.put", { workspaceSlug: slug, document: { ...doc, settings: { enforcement: "watch" } } })).status).toBe(200);
  const check = await trpc(page.request, "guard.check", { id: `e-${Date.now()}`, sessionId: "watch-session", callId: "c1", toolName: "Bash", args: { command: "rm -rf ~" } }, key);
  expect(check.body.result.data).toMatchObject({ decision: "allow", wouldDecide: "deny" });
  await page.reload();
  await expect(page.getByTestId("watch-banner")).toContainText("Watch mode");
  await expect(page.getByTestId("watch-counts")).toContainText(/denied\s*1/);
  await shoot(page, "policies-watch");
  for (const section of ["overview", "tools", "sessions/watch-session"]) {
    await page.goto(`/w/${slug}/${section}`);
    await expect(page.getByTestId("watch-banner")).toBeVisible();
    await expect(page.getByTestId("watch-counts")).toContainText(/denied\s*1/);
  }
  await shoot(page, "session-watch");

  // Organization level: the same editor, empty.
  await page.goto("/org/policies");
  await expect(page.getByRole("heading", { name: "Organization policies", level: 1 })).toBeVisible();
  await shoot(page, "org-policies");
});
