/**
 * Channel URLs must be http(s) and, unless VIGIL_NOTIFY_ALLOW_PRIVATE is set, must not point at an
 * address outside the public internet (SSRF): every range of the IANA IPv4 and IPv6 special-purpose
 * address registries, multicast, and IPv6 outside global unicast. IPv4 embedded in IPv6 (mapped,
 * translated, compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) is unpacked and judged as IPv4.
 *
 * Checked on save (literal host) and at delivery, where the check sits inside the connection's own
 * DNS lookup (`guardedLookup`): the socket connects to exactly the addresses that were checked, so a
 * name cannot answer a public address to the check and a private one to the connection.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

export function allowPrivateTargets(env = process.env): boolean {
  const v = env.VIGIL_NOTIFY_ALLOW_PRIVATE;
  return !!v && v !== "0" && v.toLowerCase() !== "false";
}

type Range = [name: string, cidr: string];

/** IANA IPv4 Special-Purpose Address Registry, plus multicast and the reserved 240/4 (with broadcast). */
const IPV4_REFUSED: Range[] = [
  ["\"this network\"", "0.0.0.0/8"],
  ["private-use", "10.0.0.0/8"],
  ["shared address space (carrier-grade NAT)", "100.64.0.0/10"],
  ["loopback", "127.0.0.0/8"],
  ["link-local", "169.254.0.0/16"],
  ["private-use", "172.16.0.0/12"],
  ["IETF protocol assignments", "192.0.0.0/24"],
  ["documentation (TEST-NET-1)", "192.0.2.0/24"],
  ["AS112", "192.31.196.0/24"],
  ["AMT", "192.52.193.0/24"],
  ["6to4 relay anycast", "192.88.99.0/24"],
  ["private-use", "192.168.0.0/16"],
  ["direct delegation AS112", "192.175.48.0/24"],
  ["benchmarking", "198.18.0.0/15"],
  ["documentation (TEST-NET-2)", "198.51.100.0/24"],
  ["documentation (TEST-NET-3)", "203.0.113.0/24"],
  ["multicast", "224.0.0.0/4"],
  ["reserved", "240.0.0.0/4"],
];

/** IPv6 forms that carry an IPv4 address: [name, prefix, index of its first IPv4 byte]. */
const IPV6_EMBEDDING_IPV4: [string, string, number][] = [
  ["IPv4-mapped", "::ffff:0:0/96", 12],
  ["IPv4-translated", "::ffff:0:0:0/96", 12],
  ["NAT64 well-known prefix", "64:ff9b::/96", 12],
  ["IPv4-compatible", "::/96", 12],
  ["6to4", "2002::/16", 2],
];

/** Global unicast is 2000::/3; everything else is refused (named where the registry names it). */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");
const IPV6_REFUSED: Range[] = [
  // Outside global unicast.
  ["unspecified", "::/128"],
  ["loopback", "::1/128"],
  ["discard-only", "100::/64"],
  ["dummy prefix", "100:0:0:1::/64"],
  ["local-use IPv4/IPv6 translation", "64:ff9b:1::/48"],
  ["SRv6 SIDs", "5f00::/16"],
  ["unique-local", "fc00::/7"],
  ["link-local", "fe80::/10"],
  ["site-local", "fec0::/10"],
  ["multicast", "ff00::/8"],
  // Inside global unicast.
  ["IETF protocol assignments (includes Teredo)", "2001::/23"],
  ["documentation", "2001:db8::/32"],
  ["direct delegation AS112", "2620:4f:8000::/48"],
  ["documentation", "3fff::/20"],
];

const parsed = <T extends ipaddr.IPv4 | ipaddr.IPv6>(ranges: Range[]) => ranges.map(([name, cidr]) => ({ name, cidr, range: ipaddr.parseCIDR(cidr) as [T, number] }));
const V4 = parsed<ipaddr.IPv4>(IPV4_REFUSED);
const V6 = parsed<ipaddr.IPv6>(IPV6_REFUSED);
const V6_EMBEDDED = IPV6_EMBEDDING_IPV4.map(([name, cidr, at]) => ({ name, cidr, at, range: ipaddr.parseCIDR(cidr) as [ipaddr.IPv6, number] }));

/** Why `ip` is not a public internet address (naming the range), or null when it is one. */
export function refusedAddressReason(ip: string): string | null {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    const bare = ip.replace(/^\[|\]$/g, "");
    // IPv6 in the URL standard's hex form first: ipaddr.js reads any dotted tail as IPv4-mapped.
    addr = ipaddr.parse(bare.includes(":") ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare);
  } catch {
    return `${ip} is not an IP address`;
  }
  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    // Named ranges first (::/128 and ::1 sit inside the IPv4-compatible ::/96).
    const hit = V6.find((r) => v6.match(r.range));
    if (hit) return `${ip} is ${hit.name} (${hit.cidr})`;
    const embedding = V6_EMBEDDED.find((e) => v6.match(e.range));
    if (embedding) {
      const v4 = ipaddr.fromByteArray(v6.toByteArray().slice(embedding.at, embedding.at + 4)) as ipaddr.IPv4;
      const inner = ipv4Reason(v4);
      return inner ? `${ip} is ${embedding.name} (${embedding.cidr}) for ${v4.toString()}, ${inner}` : null;
    }
    if (!v6.match(IPV6_GLOBAL_UNICAST)) return `${ip} is outside IPv6 global unicast (2000::/3)`;
    return null;
  }
  const reason = ipv4Reason(addr as ipaddr.IPv4);
  return reason ? `${ip} is ${reason}` : null;
}

function ipv4Reason(v4: ipaddr.IPv4): string | null {
  const hit = V4.find((r) => v4.match(r.range));
  return hit ? `${hit.name} (${hit.cidr})` : null;
}

export function isPrivateAddress(ip: string): boolean {
  return refusedAddressReason(ip) !== null;
}

const ALLOW_HINT = "set VIGIL_NOTIFY_ALLOW_PRIVATE to allow";

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
  if (host === "localhost" || host.endsWith(".localhost")) return `Points at a loopback address (${ALLOW_HINT})`;
  if (isIP(host)) {
    const reason = refusedAddressReason(host);
    if (reason) return `Points at a private or reserved address: ${reason} (${ALLOW_HINT})`;
  }
  return null;
}

/** Resolves a host name to all its addresses (dns.lookup by default; tests pass their own). */
export type Resolver = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;
const systemResolver: Resolver = (hostname, family) => dnsLookup(hostname, { all: true, family });

/** A refused delivery target; the message says which address and why. */
export class RefusedTargetError extends Error {
  readonly code = "VIGIL_REFUSED_TARGET";
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request / net.connect: resolves once, refuses the host when any of its
 * addresses is not public (unless allowed), and hands the socket exactly the addresses it checked.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = systemResolver) {
  return (hostname: string, options: LookupOptions | number, callback: LookupCallback): void => {
    const opts: LookupOptions = typeof options === "number" ? { family: options } : (options ?? {});
    const family = opts.family === 4 || opts.family === "IPv4" ? 4 : opts.family === 6 || opts.family === "IPv6" ? 6 : 0;
    resolve(hostname, family).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`Host ${hostname} does not resolve`), { code: "ENOTFOUND" }), []);
        if (!allowPrivate) {
          for (const a of addresses) {
            const reason = refusedAddressReason(a.address);
            if (reason) return callback(new RefusedTargetError(`Host ${hostname} resolves to ${reason}`), []);
          }
        }
        if (opts.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(Object.assign(new Error(`Host ${hostname} does not resolve (${err.code ?? err.message})`), { code: err.code ?? "ENOTFOUND" }), []),
    );
  };
}
