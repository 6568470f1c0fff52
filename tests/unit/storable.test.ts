import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { scanJson, storableJson, storableStrings } from "@/db/storable";

describe("storableStrings", () => {
  it("replaces U+0000 and unpaired surrogates (in values and keys) with U+FFFD, keeps valid pairs", () => {
    expect(storableStrings({ a: "x\u0000y", ["k\ud800"]: ["\udfff", "💥", "\ud83d\ud83d\udca5"], n: 1 })).toEqual({ a: "x\uFFFDy", ["k\uFFFD"]: ["\uFFFD", "💥", "\uFFFD💥"], n: 1 });
  });
  it("returns the same object when nothing needs a change (no copy on the hot path)", () => {
    const v = { text: "plain 💥 \\u0000 written out", list: [1, "two"] };
    expect(storableStrings(v)).toBe(v);
  });
});

describe("storableJson", () => {
  it("is JSON.stringify when every string is storable (control characters and written-out escapes included)", () => {
    const v = { text: "plain 💥 \\u0000 written out", tab: "a\u0001b", at: new Date(0), n: [1, null] };
    expect(storableJson(v)).toBe(JSON.stringify(v));
  });
  it("writes U+0000 and unpaired surrogates as U+FFFD, so the document is valid jsonb", () => {
    const cut = "💥".slice(0, 1); // an error message truncated mid-character
    const doc = storableJson([{ error: `boom${cut}`, payload: { k: "x\u0000y", ["k\udfff"]: "\\ud800 written out" }, at: new Date(0), pair: "💥" }]);
    expect(JSON.parse(doc)).toEqual([{ error: "boom\uFFFD", payload: { k: "x\uFFFDy", ["k\uFFFD"]: "\\ud800 written out" }, at: "1970-01-01T00:00:00.000Z", pair: "💥" }]);
  });
});


describe("scanJson (normalizeEvents' look before it serializes an event)", () => {
  // Strings of any UTF-16 units: lone surrogates and U+0000 included.
  const units = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: "small" }, units, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 5 }),
    object: fc.dictionary(units, tie("value"), { maxKeys: 5 }),
  })).value;

  it("bounds the JSON length from above; when sure, storableStrings has nothing to replace", () => {
    fc.assert(
      fc.property(json, (v) => {
        const scan = scanJson(v);
        if (scan.unsure) return; // the caller serializes then
        expect(scan.maxJsonLength).toBeGreaterThanOrEqual(JSON.stringify(v).length);
        expect(storableStrings(v)).toBe(v);
      }),
      { numRuns: 1000 },
    );
  });

  it("bounds the longest numbers JSON prints (a property run found 24 too few)", () => {
    for (const v of [-0.0000033146493801757373, -0.0000010000000000000002, -1.2345678901234567e-100, -123456789012345680000]) {
      expect(scanJson(v).maxJsonLength).toBeGreaterThanOrEqual(JSON.stringify(v).length);
    }
  });

  it("is unsure of U+0000, a surrogate (even a valid pair) and what is not plain JSON", () => {
    expect(scanJson({ a: "plain text", b: [1, true, null] }).unsure).toBe(false);
    expect(scanJson({ a: "x\u0000y" }).unsure).toBe(true);
    expect(scanJson({ ["k\udfff"]: 1 }).unsure).toBe(true);
    expect(scanJson({ a: "💥" }).unsure).toBe(true);
    expect(scanJson({ at: new Date(0) }).unsure).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(scanJson(deep).unsure).toBe(true);
  });
});
