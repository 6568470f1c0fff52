/** URLs of dashboard pages (pure; usable from server and client components). */

/** Key detail URL; the failure key is one URL-encoded path segment. */
export function keyHref(slug: string, failureKey: string): string {
  return `/w/${slug}/tools/${encodeURIComponent(failureKey)}`;
}
