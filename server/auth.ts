/**
 * Authentication: better-auth with its drizzle adapter (email + password, scrypt hashing,
 * sessions stored in the database). Organizations, roles and workspaces are Vigil's own tables.
 */
import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import * as schema from "@/db/schema";
import { createAuthMiddleware, APIError } from "better-auth/api";
import { assertMayCreateUser, mayCreateUser, SIGNUP_CLOSED_MESSAGE } from "./signup-policy";
import { authSecret } from "./auth-secret";
import { clientAddress, SignInThrottle, throttleEnabled, TOO_MANY_ATTEMPTS_MESSAGE, trustedProxiesFromEnv, type ThrottleKeys } from "./sign-in-throttle";
import { claimInvitationForSignUp, inspectInvitation, invitationProblem, INVITATION_HEADER, joinClaimedInvitation } from "./services/invitations";
import { ServiceError } from "./services/errors";

/** The answer to a sign-up that cannot create the account, whether or not the email has one. */
export const SIGNUP_FAILED_MESSAGE = "Could not create an account with these details. If you already have one, sign in instead.";

type HeaderSource = { headers?: Headers; request?: Request } | null | undefined;
const invitationToken = (ctx: HeaderSource) => (ctx?.headers?.get(INVITATION_HEADER) ?? ctx?.request?.headers.get(INVITATION_HEADER))?.trim() || null;

export const MIN_PASSWORD_LENGTH = 8;

export async function createAuth(db: Db) {
  const secret = await authSecret(db);
  const throttle = new SignInThrottle(db);
  const trustedProxies = trustedProxiesFromEnv();
  /** What a sign-in attempt is counted under; null for a body better-auth refuses before any password check. */
  const throttleKeys = (ctx: { body?: unknown; headers?: Headers; request?: Request }): ThrottleKeys | null => {
    const email = (ctx.body as { email?: unknown } | undefined)?.email;
    if (typeof email !== "string" || !throttleEnabled()) return null;
    return { email: email.toLowerCase(), address: clientAddress(ctx.headers ?? ctx.request?.headers, trustedProxies) };
  };
  const secureCookies = process.env.VIGIL_BASE_URL?.startsWith("https://") ?? false;
  const auth = betterAuth({
    secret,
    baseURL: process.env.VIGIL_BASE_URL,
    database: drizzleAdapter(db as never, {
      provider: "pg",
      schema: {
        user: schema.user,
        session: schema.session,
        account: schema.account,
        verification: schema.verification,
      },
    }),
    emailAndPassword: {
      enabled: true,
      minPasswordLength: MIN_PASSWORD_LENGTH,
      autoSignIn: true,
    },
    session: { expiresIn: 60 * 60 * 24 * 30, updateAge: 60 * 60 * 24 },
    // Sign-up closes after the first user unless VIGIL_ALLOW_SIGNUP=true (server/signup-policy.ts).
    // An invitation link (server/services/invitations.ts) admits its holder even then: the link's
    // token arrives in the x-vigil-invitation header, is claimed before the user row is written and
    // makes the new user a member once it is.
    databaseHooks: {
      user: {
        create: {
          before: async (_user, ctx) => {
            const token = invitationToken(ctx);
            if (!token) return void (await assertMayCreateUser(db));
            try {
              await claimInvitationForSignUp(db, token);
            } catch (err) {
              if (err instanceof ServiceError) throw new APIError("FORBIDDEN", { message: err.message, code: "INVITATION_INVALID" });
              throw err;
            }
          },
          after: async (created, ctx) => {
            const token = invitationToken(ctx);
            if (token) await joinClaimedInvitation(db, token, created);
          },
        },
      },
    },
    // A closed sign-up answers the same for an existing and an unknown email, after hashing the
    // password like a real sign-up would, so neither the message nor the timing tells a stranger
    // whether an account exists (better-auth would otherwise answer USER_ALREADY_EXISTS first).
    hooks: {
      before: createAuthMiddleware(async (ctx) => {
        if (ctx.path === "/sign-in/email") {
          // Runs after better-auth parsed the body (JSON or form-encoded) and matched the route, so
          // every attempt that reaches the password check is counted first.
          const keys = throttleKeys(ctx);
          if (!keys) return;
          let wait: number;
          try {
            wait = await throttle.begin(keys);
          } catch {
            // Unable to count, unable to check: no password is tried unthrottled.
            throw new APIError("SERVICE_UNAVAILABLE", { message: "Sign-in is unavailable. Try again shortly.", code: "SIGN_IN_UNAVAILABLE" }, { "retry-after": "5" });
          }
          if (wait > 0) {
            throw new APIError("TOO_MANY_REQUESTS", { message: TOO_MANY_ATTEMPTS_MESSAGE, code: "TOO_MANY_REQUESTS" }, { "retry-after": String(wait), "cache-control": "no-store" });
          }
          return;
        }
        if (ctx.path !== "/sign-up/email") return;
        const body = ctx.body as { password?: unknown; email?: unknown } | undefined;
        const hashLikeSignUp = () => ctx.context.password.hash(typeof body?.password === "string" ? body.password : "");
        const token = invitationToken(ctx);
        if (token) {
          const { status } = await inspectInvitation(db, token);
          if (status !== "pending") {
            await hashLikeSignUp();
            const problem = invitationProblem(status);
            throw new APIError("FORBIDDEN", { message: `${problem.title}. ${problem.message}`, code: "INVITATION_INVALID" });
          }
        } else if (!(await mayCreateUser(db))) {
          await hashLikeSignUp();
          throw new APIError("FORBIDDEN", { message: SIGNUP_CLOSED_MESSAGE, code: "SIGNUP_CLOSED" });
        }
        // Open (or invited) sign-up with an email that has an account: a generic refusal after the
        // same hashing a real sign-up does, instead of better-auth's "user already exists".
        if (typeof body?.email === "string") {
          const [existing] = await db
            .select({ id: schema.user.id })
            .from(schema.user)
            .where(eq(schema.user.email, body.email.trim().toLowerCase()));
          if (existing) {
            await hashLikeSignUp();
            throw new APIError("UNPROCESSABLE_ENTITY", { message: SIGNUP_FAILED_MESSAGE, code: "SIGNUP_FAILED" });
          }
        }
      }),
      after: createAuthMiddleware(async (ctx) => {
        if (ctx.path !== "/sign-in/email" && ctx.path !== "/sign-up/email") return;
        const returned = ctx.context.returned;
        if (ctx.path === "/sign-in/email") {
          const keys = throttleKeys(ctx);
          // Only a wrong email or password (401) uses up the allowance.
          const failedOnPassword = returned instanceof Error && (returned as { statusCode?: number }).statusCode === 401;
          if (keys && !failedOnPassword) await throttle.takeBack(keys);
        }
        // The session token travels in the HttpOnly cookie only: the page never needs it, and a
        // token readable by scripts is one an injected script could send elsewhere.
        if (returned && typeof returned === "object" && !(returned instanceof Error) && "token" in returned) {
          const { token: _token, ...withoutToken } = returned as Record<string, unknown>;
          return ctx.json(withoutToken);
        }
      }),
    },
    // Session cookies: HttpOnly and SameSite=Lax always, Secure when Vigil is served over https.
    advanced: {
      useSecureCookies: secureCookies,
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax", secure: secureCookies },
    },
    // The dashboard may be reached under any host name (localhost, a LAN address, a proxy):
    // same-origin requests are trusted; VIGIL_TRUSTED_ORIGINS adds more.
    // Same-origin requests are trusted: the Origin must name the host the browser talked to (the
    // Host header; request.url may carry the server's bind address instead). A cross-site page
    // cannot make a browser send a matching Origin, so CSRF protection holds.
    trustedOrigins: async (request) => {
      const host = request?.headers.get("host");
      return [
        ...(host ? [`http://${host}`, `https://${host}`] : []),
        ...(process.env.VIGIL_BASE_URL ? [new URL(process.env.VIGIL_BASE_URL).origin] : []),
        ...(process.env.VIGIL_TRUSTED_ORIGINS?.split(",").map((s) => s.trim()).filter(Boolean) ?? []),
      ];
    },
    // better-auth's own per-address limit stays for every path except sign-in, whose attempts
    // are throttled per account and per address by server/sign-in-throttle.ts instead (see hooks).
    rateLimit: { enabled: process.env.VIGIL_AUTH_RATE_LIMIT !== "off", window: 60, max: 100, customRules: { "/sign-in/email": false } },
    telemetry: { enabled: false },
    // better-auth warns about an unset base URL on every start; Vigil derives it per request on
    // purpose (see trustedOrigins). Errors still reach the log.
    logger: { level: "error" },
  });
  return auth;
}

export type Auth = Awaited<ReturnType<typeof createAuth>>;
