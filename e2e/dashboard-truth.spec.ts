import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { freshWorkspace, minutesAgo, signIn, toolResult, trpc } from "./support";

/**
 * The dashboard tells the truth (issue 11, items 2 and 3): the time range lives in the URL and the
 * chart and counts follow it; a session is found by its id; the session timeline shows Vigil's own
 * guard decisions with the right icon.
 */

/** TRUTH_SCREENSHOTS=<dir> saves a full-page screenshot at each step (to look at the result). */
async function shot(page: Page, name: string) {
  const dir = process.env.TRUTH_SCREENSHOTS;
  if (dir) await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

const OLD_HOST = "old-api.example.com";
const NEW_HOST = "new-api.example.com";

test("the time range is kept in the URL and the chart and top keys follow it; sessions are found by id; the timeline shows a denied guard decision", async ({ page }) => {
  test.setTimeout(120_000);
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "truth");
  const oldSession = `old-${Date.now().toString(36)}-aaaaaaaa`;
  const newSession = `new-${Date.now().toString(36)}-bbbbbbbb`;
  const tenDays = 10 * 24 * 60;
  const events = [
    ...[0, 1, 2].map((i) => toolResult(oldSession, "fetch", { url: `https://${OLD_HOST}/v1/x` }, false, minutesAgo(tenDays - i))),
    ...[0, 1].map((i) => toolResult(newSession, "fetch", { url: `https://${NEW_HOST}/v1/y` }, false, minutesAgo(60 - i))),
  ];
  expect((await trpc(page.request, "ingest.events", { events }, key)).status).toBe(200);

  // Overview opens on the dashboard's default, 7 days: only the recent key ranks, the chart says so.
  await page.goto(`/w/${slug}/overview`);
  const chart = page.locator(".chart-card").filter({ hasText: "Failure rate" });
  await expect(chart.locator(".card-subtitle")).toContainText("last 7 days");
  const topKeys = page.getByRole("table", { name: "Top failing keys" });
  await expect(topKeys).toContainText(NEW_HOST);
  await expect(topKeys).not.toContainText(OLD_HOST);
  // 14 days: both keys rank.
  await page.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "14 d" }).click();
  await expect(chart.locator(".card-subtitle")).toContainText("last 14 days");
  await expect(topKeys).toContainText(OLD_HOST);
  await expect(topKeys).toContainText(NEW_HOST);

  // 24 h: the URL carries the range, the chart's window and the key list follow.
  await page.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "24 h" }).click();
  await expect(page).toHaveURL(/[?&]range=24h\b/);
  await expect(chart.locator(".card-subtitle")).toContainText("last 24 hours");
  await expect(topKeys).toContainText(NEW_HOST);
  await expect(topKeys).not.toContainText(OLD_HOST);
  // A daily chart of one or two days still draws its points.
  await expect(chart.locator(".recharts-line-dot, .recharts-dot").first()).toBeAttached();
  await shot(page, "overview-24h");

  // A custom day range (UTC) on the day of the old failures: only the old key.
  const oldDay = minutesAgo(tenDays).slice(0, 10);
  const custom = page.getByRole("form", { name: "Custom date range (UTC)" });
  await custom.getByLabel("From").fill(oldDay);
  // The days apply as they are picked (no button).
  await custom.getByLabel("to", { exact: true }).fill(oldDay);
  await expect(page).toHaveURL(new RegExp(`from=${oldDay}.*to=${oldDay}`));
  await expect(chart.locator(".card-subtitle")).toContainText(oldDay);
  await expect(topKeys).toContainText(OLD_HOST);
  await expect(topKeys).not.toContainText(NEW_HOST);

  // Sessions: search by a part of the id (server-side), keeping the range.
  await page.goto(`/w/${slug}/sessions?range=7d`);
  await page.getByRole("searchbox", { name: "Search sessions by id" }).fill(newSession.slice(-12));
  await page.getByRole("searchbox", { name: "Search sessions by id" }).press("Enter");
  await expect(page).toHaveURL(/[?&]q=/);
  await expect(page).toHaveURL(/[?&]range=7d\b/);
  const sessions = page.getByRole("table", { name: "Agent sessions" });
  await expect(sessions.locator("a.row-link")).toHaveCount(1);
  await expect(sessions).toContainText(newSession.slice(-8));
  await shot(page, "sessions-search");

  // A denied guard decision in the timeline, with the deny icon (not a check mark).
  const blocked = await trpc(page.request, "ingest.events", { events: [toolResult(newSession, "bash", { command: "sudo rm -rf /" }, false, minutesAgo(30), { error: "Permission denied" })] }, key);
  expect(blocked.status).toBe(200);
  expect((await trpc(page.request, "config.put", { settings: { blocked_decision: "deny" } }, key)).status).toBe(200);
  const guard = await trpc(page.request, "guard.check", { id: `g-${Date.now()}`, sessionId: newSession, callId: "deny-1", toolName: "bash", args: { command: "ls" } }, key);
  expect(guard.body.result.data.decision).toBe("deny");
  await page.goto(`/w/${slug}/sessions/${encodeURIComponent(newSession)}`);
  const decision = page.locator('.timeline-guard[data-decision="deny"]');
  await expect(decision).toBeVisible();
  await expect(decision).toContainText("Vigil denied the call");
  await expect(decision.getByRole("img", { name: "Decision: deny" })).toBeVisible();
  // The call's failure key links to its page.
  const call = page.locator('li[data-kind="call"]').filter({ has: decision });
  await expect(call.locator(".timeline-key-link")).toHaveAttribute("href", new RegExp(`/w/${slug}/tools/bash%7C`));
  await shot(page, "timeline");
});
