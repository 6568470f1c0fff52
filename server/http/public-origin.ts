/** The origin a client reached Vigil at (VIGIL_BASE_URL wins): for links in agent answers and Origin checks. */
export function publicOrigin(req: Request): string {
  if (process.env.VIGIL_BASE_URL) return process.env.VIGIL_BASE_URL.replace(/\/+$/, "");
  const url = new URL(req.url);
  const host = req.headers.get("x-forwarded-host")?.split(",")[0].trim() || req.headers.get("host") || url.host;
  const proto = req.headers.get("x-forwarded-proto")?.split(",")[0].trim() || url.protocol.replace(/:$/, "");
  return `${proto}://${host}`;
}
