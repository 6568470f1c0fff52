#!/usr/bin/env node
/** Starts the built app for end-to-end tests on a fresh embedded database (removed on exit). */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { serverArgs } from "./server-command.mjs";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-e2e-"));
const port = process.env.E2E_PORT ?? "3100";
const child = spawn(process.execPath, serverArgs(port, "127.0.0.1"), {
  stdio: "inherit",
  env: {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: "1",
    VIGIL_DATA_DIR: dataDir,
    VIGIL_AUTH_RATE_LIMIT: "off",
    VIGIL_NOTIFY_ALLOW_PRIVATE: "1", // the notifications spec posts to a receiver on 127.0.0.1
    // The e2e suites sign up many users; sign-up closed is covered by tests/integration/signup.test.ts.
    VIGIL_ALLOW_SIGNUP: process.env.VIGIL_ALLOW_SIGNUP ?? "true",
    VIGIL_INIT_ORG: "E2E Org",
    VIGIL_INIT_WORKSPACE: "e2e",
    VIGIL_INIT_API_KEY: "vgl_e2e_admin_key_0123456789abcdef",
    VIGIL_INIT_USER_EMAIL: "owner@e2e.test",
    VIGIL_INIT_USER_PASSWORD: "owner-password-123",
  },
});
const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => {
  cleanup();
  process.exit(code ?? 0);
});
