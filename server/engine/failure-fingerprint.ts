/**
 * Failure groups (SPEC 8): an error message normalized into a readable sample and a fingerprint, so
 * failures that differ only in ids, numbers, quoted values, paths, URLs or timestamps group together.
 * Pure: no I/O (the hash comes from node:crypto, deterministic).
 *
 * The message comes from an agent, so the normalizer is a single left-to-right scanner over an input
 * bounded first (MAX_INPUT): every rule looks ahead a bounded number of characters or consumes what
 * it reads, so the time is linear in the input whatever it holds. No regular expression runs on it.
 */
import { hash as oneShotHash } from "node:crypto";

/** Characters of a message read (stored messages are at most 2,000 characters). */
export const MAX_INPUT = 2000;
/** Longest sample kept (the normalized text, readable). */
export const MAX_SAMPLE = 300;
/** A quoted value longer than this is not taken as one (a stray quote in prose). */
const MAX_QUOTED = 200;

const PLACEHOLDERS = {
  number: "<n>",
  uuid: "<uuid>",
  hash: "<hash>",
  id: "<id>",
  hex: "<hex>",
  time: "<time>",
  url: "<url>",
  path: "<path>",
  email: "<email>",
  string: "<str>",
} as const;

export interface FailureFingerprint {
  /** 16 hex characters; equal for messages whose normalized text is equal (case-insensitive). */
  fingerprint: string;
  /** The normalized message, readable, at most MAX_SAMPLE characters. */
  sample: string;
}

const NO_MESSAGE = "(no error message)";

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLower = (c: number) => c >= 97 && c <= 122;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLetter = (c: number) => isLower(c) || isUpper(c);
const isAlnum = (c: number) => isDigit(c) || isLetter(c);
const isHex = (c: number) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12;
/** Characters that end a URL or a path. */
const isTerminator = (c: number) =>
  isSpace(c) || c === 34 /* " */ || c === 39 /* ' */ || c === 96 /* ` */ || c === 41 /* ) */ || c === 93 /* ] */ || c === 125 /* } */ || c === 62 /* > */ || c === 44 /* , */ || c === 59 /* ; */;
const QUOTES = new Set([34, 39, 96]);

/** Length of a run of characters satisfying `pred` from `i`, at most `max`. */
function runLength(s: string, i: number, pred: (c: number) => boolean, max = Infinity): number {
  let j = i;
  while (j < s.length && j - i < max && pred(s.charCodeAt(j))) j++;
  return j - i;
}

/** 8-4-4-4-12 hex digits at `i`, not inside a longer word; its length or 0. */
function uuidAt(s: string, i: number): number {
  const groups = [8, 4, 4, 4, 12];
  let j = i;
  for (let g = 0; g < groups.length; g++) {
    if (runLength(s, j, isHex, groups[g] + 1) !== groups[g]) return 0;
    j += groups[g];
    if (g < groups.length - 1) {
      if (s.charCodeAt(j) !== 45 /* - */) return 0;
      j++;
    }
  }
  return j < s.length && isAlnum(s.charCodeAt(j)) ? 0 : j - i;
}

/** Digits `n` long exactly at `i`. */
const digitsAt = (s: string, i: number, n: number) => runLength(s, i, isDigit, n + 1) === n;

/**
 * An ISO-8601-like timestamp at `i` (2024-05-01, 2024-05-01T12:03:04.123Z, 2024-05-01 12:03:04+02:00)
 * or a clock time (12:03:04, 12:03:04.5); its length or 0.
 */
function timestampAt(s: string, i: number): number {
  let j = i;
  let date = false;
  if (digitsAt(s, j, 4) && (s[j + 4] === "-" || s[j + 4] === "/") && digitsAt(s, j + 5, 2) && s[j + 7] === s[j + 4] && digitsAt(s, j + 8, 2)) {
    date = true;
    j += 10;
    if ((s[j] === "T" || s[j] === " ") && digitsAt(s, j + 1, 2) && s[j + 3] === ":") j += 1;
    else return j - i;
  }
  if (!(digitsAt(s, j, 2) && s[j + 2] === ":" && digitsAt(s, j + 3, 2))) return date ? j - i - 1 : 0;
  j += 5;
  if (s[j] === ":" && digitsAt(s, j + 1, 2)) j += 3;
  else if (!date) return 0;
  if ((s[j] === "." || s[j] === ",") && isDigit(s.charCodeAt(j + 1))) j += 1 + runLength(s, j + 1, isDigit, 9);
  if (s[j] === "Z") j += 1;
  else if ((s[j] === "+" || s[j] === "-") && date && digitsAt(s, j + 1, 2)) {
    j += 3;
    if (s[j] === ":" && digitsAt(s, j + 1, 2)) j += 3;
    else if (digitsAt(s, j, 2)) j += 2;
  }
  return j - i;
}

/** `scheme://…` at `i` (scheme: 2–10 letters, digits, `+`, `.`, `-`); its length or 0. */
function urlAt(s: string, i: number): number {
  const scheme = runLength(s, i, (c) => isAlnum(c) || c === 43 || c === 46 || c === 45, 11);
  if (scheme < 2 || scheme > 10 || !isLetter(s.charCodeAt(i))) return 0;
  const j = i + scheme;
  if (s[j] !== ":" || s[j + 1] !== "/" || s[j + 2] !== "/") return 0;
  return 3 + scheme + runLength(s, j + 3, (c) => !isTerminator(c));
}

/** A filesystem path at `i`: `/a/b`, `~/a`, `./a`, `../a`, `C:\a`; its length or 0. */
function pathAt(s: string, i: number): number {
  let start = 0;
  const c = s[i];
  if (c === "/" && s[i + 1] !== "/" && i + 1 < s.length && !isTerminator(s.charCodeAt(i + 1))) start = 1;
  else if (c === "~" && s[i + 1] === "/") start = 2;
  else if (c === "." && s[i + 1] === "/") start = 2;
  else if (c === "." && s[i + 1] === "." && s[i + 2] === "/") start = 3;
  else if (isLetter(s.charCodeAt(i)) && s[i + 1] === ":" && s[i + 2] === "\\") start = 3;
  if (!start) return 0;
  // A path ends at a terminator or at a `:` (a line number follows in stack frames).
  return start + runLength(s, i + start, (ch) => !isTerminator(ch) && ch !== 58 /* : */);
}

/** A word of letters and digits: its placeholder when it is an id, a hash or a number; else null. */
function classifyWord(word: string): string | null {
  let digits = 0;
  let hexOnly = true;
  for (let k = 0; k < word.length; k++) {
    const c = word.charCodeAt(k);
    if (isDigit(c)) digits++;
    else if (!isHex(c)) hexOnly = false;
  }
  if (digits === 0) return null;
  if (digits === word.length) return null; // numbers are handled by the scanner
  if (hexOnly && word.length >= 7) return PLACEHOLDERS.hash;
  if (word.length >= 8) return PLACEHOLDERS.id;
  return null;
}

/** Words after which a 3-digit number is an HTTP status (`status code 404`, `HTTP 503`, `error (401)`). */
const STATUS_WORDS = new Set(["status", "code", "http", "error", "statuscode"]);
/**
 * Whether a standalone 3-digit number reads as an HTTP error status, kept because it names the
 * cause (a 404 and a 500 are different failures): after a status word, or opening the message.
 */
const isHttpErrorStatus = (num: string, previousWord: string | null, atStart: boolean) =>
  num.length === 3 && num >= "400" && num <= "599" && (atStart || (previousWord !== null && STATUS_WORDS.has(previousWord)));

/** Normalizes one message (already bounded) into its readable form. */
export function normalizeErrorMessage(input: string): string {
  const s = input.length > MAX_INPUT ? input.slice(0, MAX_INPUT) : input;
  const out: string[] = [];
  let i = 0;
  let pendingSpace = false;
  // The last word read, lowercased, while only spaces and `:`, `(` follow it (null otherwise).
  let previousWord: string | null = null;
  const emit = (t: string, word: string | null = null) => {
    if (pendingSpace && out.length) out.push(" ");
    pendingSpace = false;
    out.push(t);
    previousWord = word;
  };
  const prevCode = () => (i > 0 ? s.charCodeAt(i - 1) : 32);

  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (isSpace(c)) {
      pendingSpace = true;
      i++;
      continue;
    }
    const atWordStart = !isAlnum(prevCode()) && prevCode() !== 95; /* _ */

    if (atWordStart && isLetter(c)) {
      const url = urlAt(s, i);
      if (url) {
        emit(PLACEHOLDERS.url);
        i += url;
        continue;
      }
    }
    if (atWordStart && isHex(c)) {
      const uuid = uuidAt(s, i);
      if (uuid) {
        emit(PLACEHOLDERS.uuid);
        i += uuid;
        continue;
      }
    }
    if (atWordStart && isDigit(c)) {
      const time = timestampAt(s, i);
      if (time) {
        emit(PLACEHOLDERS.time);
        i += time;
        continue;
      }
    }
    if (atWordStart && c === 48 /* 0 */ && (s[i + 1] === "x" || s[i + 1] === "X") && isHex(s.charCodeAt(i + 2))) {
      emit(PLACEHOLDERS.hex);
      i += 2 + runLength(s, i + 2, isHex);
      continue;
    }
    if (QUOTES.has(c) && !isAlnum(prevCode())) {
      // A quoted value: the closing quote on the same line, within MAX_QUOTED, not followed by a letter.
      let j = i + 1;
      const limit = Math.min(s.length, i + 1 + MAX_QUOTED);
      while (j < limit && s.charCodeAt(j) !== c && s.charCodeAt(j) !== 10) j++;
      if (j < limit && s.charCodeAt(j) === c && !isAlnum(j + 1 < s.length ? s.charCodeAt(j + 1) : 32)) {
        emit(`${s[i]}${PLACEHOLDERS.string}${s[i]}`);
        i = j + 1;
        continue;
      }
    }
    if (!isAlnum(prevCode()) && prevCode() !== 46 /* . */) {
      const path = pathAt(s, i);
      if (path) {
        emit(PLACEHOLDERS.path);
        i += path;
        continue;
      }
    }
    if (isAlnum(c)) {
      const len = runLength(s, i, isAlnum);
      const word = s.slice(i, i + len);
      // An e-mail address: word@word.word
      if (s[i + len] === "@" && atWordStart) {
        const domain = runLength(s, i + len + 1, (ch) => isAlnum(ch) || ch === 46 || ch === 45);
        if (domain > 2 && s.slice(i + len + 1, i + len + 1 + domain).includes(".")) {
          emit(PLACEHOLDERS.email);
          i += len + 1 + domain;
          continue;
        }
      }
      if (isDigit(c) && runLength(s, i, isDigit) === len) {
        // A number, with its decimal/dotted parts (1.5, 10.0.0.1).
        let j = i + len;
        while (s[j] === "." && isDigit(s.charCodeAt(j + 1))) j += 1 + runLength(s, j + 1, isDigit);
        const standalone = j === i + len && !isAlnum(s.charCodeAt(j)) && atWordStart;
        emit(standalone && isHttpErrorStatus(word, previousWord, out.length === 0) ? word : PLACEHOLDERS.number);
        i = j;
        continue;
      }
      const placeholder = classifyWord(word);
      if (placeholder) {
        emit(placeholder);
        i += len;
        continue;
      }
      // A word with a few digits (HTTP2, v1, E11000): its digit runs are numbers.
      let k = 0;
      let piece = "";
      while (k < len) {
        const d = runLength(word, k, isDigit);
        if (d) {
          piece += PLACEHOLDERS.number;
          k += d;
        } else {
          const l = runLength(word, k, (ch) => !isDigit(ch));
          piece += word.slice(k, k + l);
          k += l;
        }
      }
      emit(piece, word.toLowerCase());
      i += len;
      continue;
    }
    emit(s[i], c === 58 /* : */ || c === 40 /* ( */ ? previousWord : null);
    i++;
  }
  return out.join("").trim();
}

/** The fingerprint and sample of a failure's error message (null or empty: one "no message" group). */
export function fingerprintError(message: string | null | undefined): FailureFingerprint {
  const normalized = message ? normalizeErrorMessage(message) : "";
  const text = normalized || NO_MESSAGE;
  const fingerprint = oneShotHash("sha1", text.toLowerCase(), "hex").slice(0, 16);
  return { fingerprint, sample: text.length > MAX_SAMPLE ? `${text.slice(0, MAX_SAMPLE - 1)}…` : text };
}
