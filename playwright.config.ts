import { defineConfig } from "@playwright/test";

const port = process.env.E2E_PORT ?? "3100";
const external = process.env.E2E_BASE_URL;

export default defineConfig({
  testDir: "e2e",
  // The real Claude Code and Codex CLIs for the hook tests, in e2e/agents (not the app's dependencies).
  globalSetup: "./e2e/agents/install.ts",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  reporter: process.env.CI ? [["list"]] : [["list"]],
  use: {
    baseURL: external ?? `http://127.0.0.1:${port}`,
    viewport: { width: 1440, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      // The system Chromium (apt-get install chromium); Playwright never downloads a browser here.
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    },
  },
  webServer: external
    ? undefined
    : {
        // Serves the production build (`next build` runs before the e2e step) on a fresh database.
        command: "node scripts/e2e-server.mjs",
        url: `http://127.0.0.1:${port}/api/health`,
        timeout: 120_000,
        reuseExistingServer: false,
        stdout: "pipe",
        stderr: "pipe",
      },
});
