/**
 * Every page answer gets the nonce Content-Security-Policy from proxy.ts — documents, RSC payloads
 * and prefetches of either (Next-Router-Prefetch, Purpose/Sec-Purpose: prefetch): a prefetched
 * answer is what the browser shows on navigation. The matcher is evaluated by Next's own matcher
 * (the same code the server runs); e2e/csp-prefetch.spec.ts checks the built app.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { beforeAll, describe, expect, it } from "vitest";

type ProxyModule = typeof import("@/proxy");
let proxyModule: ProxyModule;
let doesMatch: typeof import("next/experimental/testing/server").unstable_doesMiddlewareMatch;
let NextRequest: typeof import("next/server").NextRequest;

beforeAll(async () => {
  // Next's server modules expect the runtime's AsyncLocalStorage on globalThis.
  (globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
  proxyModule = await import("@/proxy");
  ({ unstable_doesMiddlewareMatch: doesMatch } = await import("next/experimental/testing/server"));
  ({ NextRequest } = await import("next/server"));
});

const PAGE_REQUESTS: [string, Record<string, string>][] = [
  ["a document", {}],
  ["an RSC navigation", { rsc: "1" }],
  ["an RSC prefetch (Next-Router-Prefetch)", { rsc: "1", "next-router-prefetch": "1", "next-router-state-tree": "%5B%22%22%5D" }],
  ["a browser prefetch (Purpose: prefetch)", { purpose: "prefetch" }],
  ["a browser prefetch (Sec-Purpose: prefetch)", { "sec-purpose": "prefetch" }],
  ["a speculation-rules prerender", { "sec-purpose": "prefetch;prerender" }],
];

describe("proxy CSP", () => {
  it.each(PAGE_REQUESTS)("%s of a page runs the proxy and carries the nonce CSP", (_, headers) => {
    for (const url of ["/", "/w/e2e/overview", "/w/e2e/settings", "/sign-in"]) {
      expect(doesMatch({ config: proxyModule.config, url, headers }), `${url} ${JSON.stringify(headers)}`).toBe(true);
      const res = proxyModule.proxy(new NextRequest(`http://localhost${url}`, { headers }));
      const csp = res.headers.get("content-security-policy");
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("'unsafe-inline' 'strict-dynamic'");
    }
  });

  it("each answer has its own nonce", () => {
    const nonce = (r: Response) => /'nonce-([^']+)'/.exec(r.headers.get("content-security-policy")!)![1];
    const a = proxyModule.proxy(new NextRequest("http://localhost/w/e2e", { headers: { "next-router-prefetch": "1", rsc: "1" } }));
    const b = proxyModule.proxy(new NextRequest("http://localhost/w/e2e", { headers: { "next-router-prefetch": "1", rsc: "1" } }));
    expect(nonce(a)).not.toBe(nonce(b));
  });

  it("the API and files under /_next are left to next.config.mjs's fixed CSP", () => {
    for (const url of ["/api/trpc/account.me", "/api/health", "/_next/static/chunks/main.js", "/_next/image", "/favicon.ico"])
      expect(doesMatch({ config: proxyModule.config, url, headers: { purpose: "prefetch" } }), url).toBe(false);
  });
});
