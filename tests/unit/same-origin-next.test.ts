/** `next=` after sign-in stays on the page's origin, however it is spelled (issue 61 item 6). */
import { describe, expect, it } from "vitest";
import { sameOriginNext } from "@/app/(auth)/sign-in/same-origin-next";

const origin = "https://vigil.example.test";

describe("sameOriginNext", () => {
  it.each([
    ["/w/prod/overview?range=1h#top", `${origin}/w/prod/overview?range=1h#top`],
    ["/invite/abc", `${origin}/invite/abc`],
    [`${origin}/org/members`, `${origin}/org/members`],
  ])("keeps a same-origin target %s", (next, expected) => {
    expect(sameOriginNext(next, origin)).toBe(expected);
  });

  it.each([
    "//evil.example",
    "/\\evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "\\\\evil.example",
    "/.//evil.example",
    "https://evil.example/",
    "http://vigil.example.test/", // another scheme is another origin
    "javascript:alert(1)",
    "data:text/html,hi",
    "https://vigil.example.test@evil.example/",
  ])("sends %j home instead", (next) => {
    const target = new URL(sameOriginNext(next, origin));
    expect(target.origin).toBe(origin);
    // What the browser does with the returned value: it must still be on the origin.
    expect(new URL(sameOriginNext(next, origin), origin).origin).toBe(origin);
  });

  it("turns /.//host into a URL that keeps its origin when the browser reads it again", () => {
    const target = sameOriginNext("/.//evil.example", origin);
    expect(new URL(target, origin).origin).toBe(origin);
  });

  it("goes home without a target", () => {
    expect(sameOriginNext(undefined, origin)).toBe(`${origin}/`);
    expect(sameOriginNext("", origin)).toBe(`${origin}/`);
  });
});
