/**
 * Authentication: better-auth with its drizzle adapter (email + password, scrypt hashing,
 * sessions stored in the database). Organizations, roles and workspaces are Vigil's own tables.
 */
import { betterAuth } from "better-auth";
import { drizzleAdapter } from "better-auth/adapters/drizzle";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import * as schema from "@/db/schema";
import { assertMayCreateUser } from "./signup-policy";

export const MIN_PASSWORD_LENGTH = 8;

async function authSecret(db: Db): Promise<string> {
  const fromEnv = process.env.VIGIL_AUTH_SECRET ?? process.env.BETTER_AUTH_SECRET;
  if (fromEnv) return fromEnv;
  // Generated once per installation and kept in the database, so every instance on one
  // database shares it and sessions survive restarts.
  const candidate = randomBytes(32).toString("base64url");
  await db.insert(schema.installation).values({ key: "auth_secret", value: candidate }).onConflictDoNothing();
  const [row] = await db.select().from(schema.installation).where(eq(schema.installation.key, "auth_secret"));
  return row.value;
}

export async function createAuth(db: Db) {
  const secret = await authSecret(db);
  return betterAuth({
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
    databaseHooks: {
      user: {
        create: {
          before: async () => {
            await assertMayCreateUser(db);
          },
        },
      },
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
    rateLimit: { enabled: process.env.VIGIL_AUTH_RATE_LIMIT !== "off", window: 60, max: 100 },
    telemetry: { enabled: false },
    // better-auth warns about an unset base URL on every start; Vigil derives it per request on
    // purpose (see trustedOrigins). Errors still reach the log.
    logger: { level: "error" },
  });
}

export type Auth = Awaited<ReturnType<typeof createAuth>>;
