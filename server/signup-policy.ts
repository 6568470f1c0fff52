/**
 * Who may create an account. The first user of an installation always may (they set it up);
 * after that sign-up is closed unless VIGIL_ALLOW_SIGNUP=true, so reaching the server is not
 * enough to get an account. Enforced in better-auth's database hook, so every path that creates a
 * user (the sign-up endpoint, direct API calls) is covered, not only the hidden form.
 */
import { sql } from "drizzle-orm";
import { APIError } from "better-auth/api";
import type { Db } from "@/db/client";
import { user } from "@/db/schema";

export const SIGNUP_CLOSED_MESSAGE = "Sign-up is closed on this Vigil server. Ask an admin of your organization for an invitation.";

function signupAllowedByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.VIGIL_ALLOW_SIGNUP === "true";
}

/** Whether a new account may be created now (read per request: the env may change in tests). */
export async function mayCreateUser(db: Db): Promise<boolean> {
  if (signupAllowedByEnv()) return true;
  const [row] = await db.select({ one: sql<number>`1` }).from(user).limit(1);
  return !row;
}

/** better-auth `databaseHooks.user.create.before`: refuses the account when sign-up is closed. */
export async function assertMayCreateUser(db: Db): Promise<void> {
  if (!(await mayCreateUser(db))) throw new APIError("FORBIDDEN", { message: SIGNUP_CLOSED_MESSAGE, code: "SIGNUP_CLOSED" });
}
