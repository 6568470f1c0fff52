/**
 * `/api/auth/*` (better-auth) while the database is down: better-auth answers a failed query with an
 * empty 500, so a sign-in looked like a server fault. A 5xx is checked against the database (a
 * connection attempt fails within a second while it is down) and then answered as what it is:
 * 503 + Retry-After with a JSON body the sign-in form shows.
 */
import { sql } from "drizzle-orm";
import type { Runtime } from "@/server/runtime";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "@/server/http/database-unavailable";

function databaseUnavailableJson(): Response {
  return Response.json(
    { code: "DATABASE_UNAVAILABLE", message: "Database unavailable; retry shortly" },
    { status: 503, headers: { "Retry-After": String(DATABASE_RETRY_AFTER_SECONDS) } },
  );
}

/** Whether the database answers now (false only for an outage, not for a query error). */
async function databaseUnreachable(runtime: Runtime): Promise<boolean> {
  try {
    await runtime.database.db.execute(sql`select 1`);
    return false;
  } catch (err) {
    return isDatabaseUnavailable(err);
  }
}

export async function handleAuthRequest(req: Request, runtime: () => Promise<Runtime>): Promise<Response> {
  let current: Runtime;
  try {
    current = await runtime();
  } catch (err) {
    if (isDatabaseUnavailable(err)) return databaseUnavailableJson();
    throw err;
  }
  const res = await current.auth.handler(req);
  if (res.status >= 500 && (await databaseUnreachable(current))) return databaseUnavailableJson();
  return res;
}
