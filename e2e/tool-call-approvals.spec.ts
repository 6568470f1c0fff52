import { expect, test } from "@playwright/test";
import { freshWorkspace, minutesAgo, signIn, toolResult, trpc } from "./support";

test("an agent's guard.check waits; a person approves it from the keyboard on the Approvals page; the call returns allow", async ({ page, playwright, baseURL }) => {
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "toolcall");
  const url = "https://deploy.example/v1/releases";
  const failures = [1, 2, 3].map((m) => toolResult("agent-7", "http_request", { url }, false, minutesAgo(10 - m)));
  const res = await trpc(page.request, "ingest.events", { events: [{ type: "session.start", id: `start-${Date.now()}`, sessionId: "agent-7", agent: "deployer", model: "model-a" }, ...failures] }, key);
  expect(res.status).toBe(200);

  await page.goto(`/w/${slug}/approvals`);
  await expect(page.getByRole("heading", { name: /Waiting tool calls/ })).toBeVisible();

  // The agent, as its own HTTP client: holds the request open for up to 60 s.
  const agent = await playwright.request.newContext({ baseURL });
  const started = Date.now();
  const waiting = trpc(agent, "guard.check", { id: `g-${Date.now()}`, sessionId: "agent-7", callId: "call-1", toolName: "http_request", args: { url, method: "POST" }, waitForApprovalSeconds: 60 }, key);

  // It appears live, first, with what the person needs to decide.
  const card = page.getByRole("article", { name: "Tool call http_request waiting for approval" });
  await expect(card).toBeVisible({ timeout: 5_000 });
  await expect(card).toContainText("deployer");
  await expect(card).toContainText("model-a");
  await expect(card).toContainText("deploy.example");
  await expect(card).toContainText(/waiting \d+s/);
  await expect(card.getByRole("link", { name: "agent-7" })).toHaveAttribute("href", `/w/${slug}/sessions/agent-7`);
  await expect(page.getByTestId("keyboard-hint")).toContainText("approve once");

  // Keyboard: `d` opens the required comment, Escape cancels, `a` approves once.
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("d");
  await expect(page.getByLabel(/Why deny/)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(card.getByRole("alert")).toContainText("A comment is required");
  await page.keyboard.press("Escape");
  await page.keyboard.press("a");

  const out = await waiting;
  expect(out.status).toBe(200);
  expect(out.body.result.data).toMatchObject({ decision: "allow", failureKey: "http_request|domain=deploy.example|path_prefix=v1" });
  expect(Date.now() - started).toBeLessThan(30_000);
  await expect(card).toHaveCount(0);
  await expect(page.getByRole("table", { name: "Resolved approvals" })).toContainText("Tool call");
  await agent.dispose();

  await page.goto(`/w/${slug}/audit`);
  await expect(page.getByRole("table").getByText("approval.tool_call.approve")).toBeVisible();
});
