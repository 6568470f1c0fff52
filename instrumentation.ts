/**
 * Next.js start hook: check the settings, open and migrate the database (and apply headless init)
 * before the first request. A failure here stops the server with a non-zero exit and the reason,
 * rather than a server that logs "Ready" and answers 500 to everything.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { getRuntime } = await import("./server/runtime");
    try {
      await getRuntime();
      // The agent API's fast path in scripts/serve.mjs answers through these (same handlers, same runtime).
      const { registerAgentRoutes } = await import("./server/agent-api/routes");
      registerAgentRoutes();
    } catch (err) {
      console.error(`[vigil] start-up failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    }
  }
}
