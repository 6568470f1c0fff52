/**
 * Channel URLs must be http(s) and, unless VIGIL_NOTIFY_ALLOW_PRIVATE is set, must not point at
 * loopback, link-local or private addresses (SSRF). Checked on save (literal host) and again at
 * delivery on the resolved addresses, so a DNS name cannot be rebound to an internal address.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

export function allowPrivateTargets(env = process.env): boolean {
  const v = env.VIGIL_NOTIFY_ALLOW_PRIVATE;
  return !!v && v !== "0" && v.toLowerCase() !== "false";
}

export function isPrivateAddress(ip: string): boolean {
  const v4 = ipv4Mapped(ip.toLowerCase()) ?? ip;
  if (isIP(v4) === 4) {
    const [a, b] = v4.split(".").map(Number);
    return (
      a === 0 || a === 10 || a === 127 ||
      (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      a >= 224 // multicast, reserved, broadcast
    );
  }
  const x = ip.toLowerCase();
  return x === "::" || x === "::1" || x.startsWith("fe8") || x.startsWith("fe9") || x.startsWith("fea") || x.startsWith("feb") || x.startsWith("fc") || x.startsWith("fd") || x.startsWith("ff");
}

/** `::ffff:1.2.3.4` or its hex form `::ffff:102:304` → the IPv4 address. */
function ipv4Mapped(ip: string): string | null {
  if (!ip.startsWith("::ffff:")) return null;
  const rest = ip.slice(7);
  if (isIP(rest) === 4) return rest;
  const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
  if (!m) return null;
  const [hi, lo] = [parseInt(m[1], 16), parseInt(m[2], 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** A problem with the URL as written, or null. */
export function checkChannelUrl(raw: string, allowPrivate = allowPrivateTargets()): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "Not a valid URL";
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return "Must be an http(s) URL";
  if (u.username || u.password) return "Must not contain credentials";
  if (allowPrivate) return null;
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "Points at a loopback address (set VIGIL_NOTIFY_ALLOW_PRIVATE to allow)";
  if (isIP(host) && isPrivateAddress(host)) return "Points at a loopback, link-local or private address (set VIGIL_NOTIFY_ALLOW_PRIVATE to allow)";
  return null;
}

/** At delivery: every address the host resolves to must be public (unless allowed). */
export async function checkResolvedTarget(raw: string, allowPrivate = allowPrivateTargets()): Promise<string | null> {
  const literal = checkChannelUrl(raw, allowPrivate);
  if (literal || allowPrivate) return literal;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return null;
  try {
    const addrs = await lookup(host, { all: true });
    if (addrs.some((a) => isPrivateAddress(a.address))) return `Host ${host} resolves to a private address`;
  } catch {
    return `Host ${host} does not resolve`;
  }
  return null;
}
