/**
 * Sign-in abuse (issue 13 item 6, issue 61 items 2 and 4): every sign-in attempt, JSON or
 * form-encoded, is throttled per account and per client address with 429 + Retry-After, a locked
 * account included; the client address is the socket's unless VIGIL_TRUSTED_PROXIES names the
 * proxy; the counts are shared by instances on one database; sign-in and closed sign-up answer
 * the same for existing and unknown emails; session cookies are HttpOnly and SameSite=Lax; the
 * session token is in no JSON body, and the database alone cannot make a session cookie.
 * Real better-auth handler on PGlite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHmac } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { DATABASE_KINDS, createTestDatabase } from "../support/databases";
import { TestApp } from "../support/app";
import { useTestApp } from "../support/use-test-app";
import { uid } from "../support/agent";
import { openDatabase } from "@/db/client";
import { installation, session as sessionTable, user as userTable } from "@/db/schema";
import {
  ACCOUNT_FAILURES_PER_WINDOW,
  ADDRESS_FAILURES_PER_WINDOW,
  SOCKET_ADDRESS_HEADER,
  THROTTLE_WINDOW_SECONDS,
  TOO_MANY_ATTEMPTS_MESSAGE,
  secondsForGuesses,
} from "@/server/sign-in-throttle";
import { SIGNUP_FAILED_MESSAGE } from "@/server/auth";

describe.each(DATABASE_KINDS)("sign-in abuse on %s", (kind) => {
  const env = {
    rate: process.env.VIGIL_AUTH_RATE_LIMIT,
    signup: process.env.VIGIL_ALLOW_SIGNUP,
    secretFile: process.env.VIGIL_AUTH_SECRET_FILE,
    proxies: process.env.VIGIL_TRUSTED_PROXIES,
  };
  const secretDir = fs.mkdtempSync(path.join(os.tmpdir(), "vigil-auth-secret-"));
  const secretFile = path.join(secretDir, "auth-secret");
  const owner = { email: `owner-${uid()}@example.com`, password: "correct-horse-battery" };
  type Sender = { handler: (req: Request) => Promise<Response> };
  /**
   * A request as scripts/serve.mjs hands it on: `address` is the TCP peer's (the socket-address
   * header); `headers` adds or overrides headers (e.g. an X-Forwarded-For a client sent).
   */
  const send = (to: Sender, path: string, body: string, contentType: string, address: string | null, headers: Record<string, string> = {}) =>
    to.handler(
      new Request(`http://vigil.test/api/auth${path}`, {
        method: "POST",
        headers: {
          "content-type": contentType,
          origin: "http://vigil.test",
          host: "vigil.test",
          ...(address ? { [SOCKET_ADDRESS_HEADER]: address } : {}),
          ...headers,
        },
        body,
      }),
    );
  const post = (path: string, body: object, address: string | null = "203.0.113.7", headers?: Record<string, string>, to: Sender = app.runtime.auth) =>
    send(to, path, JSON.stringify(body), "application/json", address, headers);
  const signIn = (email: string, password: string, address?: string | null, headers?: Record<string, string>, to?: Sender) =>
    post("/sign-in/email", { email, password }, address, headers, to);
  const signInForm = (email: string, password: string, address: string | null) =>
    send(app.runtime.auth, "/sign-in/email", new URLSearchParams({ email, password }).toString(), "application/x-www-form-urlencoded", address);
  // distinct addresses: better-auth's own sign-up limit (3 per 10 s per address) is not under test
  let signUps = 0;
  const signUpFrom = (address: string) => ({ "x-forwarded-for": address }); // what better-auth's own limiter reads
  const signUp = (email: string) => {
    const address = `10.9.0.${++signUps}`;
    return post("/sign-up/email", { email, password: "another-long-password", name: "x" }, address, signUpFrom(address));
  };
  /** A new account (sign-up opened for it), so a test's lockouts touch no other test's account. */
  const newAccount = async () => {
    const account = { email: `user-${uid()}@example.com`, password: "correct-horse-battery" };
    process.env.VIGIL_ALLOW_SIGNUP = "true";
    try {
      const address = `10.8.0.${++signUps % 250}`;
      expect((await post("/sign-up/email", { ...account, name: "U" }, address, signUpFrom(address))).status).toBe(200);
    } finally {
      delete process.env.VIGIL_ALLOW_SIGNUP;
    }
    return account;
  };

  beforeAll(async () => {
    process.env.VIGIL_AUTH_SECRET_FILE = secretFile;
    delete process.env.VIGIL_TRUSTED_PROXIES;
  });
  beforeAll(async () => {
    delete process.env.VIGIL_AUTH_RATE_LIMIT; // throttling on: this file tests it
    delete process.env.VIGIL_ALLOW_SIGNUP;
  });
  const app = useTestApp(kind);
  beforeAll(async () => {
    expect((await post("/sign-up/email", { ...owner, name: "Owner" }, "198.51.100.1", signUpFrom("198.51.100.1"))).status).toBe(200);
  });
  afterAll(async () => {
    const restore = (name: string, value: string | undefined) => (value === undefined ? delete process.env[name] : (process.env[name] = value));
    restore("VIGIL_AUTH_RATE_LIMIT", env.rate);
    restore("VIGIL_ALLOW_SIGNUP", env.signup);
    restore("VIGIL_AUTH_SECRET_FILE", env.secretFile);
    restore("VIGIL_TRUSTED_PROXIES", env.proxies);
    fs.rmSync(secretDir, { recursive: true, force: true });
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
    const res = await post("/sign-up/email", { ...second, name: "M" }, "10.3.0.1", signUpFrom("10.3.0.1"));
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
      const res = await post("/sign-up/email", { ...owner, name: "Again" }, "10.5.0.1", signUpFrom("10.5.0.1"));
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

  it("counts form-encoded attempts like JSON ones, and a locked account refuses the right password in either format", async () => {
    const victim = await newAccount();
    for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW; i++) {
      expect((await signInForm(victim.email, `form-guess-${i}-xxxxxxxx`, `10.20.0.${i}`)).status).toBe(401);
    }
    const json = await signIn(victim.email, victim.password, "10.20.1.1");
    expect(json.status).toBe(429);
    expect(Number(json.headers.get("retry-after"))).toBeGreaterThan(0);
    const form = await signInForm(victim.email, victim.password, "10.20.1.2");
    expect(form.status).toBe(429);
    expect(form.headers.getSetCookie().some((c) => c.includes("session_token"))).toBe(false);
  });

  it("ignores X-Forwarded-For from a client that is not a trusted proxy: rotating it does not escape the address limit", async () => {
    const socket = "10.21.0.1";
    for (let i = 0; i < ADDRESS_FAILURES_PER_WINDOW; i++) {
      const res = await signIn(`rotate-${i}-${uid()}@example.com`, "spray-password-1", socket, { "x-forwarded-for": `198.18.${i}.1` });
      expect(res.status).toBe(401);
    }
    const throttled = await signIn(`rotate-last-${uid()}@example.com`, "spray-password-1", socket, { "x-forwarded-for": "198.18.250.1" });
    expect(throttled.status).toBe(429);
  });

  it("takes the client from a trusted proxy's X-Forwarded-For (VIGIL_TRUSTED_PROXIES), never from hops the client wrote", async () => {
    process.env.VIGIL_TRUSTED_PROXIES = "10.22.0.0/24, 10.99.0.9";
    const proxied = await TestApp.create(app.database).finally(() => delete process.env.VIGIL_TRUSTED_PROXIES);
    const proxy = "10.22.0.5";
    const attacker = "198.51.100.77";
    const viaProxy = (email: string, forwardedFor: string) => signIn(email, "spray-password-1", proxy, { "x-forwarded-for": forwardedFor }, proxied.runtime.auth);
    for (let i = 0; i < ADDRESS_FAILURES_PER_WINDOW; i++) {
      // what the client claims (left) changes each time; what the proxy appended (right) does not
      expect((await viaProxy(`proxied-${i}-${uid()}@example.com`, `203.0.113.${i}, ${attacker}`)).status).toBe(401);
    }
    expect((await viaProxy(`proxied-last-${uid()}@example.com`, `192.0.2.99, ${attacker}`)).status).toBe(429);
    // Another client behind the same proxies (a chain of two trusted ones) keeps its own count.
    expect((await viaProxy(`proxied-other-${uid()}@example.com`, "198.51.100.78, 10.99.0.9")).status).toBe(401);
  });

  it("locks out only the failing client's address, not every direct client", async () => {
    const attacker = "10.23.0.1";
    for (let i = 0; i < ADDRESS_FAILURES_PER_WINDOW; i++) {
      expect((await signIn(`direct-${i}-${uid()}@example.com`, "spray-password-1", attacker)).status).toBe(401);
    }
    expect((await signIn(`direct-last-${uid()}@example.com`, "spray-password-1", attacker)).status).toBe(429);
    const account = await newAccount();
    expect((await signIn(account.email, account.password, "10.23.0.2")).status).toBe(200);
    expect((await signIn(`direct-other-${uid()}@example.com`, "spray-password-1", "10.23.0.3")).status).toBe(401);
  });

  it.skipIf(kind === "pglite")("shares the counts between two instances on one database", async () => {
    const other = await openDatabase({ url: app.database.url!, poolSize: 2 });
    try {
      const second = await TestApp.create(other);
      const victim = await newAccount();
      for (let i = 0; i < ACCOUNT_FAILURES_PER_WINDOW; i++) {
        const instance = i % 2 === 0 ? app.runtime.auth : second.runtime.auth;
        expect((await signIn(victim.email, `shared-guess-${i}-xxxxxxxx`, `10.25.0.${i}`, undefined, instance)).status).toBe(401);
      }
      expect((await signIn(victim.email, victim.password, "10.25.1.1", undefined, second.runtime.auth)).status).toBe(429);
      expect((await signIn(victim.email, victim.password, "10.25.1.2", undefined, app.runtime.auth)).status).toBe(429);
    } finally {
      await other.close();
    }
  });

  it("keeps the session token out of the sign-up and sign-in JSON bodies (it is in the HttpOnly cookie)", async () => {
    const account = { email: `token-${uid()}@example.com`, password: "correct-horse-battery" };
    const tokenOf = (res: Response) => {
      const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
      expect(cookie).toBeDefined();
      return decodeURIComponent(cookie!.split(";")[0].split("=")[1]).split(".")[0];
    };
    process.env.VIGIL_ALLOW_SIGNUP = "true";
    const up = await post("/sign-up/email", { ...account, name: "T" }, "10.24.0.1", signUpFrom("10.24.0.1")).finally(() => delete process.env.VIGIL_ALLOW_SIGNUP);
    expect(up.status).toBe(200);
    const upToken = tokenOf(up);
    const upText = await up.text();
    expect(JSON.parse(upText)).not.toHaveProperty("token");
    expect(upText).not.toContain(upToken);

    const res = await signIn(account.email, account.password, "10.24.0.2");
    expect(res.status).toBe(200);
    const token = tokenOf(res);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ user: { email: account.email } });
    expect(JSON.parse(text)).not.toHaveProperty("token");
    expect(text).not.toContain(token);
  });

  it("cannot turn a session row read from the database into a valid cookie without the secret file", async () => {
    const account = await newAccount();
    expect((await signIn(account.email, account.password, "10.26.0.1")).status).toBe(200);
    const [signedIn] = await app.db.select({ id: userTable.id }).from(userTable).where(eq(userTable.email, account.email));
    const rows = await app.db.select({ token: sessionTable.token }).from(sessionTable).where(eq(sessionTable.userId, signedIn.id));
    expect(rows.length).toBeGreaterThan(0);
    const { token } = rows[0];
    const sessionWith = (cookieValue: string) => app.runtime.auth.api.getSession({ headers: new Headers({ cookie: `better-auth.session_token=${cookieValue}` }) });
    const signedWith = (secret: string) => encodeURIComponent(`${token}.${createHmac("sha256", secret).update(token).digest("base64")}`);

    expect(await sessionWith(token)).toBeNull();
    // Nothing in the database signs a cookie: every installation value tried as the secret.
    for (const row of await app.db.select().from(installation)) expect(await sessionWith(signedWith(row.value))).toBeNull();
    // The secret is in the file, readable by its owner only — and it is what signs (the forgery above is built right).
    expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(await sessionWith(signedWith(fs.readFileSync(secretFile, "utf8").trim()))).toMatchObject({ user: { email: account.email } });
  });
});
