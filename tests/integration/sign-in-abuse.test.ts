/**
 * Sign-in abuse (issue 13 item 6): failed sign-ins are throttled per account and per address with
 * 429 + Retry-After; sign-in and closed sign-up answer the same for existing and unknown emails;
 * session cookies are HttpOnly and SameSite=Lax. Real better-auth handler on PGlite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS, createTestDatabase } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import {
  ACCOUNT_FAILURES_PER_WINDOW,
  ADDRESS_FAILURES_PER_WINDOW,
  THROTTLE_WINDOW_SECONDS,
  TOO_MANY_ATTEMPTS_MESSAGE,
  secondsForGuesses,
} from "@/server/sign-in-throttle";
import { SIGNUP_FAILED_MESSAGE } from "@/server/auth";

describe.each(DATABASE_KINDS)("sign-in abuse on %s", (kind) => {
  const env = { rate: process.env.VIGIL_AUTH_RATE_LIMIT, signup: process.env.VIGIL_ALLOW_SIGNUP };
  const owner = { email: `owner-${uid()}@example.com`, password: "correct-horse-battery" };
  const post = (path: string, body: object, address = "203.0.113.7") =>
    app.runtime.auth.handler(
      new Request(`http://vigil.test/api/auth${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: "http://vigil.test", host: "vigil.test", "x-forwarded-for": address },
        body: JSON.stringify(body),
      }),
    );
  const signIn = (email: string, password: string, address?: string) => post("/sign-in/email", { email, password }, address);
  // distinct addresses: better-auth's own sign-up limit (3 per 10 s per address) is not under test
  let signUps = 0;
  const signUp = (email: string) => post("/sign-up/email", { email, password: "another-long-password", name: "x" }, `10.9.0.${++signUps}`);

  beforeAll(async () => {
    delete process.env.VIGIL_AUTH_RATE_LIMIT; // throttling on: this file tests it
    delete process.env.VIGIL_ALLOW_SIGNUP;
  });
  const app = useTestApp(kind);
  beforeAll(async () => {
    expect((await post("/sign-up/email", { ...owner, name: "Owner" }, "198.51.100.1")).status).toBe(200);
  });
  afterAll(async () => {
    process.env.VIGIL_AUTH_RATE_LIMIT = env.rate;
    process.env.VIGIL_ALLOW_SIGNUP = env.signup;
  });

  it("answers a wrong password and an unknown email with the same status and message", async () => {
    const wrong = await signIn(owner.email, "wrong-password-123", "192.0.2.10");
    const unknown = await signIn(`nobody-${uid()}@example.com`, "wrong-password-123", "192.0.2.10");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(((await wrong.json()) as { message: string }).message).toBe(((await unknown.json()) as { message: string }).message);
  });

  it("answers a closed sign-up the same for an existing and an unknown email, in about the same time", async () => {
    const timed = async (email: string) => {
      const started = performance.now();
      const res = await signUp(email);
      return { status: res.status, body: (await res.json()) as { message: string; code: string }, ms: performance.now() - started };
    };
    await timed(owner.email); // warm-up
    const existing = await timed(owner.email);
    const unknown = await timed(`nobody-${uid()}@example.com`);
    expect(existing.status).toBe(403);
    expect(unknown.status).toBe(403);
    expect(existing.body).toEqual(unknown.body);
    // Both paths hash the password (scrypt, tens of ms); a lookup-only answer would be ~1 ms.
    expect(Math.min(existing.ms, unknown.ms)).toBeGreaterThan(Math.max(existing.ms, unknown.ms) / 4);
  });

  it("throttles failed sign-ins per account with 429 and Retry-After, even with the right password", async () => {
    const victim = owner.email;
    // the first test already failed once at this account
    for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW - 1; i++) {
      // spread over addresses: the per-account limit must hold without the per-address one
      expect((await signIn(victim, `guess-${i}-xxxxxxxx`, `10.1.0.${i}`)).status).toBe(401);
    }
    const throttled = await signIn(victim, owner.password, "10.1.0.250");
    expect(throttled.status).toBe(429);
    const retryAfter = Number(throttled.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(THROTTLE_WINDOW_SECONDS);
    expect(((await throttled.json()) as { message: string }).message).toBe(TOO_MANY_ATTEMPTS_MESSAGE);
    const hours = secondsForGuesses(1000) / 3600;
    console.log(
      `[sign-in throttle] ${ACCOUNT_FAILURES_PER_WINDOW} failures per account and ${ADDRESS_FAILURES_PER_WINDOW} per address per ${THROTTLE_WINDOW_SECONDS / 60} min: 1,000 guesses at one account take ${hours.toFixed(1)} h`,
    );
    expect(hours).toBeGreaterThan(2);
  });

  it("throttles failed sign-ins per address across accounts", async () => {
    const address = "10.2.0.1";
    for (let i = 0; i < ADDRESS_FAILURES_PER_WINDOW; i++) {
      expect((await signIn(`spray-${i}-${uid()}@example.com`, "spray-password-1", address)).status).toBe(401);
    }
    const throttled = await signIn(`spray-last-${uid()}@example.com`, "spray-password-1", address);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("sets the session cookie HttpOnly and SameSite=Lax", async () => {
    const second = { email: `member-${uid()}@example.com`, password: "correct-horse-battery" };
    process.env.VIGIL_ALLOW_SIGNUP = "true";
    const res = await post("/sign-up/email", { ...second, name: "M" }, "10.3.0.1");
    delete process.env.VIGIL_ALLOW_SIGNUP;
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });

  it("sets the session cookie Secure (and __Secure-) when VIGIL_BASE_URL is https", async () => {
    const previous = process.env.VIGIL_BASE_URL;
    process.env.VIGIL_BASE_URL = "https://vigil.example.test";
    const secureApp = await TestApp.create(await createTestDatabase(kind)).finally(() => {
      if (previous === undefined) delete process.env.VIGIL_BASE_URL;
      else process.env.VIGIL_BASE_URL = previous;
    });
    try {
      const res = await secureApp.runtime.auth.handler(
        new Request("https://vigil.example.test/api/auth/sign-up/email", {
          method: "POST",
          headers: { "content-type": "application/json", origin: "https://vigil.example.test", host: "vigil.example.test" },
          body: JSON.stringify({ email: `secure-${uid()}@example.com`, password: "correct-horse-battery", name: "S" }),
        }),
      );
      expect(res.status).toBe(200);
      const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
      expect(cookie).toMatch(/^__Secure-/);
      expect(cookie).toMatch(/;\s*Secure/i);
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
    } finally {
      await secureApp.database.close();
    }
  });

  it("answers an open sign-up with an existing email like any refusal, without saying the account exists", async () => {
    process.env.VIGIL_ALLOW_SIGNUP = "true";
    try {
      const res = await post("/sign-up/email", { ...owner, name: "Again" }, "10.5.0.1");
      expect(res.status).toBe(422);
      const body = (await res.json()) as { code: string; message: string };
      expect(body).toMatchObject({ code: "SIGNUP_FAILED", message: SIGNUP_FAILED_MESSAGE });
    } finally {
      delete process.env.VIGIL_ALLOW_SIGNUP;
    }
  });

  it("does not throttle when VIGIL_AUTH_RATE_LIMIT=off", async () => {
    process.env.VIGIL_AUTH_RATE_LIMIT = "off";
    try {
      for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW + 2; i++) expect((await signIn(owner.email, "nope-nope-nope", "10.4.0.1")).status).toBe(401);
    } finally {
      delete process.env.VIGIL_AUTH_RATE_LIMIT;
    }
  });
});
