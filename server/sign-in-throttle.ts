/**
 * Sign-in attempts are throttled per account (any address) and per client address (any account),
 * so guessing a password is slow: with the policy below 1,000 guesses at one account take
 * (1000 / ACCOUNT_FAILURES) × WINDOW = 25 hours.
 *
 * - Every attempt at /sign-in/email is counted before its password is checked, whatever its body
 *   format: server/auth.ts calls this from better-auth's own hooks, after better-auth parsed the
 *   body (JSON or form-encoded) and matched the route. An attempt that did not fail on the
 *   password is taken back afterwards, so only failures use up the allowance; counting first means
 *   parallel guesses cannot all slip in before the first failure is recorded.
 * - An account or address over its limit is refused with 429 + Retry-After, the right password
 *   included.
 * - The counts live in the database (table sign_in_throttle), so every instance on one database
 *   shares them and the bound holds for the fleet.
 * - The client address is the TCP peer's (scripts/serve.mjs passes it in SOCKET_ADDRESS_HEADER);
 *   X-Forwarded-For counts only when that peer is a proxy named in VIGIL_TRUSTED_PROXIES. One
 *   client's failures lock out its own address, never every other client. A request without a
 *   known address (not served through scripts/serve.mjs) is throttled per account only.
 *
 * VIGIL_AUTH_RATE_LIMIT=off disables it (the e2e server signs in many times).
 */
import { createHash } from "node:crypto";
import net from "node:net";
import { inArray, sql } from "drizzle-orm";
import { rowsOf, type Db } from "@/db/client";
import { signInThrottle } from "@/db/schema";

export const THROTTLE_WINDOW_SECONDS = 15 * 60;
export const ACCOUNT_FAILURES_PER_WINDOW = 10;
export const ADDRESS_FAILURES_PER_WINDOW = 30;

export const TOO_MANY_ATTEMPTS_MESSAGE = "Too many failed sign-in attempts. Try again later.";

/**
 * The TCP peer's address, set by scripts/serve.mjs on every request it hands to Next (a value a
 * client sent under this name is replaced there). Next's route handlers see only headers, and Next
 * itself fills X-Forwarded-For from the socket only when the client did not send one.
 */
export const SOCKET_ADDRESS_HEADER = "x-vigil-socket-address";

/** Seconds a brute force of `guesses` at one account needs under the policy (used by tests and docs). */
export function secondsForGuesses(guesses: number): number {
  return Math.floor(guesses / ACCOUNT_FAILURES_PER_WINDOW) * THROTTLE_WINDOW_SECONDS;
}

export function throttleEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.VIGIL_AUTH_RATE_LIMIT !== "off";
}

/** An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket reports IPv4) as plain IPv4. */
function plainAddress(address: string): string {
  const trimmed = address.trim();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed);
  return mapped ? mapped[1] : trimmed;
}

/** The proxies whose X-Forwarded-For counts. */
export interface TrustedProxies {
  has(address: string): boolean;
}

/**
 * VIGIL_TRUSTED_PROXIES: comma-separated IP addresses and CIDR ranges (IPv4 or IPv6) of the
 * reverse proxies in front of Vigil. Unset or empty: none, X-Forwarded-For is ignored.
 * A malformed entry throws, naming it (start-up stops).
 */
export function trustedProxiesFromEnv(value: string | undefined = process.env.VIGIL_TRUSTED_PROXIES): TrustedProxies {
  const list = new net.BlockList();
  for (const raw of (value ?? "").split(",")) {
    const entry = raw.trim();
    if (!entry) continue;
    const [address, prefixText, ...rest] = entry.split("/");
    const family = net.isIP(address);
    const prefix = prefixText === undefined ? null : Number(prefixText);
    const maxPrefix = family === 4 ? 32 : 128;
    if (!family || rest.length || (prefix !== null && (!/^\d{1,3}$/.test(prefixText) || prefix > maxPrefix))) {
      throw new Error(`VIGIL_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8)`);
    }
    const type = family === 4 ? "ipv4" : "ipv6";
    if (prefix === null) list.addAddress(address, type);
    else list.addSubnet(address, prefix, type);
  }
  return {
    has(candidate: string) {
      const address = plainAddress(candidate);
      const family = net.isIP(address);
      if (!family) return false;
      return list.check(address, family === 4 ? "ipv4" : "ipv6");
    },
  };
}

/**
 * The client's address: the socket's; when the socket is a trusted proxy, the right-most
 * X-Forwarded-For hop that is not itself a trusted proxy (hops to its left are whatever the client
 * claimed). Null when the socket address is unknown.
 */
export function clientAddress(headers: Headers | undefined, trusted: TrustedProxies): string | null {
  const socket = headers?.get(SOCKET_ADDRESS_HEADER);
  if (!socket || !net.isIP(plainAddress(socket))) return null;
  let client = plainAddress(socket);
  if (!trusted.has(client)) return client;
  const hops = (headers?.get("x-forwarded-for") ?? "").split(",").map(plainAddress).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!net.isIP(hops[i])) break; // not an address: the proxy did not write it, so stop at the last known hop
    client = hops[i];
    if (!trusted.has(client)) break;
  }
  return client;
}

/** What one attempt is counted under. */
export interface ThrottleKeys {
  /** The email as better-auth looks it up (lower case). */
  email: string;
  address: string | null;
}

const digest = (value: string) => createHash("sha256").update(value).digest("base64url");

/** Row keys: hashed, so a row neither holds an email nor grows with what a client sends. */
function rowKeys(keys: ThrottleKeys): { key: string; limit: number }[] {
  const rows = [{ key: `account:${digest(keys.email)}`, limit: ACCOUNT_FAILURES_PER_WINDOW }];
  if (keys.address) rows.push({ key: `address:${digest(keys.address)}`, limit: ADDRESS_FAILURES_PER_WINDOW });
  return rows;
}

/** Expired rows are deleted at most this often per throttle (they are reset on use anyway). */
const PRUNE_EVERY_MS = 60_000;

export class SignInThrottle {
  private lastPrune = 0;

  constructor(private readonly db: Db) {}

  /**
   * Counts an attempt before its password is checked. Returns the seconds until another attempt
   * is allowed when the account or the address is over its limit (the attempt is then not
   * counted: a refused attempt checks no password), else 0.
   */
  async begin(keys: ThrottleKeys): Promise<number> {
    const rows = rowKeys(keys);
    const values = sql.join(
      rows.map((r) => sql`(${r.key}, 1, now() + make_interval(secs => ${THROTTLE_WINDOW_SECONDS}))`),
      sql`, `,
    );
    const counted = rowsOf<{ key: string; attempts: number; seconds_left: number | string }>(
      await this.db.execute(sql`
        insert into sign_in_throttle as t (key, attempts, window_ends_at) values ${values}
        on conflict (key) do update set
          attempts = case when t.window_ends_at <= now() then 1 else t.attempts + 1 end,
          window_ends_at = case when t.window_ends_at <= now() then excluded.window_ends_at else t.window_ends_at end
        returning key, attempts, extract(epoch from (window_ends_at - now()))::float8 as seconds_left`),
    );
    let wait = 0;
    for (const row of counted) {
      const limit = rows.find((r) => r.key === row.key)!.limit;
      if (Number(row.attempts) > limit) wait = Math.max(wait, Math.ceil(Number(row.seconds_left)));
    }
    if (wait > 0) await this.takeBack(keys);
    await this.pruneNow();
    return wait > 0 ? Math.max(1, wait) : 0;
  }

  /** An attempt that did not fail on its password (signed in, or refused before any check) is not counted. */
  async takeBack(keys: ThrottleKeys): Promise<void> {
    const names = rowKeys(keys).map((r) => r.key);
    await this.db
      .update(signInThrottle)
      .set({ attempts: sql`greatest(${signInThrottle.attempts} - 1, 0)` })
      .where(sql`${inArray(signInThrottle.key, names)} and ${signInThrottle.windowEndsAt} > now()`);
  }

  private async pruneNow(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await this.db.delete(signInThrottle).where(sql`${signInThrottle.windowEndsAt} < now()`);
  }
}
