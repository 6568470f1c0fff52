import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { freshWorkspace, signIn, trpc } from "./support";

/**
 * Tools under a time range: the failures follow the range, the all-time figures beside them say so,
 * and a security-blocked tool's row says how far the block reaches.
 */
const SHOTS = process.env.CONNECT_SHOTS_DIR ?? "/tmp/shots-connect";

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

  await page.goto(`/w/${ws.slug}/tools`);
  const toolRow = page.getByRole("row").filter({ hasText: "@tool:Bash" });
  await expect(toolRow.getByTestId("level-reach")).toContainText("2 calls from 1 agent since blocked");
  await expect(page.getByRole("columnheader", { name: "Failures / calls" })).toBeVisible();

  await page.goto(`/w/${ws.slug}/tools?range=24h`);
  await expect(page.getByRole("columnheader", { name: "Failures / calls" })).toHaveCount(0);
  await expect(page.getByRole("columnheader", { name: "Failures in range" })).toBeVisible();
  await expect(toolRow).toContainText("level, all time");
  await page.screenshot({ path: path.join(SHOTS, "tools-range-1440.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(SHOTS, "tools-range-390.png"), fullPage: true });
});
