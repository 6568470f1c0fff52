/**
 * Settings → Notifications end to end: an admin adds a webhook channel pointing at a local HTTP
 * receiver, the signing secret is shown once (with a copy button), Send test of a chosen event arrives
 * signed, and the delivery log under the channel shows it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHmac } from "node:crypto";
import { expect, test } from "@playwright/test";
import { freshWorkspace, signIn } from "./support";

test("notifications: admin adds a webhook channel, Send test arrives signed, the delivery log shows it", async ({ page }) => {
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200).end("thanks");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/vigil`;
  try {
    await signIn(page);
    const { slug } = await freshWorkspace(page, "notify");
    await page.goto(`/w/${slug}/settings?tab=notifications`);
    await expect(page.getByText("No channels")).toBeVisible();

    await page.getByLabel("Name").fill("on-call");
    await page.getByLabel("URL").fill("ftp://example.com/x");
    await page.getByRole("button", { name: "Add channel" }).click();
    await expect(page.getByText(/http\(s\)/).first()).toBeVisible();

    await page.getByLabel("URL").fill(url);
    await page.getByRole("button", { name: "Add channel" }).click();
    const secretBox = page.getByTestId("channel-secret");
    await expect(secretBox).toBeVisible();
    const secret = (await secretBox.locator("code").textContent())!.trim();
    expect(secret).toMatch(/^vgls_/);
    await expect(secretBox.getByRole("button", { name: "Copy signing secret" })).toBeVisible();

    const card = page.getByTestId("notification-channel").filter({ hasText: "on-call" });
    await expect(card).toContainText("Enabled");
    // The row's actions are a menu a keyboard opens, walks and closes.
    const actions = card.getByRole("button", { name: "Actions for on-call" });
    await actions.focus();
    await page.keyboard.press("Enter");
    await expect(page.getByRole("menuitem", { name: "Delivery log" })).toBeFocused();
    await page.keyboard.press("ArrowDown");
    await expect(page.getByRole("menuitem", { name: "Send test…" })).toBeFocused();
    await page.keyboard.press("Escape");
    await expect(page.getByRole("menu")).toHaveCount(0);
    await expect(actions).toBeFocused();
    await actions.click();
    await page.getByRole("menuitem", { name: "Send test…" }).click();
    await card.getByLabel("Send a test of").selectOption("budget_exhausted");
    await card.getByRole("button", { name: "Send test" }).click();
    await expect.poll(() => received.length).toBe(1);
    const { headers, body } = received[0];
    const expected = "sha256=" + createHmac("sha256", secret).update(`${headers["x-vigil-timestamp"]}.${body}`).digest("hex");
    expect(headers["x-vigil-signature"]).toBe(expected);
    expect(JSON.parse(body)).toMatchObject({ test: true, workspace: slug, event: "budget_exhausted" });

    // The delivery log opens under its channel.
    const log = card.getByTestId("delivery-log");
    await expect(log).toContainText("sent");
    await expect(log).toContainText("200");
    await expect(log).toContainText("thanks");
    await page.reload();
    await expect(page.getByTestId("channel-secret")).toHaveCount(0); // never shown again
    await expect(page.getByText(secret)).toHaveCount(0);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
