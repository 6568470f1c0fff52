import "server-only";
import { headers } from "next/headers";

/** The dashboard's public origin, for copy-paste examples (VIGIL_BASE_URL, else the request's host). */
export async function getBaseUrl(): Promise<string> {
  if (process.env.VIGIL_BASE_URL) return process.env.VIGIL_BASE_URL.replace(/\/+$/, "");
  const h = await headers();
  const host = h.get("x-forwarded-host") ?? h.get("host") ?? "localhost:3000";
  const proto = h.get("x-forwarded-proto") ?? (/^(localhost|127\.|\[::1\])/.test(host) ? "http" : "https");
  return `${proto.split(",")[0].trim()}://${host.split(",")[0].trim()}`;
}
