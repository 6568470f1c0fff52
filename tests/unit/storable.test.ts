import { describe, expect, it } from "vitest";
import { storableStrings } from "@/db/storable";

describe("storableStrings", () => {
  it("replaces U+0000 and unpaired surrogates (in values and keys) with U+FFFD, keeps valid pairs", () => {
    expect(storableStrings({ a: "x\u0000y", ["k\ud800"]: ["\udfff", "💥", "\ud83d\ud83d\udca5"], n: 1 })).toEqual({ a: "x\uFFFDy", ["k\uFFFD"]: ["\uFFFD", "💥", "\uFFFD💥"], n: 1 });
  });
  it("returns the same object when nothing needs a change (no copy on the hot path)", () => {
    const v = { text: "plain 💥 \\u0000 written out", list: [1, "two"] };
    expect(storableStrings(v)).toBe(v);
  });
});
