/**
 * Start-up checks (SPEC 1, 9): invalid VIGIL_INIT_* values stop the real server process with a
 * message naming the variable and a non-zero exit — not a server that says "Ready" and answers 500.
 * Starts the production build the way scripts/start.mjs does (scripts/serve.mjs, as `npm start` runs it); no browser needed.
 */
import { expect, test } from "@playwright/test";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serverArgs } from "../scripts/server-command.mjs";

// A port of its own, away from the e2e server's (E2E_PORT) and other checkouts' ports.
const port = String(Number(process.env.E2E_PORT ?? "3100") + 1000);

function startServer(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-startup-"));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, serverArgs(port, "127.0.0.1"), {
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", VIGIL_DATA_DIR: dataDir, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    // A server that is still up after 45 s did not stop: fail with what it printed.
    const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      fs.rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, output });
    });
  });
}

const valid = {
  VIGIL_INIT_ORG: "Startup Org",
  VIGIL_INIT_WORKSPACE: "startup",
  VIGIL_INIT_API_KEY: "vgl_startup_key_0123456789abcdef",
  VIGIL_INIT_USER_EMAIL: "owner@startup.test",
  VIGIL_INIT_USER_PASSWORD: "owner-password-123",
};

test("invalid VIGIL_INIT_* values stop start-up with the variable named and a non-zero exit", async () => {
  const bad = await startServer({ ...valid, VIGIL_INIT_WORKSPACE: "x", VIGIL_INIT_API_KEY: "not-a-vigil-key", VIGIL_INIT_USER_PASSWORD: "short" });
  expect(bad.code, bad.output).not.toBe(0);
  expect(bad.code, bad.output).not.toBeNull();
  expect(bad.output).toContain("[vigil] start-up failed");
  expect(bad.output).toContain('VIGIL_INIT_WORKSPACE "x" is not a valid slug');
  expect(bad.output).toContain("VIGIL_INIT_API_KEY must start with vgl_");
  expect(bad.output).toContain("VIGIL_INIT_USER_PASSWORD must be at least 8 characters");

  const partial = await startServer({ VIGIL_INIT_WORKSPACE: "startup", VIGIL_INIT_USER_EMAIL: "not-an-email" });
  expect(partial.code, partial.output).not.toBe(0);
  expect(partial.output).toContain("VIGIL_INIT_ORG is required");
  expect(partial.output).toContain('VIGIL_INIT_USER_EMAIL "not-an-email" is not an email address');
});

test("an invalid VIGIL_PGLITE_SHARED_BUFFERS stops start-up with the variable named", async () => {
  const bad = await startServer({ ...valid, VIGIL_PGLITE_SHARED_BUFFERS: "lots" });
  expect(bad.code, bad.output).not.toBe(0);
  expect(bad.code, bad.output).not.toBeNull();
  expect(bad.output).toContain("[vigil] start-up failed");
  expect(bad.output).toContain('VIGIL_PGLITE_SHARED_BUFFERS must be a size from 1MB to 1GB written like 32MB (units kB, MB or GB), got "lots"');
});
