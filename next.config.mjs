// Security headers on every page and API answer. Pages get their Content-Security-Policy from
// proxy.ts (a per-request nonce, no inline script), prefetches included; API answers and files under
// /_next get this fixed one, which allows no script at all.
const apiContentSecurityPolicy = ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"].join("; ");
const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  { key: "X-Frame-Options", value: "DENY" },
];

/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite ships WebAssembly and data files it loads from its own package folder;
  // postgres-js and better-auth's drizzle adapter are plain Node modules. Keep them out of the bundle.
  serverExternalPackages: ["@electric-sql/pglite", "postgres"],
  poweredByHeader: false,
  reactStrictMode: true,
  typedRoutes: false,
  // Type-check only the app at build time (tests and tools need dev-only packages; `npm run
  // typecheck` covers everything), so a production install (`npm ci --omit=dev`) can build.
  typescript: { tsconfigPath: "tsconfig.build.json" },
  async headers() {
    return [
      { source: "/:path*", headers: securityHeaders },
      { source: "/api/:path*", headers: [{ key: "Content-Security-Policy", value: apiContentSecurityPolicy }] },
      // Files under /_next and the favicon are not pages (proxy.ts skips them): no script either.
      { source: "/_next/:path*", headers: [{ key: "Content-Security-Policy", value: apiContentSecurityPolicy }] },
      { source: "/favicon.ico", headers: [{ key: "Content-Security-Policy", value: apiContentSecurityPolicy }] },
    ];
  },
};
export default nextConfig;
