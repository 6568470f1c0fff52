import { sql } from "drizzle-orm";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";

/** 200 once the database is open and migrated and answers; 503 while it cannot or does not. */
export async function GET() {
  try {
    const { database } = await getRuntime();
    // Probe the database so a stopped server shows here too (the pool reconnects by itself).
    await database.db.execute(sql`select 1`);
    return Response.json({ status: "ok", db: database.kind });
  } catch (err) {
    console.error("[vigil] health check failed:", err);
    return Response.json({ status: "error", message: "database unavailable" }, { status: 503 });
  }
}
