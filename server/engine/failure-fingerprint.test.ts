import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_INPUT, MAX_SAMPLE, fingerprintError, normalizeErrorMessage } from "./failure-fingerprint";

interface CorpusEntry {
  group: string;
  message: string;
}
const corpus: CorpusEntry[] = JSON.parse(readFileSync(join(__dirname, "../../tests/fixtures/error-corpus.json"), "utf8")).messages;

describe("failure fingerprints on the error corpus", () => {
  const byGroup = new Map<string, Set<string>>();
  const groupOf = new Map<string, Set<string>>();
  for (const { group, message } of corpus) {
    const { fingerprint } = fingerprintError(message);
    byGroup.set(group, (byGroup.get(group) ?? new Set()).add(fingerprint));
    groupOf.set(fingerprint, (groupOf.get(fingerprint) ?? new Set()).add(group));
  }

  it("holds at least 200 messages of many causes", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(200);
    expect(byGroup.size).toBeGreaterThanOrEqual(50);
  });

  it("gives messages that differ only in ids, numbers, quoted values, paths, URLs and timestamps one fingerprint", () => {
    const split = [...byGroup].filter(([, fps]) => fps.size !== 1).map(([g, fps]) => ({ g, samples: [...fps] }));
    const detail = split.map(({ g }) => ({ g, samples: corpus.filter((c) => c.group === g).map((c) => fingerprintError(c.message).sample) }));
    expect(detail).toEqual([]);
  });

  it("keeps different causes apart", () => {
    const merged = [...groupOf].filter(([, groups]) => groups.size > 1).map(([, groups]) => [...groups]);
    expect(merged).toEqual([]);
  });
});

describe("normalizeErrorMessage", () => {
  it.each([
    ["Request failed with status code 404: GET https://api.example.com/v1/users/123", "Request failed with status code 404: GET <url>"],
    ["user 4f9c2b1e-3a7d-4c2e-9b1a-0e5d6f7a8b9c not found", "user <uuid> not found"],
    ["commit 9fceb02d0ae598e95dc970b74767f19372d61af8 is missing", "commit <hash> is missing"],
    ["KeyError: 'user_id'", "KeyError: '<str>'"],
    ['open "/tmp/a b/c.txt" failed', 'open "<str>" failed'],
    ["cat: /var/log/app/x.log: No such file or directory", "cat: <path>: No such file or directory"],
    ["at handler (C:\\app\\src\\index.js:12:5)", "at handler (<path>:<n>:<n>)"],
    ["deadline 2025-03-04T10:11:12.345Z passed at 10:11:13", "deadline <time> passed at <time>"],
    ["segfault at 0x7ffd5e8c3a40", "segfault at <hex>"],
    ["took 1.25s, retry 3 of 5", "took <n>s, retry <n> of <n>"],
    ["ERR_HTTP2_STREAM_ERROR", "ERR_HTTP<n>_STREAM_ERROR"],
    ["no such customer: cus_NffrFeUfNV2Hib", "no such customer: cus_<id>"],
    ["bounce for ana.lopez@example.com", "bounce for ana.<email>"],
    ["it can't be done, it doesn't exist", "it can't be done, it doesn't exist"],
    ["line one\n    line two\t\tend", "line one line two end"],
  ])("%s", (input, expected) => {
    expect(normalizeErrorMessage(input)).toBe(expected);
  });

  it("is case-insensitive in the fingerprint and keeps the sample readable", () => {
    expect(fingerprintError("Not Found: id 12").fingerprint).toBe(fingerprintError("not found: id 99").fingerprint);
    expect(fingerprintError("Not Found: id 12").sample).toBe("Not Found: id <n>");
  });

  it("puts failures without a message in one group", () => {
    expect(fingerprintError(null)).toEqual(fingerprintError(""));
    expect(fingerprintError(null).sample).toBe("(no error message)");
  });

  it("bounds the sample and the input read", () => {
    expect(fingerprintError("word ".repeat(1000)).sample.length).toBeLessThanOrEqual(MAX_SAMPLE);
    const long = "x".repeat(MAX_INPUT);
    expect(fingerprintError(long + "tail one").fingerprint).toBe(fingerprintError(long + "tail two").fingerprint);
  });

  // The scanner reads the cut message once, with no regular expression: hostile input is answered
  // like any other (the thread-hold bound is measured through the server, adversarial-input.test.ts).
  it("answers input made to make a backtracking matcher slow, reading only the cut message", () => {
    const hostile = ["'".repeat(MAX_INPUT), "\"a".repeat(MAX_INPUT / 2), "/".repeat(MAX_INPUT), "0x".repeat(MAX_INPUT / 2), "2025-01-01T".repeat(200), "a1".repeat(MAX_INPUT / 2), "http://".repeat(300)];
    for (const h of hostile) {
      const whole = h.repeat(20);
      expect(normalizeErrorMessage(whole)).toBe(normalizeErrorMessage(whole.slice(0, MAX_INPUT)));
    }
  });
});
