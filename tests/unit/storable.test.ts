import { describe, expect, it } from "vitest";
import { storableJson, storableStrings } from "@/db/storable";

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

