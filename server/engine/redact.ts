/**
 * Redacted argument previews (SPEC 2): arguments are never stored verbatim.
 * Values of secret-looking keys and secret-looking strings become "[redacted]";
 * the JSON preview is cut to at most 2 KiB (UTF-8 bytes).
 */

export const REDACTED = "[redacted]";
export const MAX_PREVIEW_BYTES = 2048;

/** Key names (normalised: lower-case, `-`/space → `_`) whose values are secrets. */
const SECRET_KEY_RE =
  /(password|passwd|passphrase|token|secret|authorization|api_?key|cookie|private_?key|access_?key|credential|session_?id|signature|^auth$|^pwd$|^pass$|^x_api_key$|^bearer$|^jwt$|^otp$|^pin$)/;
/** Keys that contain "token" but hold counts, not secrets (e.g. `max_tokens`). */
const NOT_SECRET_KEY_RE = /^(max|min|num|total|input|output|prompt|completion)_?tokens?(_\w+)?$|^tokens?_?(count|limit|usage|budget)$/;

/** Answers for key names seen recently: an agent's argument objects use a few names again and again. Bounded like recentlyRedacted. */
const recentKeys = new Map<string, boolean>();
const RECENT_KEYS_KEPT = 4096;

export function isSecretKey(key: string): boolean {
  let secret = recentKeys.get(key);
  if (secret === undefined) {
    const k = key.toLowerCase().replace(/[-\s.]/g, "_");
    secret = !NOT_SECRET_KEY_RE.test(k) && SECRET_KEY_RE.test(k);
    if (recentKeys.size >= RECENT_KEYS_KEPT) recentKeys.clear();
    recentKeys.set(key, secret);
  }
  return secret;
}

/** Substring patterns for well-known token formats; each match is replaced (keeping a scheme prefix). */
const TOKEN_PATTERNS: Array<{ re: RegExp; keepPrefix?: boolean }> = [
  // PEM private key blocks
  { re: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g },
  // Authorization schemes: "Bearer xxx", "Basic xxx"
  { re: /\b(Bearer)(\s+)[A-Za-z0-9\-._~+/=]{8,}/gi, keepPrefix: true },
  { re: /\b(Basic)(\s+)(?=[A-Za-z0-9+/]*[0-9=])[A-Za-z0-9+/]{8,}={0,2}/g, keepPrefix: true },
  // JWTs
  { re: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g },
  // OpenAI / Anthropic style, Vigil keys, GitHub, Slack, AWS, Google, Stripe
  { re: /\bsk-[A-Za-z0-9_-]{12,}/g },
  { re: /\bvgl_[A-Za-z0-9_-]{12,}/g },
  { re: /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g },
  { re: /\bgithub_pat_[A-Za-z0-9_]{20,}/g },
  { re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { re: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g },
  { re: /\bAIza[0-9A-Za-z_-]{30,}/g },
  { re: /\b(rk|pk|sk)_(live|test)_[A-Za-z0-9]{10,}/g },
  { re: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { re: /\bnpm_[A-Za-z0-9]{30,}/g },
];

/** user:password@ in URLs */
const URL_USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)([^/\s:@]+):([^/\s@]+)@/gi;
/** secret-looking query parameters */
const QUERY_SECRET_RE =
  /([?&](?:access_token|refresh_token|id_token|token|api_?key|apikey|key|secret|client_secret|password|passwd|sig|signature|auth)=)([^&#\s"']+)/gi;
/** key=value / key: value assignments of secret names inside strings (e.g. env lines, headers). */
const ASSIGNMENT_RE =
  /\b([A-Za-z0-9_-]*(?:password|passwd|secret|token|api_?key|apikey|private_?key|access_?key|credential)[A-Za-z0-9_-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&;,"']+)/gi;

/** A long run of base64/hex-ish characters that looks random. */
const LONG_TOKEN_RE = /[A-Za-z0-9+_=-]{32,}/g;

function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const c of counts.values()) {
    const p = c / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** True for a high-entropy token: ≥ 32 chars, letters and digits mixed, entropy > 4 bits/char (plain hex hashes stay). */
export function looksLikeRandomToken(s: string): boolean {
  if (s.length < 32) return false;
  if (!/[0-9]/.test(s) || !/[A-Za-z]/.test(s)) return false;
  if (!(/[A-Z]/.test(s) && /[a-z]/.test(s))) return false;
  return shannonEntropy(s) > 4.0;
}

/**
 * Answers for strings seen recently. Redaction is a dozen regular-expression passes, and the same
 * strings come again and again (a call's args in its result, a path read twice, one error text
 * from many calls); the answer depends on the string alone. Bounded: cleared when full.
 */
const recentlyRedacted = new Map<string, string>();
const REDACTED_CACHE_ENTRIES = 4096;
const REDACTED_CACHE_MAX_LENGTH = 1024;

/** Redact secret-looking parts of a string. A string that is entirely a secret becomes "[redacted]". */
export function redactString(s: string): string {
  if (s.length > REDACTED_CACHE_MAX_LENGTH) return redactUncached(s);
  let out = recentlyRedacted.get(s);
  if (out === undefined) {
    out = redactUncached(s);
    if (recentlyRedacted.size >= REDACTED_CACHE_ENTRIES) recentlyRedacted.clear();
    recentlyRedacted.set(s, out);
  }
  return out;
}

/**
 * Every token pattern at once, case-insensitive: it matches wherever any of them does (and
 * sometimes where none does), so a string it does not match skips the token passes. Most strings
 * (paths, commands, URLs) hold no token, and one pass over them costs a fraction of fourteen.
 */
const ANY_TOKEN_RE = new RegExp(TOKEN_PATTERNS.map(({ re }) => `(?:${re.source})`).join("|"), "i");

function redactUncached(s: string): string {
  let out = s;
  if (ANY_TOKEN_RE.test(out)) {
    for (const { re, keepPrefix } of TOKEN_PATTERNS) {
      re.lastIndex = 0;
      out = keepPrefix
        ? out.replace(re, (_m, scheme: string, space: string) => `${scheme}${space}${REDACTED}`)
        : out.replace(re, REDACTED);
    }
  }
  // The user-info, query and assignment passes run only on strings with a character their matches always hold.
  if (out.includes("@")) out = out.replace(URL_USERINFO_RE, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`);
  if (out.includes("=") || out.includes(":")) {
    out = out.replace(QUERY_SECRET_RE, (_m, prefix: string) => `${prefix}${REDACTED}`);
    out = out.replace(ASSIGNMENT_RE, (m, name: string, sep: string, value: string) => {
      if (!isSecretKey(name)) return m;
      if (value === REDACTED || value.includes(REDACTED)) return m;
      return `${name}${sep}${REDACTED}`;
    });
  }
  out = out.replace(LONG_TOKEN_RE, (m) => (looksLikeRandomToken(m) ? REDACTED : m));
  // A string that is nothing but a credential ("Bearer …", a bare key) becomes exactly "[redacted]";
  // secrets embedded in longer text (command lines, URLs) are replaced in place.
  if (/^\s*((Bearer|Basic)\s+)?\[redacted\]\s*$/i.test(out)) return REDACTED;
  return out;
}

/** Deep copy of `value` with secrets replaced by "[redacted]". */
export function redactValue(value: unknown, depth = 0): unknown {
  if (depth > 32) return "[…]";
  if (typeof value === "string") return redactString(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      if (isSecretKey(k) && v !== null && v !== "") out[k] = REDACTED;
      else out[k] = redactValue(v, depth + 1);
    }
    return out;
  }
  return value;
}

function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/** Cut `s` to at most `maxBytes` UTF-8 bytes, never splitting a character; appends "…" when cut. */
export function truncateUtf8(s: string, maxBytes: number): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most previews are known to fit without counting.
  if (s.length * 3 <= maxBytes || utf8Length(s) <= maxBytes) return s;
  const ellipsis = "…"; // 3 bytes
  const budget = Math.max(0, maxBytes - 3);
  let n = 0;
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (n + len > budget) break;
    n += len;
    out += ch;
  }
  return maxBytes >= 3 ? out + ellipsis : out;
}

/** Redacted JSON preview of tool arguments, at most `maxBytes` (2 KiB) UTF-8 bytes. */
export function redactedPreview(args: unknown, maxBytes = MAX_PREVIEW_BYTES): string {
  const json = JSON.stringify(redactValue(args ?? {})) ?? "null";
  return truncateUtf8(json, maxBytes);
}
