import fs from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { freshWorkspace, signIn } from "./support";

/**
 * Connect in one step: an admin creates the key on the page, sees it filled into the
 * `vigil connect claude-code` command, and the Claude Code check turns green when a captured
 * Claude Code hook arrives with that key — while the Codex check keeps waiting for its own CLI.
 */
const SHOTS = process.env.CONNECT_SHOTS_DIR ?? "/tmp/shots-connect";
const capture = (name: string) => JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../tests/fixtures/agent-hooks", `${name}.json`), "utf8")).body;

test("an inline key fills the one-step command; the Claude Code check turns green on a Claude Code hook only", async ({ page }) => {
  fs.mkdirSync(SHOTS, { recursive: true });
  await signIn(page);
  const ws = await freshWorkspace(page, "connect");
  await page.goto(`/w/${ws.slug}/connect`);
  await expect(page.getByRole("heading", { name: "Connect an agent" })).toBeVisible();

  const claudeCheck = page.getByTestId("cli-check-claude-code");
  await expect(claudeCheck).toHaveAttribute("data-state", "waiting");
  await expect(claudeCheck).toContainText("Waiting for the first Claude Code event");
  await expect(claudeCheck).toContainText(`claude -p "List the files in this folder"`);
  const steps = page.getByLabel("Connect Claude Code in one step", { exact: true });
  await expect(steps).toContainText("export VIGIL_API_KEY=vgl_…");

  // The key, created here, shown once and filled into the command.
  await page.getByLabel("Key name").fill("laptop claude");
  await page.getByRole("button", { name: "Create key" }).click();
  const shown = page.getByTestId("new-api-key");
  await expect(shown).toContainText("shown only once");
  const key = (await shown.locator("code").textContent())!.trim();
  expect(key).toMatch(/^vgl_/);
  await expect(steps).toContainText(`export VIGIL_API_KEY=${key}`);
  await expect(steps).toContainText("vigil connect claude-code");
  await page.getByLabel("Agent name").fill("laptop");
  await expect(steps).toContainText("vigil connect claude-code --agent laptop");
  await page.screenshot({ path: path.join(SHOTS, "connect-key-1440.png"), fullPage: true });

  // A hook Claude Code really sent, with the new key: the Claude Code check turns green without a reload.
  const body = { ...capture("PreToolUse.Bash"), session_id: `connect-e2e-${Date.now().toString(36)}` };
  const res = await page.request.post("/api/hooks/claude-code?agent=laptop", { headers: { authorization: `Bearer ${key}` }, data: body });
  expect(res.status()).toBe(200);
  await expect(claudeCheck).toHaveAttribute("data-state", "connected", { timeout: 15_000 });
  await expect(claudeCheck).toContainText("Claude Code is connected");
  await expect(claudeCheck).toContainText(body.session_id);
  await expect(claudeCheck).toContainText("Bash");
  await page.screenshot({ path: path.join(SHOTS, "connect-green-1440.png"), fullPage: true });

  // Codex's own check is still waiting: the Claude Code event is not Codex's.
  await page.getByRole("tab", { name: "Codex CLI" }).click();
  const codexCheck = page.getByTestId("cli-check-codex");
  await expect(codexCheck).toHaveAttribute("data-state", "waiting");
  await expect(codexCheck).toContainText("codex exec");
  await expect(page.getByLabel("Connect Codex CLI in one step", { exact: true })).toContainText(`export VIGIL_API_KEY=${key}`);

  // MCP: the user's server behind the proxy and Vigil's own tools, in the chosen client's own file.
  await page.getByRole("tab", { name: "MCP servers" }).click();
  const proxyEntry = page.getByLabel(/^Claude Code: \.mcp\.json/);
  await expect(proxyEntry).toContainText(`"args": ["-y", "@vigil/sdk", "mcp-proxy", "--agent", "laptop", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/path/to/project"]`);
  await expect(page.getByLabel("Claude Code: Vigil's own tools", { exact: true })).toContainText(`"url": "http://127.0.0.1:`);
  await page.getByLabel("Server name").fill("git");
  await page.getByLabel("Server command").fill(`uvx mcp-server-git --repository "/home/me/my repo"`);
  await expect(proxyEntry).toContainText(`"git": {`);
  await expect(proxyEntry).toContainText(`"--", "uvx", "mcp-server-git", "--repository", "/home/me/my repo"]`);
  await page.screenshot({ path: path.join(SHOTS, "connect-mcp-1440.png"), fullPage: true });
  await page.getByLabel("MCP client").selectOption("codex");
  await expect(page.getByLabel(/^Codex CLI: ~\/\.codex\/config\.toml/)).toContainText("[mcp_servers.git]");
  await expect(page.getByLabel("Codex CLI: Vigil's own tools", { exact: true })).toContainText(`bearer_token_env_var = "VIGIL_API_KEY"`);
  // Claude Desktop expands no variables: the key made here is written in, and Vigil's tools come through `vigil mcp`.
  await page.getByLabel("MCP client").selectOption("claude-desktop");
  await expect(page.getByLabel(/^Claude Desktop: claude_desktop_config\.json/)).toContainText(`"VIGIL_API_KEY": "${key}"`);
  await expect(page.getByLabel("Claude Desktop: Vigil's own tools", { exact: true })).toContainText(`"args": ["-y", "@vigil/sdk", "mcp"]`);

  // Phone width: nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole("tab", { name: "Claude Code" }).click();
  await expect(claudeCheck).toHaveAttribute("data-state", "connected");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: path.join(SHOTS, "connect-green-390.png"), fullPage: true });
  await page.getByRole("tab", { name: "MCP servers" }).click();
  // The typed server stays when the tabs are switched.
  await expect(page.getByLabel("Server name")).toHaveValue("git");
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.screenshot({ path: path.join(SHOTS, "connect-mcp-390.png"), fullPage: true });
});
