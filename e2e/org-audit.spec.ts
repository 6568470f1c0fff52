import { spawn, type ChildProcess } from "node:child_process";
import { expect, test } from "@playwright/test";
import { smtpReceiver } from "../tests/support/smtp-receiver";
import { OWNER, signIn } from "./support";

/**
 * Emailed invitations and the organization's audit log, on a server of its own (E2E_PORT + 1003)
 * whose VIGIL_SMTP_URL points at an SMTP receiver in this process: the owner invites by email on
 * Organization → Members, the page says it was emailed and the receiver holds the link; then
 * Organization → Audit log lists the invitation and the email, filters by action group, and reads
 * on a phone.
 */
const port = Number(process.env.E2E_PORT ?? "3100") + 1003;
const base = `http://127.0.0.1:${port}`;
const shots = process.env.E2E_SCREENSHOTS ?? "test-results";
let server: ChildProcess | undefined;
let receiver: Awaited<ReturnType<typeof smtpReceiver>>;

test.describe.configure({ mode: "serial" });
test.use({ baseURL: base });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  receiver = await smtpReceiver();
  server = spawn(process.execPath, ["scripts/e2e-server.mjs"], {
    env: { ...process.env, E2E_PORT: String(port), VIGIL_SMTP_URL: `smtp://127.0.0.1:${receiver.port}`, VIGIL_SMTP_FROM: "Vigil <vigil@e2e.test>" },
    stdio: "ignore",
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ok = await fetch(`${base}/api/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`SMTP server on ${port} did not start`);
    await new Promise((r) => setTimeout(r, 500));
  }
});

test.afterAll(async () => {
  await receiver?.close();
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((r) => server!.once("exit", r));
  server.kill("SIGTERM");
  await exited;
});

test("an owner emails an invitation; the organization's audit log shows it, filtered and on a phone", async ({ page }) => {
  await signIn(page);
  await page.goto("/org/members");
  const invitations = page.locator("#invitations");
  await invitations.getByLabel("Email the link to").fill("invitee@e2e.test");
  await invitations.getByLabel("Role").selectOption("viewer");
  await invitations.getByRole("button", { name: "Create invitation link" }).click();
  await expect(page.getByTestId("invitation-email-status")).toHaveText(/Emailed to invitee@e2e\.test/);
  const link = (await page.getByTestId("invitation-link").innerText()).trim();
  expect(link).toMatch(new RegExp(`^${base}/invite/[A-Za-z0-9_-]{40,}$`));
  await page.screenshot({ path: `${shots}/org-members-emailed-1440.png`, fullPage: true });
  await expect.poll(() => receiver.messages.length).toBe(1);
  const mail = receiver.messages[0].data.replace(/=\r\n/g, "");
  expect(receiver.messages[0].to).toEqual(["<invitee@e2e.test>"]);
  expect(mail).toMatch(new RegExp(`^Subject: ${OWNER.email.replace(/\./g, "\\.")} invited you to E2E Org on Vigil`, "m"));
  expect(mail).toContain(link);

  // The audit log, from the organization's navigation.
  await page.getByRole("navigation").getByRole("link", { name: "Audit log" }).last().click();
  await page.waitForURL("**/org/audit");
  await expect(page.getByRole("heading", { name: "Audit log" })).toBeVisible();
  const table = page.getByRole("table", { name: "Organization audit log" });
  await expect(table.getByText("invitation.email", { exact: true })).toBeVisible();
  await expect(table.getByText("invitation.create", { exact: true })).toBeVisible();
  await expect(table.getByText("organization.create", { exact: true })).toBeVisible();
  await page.screenshot({ path: `${shots}/org-audit-1440.png`, fullPage: true });

  // Filter: the invitation group only.
  // Applies as picked: no Apply button.
  await page.getByLabel("Action").selectOption("invitation.");
  await page.waitForURL(/action=invitation\./);
  await expect(table.getByText("organization.create", { exact: true })).toHaveCount(0);
  await expect(table.getByText("invitation.create", { exact: true })).toBeVisible();

  // Scope: every workspace too, with the workspace named.
  await page.goto("/org/audit?scope=all");
  await expect(table.getByRole("columnheader", { name: "Workspace" })).toBeVisible();
  await expect(table.getByText("workspace.create", { exact: true })).toBeVisible();
  const clipped = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>(".table-scroll")].some((r) => r.scrollWidth > r.clientWidth + 1));
  expect(clipped).toBe(false);
  await page.screenshot({ path: `${shots}/org-audit-all-1440.png`, fullPage: true });

  // Nothing matching: the empty state.
  await page.goto("/org/audit?action=nothing.");
  await expect(page.getByText("No entries match")).toBeVisible();

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/org/audit");
  await expect(table.getByText("invitation.email", { exact: true })).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: `${shots}/org-audit-390.png`, fullPage: true });
  await page.goto("/org/members");
  await page.screenshot({ path: `${shots}/org-members-390.png`, fullPage: true });
});
