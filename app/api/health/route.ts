import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";

/** 200 once the database is open and migrated; 503 while it cannot be. */
export async function GET() {
  try {
    const { database } = await getRuntime();
    return Response.json({ status: "ok", db: database.kind });
  } catch (err) {
    console.error("[vigil] health check failed:", err);
    return Response.json({ status: "error", message: "database unavailable" }, { status: 503 });
  }
}
