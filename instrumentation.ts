/** Next.js start hook: open and migrate the database (and apply headless init) before the first request. */
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { getRuntime } = await import("./server/runtime");
    await getRuntime();
  }
}
