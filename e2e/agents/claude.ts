/**
 * Runs the real Claude Code CLI headless (`claude -p`) against the scripted model mock, with
 * `"type": "http"` hooks posting to Vigil — the very configuration the Connect page hands out.
 * A scratch HOME holds its settings; with non-essential traffic, telemetry and the auto-updater
 * off it calls nothing but the mock and Vigil.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { claudeCodeSettings } from "../../components/dashboard/connect-configs";
import { CLAUDE_BIN } from "./install";

export interface ClaudeRun {
  exitCode: number | null;
  /** The `--output-format json` result (session_id, result, terminal_reason, …). */
  result: Record<string, any> | null;
  stdout: string;
  stderr: string;
}

export async function runClaude(opts: {
  prompt: string;
  modelUrl: string;
  vigilUrl: string;
  apiKey: string;
  /** The `agent` and `wait` of the hook URLs. */
  agent?: string;
  waitSeconds?: number;
  timeoutMs?: number;
}): Promise<ClaudeRun> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-claude-home-"));
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-claude-project-"));
  try {
    const settings = {
      ...JSON.parse(claudeCodeSettings({ baseUrl: opts.vigilUrl, agent: opts.agent ?? "", waitSeconds: opts.waitSeconds ?? 0 })),
      // The person's own rules let the scripted commands run: Vigil is what objects.
      permissions: { allow: ["Bash", "Read"] },
    };
    fs.mkdirSync(path.join(home, ".claude"), { recursive: true });
    fs.writeFileSync(path.join(home, ".claude", "settings.json"), JSON.stringify(settings, null, 2));
    fs.writeFileSync(path.join(project, "README.md"), "# scratch project\n");

    const child = spawn(CLAUDE_BIN, ["-p", opts.prompt, "--output-format", "json"], {
      cwd: project,
      stdio: ["ignore", "pipe", "pipe"],
      // Only what the CLI needs: nothing of the test runner's environment leaks in.
      env: {
        NODE_ENV: "production",
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_BASE_URL: opts.modelUrl,
        ANTHROPIC_API_KEY: "sk-ant-e2e-dummy-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        VIGIL_API_KEY: opts.apiKey,
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 90_000);
    const exitCode = await new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    clearTimeout(timer);
    let result: Record<string, any> | null = null;
    try {
      result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
    } catch {
      result = null;
    }
    return { exitCode, result, stdout, stderr };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(project, { recursive: true, force: true });
  }
}
