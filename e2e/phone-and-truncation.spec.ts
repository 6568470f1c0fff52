import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { freshWorkspace, OWNER, query, signIn, trpc } from "./support";

/**
 * Phones, identifiers and closed sign-up: the sessions list as two-line rows at 390 px; ids cut
 * only on a real overflow, in the middle, with the full value in the title and a copy button,
 * never wrapped; number settings as wide as their largest value; a server with sign-up closed
 * says so on the sign-in and sign-up pages, and an invitation link still offers an account.
 */
const SHOTS = process.env.PHONE_SHOTS_DIR ?? "/tmp/shots-phone";
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1440, height: 900 };

const ago = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

/** Every identifier on the page stays on one line: its text box is one line high. */
async function identifierLines(page: Page) {
  return page.locator(".mid-trunc-text").evaluateAll((els) =>
    els
      .filter((el) => (el as HTMLElement).offsetParent !== null)
      .map((el) => {
        const lh = Number.parseFloat(getComputedStyle(el).lineHeight) || Number.parseFloat(getComputedStyle(el).fontSize) * 1.6;
        return { text: el.getAttribute("title") ?? "", lines: Math.round(el.getBoundingClientRect().height / lh) };
      }),
  );
}

test.describe("phone layouts and identifiers", () => {
  test.describe.configure({ mode: "serial" });
  let slug = "";
  const longId = `demo-d4e739a1b2c3-${Date.now().toString(36)}-2026-12-06-refactor-bot-s0`;
  const model = "claude-sonnet-4-5-20250929";

  test.beforeAll(async ({ browser }) => {
    test.setTimeout(120_000);
    const page = await browser.newPage();
    await signIn(page);
    const ws = await freshWorkspace(page, "phone");
    slug = ws.slug;
    const events = [];
    for (let i = 0; i < 75; i++) {
      const sessionId = i === 0 ? longId : `sess-${i.toString().padStart(3, "0")}-${Date.now().toString(36)}`;
      events.push(
        { type: "session.start", id: `${sessionId}-s`, sessionId, agent: i % 3 ? "refactor-bot" : "release-notes-writer", model, ts: ago(80 - i) },
        { type: "tool.result", id: `${sessionId}-r`, sessionId, callId: "c1", toolName: "Bash", args: { command: `ls ${i}` }, success: i % 7 !== 0, ...(i % 7 ? {} : { error: "exit 1" }), ts: ago(79 - i) },
      );
    }
    for (let i = 0; i < events.length; i += 50) expect((await trpc(page.request, "ingest.events", { events: events.slice(i, i + 50) }, ws.key)).status).toBe(200);
    await page.close();
  });

  test("75 sessions at 390 px: two-line rows, the page less than half the height of the stacked table", async ({ page }) => {
    fs.mkdirSync(SHOTS, { recursive: true });
    await signIn(page);
    await page.setViewportSize(PHONE);
    await page.goto(`/w/${slug}/sessions`);
    const rows = page.getByRole("table", { name: "Agent sessions" }).locator("tbody tr");
    await expect(rows).toHaveCount(50);
    const pager = page.getByRole("navigation", { name: "Pagination" });
    await expect(pager).toContainText("75 sessions");
    await expect(pager.getByRole("link", { name: "Older" })).toHaveAttribute("href", /after=/);
    // Ordered by something other than time, the links are the next and previous pages.
    await page.goto(`/w/${slug}/sessions?sort=events&dir=desc`);
    await expect(pager.getByRole("link", { name: "Next page" })).toHaveAttribute("href", /after=/);
    await expect(pager.getByRole("link", { name: "Older" })).toHaveCount(0);
    await page.goto(`/w/${slug}/sessions`);

    const first = rows.first();
    await expect(first.getByTestId("session-phone-line")).toBeVisible();
    await expect(first.getByTestId("session-phone-line")).toContainText(/\d+ calls?/);
    // Each row: the id and the status on line 1, agent · model · calls · last event on line 2.
    const heights = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
    for (const h of heights) expect(h).toBeLessThanOrEqual(64);
    const lineTops = await first.evaluate((tr) => {
      const top = (sel: string) => Math.round(tr.querySelector(sel)!.getBoundingClientRect().top);
      return { id: top(".session-col-id"), status: top(".session-col-status"), line: top(".session-col-phone") };
    });
    expect(Math.abs(lineTops.id - lineTops.status)).toBeLessThanOrEqual(4);
    expect(lineTops.line).toBeGreaterThan(lineTops.id + 10);
    for (const id of await identifierLines(page)) expect(id.lines, id.text).toBe(1);

    const twoLine = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.screenshot({ path: path.join(SHOTS, "sessions-390.png"), fullPage: true });
    await rows.nth(3).scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, "sessions-390-rows.png") });
    // The same rows laid out as the generic phone cards (every column a "label value" line).
    const stacked = await page.evaluate(() => {
      const wrap = document.querySelector(".sessions-table")!;
      wrap.classList.remove("sessions-table");
      for (const el of wrap.querySelectorAll<HTMLElement>(".session-col-phone")) el.style.display = "none";
      return document.documentElement.scrollHeight;
    });
    expect(twoLine).toBeLessThan(stacked / 2);

    await page.setViewportSize(DESKTOP);
    await page.reload();
    await expect(page.getByTestId("session-phone-line").first()).toBeHidden();
    await expect(page.getByRole("columnheader", { name: "Agent" })).toBeVisible();
    await page.screenshot({ path: path.join(SHOTS, "sessions-1440.png") });
  });

  test("a long session id: whole at 1440 px, cut in the middle at 390 px with its end, title and copy button; never wrapped", async ({ page }) => {
    await signIn(page);
    await page.goto(`/w/${slug}/sessions/${encodeURIComponent(longId)}`);
    const title = page.locator("h1 .mid-trunc").first();
    const text = title.locator(".mid-trunc-text");
    await expect(text).toHaveAttribute("title", longId);
    await expect(title).not.toHaveAttribute("data-truncated", /.*/);
    await expect(text).toHaveText(longId);
    const modelName = page.locator(".page-description .mid-trunc").filter({ hasText: model });
    await expect(modelName).not.toHaveAttribute("data-truncated", /.*/);
    for (const id of await identifierLines(page)) expect(id.lines, id.text).toBe(1);
    await page.screenshot({ path: path.join(SHOTS, "session-1440.png") });

    await page.setViewportSize(PHONE);
    await page.reload();
    await expect(title).toHaveAttribute("data-truncated", "true");
    const shown = (await title.locator(".mid-trunc-shown").innerText()).trim();
    expect(shown).toContain("…");
    expect(shown.endsWith("-refactor-bot-s0")).toBe(true);
    // Drawn inside its box: the cut text does not run under the copy button.
    const box = await text.boundingBox();
    const drawn = await title.locator(".mid-trunc-shown").evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect(drawn).toBe(true);
    expect(box!.x + box!.width).toBeLessThanOrEqual((await title.getByRole("button").boundingBox())!.x + 1);
    expect(longId.startsWith(shown.split("…")[0])).toBe(true);
    await expect(text).toHaveAttribute("title", longId);
    // The whole id is still the text (screen readers, find-in-page); only its drawing is cut, drawn hidden from screen readers.
    await expect(text.locator(".mid-trunc-whole")).toHaveText(longId);
    await expect(title.locator(".mid-trunc-shown")).toHaveAttribute("aria-hidden", "true");
    for (const id of await identifierLines(page)) expect(id.lines, id.text).toBe(1);
    const copy = title.getByRole("button", { name: "Copy session id" });
    await copy.focus();
    await expect(copy).toBeFocused();
    await page.screenshot({ path: path.join(SHOTS, "session-390.png"), fullPage: true });
  });

  test("number settings show their widest value at 390 px (workspace settings and organization defaults)", async ({ page }) => {
    await signIn(page);
    await page.setViewportSize(PHONE);
    for (const [url, level] of [
      [`/w/${slug}/settings?tab=settings`, "workspace"],
      ["/org/defaults?tab=settings", "organization"],
    ] as const) {
      await page.goto(url);
      const input = page.getByLabel(`Open call after (${level} value)`);
      await input.scrollIntoViewIfNeeded();
      await input.fill("9999999999");
      const fit = await input.evaluate((el: HTMLInputElement) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(fit.scroll, `${url}: digits clipped`).toBeLessThanOrEqual(fit.client);
      await page.screenshot({ path: path.join(SHOTS, `settings-${level}-390.png`), fullPage: true });
    }
    // The rule editor's thresholds beside their units ("failures", "in a row").
    await page.goto(`/w/${slug}/settings?tab=rules`);
    await page.screenshot({ path: path.join(SHOTS, "rules-390.png"), fullPage: true });
    await page.setViewportSize(DESKTOP);
    await page.goto(`/w/${slug}/settings?tab=settings`);
    await page.screenshot({ path: path.join(SHOTS, "settings-workspace-1440.png"), fullPage: true });
  });
});

test.describe("sign-up closed", () => {
  const port = Number(process.env.E2E_PORT ?? "3100") + 1013;
  const base = `http://127.0.0.1:${port}`;
  let server: ChildProcess | undefined;
  test.describe.configure({ mode: "serial" });

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = spawn(process.execPath, ["scripts/e2e-server.mjs"], { env: { ...process.env, E2E_PORT: String(port), VIGIL_ALLOW_SIGNUP: "false" }, stdio: "ignore" });
    const deadline = Date.now() + 90_000;
    for (;;) {
      const ok = await fetch(`${base}/api/health`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`closed-sign-up server on ${port} did not start`);
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  test.afterAll(async () => {
    if (!server || server.exitCode !== null) return;
    const exited = new Promise((r) => server!.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  });

  test("sign-in and sign-up say sign-up is closed before any form; an invitation link still offers an account", async ({ browser }) => {
    const guest = await browser.newContext({ baseURL: base });
    const page = await guest.newPage();
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await page.goto("/sign-up");
      await expect(page.getByTestId("signup-closed")).toContainText("Sign-up is closed on this server: ask an owner for an invitation");
      await expect(page.getByLabel("Email")).toHaveCount(0);
      await expect(page.getByRole("button", { name: "Create account" })).toHaveCount(0);
      await page.screenshot({ path: path.join(SHOTS, `signup-closed-${size.width}.png`) });
    }
    await page.goto("/sign-in");
    await expect(page.getByTestId("signup-closed-note")).toContainText("Sign-up is closed on this server: ask an owner for an invitation");
    await expect(page.getByRole("link", { name: "Create one" })).toHaveCount(0);

    const owner = await browser.newContext({ baseURL: base });
    const op = await owner.newPage();
    await signIn(op, OWNER);
    const me = await query(op.request, "account.me", undefined);
    const organizationId = me.body.result.data.organizations[0].id as string;
    const invitation = await trpc(op.request, "invitations.create", { organizationId, role: "viewer" });
    expect(invitation.status).toBe(200);
    await page.goto(`/invite/${invitation.body.result.data.token}`);
    await expect(page.getByRole("button", { name: "Create account and join" })).toBeVisible();
    await expect(page.getByLabel("Email")).toBeVisible();
    await owner.close();
    await guest.close();
  });
});
