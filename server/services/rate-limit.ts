/**
 * Rate limiting (rate-limiter-flexible, in memory per instance):
 *  - per API key: VIGIL_RATE_LIMIT_PER_MINUTE (default 600000 requests per key per minute; 0 disables).
 *    The default sits above what one instance can serve (a few thousand checks per second), so a
 *    fleet sharing one key is never throttled; it stops a runaway client, not a busy fleet.
 *  - per signed-in user, every dashboard call (each call of a batch counts):
 *    VIGIL_DASHBOARD_RATE_LIMIT_PER_MINUTE (default 1200 per user per minute; 0 disables)
 */
import { TRPCError } from "@trpc/server";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/** A limiter that follows its environment variable (tests change it at run time). */
function limiterFromEnv(variable: string, fallback: string) {
  let limiter: RateLimiterMemory | null | undefined;
  let configuredFor: string | undefined;
  return (): RateLimiterMemory | null => {
    const setting = process.env[variable] ?? fallback;
    if (limiter !== undefined && configuredFor === setting) return limiter;
    configuredFor = setting;
    const points = Number(setting);
    limiter = Number.isFinite(points) && points > 0 ? new RateLimiterMemory({ points, duration: 60 }) : null;
    return limiter;
  };
}

const API_KEY_LIMIT_DEFAULT = "600000";
const apiKeyLimiter = limiterFromEnv("VIGIL_RATE_LIMIT_PER_MINUTE", API_KEY_LIMIT_DEFAULT);

/** The per-key limit in force (requests per minute), for messages. */
export function apiKeyRateLimitPerMinute(): number {
  return Number(process.env.VIGIL_RATE_LIMIT_PER_MINUTE ?? API_KEY_LIMIT_DEFAULT);
}
const dashboardLimiter = limiterFromEnv("VIGIL_DASHBOARD_RATE_LIMIT_PER_MINUTE", "1200");

async function consume(l: RateLimiterMemory | null, key: string): Promise<{ retryAfterSeconds: number } | null> {
  if (!l) return null;
  try {
    await l.consume(key);
    return null;
  } catch (res) {
    if (res instanceof RateLimiterRes) return { retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
    throw res;
  }
}

/** Returns null when allowed, or how long to wait. */
export function consumeRateLimit(keyId: string): Promise<{ retryAfterSeconds: number } | null> {
  return consume(apiKeyLimiter(), keyId);
}

/** One dashboard call of `userId`: over the limit → 429 with Retry-After. */
export async function limitDashboardCalls(userId: string, resHeaders: Headers): Promise<void> {
  const limited = await consume(dashboardLimiter(), userId);
  if (!limited) return;
  resHeaders.set("Retry-After", String(limited.retryAfterSeconds));
  throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: `Too many dashboard requests; retry in ${limited.retryAfterSeconds}s` });
}
