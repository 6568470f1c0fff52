import { expect, test } from "@playwright/test";
import { freshWorkspace, minutesAgo, query, signIn, toolResult, trpc } from "./support";

/** The things users come for: see what agents did, and act on it. */

test("browse a workspace's reliability after agents posted events", async ({ page }) => {
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "browse");
  const url = "https://api.weather.example/v2/forecast";
  const res = await trpc(page.request, "ingest.events", {
    events: [
      { type: "session.start", id: "s-start", sessionId: "crawler-1", agent: "crawler", model: "gpt-4.1", ts: minutesAgo(30) },
      toolResult("crawler-1", "http_request", { url }, false, minutesAgo(29)),
      toolResult("crawler-1", "http_request", { url }, false, minutesAgo(28)),
      toolResult("crawler-1", "http_request", { url }, false, minutesAgo(27)),
      toolResult("crawler-1", "readFile", { path: "/srv/app/config.yml" }, true, minutesAgo(26)),
    ],
  }, key);
  expect(res.status).toBe(200);
  expect(res.body.result.data.effects.map((e: { type: string }) => e.type)).toContain("escalated");

  await page.goto(`/w/${slug}/tools`);
  const table = page.getByRole("table", { name: "Failure keys" });
  await expect(table).toBeVisible();
  const row = table.getByRole("row").filter({ hasText: "api.weather.example" });
  await expect(row).toContainText(/escalated/i);
  await expect(table.getByRole("row").filter({ hasText: "/srv/app" })).toContainText(/trusted/i);

  await row.getByRole("link").first().click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("http_request");
  await expect(page.getByText("3 failures in 3600s").first()).toBeVisible();

  await page.goto(`/w/${slug}/failures`);
  await expect(page.getByText("503 Service Unavailable").first()).toBeVisible();

  await page.goto(`/w/${slug}/overview`);
  await expect(page.getByText(/escalated/i).first()).toBeVisible();
});

test("approve a pending recovery in ask mode and see the key become trusted", async ({ page }) => {
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "approve");
  const put = await trpc(page.request, "config.put", {
    default_rule: { count_threshold: 2, escalation_duration_seconds: 60, cooldown_seconds: 60, success_count_to_recover: 2 },
    settings: { recovery_mode: "ask" },
  }, key);
  expect(put.status).toBe(200);
  const url = "https://billing.example/v1/invoices";
  const res = await trpc(page.request, "ingest.events", {
    events: [
      toolResult("billing-1", "fetch", { url }, false, minutesAgo(30)),
      toolResult("billing-1", "fetch", { url }, false, minutesAgo(29)),
      toolResult("billing-1", "fetch", { url }, true, minutesAgo(20)),
      toolResult("billing-1", "fetch", { url }, true, minutesAgo(19)),
      toolResult("billing-1", "fetch", { url }, true, minutesAgo(18)),
    ],
  }, key);
  expect(res.body.result.data.effects.map((e: { type: string }) => e.type)).toContain("recovery_pending");
  // The engine keeps counting while the recovery waits (SPEC 4.3); every page shows it as ready.
  const waiting = await query(page.request, "reliability.status", { toolName: "fetch" }, key);
  expect(waiting.body.result.data.keys[0].recovery).toEqual({ successes: 3, needed: 2 });
  await page.goto(`/w/${slug}/tools`);
  const row = page.getByRole("table", { name: "Failure keys" }).getByRole("row").filter({ hasText: "billing.example" });
  await expect(row).toContainText("2 / 2 ok · ready");
  await expect(row).toContainText("awaiting approval");

  await page.goto(`/w/${slug}/approvals`);
  const card = page.getByRole("article", { name: /Pending recovery of fetch\|domain=billing.example/ });
  await expect(card).toBeVisible();
  const progress = card.getByText("2 / 2 successes · ready");
  const requested = card.getByText(/^requested/);
  await expect(progress).toBeVisible();
  // Side by side, not drawn over each other (the label used to run past its meter).
  const [a, b] = [await progress.boundingBox(), await requested.boundingBox()];
  expect(a && b && (a.x + a.width <= b.x || b.y >= a.y + a.height)).toBe(true);
  // The sidebar badge counts it.
  await expect(page.getByRole("link", { name: /Approvals/ }).first()).toContainText("1");
  await card.getByRole("button", { name: "Approve" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Comment").fill("upstream fixed, verified by hand");
  await dialog.getByRole("button", { name: "Approve" }).click();
  await expect(card).toHaveCount(0);

  const status = await query(page.request, "reliability.status", { toolName: "fetch" }, key);
  expect(status.body.result.data.keys[0]).toMatchObject({ state: "trusted", effectiveState: "trusted" });
  await page.goto(`/w/${slug}/tools`);
  await expect(page.getByRole("table", { name: "Failure keys" }).getByRole("row").filter({ hasText: "billing.example" })).toContainText(/trusted/i);
  await page.goto(`/w/${slug}/audit`);
  await expect(page.getByRole("table").getByText("approval.approve")).toBeVisible();
  await expect(page.getByRole("table").getByText("upstream fixed, verified by hand", { exact: false })).toBeVisible();
});

test("edit a threshold in the rules editor and the very next ingested failure follows it", async ({ page }) => {
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "rules");
  const url = "https://search.example/v1/query";
  // One failure with the built-in threshold (3): still trusted.
  const first = await trpc(page.request, "ingest.events", { events: [toolResult("rules-1", "http_request", { url }, false, minutesAgo(10))] }, key);
  expect(first.body.result.data.effects).toEqual([]);

  await page.goto(`/w/${slug}/settings?tab=rules`);
  await page.getByRole("button", { name: "Edit default rule" }).click();
  const form = page.getByRole("form", { name: "Edit default rule" });
  // Invalid first: an error next to the field, nothing saved.
  await form.getByLabel("Count threshold").fill("-1");
  await form.getByRole("button", { name: "Save rule" }).click();
  await expect(form.getByRole("alert")).toBeVisible();
  expect((await query(page.request, "config.get", undefined, key)).body.result.data).toEqual({});
  // Then 2.
  await form.getByLabel("Count threshold").fill("2");
  await form.getByRole("button", { name: "Save rule" }).click();
  await expect(page.getByTestId("default-rule-table")).toBeVisible();
  expect((await query(page.request, "config.get", undefined, key)).body.result.data).toMatchObject({ default_rule: { count_threshold: 2 } });

  // The very next failure escalates at the new threshold.
  const second = await trpc(page.request, "ingest.events", { events: [toolResult("rules-1", "http_request", { url }, false, minutesAgo(9))] }, key);
  expect(second.body.result.data.effects).toMatchObject([{ type: "escalated", failureKey: "http_request|domain=search.example|path_prefix=v1", reason: "2 failures in 3600s" }]);
});

test("a state change appears on the open Tools page without a reload", async ({ page }) => {
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "live");
  const url = "https://live.example/v1/feed";
  await trpc(page.request, "ingest.events", { events: [toolResult("live-1", "http_request", { url }, true, minutesAgo(10))] }, key);
  await page.goto(`/w/${slug}/tools`);
  const row = page.getByRole("table", { name: "Failure keys" }).getByRole("row").filter({ hasText: "live.example" });
  await expect(row).toContainText(/trusted/i);
  await trpc(page.request, "ingest.events", {
    events: [1, 2, 3].map((i) => toolResult("live-1", "http_request", { url }, false, minutesAgo(9 - i))),
  }, key);
  // No reload: the page polls and re-renders itself.
  await expect(row).toContainText(/escalated/i, { timeout: 15_000 });
});

test("a person in two organizations reaches the other one's workspaces from the switcher", async ({ page }) => {
  await signIn(page);
  const slug = `second-${Date.now().toString(36)}`;
  expect((await trpc(page.request, "account.createOrganization", { name: `Second Org ${slug}`, workspaceSlug: slug })).status).toBe(200);
  await page.goto("/w/e2e/overview");
  await page.getByRole("button", { name: /e2e/ }).first().click();
  const item = page.getByRole("link", { name: slug });
  await expect(page.getByText(`Second Org ${slug}`)).toBeVisible();
  await item.click();
  await page.waitForURL(`**/w/${slug}/overview`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Overview");
});

test("the live indicator says when the page cannot reach the server and returns to live once it can", async ({ page }) => {
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "offline");
  await trpc(page.request, "ingest.events", { events: [toolResult("offline-1", "http_request", { url: "https://offline.example/v1" }, true, minutesAgo(5))] }, key);
  await page.goto(`/w/${slug}/tools`);
  const status = page.getByRole("status").filter({ hasText: /live|offline/ });
  await expect(status).toHaveText("● live");
  // The page's polls fail (the server unreachable): it says so instead of showing stale data as live.
  await page.route("**/api/trpc/ws.overview.live**", (route) => route.abort("connectionrefused"));
  await expect(status).toHaveText("● offline — retrying", { timeout: 20_000 });
  await expect(status).toHaveAttribute("title", /Last updated/);
  await page.unroute("**/api/trpc/ws.overview.live**");
  await expect(status).toHaveText("● live", { timeout: 20_000 });
});
