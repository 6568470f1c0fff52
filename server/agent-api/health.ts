/** `GET /api/health`: 200 once the database is open and migrated and answers; 503 while it cannot or does not. */
import { sql } from "drizzle-orm";
import type { Runtime } from "@/server/runtime";
import { DATABASE_RETRY_AFTER_SECONDS } from "@/server/http/database-unavailable";

export async function handleHealth(runtime: () => Promise<Runtime>): Promise<Response> {
  try {
    const { database } = await runtime();
    // Probe the database so a stopped server shows here too (the pool reconnects by itself).
    await database.db.execute(sql`select 1`);
    return Response.json({ status: "ok", db: database.kind });
  } catch (err) {
    console.error("[vigil] health check failed:", err);
    return Response.json({ status: "error", message: "database unavailable" }, { status: 503, headers: { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) } });
  }
}
