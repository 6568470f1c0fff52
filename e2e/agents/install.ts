/**
 * Playwright global setup: installs the real coding-agent CLIs the hook tests run
 * (e2e/agents/package.json, exact versions, from the npm registry) into e2e/agents/node_modules —
 * never into the app's own node_modules, so a user's `npm ci` stays as light as it was.
 * Skipped when the installed tree matches the lockfile (a stamp holds the lockfile's hash).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export const AGENTS_DIR = path.resolve(import.meta.dirname);
export const CLAUDE_BIN = path.join(AGENTS_DIR, "node_modules/@anthropic-ai/claude-code/bin/claude.exe");
export const CODEX_BIN = path.join(AGENTS_DIR, "node_modules/@openai/codex/bin/codex.js");

export default function installAgentClis() {
  const lock = fs.readFileSync(path.join(AGENTS_DIR, "package-lock.json"));
  const hash = createHash("sha256").update(lock).digest("hex");
  const stamp = path.join(AGENTS_DIR, "node_modules/.vigil-lock-hash");
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === hash && fs.existsSync(CLAUDE_BIN) && fs.existsSync(CODEX_BIN)) return;
  console.log("[e2e] installing the coding-agent CLIs into e2e/agents (npm ci)…");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  execFileSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: AGENTS_DIR, stdio: "inherit" });
  fs.writeFileSync(stamp, hash);
}
