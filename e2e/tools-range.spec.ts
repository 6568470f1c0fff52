import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { freshWorkspace, phoneScreenshot, signIn, trpc } from "./support";

/**
 * Tools under a time range: the failures follow the range, the all-time figures beside them say so,
 * and a security-blocked tool's row says how far the block reaches.
 */
const SHOTS = process.env.TOOLS_RANGE_SHOTS_DIR ?? "/tmp/shots-tools-range";

test("a blocked tool's row shows its reach; under a range the failures follow it and the all-time figures are named", async ({ page }) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  await signIn(page);
  const ws = await freshWorkspace(page, "toolsrange");
  const sessionId = `ops-${Date.now().toString(36)}`;
  const now = new Date().toISOString();
  const ingest = await trpc(
    page.request,
    "ingest.events",
    {
      events: [
        { type: "session.start", id: `${sessionId}-s`, sessionId, agent: "ops-bot" },
        { type: "tool.result", id: `${sessionId}-r1`, sessionId, callId: "c1", toolName: "Bash", args: { command: "sudo rm -rf /tmp/cache" }, success: false, error: "Permission denied", ts: now },
      ],
    },
    ws.key,
  );
  expect(ingest.status).toBe(200);
  for (const [i, command] of ["ls -la", "cat notes.txt"].entries()) {
    const answer = await trpc(page.request, "guard.check", { id: `${sessionId}-g${i}`, sessionId, callId: `g${i}`, toolName: "Bash", args: { command } }, ws.key);
    expect(answer.body.result.data.decision).toBe("ask");
  }

  // All time: the all-time column (the pages open on the default range, 7 days, without ?range=).
  await page.goto(`/w/${ws.slug}/tools?range=all`);
  const toolRow = page.getByRole("row").filter({ hasText: "@tool:Bash" });
  await expect(toolRow.getByTestId("level-reach")).toContainText("2 calls from 1 agent since blocked");
  await expect(page.getByRole("columnheader", { name: "Failures / calls" })).toBeVisible();

  await page.goto(`/w/${ws.slug}/tools?range=24h`);
  await expect(page.getByRole("columnheader", { name: "Failures / calls" })).toHaveCount(0);
  await expect(page.getByRole("columnheader", { name: "Failures in range" })).toBeVisible();
  await expect(toolRow).toContainText("level, all time");
  await page.screenshot({ path: path.join(SHOTS, "tools-range-1440.png"), fullPage: true });
  await phoneScreenshot(page, path.join(SHOTS, "tools-range-390.png"), () => expect(toolRow).toContainText("level, all time"));
});

test("a key's page says which failures its rule leaves out", async ({ page }) => {
  await signIn(page);
  const ws = await freshWorkspace(page, "counting");
  const sessionId = `reader-${Date.now().toString(36)}`;
  const args = { url: "https://api.example.com/v1/items/7" };
  const events = [0, 1, 2].map((i) => ({ type: "tool.result", id: `${sessionId}-r${i}`, sessionId, callId: `c${i}`, toolName: "http_get", args, success: false, httpStatus: 404, error: "404 Not Found" }));
  expect((await trpc(page.request, "ingest.events", { events }, ws.key)).status).toBe(200);
  await page.goto(`/w/${ws.slug}/tools`);
  await page.getByRole("row").filter({ hasText: "http_get" }).getByRole("link").first().click();
  await page.waitForURL(/\/tools\/.+/);
  await expect(page.getByTestId("counting-note")).toHaveText("0 of 3 failures counted: not_found (3) is not in this rule's severity filter");
  await page.screenshot({ path: path.join(SHOTS, "key-counting-1440.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(page.getByTestId("counting-note")).toBeVisible();
  await page.screenshot({ path: path.join(SHOTS, "key-counting-390.png"), fullPage: true });
});
