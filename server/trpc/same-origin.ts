/**
 * Cookie-authenticated mutations must come from the dashboard's own pages (CSRF): a browser marks a
 * request with `Sec-Fetch-Site` and `Origin`, which a page of another site cannot forge. Accepted:
 * `Sec-Fetch-Site: same-origin` (or `none`, a person's own action), or an `Origin` that is this host
 * (the Host header the browser used, or the request URL's), `VIGIL_BASE_URL` or one of
 * `VIGIL_TRUSTED_ORIGINS`. A request with neither header is not a browser's and cannot carry a
 * victim's cookie by itself (scripts with their own cookie are not CSRF). Agent calls with a Bearer
 * key never reach this check: it guards the session-cookie procedures only.
 */
import { TRPCError } from "@trpc/server";

type RequestLike = Pick<Request, "headers" | "url">;

function trustedOrigins(req: RequestLike, env = process.env): string[] {
  const origins: string[] = [];
  const host = req.headers.get("host");
  if (host) origins.push(`http://${host}`, `https://${host}`);
  try {
    origins.push(new URL(req.url).origin);
  } catch {
    // a request without a parseable URL has only its Host header
  }
  if (env.VIGIL_BASE_URL) {
    try {
      origins.push(new URL(env.VIGIL_BASE_URL).origin);
    } catch {
      // an invalid VIGIL_BASE_URL names no origin
    }
  }
  for (const o of env.VIGIL_TRUSTED_ORIGINS?.split(",") ?? []) if (o.trim()) origins.push(o.trim().replace(/\/+$/, ""));
  return origins.map((o) => o.toLowerCase());
}

/** Why the request is cross-origin, or null when it may change something. */
function crossOriginReason(req: RequestLike): string | null {
  const site = req.headers.get("sec-fetch-site")?.toLowerCase() ?? null;
  if (site === "same-origin" || site === "none") return null;
  const origin = req.headers.get("origin");
  if (origin !== null && origin !== "null" && trustedOrigins(req).includes(origin.toLowerCase())) return null;
  if (origin !== null) return `Origin ${origin} is not this dashboard's`;
  if (site !== null) return `Sec-Fetch-Site is ${site}`;
  return null;
}

/** Throws 403 for a mutation another site's page sent. */
export function refuseCrossOriginMutation(req: RequestLike, type: string): void {
  if (type !== "mutation") return;
  const reason = crossOriginReason(req);
  if (reason) throw new TRPCError({ code: "FORBIDDEN", message: `Cross-origin request refused: ${reason}` });
}
