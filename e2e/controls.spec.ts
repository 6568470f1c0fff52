import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { signIn, trpc } from "./support";

/**
 * Operator controls in the dashboard (SPEC 4.6, 8): the kill switch and its banner, pausing and
 * resuming one session, a message to a running agent, and a key blocked by hand then reset with
 * the tool level that also blocks it — each checked against what an agent's guard.check answers.
 * Screenshots at 1440 and 390 px go to CONTROLS_SCREENSHOTS (default /tmp/shots).
 */
const SHOTS = process.env.CONTROLS_SCREENSHOTS ?? "/tmp/shots";

async function shot(page: Page, name: string) {
  fs.mkdirSync(SHOTS, { recursive: true });
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
    await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: width > 800 });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test("kill switch, session pause and message, a manual block reset with its tool level", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page);
  const id = Date.now().toString(36);
  // A workspace of its own: the kill switch must not hold another spec's agents.
  const slug = `controls-${id}`;
  expect((await trpc(page.request, "account.createOrganization", { name: `Controls ${id}`, workspaceSlug: slug })).status).toBe(200);
  const created = await trpc(page.request, "apiKeys.create", { workspaceSlug: slug, name: "e2e agent", scope: "admin" });
  expect(created.status).toBe(200);
  const key = created.body.result.data.value as string;
  const [s1, s2] = [`ops-${id}`, `build-${id}`];
  const ingest = (events: unknown[]) => trpc(page.request, "ingest.events", { events }, key);
  const check = async (sessionId: string, toolName = "read_file", args: Record<string, unknown> = { path: "/src/app.ts" }) => {
    const r = await trpc(page.request, "guard.check", { id: `g-${Math.random().toString(36).slice(2)}`, sessionId, callId: `c-${Math.random().toString(36).slice(2)}`, toolName, args }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.result.data as { decision: string; reason: string | null };
  };
  expect(
    (
      await ingest([
        { type: "session.start", id: `a-${id}`, sessionId: s1, agent: "ops-bot" },
        { type: "session.start", id: `b-${id}`, sessionId: s2, agent: "builder" },
        { type: "tool.result", id: `r1-${id}`, sessionId: s1, callId: "k1", toolName: "bash", args: { command: "sudo rm -rf /" }, success: false, error: "Permission denied" },
        { type: "tool.result", id: `r2-${id}`, sessionId: s1, callId: "k2", toolName: "bash", args: { command: "ls -la" }, success: true },
      ])
    ).status,
  ).toBe(200);

  // The kill switch: a required reason, then a banner on every page and pause for every agent.
  await page.goto(`/w/${slug}/sessions`);
  await page.getByTestId("kill-switch").click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: "Pause all agents" }).click();
  await expect(dialog.getByRole("alert")).toContainText("Reason");
  await dialog.getByRole("textbox").fill("Incident 42: agents writing to prod");
  await dialog.getByRole("button", { name: "Pause all agents" }).click();
  const banner = page.getByTestId("workspace-hold-banner");
  await expect(banner).toContainText("Every agent in this workspace is paused");
  await expect(banner).toContainText("Incident 42: agents writing to prod");
  expect(await check(s2)).toMatchObject({ decision: "pause" });
  expect((await check(s2)).reason).toContain("Incident 42");
  await page.goto(`/w/${slug}/tools`);
  await expect(page.getByTestId("workspace-hold-banner")).toBeVisible();
  await shot(page, "kill-switch-banner");

  await page.getByTestId("workspace-hold-banner").getByRole("button", { name: /Resume/ }).click();
  await page.getByRole("dialog").getByRole("textbox").fill("All clear, carry on");
  await page.getByRole("dialog").getByRole("button", { name: "Resume agents" }).click();
  await expect(page.getByTestId("workspace-hold-banner")).toHaveCount(0);
  expect((await check(s2)).decision).toBe("allow");

  // One session: pause from its page, the agent is paused, resume.
  await page.goto(`/w/${slug}/sessions/${s2}`);
  await page.getByRole("button", { name: "Pause", exact: true }).click();
  await page.getByRole("dialog").getByRole("textbox").fill("Reviewing the migration");
  await page.getByRole("dialog").getByRole("button", { name: "Pause session" }).click();
  await expect(page.getByText("This session is paused.")).toBeVisible();
  expect(await check(s2)).toMatchObject({ decision: "pause", reason: "Reviewing the migration" });

  // The Sessions list shows it paused, with the agents row.
  await page.goto(`/w/${slug}/sessions`);
  await expect(page.getByRole("row").filter({ hasText: s2 })).toContainText("Paused");
  await expect(page.getByTestId("agent-builder")).toBeVisible();
  await shot(page, "sessions-list");

  await page.goto(`/w/${slug}/sessions/${s2}`);
  await page.getByRole("button", { name: "Resume", exact: true }).first().click();
  await page.getByRole("dialog").getByRole("button", { name: "Resume session" }).click();
  await expect(page.getByText("This session is paused.")).toHaveCount(0);
  expect((await check(s2)).decision).toBe("allow");

  // A message: queued, then delivered with the next check.
  await page.getByRole("textbox", { name: "Message" }).fill("Open a PR instead of pushing to main");
  await page.getByRole("button", { name: "Send" }).click();
  await expect(page.getByTestId("message-waiting")).toBeVisible();
  await check(s2);
  await page.reload();
  await expect(page.getByTestId("message-delivered")).toBeVisible();
  await shot(page, "session-page");

  // A key blocked by hand, under a tool level blocked by the sudo failure.
  await page.goto(`/w/${slug}/tools/${encodeURIComponent("bash|command=ls")}`);
  await page.getByRole("button", { name: /Block/ }).click();
  await page.getByRole("dialog").getByRole("textbox").fill("Listing the secrets dir");
  await page.getByRole("dialog").getByRole("button", { name: "Block", exact: true }).click();
  await expect(page.getByTestId("manual-state")).toContainText("Blocked by hand");
  await expect(page.getByText("manual", { exact: true }).first()).toBeVisible();

  await page.getByRole("button", { name: "Reset", exact: true }).click();
  const reach = page.getByRole("dialog").getByTestId("reset-level-reach");
  await expect(reach).toContainText("@tool:bash");
  await expect(reach).toContainText("blocked");
  await expect(page.getByRole("dialog").getByRole("checkbox")).toBeChecked();
  await shot(page, "key-reset-dialog");
  await page.getByRole("dialog").getByRole("button", { name: "Reset key and level" }).click();
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await expect(page.getByTestId("manual-state")).toHaveCount(0);
  expect((await check(s1, "bash", { command: "ls -la" })).decision).toBe("allow");
});
