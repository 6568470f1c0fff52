/**
 * The agent's credential check, one for every agent route and every agent procedure: the
 * `Authorization: Bearer vgl_…` key, then the per-key rate limit. Each caller words the refusal in
 * its own protocol (tRPC error, OTLP status, hook JSON, JSON-RPC) with these messages.
 */
import type { Db } from "@/db/client";
import { authenticateApiKey, authenticateApiKeyCached, type AuthenticatedKey } from "./api-keys";
import { apiKeyRateLimitPerMinute, consumeRateLimit } from "./rate-limit";
import { noteThrottled } from "./throttle-report";
import { noteRejected } from "@/server/metrics";

const MISSING_KEY_MESSAGE = "Missing API key: send Authorization: Bearer <key>";
export const INVALID_KEY_MESSAGE = "Invalid or revoked API key";

const rateLimitMessage = (retryAfterSeconds: number) => `Rate limit exceeded; retry in ${retryAfterSeconds}s`;

/** The value of `Authorization: Bearer <value>`, or null. */
export function bearerToken(req: { headers: Headers }): string | null {
  const header = req.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

export type AgentKeyCheck =
  /** `cached`: the key came from memory and must be checked again before anything is written or shown. */
  | { ok: true; key: AuthenticatedKey; cached: boolean }
  | { ok: false; status: 401; message: string }
  | { ok: false; status: 429; message: string; retryAfterSeconds: number };

/**
 * Key, then rate limit. `cached: true` may answer from the in-memory key cache (only for callers
 * that re-check the key in their own round trip; see authenticateApiKeyCached). A database that
 * cannot be reached throws (isDatabaseUnavailable), as the key lookup does.
 */
export async function checkAgentKey(db: Db, req: { headers: Headers }, options: { cached: boolean }): Promise<AgentKeyCheck> {
  const token = bearerToken(req);
  if (!token) return { ok: false, status: 401, message: MISSING_KEY_MESSAGE };
  const found = options.cached ? await authenticateApiKeyCached(db, token) : await authenticateApiKey(db, token).then((key) => key && { key, cached: false });
  if (!found) return { ok: false, status: 401, message: INVALID_KEY_MESSAGE };
  const limited = await consumeRateLimit(found.key.keyId);
  if (limited) {
    noteRejected("rate_limit", found.key.workspaceId);
    noteThrottled(db, found.key, apiKeyRateLimitPerMinute());
    return { ok: false, status: 429, message: rateLimitMessage(limited.retryAfterSeconds), retryAfterSeconds: limited.retryAfterSeconds };
  }
  return { ok: true, key: found.key, cached: found.cached };
}
