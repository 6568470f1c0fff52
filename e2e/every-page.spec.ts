import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { HOSTILE_SESSION, LONG, LONG_SESSION, SECRETS, SECRET_VALUES, XSS, XSS_ALL, hostileEvents } from "../tests/fixtures/hostile";
import { query, signIn, trpc } from "./support";

/**
 * Hostile content on every page (issue 13.5) and layouts that never widen or clip (issue 11.4, 11.6):
 * a workspace and organization seeded through the public API with script-bearing strings, very long
 * names and secrets in tool arguments; then every dashboard page at 1440×900 and 390×844 must keep
 * `window.__pwned` unset, open no dialog, carry no `javascript:` link, show no secret, never scroll
 * sideways, keep every table inside its card without an inner scroll bar, and break a failure key
 * inside a parameter only when the parameter is wider than its line.
 * HOSTILE_SCREENSHOTS=<dir> saves a screenshot of the first screen of every page and size.
 */

const VIEWPORTS = [
  { name: "desktop", width: 1440, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

const SETTINGS_TABS = ["rules", "settings", "tool-classes", "extractors", "security", "retention", "api-keys", "notifications", "import-export"];
const screenshotDir = process.env.HOSTILE_SCREENSHOTS;

type Seed = { slug: string; keyPages: string[] };

async function seed(page: Page): Promise<Seed> {
  const id = Date.now().toString(36);
  const slug = `hostile-${id}`;
  // An organization and a workspace whose names are markup.
  const org = await trpc(page.request, "account.createOrganization", {
    name: `Org ${XSS.img}`.slice(0, 100),
    workspaceSlug: slug,
    workspaceName: `WS ${XSS.script}`.slice(0, 100),
  });
  expect(org.status, JSON.stringify(org.body)).toBe(200);
  const created = await trpc(page.request, "apiKeys.create", { workspaceSlug: slug, name: `key ${XSS.svg}`, scope: "admin" });
  expect(created.status).toBe(200);
  const key = created.body.result.data.value as string;

  // Ask mode, so recoveries and tool calls wait for a person on the Approvals page.
  expect((await trpc(page.request, "config.put", { settings: { recovery_mode: "ask" } }, key)).status).toBe(200);
  const ingest = await trpc(page.request, "ingest.events", { events: hostileEvents(Date.now(), id) }, key);
  expect(ingest.status, JSON.stringify(ingest.body).slice(0, 500)).toBe(200);

  // Tool-call approvals with secret arguments: one left pending, one denied with a hostile comment.
  for (const callId of ["approve-me", "deny-me"]) {
    const guard = await trpc(
      page.request,
      "guard.check",
      {
        id: `g-${callId}`,
        sessionId: `guarded-${XSS.script}`,
        callId,
        toolName: "http_request",
        args: { url: XSS.url, password: SECRETS.password, headers: { authorization: SECRETS.authorization } },
        waitForApprovalSeconds: 0.2,
      },
      key,
    );
    expect(guard.status).toBe(200);
    expect(guard.body.result.data.decision).toBe("ask");
  }
  const pending = await query(page.request, "approvals.list", { status: "pending" }, key);
  const approvals = pending.body.result.data.approvals as { id: string; callId: string | null }[];
  const deny = approvals.find((a) => a.callId === "deny-me");
  expect(deny).toBeTruthy();
  expect((await trpc(page.request, "approvals.resolve", { approvalId: deny!.id, decision: "deny", comment: `${XSS_ALL} token=${SECRETS.token}` }, key)).status).toBe(200);

  // One stalled session resumed with hostile guidance; the long one stays paused.
  const resume = await trpc(page.request, "sessions.resume", { sessionId: HOSTILE_SESSION, guidance: `${XSS.svg} password=${SECRETS.password}` }, key);
  expect(resume.status, JSON.stringify(resume.body).slice(0, 300)).toBe(200);

  // Every failure key's page, found the way a person finds them: from the Tools table.
  await page.goto(`/w/${slug}/tools`);
  const hrefs = await page.locator(`a.row-link[href*="/tools/"]`).evaluateAll((as) => as.map((a) => a.getAttribute("href")!));
  expect(hrefs.length).toBeGreaterThanOrEqual(4);
  return { slug, keyPages: [...new Set(hrefs)] };
}

function pagesOf({ slug, keyPages }: Seed): string[] {
  const w = `/w/${slug}`;
  return [
    `${w}/overview`,
    `${w}/tools`,
    ...keyPages,
    `${w}/failures`,
    `${w}/sessions`,
    `${w}/sessions/${encodeURIComponent(HOSTILE_SESSION)}`,
    `${w}/sessions/${encodeURIComponent(LONG_SESSION)}`,
    `${w}/patterns`,
    `${w}/models`,
    `${w}/approvals`,
    `${w}/approvals?status=resolved`,
    ...SETTINGS_TABS.map((t) => `${w}/settings?tab=${t}`),
    `${w}/policies`,
    `${w}/audit`,
    `${w}/connect`,
    // Time windows (issue 11.2): the picker and the windowed columns and charts fit too.
    `${w}/overview?range=all`,
    `${w}/tools?range=7d`,
    `${w}/models?range=24h`,
    `${w}/sessions?range=7d&q=session`,
    "/org",
    "/org/workspaces",
    "/org/members",
    "/org/defaults",
    "/org/policies",
    "/org/patterns",
    "/org/audit",
    "/org/audit?scope=all",
  ];
}

/** Problems on the current page, as readable strings (empty when the page is clean). */
async function inspect(page: Page): Promise<string[]> {
  return page.evaluate(
    ({ secrets }) => {
      const problems: string[] = [];
      if ((window as unknown as { __pwned?: unknown }).__pwned !== undefined) problems.push("window.__pwned was set");
      const root = document.scrollingElement!;
      if (root.scrollWidth > root.clientWidth) problems.push(`page scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
      // Elements that stick out of the screen without a scrolling or clipping box around them name
      // the culprit (tab strips scroll sideways on purpose; tables are checked below).
      const vw = document.documentElement.clientWidth;
      const clippedOrScrolled = (el: HTMLElement) => {
        for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
          if (getComputedStyle(p).overflowX !== "visible" && p.getBoundingClientRect().right <= vw + 1) return true;
        }
        return false;
      };
      const outside = [...document.querySelectorAll<HTMLElement>("body *")]
        .filter((el) => el.getBoundingClientRect().right > vw + 1 && el.getClientRects().length > 0 && !clippedOrScrolled(el))
        .slice(0, 3);
      for (const el of outside) problems.push(`sticks out (${Math.round(el.getBoundingClientRect().right)} px): <${el.tagName.toLowerCase()} class="${el.className}">`);
      // Tables fit their card: no inner sideways scroll (columns wrap on desktops, rows are cards on phones).
      for (const region of document.querySelectorAll<HTMLElement>(".table-scroll")) {
        if (region.scrollWidth > region.clientWidth + 1) {
          const widths = [...region.querySelectorAll<HTMLElement>("thead th")].map((th) => `${th.textContent?.trim() || "·"} ${Math.round(th.getBoundingClientRect().width)}`);
          problems.push(`table "${region.getAttribute("aria-label")}" clipped: ${region.scrollWidth} > ${region.clientWidth} (${widths.join(", ")})`);
        }
      }
      // A wrapped failure key breaks only between its parts: each part (the tool, each `|name=value`)
      // stays on one line, cut in the middle when it is wider than the line.
      for (const part of document.querySelectorAll<HTMLElement>(".fkey-wrap > .fkey-part")) {
        const cs = getComputedStyle(part);
        const line = Number.parseFloat(cs.lineHeight) || Number.parseFloat(cs.fontSize) * 1.5;
        const height = part.getBoundingClientRect().height;
        if (height > line * 1.5) problems.push(`failure key part "${part.textContent}" on ${Math.round(height / line)} lines`);
      }
      for (const a of document.querySelectorAll("a[href]")) {
        if (/^\s*javascript:/i.test(a.getAttribute("href") ?? "")) problems.push(`javascript: link ${a.outerHTML.slice(0, 120)}`);
      }
      const html = document.documentElement.outerHTML;
      for (const s of secrets) if (html.includes(s)) problems.push(`secret shown: ${s}`);
      return problems;
    },
    { secrets: SECRET_VALUES },
  );
}

test("every dashboard page keeps hostile data inert, secrets hidden and its layout within the screen", async ({ browser, baseURL }) => {
  test.setTimeout(600_000);
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await signIn(page);
  const seeded = await seed(page);
  const urls = pagesOf(seeded);
  const dialogs: string[] = [];
  page.on("dialog", async (d) => {
    dialogs.push(`${d.type()}: ${d.message()} on ${page.url()}`);
    await d.dismiss();
  });

  const failures: string[] = [];
  for (const vp of VIEWPORTS) {
    await page.setViewportSize({ width: vp.width, height: vp.height });
    for (const url of urls) {
      const res = await page.goto(url);
      expect(res?.status(), url).toBeLessThan(400);
      await page.waitForLoadState("networkidle");
      // The seeded data is on the page as text (so the checks ran against it), never as markup.
      // A problem must still be there once the page has settled: a chart or a live section laid
      // out mid-render was seen wider than the screen for a moment, once in many runs.
      let problems = await inspect(page);
      if (problems.length) {
        await page.waitForTimeout(1500);
        const transient = problems;
        problems = await inspect(page);
        for (const p of transient.filter((t) => !problems.includes(t))) console.log(`[every-page] transient, gone after 1.5 s: ${vp.name} ${url}: ${p}`);
      }
      for (const p of problems) failures.push(`${vp.name} ${url}: ${p}`);
      if (screenshotDir) {
        fs.mkdirSync(screenshotDir, { recursive: true });
        const name = `${vp.name}-${url.replace(/^\//, "").replace(/[^a-z0-9]+/gi, "_").slice(0, 80)}.png`;
        await page.screenshot({ path: path.join(screenshotDir, name) });
      }
    }
  }
  console.log(`[every-page] ${urls.length} pages × ${VIEWPORTS.length} sizes, ${failures.length} problems, ${dialogs.length} dialogs`);
  expect(dialogs).toEqual([]);
  expect(failures).toEqual([]);

  // The hostile strings did reach the pages, as text.
  await page.goto(`/w/${seeded.slug}/sessions`);
  await expect(page.getByText(LONG.agent).first()).toBeAttached();
  await page.goto(`/w/${seeded.slug}/failures`);
  await expect(page.getByText("window.__pwned", { exact: false }).first()).toBeAttached();
  await context.close();
});

test("a missing page inside a workspace answers 404 and keeps the workspace navigation", async ({ page }) => {
  await signIn(page);
  const slug = "e2e";
  for (const url of [
    `/w/${slug}/tools/${encodeURIComponent("no_such_tool|domain=nowhere.example")}`,
    `/w/${slug}/sessions/${encodeURIComponent("no-such-session")}`,
    `/w/${slug}/no-such-page`,
  ]) {
    const res = await page.goto(url);
    expect(res?.status(), url).toBe(404);
    await expect(page.getByRole("heading", { name: "Not found", level: 1 })).toBeVisible();
    // The sidebar of the workspace is still there.
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" })).toBeAttached();
  }
  // An unknown workspace is a plain 404 (no navigation of a workspace the user cannot see).
  expect((await page.goto("/w/no-such-workspace-x/overview"))?.status()).toBe(404);
});
