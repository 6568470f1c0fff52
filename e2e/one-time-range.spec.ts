import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { LONG } from "../tests/fixtures/hostile";
import { freshWorkspace, minutesAgo, signIn, toolResult, trpc } from "./support";

/**
 * One time range across the dashboard: every page opens on the same default, a picked range is
 * kept as people move between pages (an explicit ?range= in a link wins), Overview's stat cards
 * count the picked range, and filters apply as they are picked (no Apply button). Long failure
 * keys break only between their parts; both audit pages filter with the one audit table.
 * Screenshots of each page at 1440 and 390 px go to H3_SHOTS_DIR.
 */
const SHOTS = process.env.H3_SHOTS_DIR ?? "/tmp/shots-h3";
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1440, height: 900 };

const OLD_HOST = "old-range.example.com";
const NEW_HOST = "new-range.example.com";
const LONG_TOOL = "mcp__github-enterprise-internal__create_pull_request_review_comment_thread";
const LONG_HOST = "a-very-long-internal-service-name-for-the-billing-reconciliation-pipeline.eu-west-1.internal.example-corp.com";
const MODEL = "claude-sonnet-4-5-20250929";
/** Dated model names up to 32 characters, each shown whole in the Sessions table at 1440 px. */
const DATED_MODELS = [MODEL, "gpt-4.1-mini-2025-04-14", "gemini-2.5-flash-preview-05-20", "claude-3-5-sonnet-20241022-v2:01"];

let slug = "";

const pickedRange = (page: Page) => page.getByRole("navigation", { name: "Time range" }).locator('[aria-current="page"]');
const failuresCard = (page: Page) => page.locator("a.stat", { hasText: "Failures ·" });

test.describe("one time range", () => {
  test.beforeAll(async ({ browser }) => {
    test.setTimeout(120_000);
    const page = await browser.newPage();
    await signIn(page);
    const ws = await freshWorkspace(page, "range");
    slug = ws.slug;
    const tenDays = 10 * 24 * 60;
    const session = `range-${Date.now().toString(36)}`;
    const events = [
      { type: "session.start", id: `${session}-s`, sessionId: session, agent: "range-bot", model: MODEL, ts: minutesAgo(tenDays + 5) },
      ...[0, 1, 2].map((i) => toolResult(session, "fetch", { url: `https://${OLD_HOST}/v1/x` }, false, minutesAgo(tenDays - i))),
      ...[0, 1].map((i) => toolResult(session, "fetch", { url: `https://${NEW_HOST}/v1/y` }, false, minutesAgo(60 - i))),
      toolResult(session, LONG_TOOL, { url: `https://${LONG_HOST}/repos/acme/billing/pulls/4711/comments` }, false, minutesAgo(30)),
      toolResult(session, "fetch", { url: `https://${LONG_HOST}/v2/reconcile` }, false, minutesAgo(20)),
    ];
    // Sessions whose other columns are as wide as they get: a very long id and agent name.
    DATED_MODELS.forEach((model, i) => {
      const sessionId = `${LONG.session}-${i}`;
      events.push({ type: "session.start", id: `${sessionId}-s`, sessionId, agent: `${LONG.agent}-${i}`, model, ts: minutesAgo(50 - i) });
    });
    expect((await trpc(page.request, "ingest.events", { events }, ws.key)).status).toBe(200);
    await page.close();
  });

  test("a picked range carries across pages, the stat cards follow it, a deep link's range wins, filters apply as picked", async ({ page }) => {
    test.setTimeout(180_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    await signIn(page);
    await page.setViewportSize(DESKTOP);

    // Every page opens on the one default: 7 days.
    for (const p of ["overview", "tools", "failures", "sessions", "patterns", "models", "audit"]) {
      await page.goto(`/w/${slug}/${p}`);
      await expect(pickedRange(page), p).toHaveText("7 d");
    }

    await page.goto(`/w/${slug}/overview`);
    await expect(failuresCard(page)).toContainText("last 7 days");
    await expect(failuresCard(page).locator(".stat-value")).toHaveText("4");
    await page.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "30 d" }).click();
    await expect(page).toHaveURL(/[?&]range=30d\b/);
    // The stat card counts the picked range (the failures 10 days ago now count) and says so.
    await expect(failuresCard(page)).toContainText("last 30 days");
    await expect(failuresCard(page).locator(".stat-value")).toHaveText("7");
    await expect(page.locator("a.stat", { hasText: "Trusted keys now" })).toBeVisible();

    // The sidebar's links keep the range.
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Tools", exact: true }).click();
    await page.waitForURL(`**/w/${slug}/tools`);
    await expect(pickedRange(page)).toHaveText("30 d");
    await nav.getByRole("link", { name: "Failures", exact: true }).click();
    await page.waitForURL(`**/w/${slug}/failures`);
    await expect(pickedRange(page)).toHaveText("30 d");
    // The export takes the range on screen.
    await page.getByRole("button", { name: "Export" }).click();
    const exportHref = await page.getByRole("menuitem", { name: /CSV/ }).or(page.getByRole("link", { name: /CSV/ })).first().getAttribute("href");
    await page.keyboard.press("Escape");
    expect(exportHref).toMatch(/range=30d/);

    // A filter applies as it is picked: no Apply button, the URL and the list follow.
    await page.getByRole("navigation", { name: "View" }).getByRole("link", { name: "All failures" }).click();
    await page.waitForURL(/view=list/);
    const table = page.getByRole("table", { name: "Failures" });
    await expect(table).toContainText(OLD_HOST);
    await expect(page.getByRole("button", { name: "Apply" })).toHaveCount(0);
    await page.getByLabel("Tool", { exact: true }).selectOption(LONG_TOOL);
    await expect(page).toHaveURL(new RegExp(`[?&]tool=${encodeURIComponent(LONG_TOOL)}`));
    await expect(page).toHaveURL(/[?&]range=30d\b/);
    await expect(table).not.toContainText(OLD_HOST);
    // Back steps out of the filter, and the select shows it.
    await page.goBack();
    await expect(page).not.toHaveURL(/[?&]tool=/);
    await expect(page.getByLabel("Tool", { exact: true })).toHaveValue("");
    await expect(table).toContainText(OLD_HOST);
    // Typed text applies after a pause, without Enter.
    await page.getByRole("searchbox", { name: "Search failures by error text" }).fill("503");
    await expect(page).toHaveURL(/[?&]q=503\b/);
    // A closed select stepped through with the arrow keys applies where it stops, once (each key
    // press is a change: applied at once, every step would load the page and add a history entry).
    await page.goto(`/w/${slug}/failures?view=list&range=30d`);
    const toolSelect = page.getByLabel("Tool", { exact: true });
    const toolValues = await toolSelect.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    const steps = Math.min(3, toolValues.length - 1);
    expect(steps).toBeGreaterThan(1);
    const historyBefore = await page.evaluate(() => history.length);
    await toolSelect.focus();
    for (let i = 0; i < steps; i++) await page.keyboard.press("ArrowDown");
    await expect.poll(() => new URL(page.url()).searchParams.get("tool")).toBe(toolValues[steps]);
    await page.waitForTimeout(1000);
    expect(await page.evaluate(() => history.length)).toBe(historyBefore + 1);
    await expect(toolSelect).toHaveValue(toolValues[steps]);

    // A deep link's range wins over the remembered one, and is remembered in turn.
    await page.goto(`/w/${slug}/tools?range=all`);
    await expect(pickedRange(page)).toHaveText("All");
    // The page remembers its window once it runs in the browser (not with its first HTML).
    await expect.poll(async () => decodeURIComponent((await page.context().cookies()).find((c) => c.name === "vigil_range")?.value ?? "")).toBe("range=all");
    await page.goto(`/w/${slug}/sessions`);
    await expect(pickedRange(page)).toHaveText("All");
    await page.goto(`/w/${slug}/overview?range=24h`);
    await expect(failuresCard(page)).toContainText("last 24 hours");
    await expect(failuresCard(page).locator(".stat-value")).toHaveText("4");
  });

  test("long failure keys break only between parts and cut a too-wide part with an ellipsis", async ({ page }) => {
    await signIn(page);
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await page.goto(`/w/${slug}/tools?range=30d`);
      const parts = page.locator(".fkey-wrap .fkey-part");
      await expect(parts.first()).toBeVisible();
      // Each part is one line high: a tool name or URL never breaks inside.
      const broken = await parts.evaluateAll((els) =>
        els
          .filter((el) => (el as HTMLElement).offsetParent !== null)
          .map((el) => {
            const text = el.querySelector(".mid-trunc-text") as HTMLElement;
            const lh = Number.parseFloat(getComputedStyle(text).lineHeight) || Number.parseFloat(getComputedStyle(text).fontSize) * 1.6;
            return { part: text.title, lines: Math.round(text.getBoundingClientRect().height / lh) };
          })
          .filter((p) => p.lines > 1),
      );
      expect(broken, `${size.width} px`).toEqual([]);
      // Nothing sticks out sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      if (size === PHONE) {
        // On a phone the long host is cut in its middle, with the whole part in the tooltip.
        const cut = page.locator(`.fkey-part[data-truncated] .mid-trunc-text[title*="${LONG_HOST}"]`);
        await expect(cut.first()).toBeAttached();
        await expect(cut.first().locator(".mid-trunc-shown")).toContainText("…");
      }
    }
    // The key page's title copies the whole key.
    await page.setViewportSize(DESKTOP);
    await page.goto(`/w/${slug}/tools?range=30d&q=${encodeURIComponent(LONG_TOOL)}`);
    await page.locator("a.row-link").first().click();
    await expect(page.locator(".key-title .copy-value")).toBeVisible();

  });

  test("sessions at 1440 px: dated model names whole beside a very long id and agent, the table within its card", async ({ page }) => {
    await signIn(page);
    await page.setViewportSize(DESKTOP);
    await page.goto(`/w/${slug}/sessions?range=30d`);
    const table = page.getByRole("table", { name: "Agent sessions" });
    await expect(table.locator("tbody tr")).toHaveCount(DATED_MODELS.length + 1);
    for (const name of DATED_MODELS) {
      const model = table.locator(`td .mid-trunc:visible:has(.mid-trunc-text[title="${name}"])`).first();
      await expect(model).toBeVisible();
      await expect(model, name).not.toHaveAttribute("data-truncated", /.*/);
      const fit = await model.locator(".mid-trunc-text").evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, text: (el as HTMLElement).innerText }));
      expect(fit.scroll, `${name} clipped`).toBeLessThanOrEqual(fit.client);
      expect(fit.text).toBe(name);
    }
    // The long id and agent give way instead: cut in the middle, the whole value in the tooltip.
    const agent = table.locator(`.mid-trunc:visible:has(.mid-trunc-text[title="${LONG.agent}-0"])`);
    await expect(agent).toHaveAttribute("data-truncated", "true");
    const id = table.locator(`.mid-trunc:visible:has(.mid-trunc-text[title="${LONG.session}-0"])`);
    await expect(id).toHaveAttribute("data-truncated", "true");
    await expect(id.locator(".mid-trunc-shown")).toContainText(/….*-0$/);
    const region = page.getByRole("region", { name: "Agent sessions" });
    const overflow = await region.evaluate((el) => el.scrollWidth - el.clientWidth);
    expect(overflow, "the table scrolls inside its card").toBeLessThanOrEqual(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}/sessions-long-1440.png` });
  });

  test("both audit pages filter as picked with the one audit table", async ({ page }) => {
    await signIn(page);
    await page.setViewportSize(DESKTOP);
    // Audited actions in the workspace: a settings change and a second key.
    expect((await trpc(page.request, "apiKeys.create", { workspaceSlug: slug, name: "second key", scope: "agent" })).status).toBe(200);
    await page.goto(`/w/${slug}/audit`);
    const table = page.getByRole("table", { name: "Audit log" });
    await expect(table.locator("tbody tr").first()).toBeVisible();
    const action = page.getByLabel("Action", { exact: true });
    const options = await action.locator("option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter((v) => v && !v.endsWith(".")));
    expect(options.length).toBeGreaterThan(0);
    await action.selectOption(options[0]);
    await expect(page).toHaveURL(new RegExp(`[?&]action=${options[0].replace(".", "\\.")}`));
    const shown = await table.locator("tbody .badge").allTextContents();
    expect(shown.length).toBeGreaterThan(0);
    for (const a of shown) expect(a).toBe(options[0]);
    await page.getByLabel("Actor type").selectOption("user");
    await expect(page).toHaveURL(/[?&]actor=user\b/);

    await page.goto("/org/audit");
    const orgTable = page.getByRole("table", { name: "Organization audit log" });
    await expect(orgTable.getByRole("columnheader", { name: "Workspace" })).toHaveCount(0);
    await page.getByLabel("Scope").selectOption("all");
    await expect(page).toHaveURL(/[?&]scope=all\b/);
    await expect(orgTable.getByRole("columnheader", { name: "Workspace" })).toBeVisible();
    await expect(orgTable.getByText("workspace.create", { exact: true }).first()).toBeVisible();
  });

  test("screenshots at 1440 and 390 px", async ({ page }) => {
    test.setTimeout(120_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    await signIn(page);
    const pages: [string, string][] = [
      ["overview", `/w/${slug}/overview?range=30d`],
      ["tools", `/w/${slug}/tools?range=30d`],
      ["failures", `/w/${slug}/failures?range=30d`],
      ["failures-list", `/w/${slug}/failures?range=30d&view=list`],
      ["sessions", `/w/${slug}/sessions?range=30d`],
      ["audit", `/w/${slug}/audit?range=30d`],
      ["org-audit", `/org/audit?scope=all`],
      ["rules", `/w/${slug}/settings?tab=rules`],
    ];
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      for (const [name, url] of pages) {
        await page.goto(url);
        await page.waitForLoadState("networkidle");
        await page.screenshot({ path: `${SHOTS}/${name}-${size.width}.png`, fullPage: true });
        // Nothing makes the page scroll sideways (the element that would is named).
        const sticksOut = await page.evaluate(() => {
          const vw = document.documentElement.clientWidth;
          if (document.documentElement.scrollWidth <= vw) return [];
          return [...document.querySelectorAll<HTMLElement>("body *")]
            .filter((el) => el.getBoundingClientRect().right > vw + 1 && el.getClientRects().length > 0)
            .slice(-3)
            .map((el) => `<${el.tagName.toLowerCase()} class="${el.className}"> ${Math.round(el.getBoundingClientRect().right)} px`);
        });
        expect(sticksOut, `${name} at ${size.width} px`).toEqual([]);
      }
    }
  });
});
