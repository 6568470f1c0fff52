/**
 * PostgreSQL text and jsonb cannot hold U+0000, and jsonb rejects an unpaired UTF-16 surrogate
 * (`"\ud800"`: "Unicode low surrogate must follow a high surrogate"). Agents and exporters send
 * either now and then (binary tool output, text cut mid-character); both become U+FFFD so the
 * rest is stored instead of failing the whole request.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/**
 * JSON.stringify escapes exactly these as `\u0000` and `\udXXX` (a valid pair is written as is);
 * an even run of backslashes before the `u` is an escaped backslash in the text, not an escape.
 */
const ESCAPED_UNSTORABLE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i;

/**
 * `value` with every string (and object key) storable; the same object when nothing needed a
 * change. `json`: its JSON.stringify, when the caller has it already.
 */
export function storableStrings<T>(value: T, json = JSON.stringify(value) ?? ""): T {
  if (!json.includes("\\u") || !ESCAPED_UNSTORABLE.test(json)) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return v.replace(UNSTORABLE, "\uFFFD");
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [walk(k) as string, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/** A character PostgreSQL cannot store (U+0000) or any surrogate (paired ones are fine; told apart by the slow path). */
const MAYBE_UNSTORABLE = /[\u0000\ud800-\udfff]/;

/** The longest a number prints in JSON: a sign, "0.", five zeros and 17 digits ("-0.0000012345678901234567"). */
const MAX_NUMBER_JSON_LENGTH = 25;

/**
 * A look at a parsed JSON value without serializing it: an upper bound of the length of its
 * JSON.stringify (a string counted as if every character needed a six-character escape), and
 * whether any string or key may hold a character storableStrings would replace. For values from
 * JSON.parse or zod (plain objects, arrays, strings, finite numbers, booleans, null); anything
 * else is reported as `unsure`, as is a value nested deeper than 64 levels (the walk then stops:
 * the bound means nothing).
 */
export function scanJson(value: unknown): { maxJsonLength: number; unsure: boolean } {
  let max = 0;
  let unsure = false;
  const str = (s: string) => {
    max += 2 + 6 * s.length;
    if (!unsure && MAYBE_UNSTORABLE.test(s)) unsure = true;
  };
  const walk = (v: unknown, depth: number): void => {
    if (unsure) return;
    if (typeof v === "string") str(v);
    else if (typeof v === "number") max += MAX_NUMBER_JSON_LENGTH;
    else if (typeof v === "boolean" || v === null || v === undefined) max += 5;
    else if (depth > 64 || typeof v !== "object") unsure = true;
    else if (Array.isArray(v)) {
      max += 2 + v.length;
      for (const x of v) walk(x, depth + 1);
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        unsure = true;
        return;
      }
      max += 2;
      for (const k in v) {
        str(k);
        max += 2;
        walk((v as Record<string, unknown>)[k], depth + 1);
      }
    }
  };
  walk(value, 0);
  return { maxJsonLength: max, unsure };
}

/** ESCAPED_UNSTORABLE, every occurrence, keeping the escaped backslashes before it ($1). */
const ESCAPED_UNSTORABLE_ALL = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * `JSON.stringify(value)` with every unstorable character as U+FFFD (see storableStrings). A
 * document with no `\u` escape at all — nearly every one — is returned after one substring search.
 * (JSON.stringify writes a valid surrogate pair as is, so every `\ud800`–`\udfff` escape in its
 * output is an unpaired one.)
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value) ?? "null";
  if (!json.includes("\\u")) return json;
  // On the text, not the value: the value may hold Dates and other objects with a toJSON.
  return json.replace(ESCAPED_UNSTORABLE_ALL, "$1\\ufffd");
}

