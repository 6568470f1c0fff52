/**
 * Failed sign-ins are throttled per account (any address) and per client address (any account),
 * so guessing a password is slow: with the policy below 1,000 guesses at one account take
 * (1000 / ACCOUNT_FAILURES) × WINDOW = 25 hours. Counts live in this process's memory
 * (rate-limiter-flexible): several instances each keep their own count, so the bound per
 * instance holds and the fleet-wide bound multiplies by the number of instances.
 * VIGIL_AUTH_RATE_LIMIT=off disables it (the e2e server signs in many times).
 */
import { RateLimiterMemory } from "rate-limiter-flexible";

export const THROTTLE_WINDOW_SECONDS = 15 * 60;
export const ACCOUNT_FAILURES_PER_WINDOW = 10;
export const ADDRESS_FAILURES_PER_WINDOW = 30;

export const TOO_MANY_ATTEMPTS_MESSAGE = "Too many failed sign-in attempts. Try again later.";

/** Seconds a brute force of `guesses` at one account needs under the policy (used by tests and docs). */
export function secondsForGuesses(guesses: number): number {
  return Math.floor(guesses / ACCOUNT_FAILURES_PER_WINDOW) * THROTTLE_WINDOW_SECONDS;
}

export function throttleEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.VIGIL_AUTH_RATE_LIMIT !== "off";
}

/** The client address: the first X-Forwarded-For hop (Vigil behind a proxy), else X-Real-IP. */
export function clientAddress(headers: Headers): string {
  const forwarded = headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  return forwarded || headers.get("x-real-ip")?.trim() || "unknown";
}

export class SignInThrottle {
  private readonly perAccount = new RateLimiterMemory({ points: ACCOUNT_FAILURES_PER_WINDOW, duration: THROTTLE_WINDOW_SECONDS });
  private readonly perAddress = new RateLimiterMemory({ points: ADDRESS_FAILURES_PER_WINDOW, duration: THROTTLE_WINDOW_SECONDS });

  /** Seconds until another attempt is allowed, or 0 when the attempt may proceed. */
  async retryAfter(email: string, address: string): Promise<number> {
    const [account, client] = await Promise.all([this.perAccount.get(email), this.perAddress.get(address)]);
    let wait = 0;
    if (account && account.consumedPoints >= ACCOUNT_FAILURES_PER_WINDOW) wait = Math.max(wait, account.msBeforeNext);
    if (client && client.consumedPoints >= ADDRESS_FAILURES_PER_WINDOW) wait = Math.max(wait, client.msBeforeNext);
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  async recordFailure(email: string, address: string): Promise<void> {
    // consume rejects once the points are spent; the count is what matters here.
    await Promise.all([this.perAccount.consume(email).catch(() => undefined), this.perAddress.consume(address).catch(() => undefined)]);
  }
}

/**
 * Wraps better-auth's request handler: refuses a throttled sign-in with 429 + Retry-After before
 * it reaches the password check, and counts the ones that fail (401).
 */
export function withSignInThrottle(handler: (req: Request) => Promise<Response>, throttle = new SignInThrottle()) {
  return async (req: Request): Promise<Response> => {
    if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/sign-in/email") || !throttleEnabled()) return handler(req);
    let email = "";
    try {
      const body = (await req.clone().json()) as { email?: unknown };
      if (typeof body.email === "string") email = body.email.trim().toLowerCase();
    } catch {
      return handler(req); // better-auth answers malformed bodies itself
    }
    const address = clientAddress(req.headers);
    const wait = await throttle.retryAfter(email, address);
    if (wait > 0) {
      return Response.json(
        { code: "TOO_MANY_REQUESTS", message: TOO_MANY_ATTEMPTS_MESSAGE },
        { status: 429, headers: { "retry-after": String(wait), "cache-control": "no-store" } },
      );
    }
    const response = await handler(req);
    if (response.status === 401) await throttle.recordFailure(email, address);
    return response;
  };
}
