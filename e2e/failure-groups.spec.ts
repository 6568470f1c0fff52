import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { freshWorkspace, phoneScreenshot, signIn, trpc } from "./support";

/** The Failures page's groups, a group opening its failures, Overview's top reasons and a session's failure summary. */
const SHOTS = process.env.FAILURE_GROUPS_SHOTS_DIR ?? "/tmp/shots-failure-groups";

test("failures group by normalized message; a group opens its failures; a session ends with its summary", async ({ page }) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  await signIn(page);
  const ws = await freshWorkspace(page, "fgroups");
  const sessionId = `crawler-${Date.now().toString(36)}`;
  const ids = ["a91f", "77bc", "3d20", "e5e5"];
  const events = [
    { type: "session.start", id: `${sessionId}-s`, sessionId, agent: "crawler" },
    ...ids.map((id, i) => ({
      type: "tool.result",
      id: `${sessionId}-nf${i}`,
      sessionId,
      callId: `nf${i}`,
      toolName: "read_file",
      args: { path: `/srv/data/${id}.json` },
      success: false,
      error: `ENOENT: no such file or directory, open '/srv/data/${id}.json'`,
    })),
    ...[1, 2, 3].map((i) => ({
      type: "tool.result",
      id: `${sessionId}-h${i}`,
      sessionId,
      callId: `h${i}`,
      toolName: "http_request",
      args: { url: `https://api.example.com/v1/users/${i * 11}` },
      success: false,
      httpStatus: 503,
      error: `HTTP 503 Service Unavailable (request id 4f9c2b1e-3a7d-4c2e-9b1a-0e5d6f7a8b${i}c)`,
    })),
    { type: "session.end", id: `${sessionId}-e`, sessionId },
  ];
  expect((await trpc(page.request, "ingest.events", { events }, ws.key)).status).toBe(200);

  // Groups are the page's default view; each row has its sparkline.
  await page.goto(`/w/${ws.slug}/failures`);
  await expect(page.getByRole("navigation", { name: "View" }).getByRole("link", { name: "Groups" })).toHaveAttribute("aria-current", "page");
  const group = page.getByRole("row").filter({ hasText: "ENOENT: no such file or directory, open '<str>'" });
  await expect(group).toContainText("4");
  await expect(group.getByRole("img", { name: /Failures per day: 4 over/ })).toBeVisible();
  await expect(page.getByRole("row").filter({ hasText: "HTTP 503 Service Unavailable (request id <uuid>)" })).toContainText("3");
  await page.screenshot({ path: path.join(SHOTS, "failure-groups-1440.png"), fullPage: true });
  await phoneScreenshot(page, path.join(SHOTS, "failure-groups-390.png"), () => expect(group).toContainText("4"));
  await page.setViewportSize({ width: 1440, height: 900 });

  await group.getByRole("link").first().click();
  await expect(page.getByTestId("group-filter")).toBeVisible();
  await expect(page.getByRole("row").filter({ hasText: "ENOENT" })).toHaveCount(4);
  await expect(page.getByRole("row").filter({ hasText: "HTTP 503" })).toHaveCount(0);

  // The toggle's flat list shows every failure.
  await page.getByRole("navigation", { name: "View" }).getByRole("link", { name: "All failures" }).click();
  await expect(page.getByRole("row").filter({ hasText: "ENOENT" })).toHaveCount(4);
  await expect(page.getByRole("row").filter({ hasText: "HTTP 503" })).toHaveCount(3);

  await page.goto(`/w/${ws.slug}/overview`);
  await expect(page.getByRole("heading", { name: /Top failure reasons/ })).toBeVisible();
  await expect(page.getByRole("row").filter({ hasText: "ENOENT: no such file or directory" })).toBeVisible();

  await page.goto(`/w/${ws.slug}/sessions/${encodeURIComponent(sessionId)}`);
  const summary = page.getByTestId("failure-summary");
  await expect(summary).toContainText("7 failed tool calls");
  await expect(summary).toContainText("HTTP 503 Service Unavailable (request id <uuid>)");
  await expect(summary).toContainText("Keys it escalated");
  await page.screenshot({ path: path.join(SHOTS, "session-failure-summary-1440.png"), fullPage: true });
  await phoneScreenshot(page, path.join(SHOTS, "session-failure-summary-390.png"), () => expect(summary).toContainText("Keys it escalated"));
});
