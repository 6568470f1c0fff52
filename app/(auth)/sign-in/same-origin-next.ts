/**
 * Where sign-in sends the browser next: `next` resolved against the page's origin as the browser
 * would resolve it, kept only when it stays on that origin. The check is on the parsed URL, not the
 * text: browsers read `/\host` as `//host` and drop tabs and newlines (`/%09/host`), so a prefix
 * test on the string lets them through. The absolute URL is returned, because a path such as
 * `/.//host` normalises to `//host`, which the browser would read again as another host.
 */
export function sameOriginNext(next: string | null | undefined, origin: string): string {
  const home = new URL("/", origin).href;
  if (!next) return home;
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return home;
  }
  return url.origin === new URL(origin).origin ? url.href : home;
}
