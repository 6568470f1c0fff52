/**
 * The README's demo command, run as written against the running server: `npm run demo -- --duration 5`
 * fills a fresh workspace, and the form without `--` (whose flags npm keeps for itself) stops with
 * a message saying so instead of silently running for the default minute.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { freshWorkspace, signIn } from "./support";

const run = promisify(execFile);

test("npm run demo -- --duration 5 fills a workspace; without -- it says why it cannot", async ({ page, baseURL }) => {
  test.setTimeout(120_000);
  await signIn(page);
  const { slug, key } = await freshWorkspace(page, "readme-demo");
  const env = { ...process.env, VIGIL_URL: baseURL!, VIGIL_API_KEY: key };

  const started = Date.now();
  const demo = await run("npm", ["run", "demo", "--", "--duration", "5", "--no-history"], { env, timeout: 90_000 });
  expect(Date.now() - started).toBeLessThan(60_000);
  expect(demo.stdout).toContain(`workspace "${slug}"`);
  await page.goto(`/w/${slug}/sessions`);
  await expect(page.getByRole("link", { name: /demo-/ }).first()).toBeVisible();

  const swallowed = await run("npm", ["run", "demo", "--duration", "5"], { env, timeout: 60_000 }).then(
    () => null,
    (error: { code: number; stderr: string }) => error,
  );
  expect(swallowed?.code).not.toBe(0);
  expect(swallowed?.stderr).toContain("npm took --duration as its own option");
});
