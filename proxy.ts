/**
 * Content-Security-Policy for pages, with a fresh nonce per request and no 'unsafe-inline' script:
 * Next.js reads the nonce from the request's CSP header while rendering and puts it on its own
 * bootstrap and chunk scripts ('strict-dynamic' then trusts what those load). Every page renders
 * dynamically (app/layout.tsx awaits connection()), so each one carries its nonce. Styles keep
 * 'unsafe-inline': React style attributes and the charts' inline styles are not scripts.
 * API answers get a fixed CSP from next.config.mjs (they are not documents that run scripts).
 */
import { NextResponse, type NextRequest } from "next/server";

function pageContentSecurityPolicy(nonce: string, dev = process.env.NODE_ENV !== "production"): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.randomUUID()).toString("base64");
  const csp = pageContentSecurityPolicy(nonce);
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: [
    {
      // Every page answer — documents, RSC payloads and prefetches of either (a prefetched document
      // is what the browser shows on navigation). Not the API or files under /_next (next.config.mjs).
      source: "/((?!api/|_next/|favicon.ico).*)",
    },
  ],
};
