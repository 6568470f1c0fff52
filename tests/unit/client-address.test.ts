/**
 * The sign-in throttle's client address (issue 61 item 2): the socket's, unless the socket is a
 * proxy named in VIGIL_TRUSTED_PROXIES, whose X-Forwarded-For then names the client — the
 * right-most hop that is not itself a trusted proxy, never what the client wrote to its left.
 */
import { describe, expect, it } from "vitest";
import { clientAddress, SOCKET_ADDRESS_HEADER, trustedProxiesFromEnv } from "@/server/sign-in-throttle";

const request = (socket: string | null, forwardedFor?: string) =>
  new Headers({ ...(socket ? { [SOCKET_ADDRESS_HEADER]: socket } : {}), ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}) });

describe("clientAddress", () => {
  const none = trustedProxiesFromEnv("");
  const proxies = trustedProxiesFromEnv(" 10.0.0.0/8 , 192.0.2.10, fd00::/8 ");

  it("is the socket's address when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress(request("198.51.100.1", "203.0.113.9"), none)).toBe("198.51.100.1");
    expect(clientAddress(request("::ffff:198.51.100.1"), none)).toBe("198.51.100.1");
    expect(clientAddress(request("2001:db8::1", "203.0.113.9"), none)).toBe("2001:db8::1");
  });

  it("is unknown without a socket address (not served through scripts/serve.mjs)", () => {
    expect(clientAddress(request(null, "203.0.113.9"), proxies)).toBeNull();
    expect(clientAddress(request("not-an-address"), proxies)).toBeNull();
  });

  it("ignores X-Forwarded-For from a socket that is not a trusted proxy", () => {
    expect(clientAddress(request("198.51.100.1", "203.0.113.9"), proxies)).toBe("198.51.100.1");
  });

  it("takes the right-most untrusted hop behind trusted proxies", () => {
    expect(clientAddress(request("10.1.2.3", "203.0.113.9"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(request("10.1.2.3", "1.1.1.1, 203.0.113.9"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(request("10.1.2.3", "1.1.1.1, 203.0.113.9, 192.0.2.10"), proxies)).toBe("203.0.113.9");
    expect(clientAddress(request("fd00::5", "2001:db8::7"), proxies)).toBe("2001:db8::7");
  });

  it("stops at the last trusted hop when the header has no address the proxy wrote", () => {
    expect(clientAddress(request("10.1.2.3"), proxies)).toBe("10.1.2.3");
    expect(clientAddress(request("10.1.2.3", "1.1.1.1, garbage"), proxies)).toBe("10.1.2.3");
    expect(clientAddress(request("10.1.2.3", "10.9.9.9"), proxies)).toBe("10.9.9.9");
  });
});

describe("VIGIL_TRUSTED_PROXIES", () => {
  it.each(["10.0.0.0/33", "10.0.0.1/", "proxy.internal", "10.0.0.0/8/1", "fd00::/129", "10.0.0.0/x"])("refuses %j, naming it", (entry) => {
    expect(() => trustedProxiesFromEnv(`192.0.2.1, ${entry}`)).toThrow(entry);
  });

  it("trusts nothing when unset", () => {
    expect(trustedProxiesFromEnv(undefined).has("127.0.0.1")).toBe(false);
  });
});
