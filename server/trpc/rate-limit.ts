/**
 * Per-API-key rate limiting (rate-limiter-flexible, in memory per instance).
 * VIGIL_RATE_LIMIT_PER_MINUTE (default 6000 requests per key per minute; 0 disables).
 */
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

let limiter: RateLimiterMemory | null | undefined;
let configuredFor: string | undefined;

function getLimiter(): RateLimiterMemory | null {
  const setting = process.env.VIGIL_RATE_LIMIT_PER_MINUTE ?? "6000";
  if (limiter !== undefined && configuredFor === setting) return limiter;
  configuredFor = setting;
  const points = Number(setting);
  limiter = Number.isFinite(points) && points > 0 ? new RateLimiterMemory({ points, duration: 60 }) : null;
  return limiter;
}

/** Returns null when allowed, or how long to wait. */
export async function consumeRateLimit(keyId: string): Promise<{ retryAfterSeconds: number } | null> {
  const l = getLimiter();
  if (!l) return null;
  try {
    await l.consume(keyId);
    return null;
  } catch (res) {
    if (res instanceof RateLimiterRes) return { retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
    throw res;
  }
}
