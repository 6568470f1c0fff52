import { describe, expect, it } from "vitest";
import { boundForRedaction, isSecretKey, redactString, redactValue, redactedPreview, REDACTED, REDACTION_MARGIN, truncateUtf8 } from "./redact";

describe("redaction of secret keys", () => {
  it.each([
    "password",
    "Password",
    "db_password",
    "token",
    "access_token",
    "secret",
    "client_secret",
    "Authorization",
    "api_key",
    "apiKey",
    "X-Api-Key",
    "apikey",
    "cookie",
    "Set-Cookie",
    "private_key",
    "privateKey",
    "aws_access_key_id",
    "credentials",
    "auth",
  ])("%s is a secret key", (k) => {
    expect(isSecretKey(k)).toBe(true);
    expect(redactValue({ [k]: "hunter2" })).toEqual({ [k]: REDACTED });
  });

  it.each(["path", "url", "command", "max_tokens", "maxTokens", "token_count", "author", "query"])(
    "%s is not a secret key",
    (k) => {
      expect(isSecretKey(k)).toBe(false);
    },
  );

  it("redacts nested objects and arrays, keeps other values", () => {
    const v = redactValue({
      url: "https://api.example.com/v1",
      headers: { Authorization: "Bearer abc", Accept: "json" },
      list: [{ password: "x" }, "plain"],
      n: 3,
      ok: true,
      nothing: null,
    });
    expect(v).toEqual({
      url: "https://api.example.com/v1",
      headers: { Authorization: REDACTED, Accept: "json" },
      list: [{ password: REDACTED }, "plain"],
      n: 3,
      ok: true,
      nothing: null,
    });
  });

  it("a whole secret object under a secret key is redacted", () => {
    expect(redactValue({ credentials: { user: "a", pass: "b" } })).toEqual({ credentials: REDACTED });
  });
});

describe("redaction of secret-looking strings", () => {
  it.each([
    ["Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig"],
    ["bearer abcdefgh12345678"],
    ["sk-proj-abcdefghijklmnop1234"],
    ["sk-ant-api03-abcdefghijklmnopqrstu"],
    ["vgl_abcdefghijklmnopqrstuvwxyz012345"],
    ["ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
    ["github_pat_11ABCDEFG0123456789_abcdefghijkl"],
    ["AKIAIOSFODNN7EXAMPLE"],
    ["xoxb-1234567890-abcdefghij"],
    ["AIzaSyA1234567890abcdefghijklmnopqrstu"],
    ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    ["Zk9xQ2a8LmN3pR7sT1uV4wX6yB0cD5eF9gH2jK"],
  ])("%s becomes [redacted]", (s) => {
    expect(redactString(s)).toBe(REDACTED);
    expect(redactValue({ value: s })).toEqual({ value: REDACTED });
  });

  it("secrets embedded in a command are replaced in place", () => {
    const out = redactString('curl -H "Authorization: Bearer sk-abcdefghijklmnop1234" https://x.io');
    expect(out).not.toContain("sk-abcdefghijklmnop1234");
    expect(out).toContain("curl");
    expect(out).toContain("https://x.io");
  });

  it("URL credentials and secret query parameters are redacted", () => {
    expect(redactString("https://user:s3cret@db.example.com/x")).toBe(`https://user:${REDACTED}@db.example.com/x`);
    expect(redactString("https://x.io/a?api_key=abc123&page=2")).toBe(`https://x.io/a?api_key=${REDACTED}&page=2`);
  });

  it("env-style assignments of secret names are redacted", () => {
    expect(redactString("export GITHUB_TOKEN=abc123 && make")).toBe(`export GITHUB_TOKEN=${REDACTED} && make`);
    expect(redactString("PASSWORD='x y' ./run")).toBe(`PASSWORD=${REDACTED} ./run`);
  });

  it("ordinary text, paths and hex hashes are kept", () => {
    for (const s of [
      "ls -la /home/user/projects",
      "Basic authentication is required",
      "git checkout 3f786850e387550fdab836ed7e6dc881de23001b",
      "/usr/local/lib/node_modules/typescript/lib",
      "max tokens exceeded",
    ]) {
      expect(redactString(s)).toBe(s);
    }
  });
});

describe("preview size", () => {
  it("is valid JSON when short", () => {
    const p = redactedPreview({ path: "/etc/hosts", token: "abc" });
    expect(JSON.parse(p)).toEqual({ path: "/etc/hosts", token: REDACTED });
  });

  it("is at most 2 KiB (UTF-8 bytes), never splitting characters", () => {
    const p = redactedPreview({ text: "é€😀".repeat(2000) });
    expect(Buffer.byteLength(p, "utf8")).toBeLessThanOrEqual(2048);
    expect(p.endsWith("…")).toBe(true);
    expect(p).not.toContain("\uFFFD");
    expect(truncateUtf8("abc", 10)).toBe("abc");
    expect(Buffer.byteLength(truncateUtf8("a".repeat(5000), 2048))).toBeLessThanOrEqual(2048);
  });

  it("keeps a text of exactly the byte budget and cuts one byte over it", () => {
    expect(truncateUtf8("€€€€", 12)).toBe("€€€€"); // 4 units, 12 bytes: fits without counting
    expect(truncateUtf8("€€€€a", 12)).toBe("€€€…"); // 13 bytes
    expect(truncateUtf8("aaaa", 4)).toBe("aaaa");
    expect(truncateUtf8("aaaaa", 4)).toBe("a…");
  });
});

describe("the passes a string skips (it cannot hold what they look for)", () => {
  it("still finds tokens in upper or mixed case where their pattern allows it, and only there", () => {
    expect(redactString("curl -H BEARER abcdefgh12345678 x")).toBe(`curl -H BEARER ${REDACTED} x`);
    expect(redactString("SK-ABCDEFGHIJKLMNOPQRST")).toBe("SK-ABCDEFGHIJKLMNOPQRST"); // sk- keys are lower case
  });

  it("redacts a token in a string with no '=', ':' or '@', and a random run on its own", () => {
    expect(redactString("git push ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c origin")).toBe(`git push ${REDACTED} origin`);
    expect(redactString("echo aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 done")).toBe(`echo ${REDACTED} done`);
    expect(redactString("/repo/pkg1/src/index.ts")).toBe("/repo/pkg1/src/index.ts");
  });

  it("applies the assignment, query and user-info passes when their characters are there", () => {
    expect(redactString("db_password: hunter2")).toBe(`db_password: ${REDACTED}`);
    expect(redactString("https://api.example.com/x?api_key=abc123&page=2")).toBe(`https://api.example.com/x?api_key=${REDACTED}&page=2`);
    expect(redactString("postgres://app:s3cret@db:5432/app")).toBe(`postgres://app:${REDACTED}@db:5432/app`);
    expect(redactString("mail me at a@b.example")).toBe("mail me at a@b.example");
  });
});

describe("redactString remembers recent answers", () => {
  it("answers a string seen before exactly as the first time, for short and long strings alike", () => {
    const secret = "curl -H 'Authorization: Bearer ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c' https://api.example.com";
    const first = redactString(secret);
    expect(first).not.toContain("ghp_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c");
    expect(redactString(secret)).toBe(first);
    const long = `${"x".repeat(2000)} password=hunter2`;
    expect(redactString(long)).toBe(`${"x".repeat(2000)} password=${REDACTED}`);
    expect(redactString(long)).toBe(redactString(long));
  });

  it("stays right after many distinct strings have gone through (the memory is bounded)", () => {
    for (let i = 0; i < 10_000; i++) redactString(`file-${i}.ts token=abc${i}`);
    expect(redactString("token=abc1")).toBe(`token=${REDACTED}`);
    expect(redactString("plain text")).toBe("plain text");
  });
});

describe("redaction never backtracks", () => {
  /** Shapes that made a scan re-read a run from every start: quadratic before, linear now. */
  const shapes: Array<[string, (n: number) => string]> = [
    ["assignment names", (n) => "a-".repeat(n / 2) + ":"],
    ["URL user-info", (n) => "a-".repeat(n / 2) + "://@"],
    ["JWT starts", (n) => "eyJ-".repeat(n / 4) + "."],
    ["JWT dots", (n) => "eyJaaaaa.".repeat(n / 9)],
    ["private key", (n) => "-----BEGIN " + "A ".repeat(n / 2)],
    ["secret words", (n) => "x-password-".repeat(n / 11) + " "],
  ];
  it.each(shapes)("%s: 128 KiB in under 50 ms of CPU", (_name, make) => {
    const text = make(128 * 1024);
    // V8 runs a regular expression on its interpreter until it has run a few times, then compiles it.
    for (let i = 0; i < 3; i++) redactString(text);
    const cpu = process.cpuUsage();
    redactString(text);
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000).toBeLessThan(50);
  });

  it("the rewritten scans find what they found: assignments after dashes or inside values, user-info behind a scheme, JWTs after a short start", () => {
    expect(redactString("--password=hunter2")).toBe(`--password=${REDACTED}`);
    expect(redactString("x=password=abc")).toBe(`x=password=${REDACTED}`);
    expect(redactString("max_tokens=5 api_key=abc")).toBe(`max_tokens=5 api_key=${REDACTED}`);
    expect(redactString("see https://bob:pw@host/x")).toBe(`see https://bob:${REDACTED}@host/x`);
    expect(redactString("1://bob:pw@host")).toBe("1://bob:pw@host");
    expect(redactString("eyJab-eyJhbGciOi.eyJzdWIiOi.sig x")).toBe(`${REDACTED} x`);
    expect(redactString("eyJab.eyJhbGciOi.eyJzdWIiOi.sig")).toBe(`eyJab.${REDACTED}`);
  });

  it("truncate, then redact: a secret across the cut is still replaced, text past the margin is not read", () => {
    const secret = "sk-" + "A1b2C3d4".repeat(8);
    const text = "x".repeat(999) + " " + secret + "y".repeat(5000);
    const bounded = redactString(boundForRedaction(text, 1010));
    expect(bounded.startsWith("x".repeat(999) + " " + REDACTED)).toBe(true);
    expect(boundForRedaction(text, 10).length).toBe(10 + REDACTION_MARGIN);
    expect(boundForRedaction("short", 10)).toBe("short");
    // A preview reads no string past what it keeps.
    const preview = redactedPreview({ a: "z".repeat(1_000_000), token_note: "b" });
    expect(preview.length).toBeLessThanOrEqual(2048);
    expect(preview.startsWith('{"a":"zzz')).toBe(true);
  });
});
