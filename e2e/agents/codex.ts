/**
 * Runs the real Codex CLI (`codex exec`) against the scripted Responses mock, with command hooks
 * that pipe each payload to Vigil with curl — the configuration the Connect page hands out.
 * A scratch CODEX_HOME holds config.toml (the mock as model provider) and hooks.json.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { codexHooks } from "../../components/dashboard/connect-configs";
import { CODEX_BIN } from "./install";

export interface CodexRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export async function runCodex(opts: { prompt: string; modelUrl: string; vigilUrl: string; apiKey: string; agent?: string; timeoutMs?: number }): Promise<CodexRun> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-codex-home-"));
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-codex-project-"));
  try {
    fs.writeFileSync(path.join(project, "README.md"), "# scratch project\n");
    fs.writeFileSync(path.join(home, "hooks.json"), codexHooks({ baseUrl: opts.vigilUrl, agent: opts.agent ?? "", waitSeconds: 0 }));
    fs.writeFileSync(
      path.join(home, "config.toml"),
      [
        `model = "gpt-5.1-codex"`,
        `model_provider = "mock"`,
        `approval_policy = "never"`,
        `sandbox_mode = "danger-full-access"`,
        `[model_providers.mock]`,
        `name = "mock"`,
        `base_url = "${opts.modelUrl}"`,
        `wire_api = "responses"`,
        `env_key = "MOCK_OPENAI_KEY"`,
        `request_max_retries = 0`,
        `stream_max_retries = 0`,
        `[features]`,
        `hooks = true`,
        `[projects."${project}"]`,
        `trust_level = "trusted"`,
        ``,
      ].join("\n"),
    );
    // Hooks need a person's trust once; a throwaway home has none, and these hooks are ours.
    const child = spawn(process.execPath, [CODEX_BIN, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", opts.prompt], {
      cwd: project,
      stdio: ["ignore", "pipe", "pipe"],
      env: { NODE_ENV: "production", PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: home, MOCK_OPENAI_KEY: "e2e-dummy-key", VIGIL_API_KEY: opts.apiKey },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 90_000);
    const exitCode = await new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    clearTimeout(timer);
    return { exitCode, stdout, stderr };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(project, { recursive: true, force: true });
  }
}
