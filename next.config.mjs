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
};
export default nextConfig;
