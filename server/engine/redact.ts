/**
 * Redacted argument previews (SPEC 2): arguments are never stored verbatim.
 * Values of secret-looking keys and secret-looking strings become "[redacted]";
 * the JSON preview is cut to at most 2 KiB (UTF-8 bytes).
 */

export const REDACTED = "[redacted]";
const MAX_PREVIEW_BYTES = 2048;

/**
 * Characters read past what a caller keeps of a long text (`boundForRedaction`): a secret that
 * starts before the cut is still whole enough to be recognised and replaced.
 */
export const REDACTION_MARGIN = 1024;

/**
 * What to redact of `s` when at most `keep` characters of the result are kept: the text cut to
 * `keep` + REDACTION_MARGIN characters. Redaction is linear, and this bounds it too: a 1 MiB text
 * costs what its stored part does. Truncate, then redact.
 */
export function boundForRedaction(s: string, keep: number): string {
  return s.length > keep + REDACTION_MARGIN ? s.slice(0, keep + REDACTION_MARGIN) : s;
}

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

/**
 * Substring patterns for well-known token formats; each match is replaced (keeping a scheme prefix).
 * Each runs in time linear in the string: a literal start, then runs that end where the match ends
 * or fails within a few characters (no run a later start could read again).
 */
const TOKEN_PATTERNS: Array<{ re: RegExp; keepPrefix?: boolean }> = [
  // PEM private key blocks
  { re: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g },
  // Authorization schemes: "Bearer xxx", "Basic xxx"
  { re: /\b(Bearer)(\s+)[A-Za-z0-9\-._~+/=]{8,}/gi, keepPrefix: true },
  { re: /\b(Basic)(\s+)(?=[A-Za-z0-9+/]*[0-9=])[A-Za-z0-9+/]{8,}={0,2}/g, keepPrefix: true },
  // JWTs (replaceJwts below: a plain scan from every "eyJ" of "eyJ-eyJ-eyJ-…" would re-read the rest each time)
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

/**
 * user:password@ in URLs. The scheme is checked by a lookbehind after "://" (not matched from each
 * start of a scheme-like run, which re-read the run from every position: quadratic on "a-a-a-…").
 */
const URL_USERINFO_RE = /:\/\/(?<=\b[a-z][a-z0-9+.-]*:\/\/)([^/\s:@]+):([^/\s@]+)@/gi;
/** secret-looking query parameters */
const QUERY_SECRET_RE =
  /([?&](?:access_token|refresh_token|id_token|token|api_?key|apikey|key|secret|client_secret|password|passwd|sig|signature|auth)=)([^&#\s"']+)/gi;
/**
 * key=value / key: value assignments of secret names inside strings (e.g. env lines, headers).
 * A name is a whole run of name characters, tried only where the run starts (a name found from a
 * later start in the same run would end at the same place): the lookahead finds the secret word
 * once per run, so a long run without "=" is read a bounded number of times, not once per start.
 * Leading dashes are not part of the name (the word boundary the name starts at comes after them).
 */
const ASSIGNMENT_RE =
  /(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*?(?:password|passwd|secret|token|api_?key|apikey|private_?key|access_?key|credential))([A-Za-z0-9_-]+)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&;,"']+)/gi;

/** A long run of base64/hex-ish characters that looks random. */
const LONG_TOKEN_RE = /[A-Za-z0-9+_=-]{32,}/g;

const asciiCounts = new Uint32Array(128);

function shannonEntropy(s: string): number {
  // Long-token candidates are ASCII: counted in a fixed array (a long run costs one pass, no Map).
  if (/^[\x00-\x7f]*$/.test(s)) {
    asciiCounts.fill(0);
    for (let i = 0; i < s.length; i++) asciiCounts[s.charCodeAt(i)]++;
    let h = 0;
    for (const c of asciiCounts) {
      if (c === 0) continue;
      const p = c / s.length;
      h -= p * Math.log2(p);
    }
    return h;
  }
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
function looksLikeRandomToken(s: string): boolean {
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

const JWT_START_RE = /\beyJ/g;
const JWT_AT_RE = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/y;
const NAME_RUN_RE = /[A-Za-z0-9_-]*/y;

/**
 * JWTs (`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`) replaced, in one pass. Where
 * the pattern fails at an "eyJ", it fails at every later "eyJ" of the same run too (the same run
 * end, a shorter first part), so the scan resumes after the run instead of re-reading it.
 */
function replaceJwts(s: string): string {
  if (!s.includes("eyJ")) return s;
  let out = "";
  let copied = 0;
  JWT_START_RE.lastIndex = 0;
  for (let m = JWT_START_RE.exec(s); m !== null; m = JWT_START_RE.exec(s)) {
    JWT_AT_RE.lastIndex = m.index;
    if (JWT_AT_RE.test(s)) {
      out += s.slice(copied, m.index) + REDACTED;
      copied = JWT_AT_RE.lastIndex;
      JWT_START_RE.lastIndex = copied;
    } else {
      NAME_RUN_RE.lastIndex = m.index + 3;
      NAME_RUN_RE.test(s);
      JWT_START_RE.lastIndex = Math.max(NAME_RUN_RE.lastIndex, m.index + 3);
    }
  }
  return copied === 0 ? s : out + s.slice(copied);
}

/**
 * The literal start of every token pattern, case-insensitive: it matches wherever any of them could
 * (and sometimes where none does), so a string it does not match skips the token passes. Most
 * strings (paths, commands, URLs) hold no token, and one pass over them costs a fraction of fourteen.
 */
const ANY_TOKEN_RE = /-----BEGIN |\b(?:bearer|basic|eyJ|sk-|vgl_|gh[pousr]_|github_pat_|xox[abposr]-|akia|asia|aiza|[rps]k_(?:live|test)_|glpat-|npm_)/i;

function redactUncached(s: string): string {
  let out = s;
  if (ANY_TOKEN_RE.test(out)) {
    out = replaceJwts(out);
    for (const { re, keepPrefix } of TOKEN_PATTERNS) {
      re.lastIndex = 0;
      out = keepPrefix
        ? out.replace(re, (_m, scheme: string, space: string) => `${scheme}${space}${REDACTED}`)
        : out.replace(re, REDACTED);
    }
  }
  // The user-info, query and assignment passes run only on strings with a character their matches always hold.
  if (out.includes("@")) out = out.replace(URL_USERINFO_RE, (_m, user: string) => `://${user}:${REDACTED}@`);
  if (out.includes("=") || out.includes(":")) {
    out = out.replace(QUERY_SECRET_RE, (_m, prefix: string) => `${prefix}${REDACTED}`);
    out = out.replace(ASSIGNMENT_RE, (m, run: string, sep: string, value: string) => {
      const name = run.replace(/^-+/, "");
      if (!isSecretKey(name)) return m;
      if (value === REDACTED || value.includes(REDACTED)) return m;
      return `${run}${sep}${REDACTED}`;
    });
  }
  out = out.replace(LONG_TOKEN_RE, (m) => (looksLikeRandomToken(m) ? REDACTED : m));
  // A string that is nothing but a credential ("Bearer …", a bare key) becomes exactly "[redacted]";
  // secrets embedded in longer text (command lines, URLs) are replaced in place.
  if (/^\s*((Bearer|Basic)\s+)?\[redacted\]\s*$/i.test(out)) return REDACTED;
  return out;
}

/**
 * Deep copy of `value` with secrets replaced by "[redacted]". With a `budget` (characters of
 * string output still wanted), each string is cut before it is redacted and strings past the budget
 * become "": for a preview that keeps only the first characters of the JSON anyway.
 */
export function redactValue(value: unknown, depth = 0, budget?: { left: number }): unknown {
  if (depth > 32) return "[…]";
  if (typeof value === "string") {
    if (!budget) return redactString(value);
    if (budget.left <= 0) return "";
    const out = redactString(boundForRedaction(value, budget.left));
    budget.left -= out.length;
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, budget));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      if (isSecretKey(k) && v !== null && v !== "") out[k] = REDACTED;
      else out[k] = redactValue(v, depth + 1, budget);
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
  // Truncate, then redact: once the strings so far fill the preview, the rest is cut from it anyway
  // (a UTF-8 byte per character at least), so no string is read past that.
  const json = JSON.stringify(redactValue(args ?? {}, 0, { left: maxBytes })) ?? "null";
  return truncateUtf8(json, maxBytes);
}
