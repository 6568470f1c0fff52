/**
 * Webhook signatures: `X-Vigil-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`
 * with `X-Vigil-Timestamp` (unix seconds) so a receiver can reject replays.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export function newChannelSecret(): string {
  return "vgls_" + randomBytes(24).toString("base64url");
}

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** What a receiver does (also documented in the README). */
export function verifyWebhook(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  const ts = Number(headers.timestamp);
  if (!headers.signature || !Number.isFinite(ts)) return false;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - ts) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, ts, body));
  const got = Buffer.from(headers.signature);
  return expected.length === got.length && timingSafeEqual(expected, got);
}
