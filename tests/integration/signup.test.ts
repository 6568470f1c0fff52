/**
 * Sign-up closes after the first user unless VIGIL_ALLOW_SIGNUP=true, enforced by the server
 * (better-auth's sign-up endpoint driven over HTTP, not only a hidden form).
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { DATABASE_KINDS } from "../support/databases";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { SIGNUP_CLOSED_MESSAGE } from "@/server/signup-policy";

describe.each(DATABASE_KINDS)("sign-up policy on %s", (kind) => {
  const allow = process.env.VIGIL_ALLOW_SIGNUP;
  const signUp = (email: string) =>
    app.runtime.auth.handler(
      new Request("http://vigil.test/api/auth/sign-up/email", {
        method: "POST",
        headers: { "content-type": "application/json", origin: "http://vigil.test", host: "vigil.test" },
        body: JSON.stringify({ email, password: "correct-horse-battery", name: "x" }),
      }),
    );
  const users = async () => (await app.db.execute(sql`select count(*)::int as n from "user"`)) as unknown as { rows?: { n: number }[] } & { n: number }[];

  beforeAll(async () => {
    process.env.VIGIL_AUTH_RATE_LIMIT = "off"; // this file tests the policy, not better-auth's rate limit
  });
  const app = useTestApp(kind);
  afterEach(() => {
    process.env.VIGIL_ALLOW_SIGNUP = allow;
  });

  it("lets the first user sign up, then refuses strangers unless VIGIL_ALLOW_SIGNUP=true", async () => {
    delete process.env.VIGIL_ALLOW_SIGNUP;
    const first = await signUp(`first-${uid()}@example.com`);
    expect(first.status).toBe(200);

    const stranger = `stranger-${uid()}@example.com`;
    const refused = await signUp(stranger);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe(SIGNUP_CLOSED_MESSAGE);
    const n = await users();
    expect((n.rows ?? n)[0].n).toBe(1);

    process.env.VIGIL_ALLOW_SIGNUP = "true";
    expect((await signUp(stranger)).status).toBe(200);
  });
});
