import { defineConfig } from "vitest/config";
import path from "node:path";

const alias = { "@": path.resolve(import.meta.dirname) };
// The Citus checks (tests/citus) run only when the Citus cluster is selected (VIGIL_TEST_DATABASES=citus).
const citusSelected = (process.env.VIGIL_TEST_DATABASES ?? "").split(",").some((k) => k.trim() === "citus");

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          include: ["server/engine/**/*.test.ts", "tests/unit/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts", ...(citusSelected ? ["tests/citus/**/*.test.ts"] : [])],
          environment: "node",
          // Each file gets its own databases; run files one at a time on 2 cores.
          fileParallelism: false,
          // Tests sign up many users; tests/integration/signup.test.ts turns this off to test the default.
          // Refusing for event-loop lag is off: PGlite runs in the test's own thread, and a test
          // seeding thousands of rows must not see its next request refused
          // (tests/integration/overload.test.ts turns it on to test it).
          env: { VIGIL_ALLOW_SIGNUP: "true", VIGIL_MAX_EVENT_LOOP_LAG_MS: "0" },
          testTimeout: 60_000,
          hookTimeout: 120_000,
          globalSetup: ["tests/integration/global-setup.ts"],
        },
      },
    ],
  },
});
