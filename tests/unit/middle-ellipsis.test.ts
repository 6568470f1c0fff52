import { describe, expect, it } from "vitest";
import { ELLIPSIS, failureKeyTail, middleCut, middleEllipsis } from "@/components/middle-ellipsis";

/** A monospace room of n characters. */
const room = (n: number) => (t: string) => t.length <= n;

describe("middleEllipsis (an identifier cut only on a real overflow, in the middle)", () => {
  const id = "demo-d4e739a1-refactor-bot-s0";

  it("leaves a value whole when it fits, even with no character to spare", () => {
    expect(middleEllipsis(id, room(id.length))).toBe(id);
    expect(middleEllipsis(id, room(200))).toBe(id);
  });

  it("keeps the distinguishing end whole and as much of the start as fits, with one ellipsis", () => {
    const shown = middleEllipsis(id, room(24));
    expect(shown).toHaveLength(24);
    expect(shown).toBe(`demo-d4${ELLIPSIS}-refactor-bot-s0`);
    expect(shown.split(ELLIPSIS)).toHaveLength(2);
  });

  it("never drops characters next to the ellipsis: head + tail are the value's own start and end", () => {
    for (let n = 4; n < id.length; n++) {
      const shown = middleEllipsis(id, room(n));
      expect(shown.length).toBeLessThanOrEqual(n);
      const [head, tail] = shown.split(ELLIPSIS);
      expect(id.startsWith(head)).toBe(true);
      expect(id.endsWith(tail)).toBe(true);
    }
  });

  it("shortens the end only when not even one character of the start fits", () => {
    expect(middleEllipsis(id, room(18))).toBe(`d${ELLIPSIS}-refactor-bot-s0`);
    expect(middleEllipsis(id, room(17))).toBe(`${ELLIPSIS}-refactor-bot-s0`);
    expect(middleEllipsis(id, room(10))).toBe(`${ELLIPSIS}or-bot-s0`);
    expect(middleEllipsis(id, room(1))).toBe(ELLIPSIS);
  });

  it("keeps a failure key's last parameter (args_hash=…) that tells similar keys apart", () => {
    const key = "http_request|domain=api.example.com|path_prefix=v1/orders|args_hash=9f3c2a71d0b4";
    const shown = middleEllipsis(key, room(48), middleCut(key, failureKeyTail(key)));
    expect(shown).toBe(`http_request|domain=api.${ELLIPSIS}|args_hash=9f3c2a71d0b4`);
    expect(shown).toHaveLength(48);
    expect(failureKeyTail("Bash")).toBe(16);
  });

  it("works with a proportional measure (wide characters count more)", () => {
    const width = (t: string) => [...t].reduce((w, c) => w + (c === "m" || c === "w" ? 2 : 1), 0);
    const shown = middleEllipsis("mmmmmmmmmm-claude-sonnet-4.5", (t) => width(t) <= 20);
    expect(width(shown)).toBeLessThanOrEqual(20);
    expect(shown.endsWith("-sonnet-4.5")).toBe(true);
  });
});
