/**
 * `GET /api/metrics` (SPEC 7.8): an admin-scope API key scrapes its workspace's series, the
 * `VIGIL_METRICS_TOKEN` bearer every workspace's. Errors are JSON `{ error: { message } }`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Runtime } from "@/server/runtime";
import { authenticateApiKey } from "@/server/services/api-keys";
import { bearerToken, INVALID_KEY_MESSAGE } from "@/server/services/agent-key";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "@/server/http/database-unavailable";
import { contentTypeFor, renderMetrics } from "@/server/metrics/scrape";

const METRICS_AUTH_MESSAGE = "Send Authorization: Bearer <admin-scope API key or VIGIL_METRICS_TOKEN>";
const METRICS_SCOPE_MESSAGE = "Metrics need an admin-scope API key (or VIGIL_METRICS_TOKEN)";

const refuse = (status: number, message: string, headers: Record<string, string> = {}) => Response.json({ error: { message } }, { status, headers });

/** Whether `token` is the configured metrics token (compared in constant time; unset or empty never matches). */
function isMetricsToken(token: string, configured = process.env.VIGIL_METRICS_TOKEN): boolean {
  if (!configured) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(token), digest(configured));
}

export async function handleMetrics(req: Request, runtime: () => Promise<Runtime>): Promise<Response> {
  const token = bearerToken(req);
  if (!token) return refuse(401, METRICS_AUTH_MESSAGE, { "www-authenticate": "Bearer" });
  try {
    const db = (await runtime()).database.db;
    let workspaceId: string | null = null;
    if (!isMetricsToken(token)) {
      const key = await authenticateApiKey(db, token);
      if (!key) return refuse(401, INVALID_KEY_MESSAGE, { "www-authenticate": "Bearer" });
      if (key.scope !== "admin") return refuse(403, METRICS_SCOPE_MESSAGE);
      workspaceId = key.workspaceId;
    }
    const contentType = contentTypeFor(req.headers.get("accept"));
    const body = await renderMetrics(db, workspaceId, contentType);
    return new Response(body, { status: 200, headers: { "content-type": contentType, "cache-control": "no-store" } });
  } catch (err) {
    if (!isDatabaseUnavailable(err)) throw err;
    return refuse(503, "Database unavailable; retry shortly", { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) });
  }
}
