/**
 * Patterns that cannot hold the server's thread, whatever the input. Pure: no I/O.
 *
 * JavaScript's RegExp backtracks: a pattern like `(a+)+$` or `^.*a.*a.*b$` takes exponential or
 * high-polynomial time on input made for it, and the server has one thread for every tenant. So
 * every pattern that comes from configuration, and every glob, is matched here in time linear in
 * the input:
 *
 * - Regular expressions run on RE2 semantics with `re2js`, the maintained pure-JavaScript port of
 *   RE2 (a DFA/NFA simulation, no backtracking). Chosen over a safety checker (`safe-regex2`,
 *   `recheck`) because a checker only judges the pattern — by heuristics that miss polynomial cases,
 *   or by an analysis with a time-out — while the match still runs on the backtracking engine; RE2
 *   is linear for every pattern it accepts. The price is RE2's subset of the syntax: no lookaround
 *   and no backreferences. `checkRegexSafe` says so at save time.
 * - Globs compile once into a bit-parallel automaton (no regular expression at all): a match reads
 *   each input character once, O(input × pattern / 32).
 */
import { RE2JS } from "re2js";

/** Longest regular expression accepted from configuration (SPEC 4.5). */
export const MAX_REGEX_LENGTH = 512;

/** A compiled regular expression that runs in time linear in its input. */
export interface SafeRegex {
  /** The source as written (JavaScript syntax). */
  readonly source: string;
  /** Whether the pattern matches anywhere in `input` (like `RegExp.prototype.test`, without state). */
  test(input: string): boolean;
  /**
   * Every non-overlapping match (leftmost first, as JavaScript picks them) replaced by what
   * `replacer` returns for it; `groups` are the capture groups, "" when a group did not take part.
   */
  replaceAll(input: string, replacer: (match: string, ...groups: string[]) => string): string;
}

export class UnsafePatternError extends Error {}

/** The characters JavaScript's `\s` covers (RE2's `\s` is ASCII only). */
const JS_SPACE = "\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/**
 * Rewrites a JavaScript regular expression into RE2's syntax with the same meaning, or says why it
 * cannot. Walks the source once, knowing escapes and character classes.
 */
function toRe2Syntax(source: string): { re2: string } | { problem: string } {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === "\\") {
      const next = source[i + 1];
      if (next === undefined) return { problem: "ends with a lone backslash" };
      if (!inClass && /[1-9]/.test(next)) return { problem: `uses a backreference (\\${next}), which linear-time matching does not support` };
      if (next === "k" && source[i + 2] === "<") return { problem: "uses a backreference (\\k<name>), which linear-time matching does not support" };
      if (next === "u") {
        const hex = source.slice(i + 2, i + 6);
        if (/^[0-9A-Fa-f]{4}$/.test(hex)) {
          out += `\\x{${hex}}`;
          i += 5;
          continue;
        }
        return { problem: "uses \\u without four hexadecimal digits" };
      }
      if (next === "c" && /^[A-Za-z]$/.test(source[i + 2] ?? "")) {
        out += `\\x{${(source.charCodeAt(i + 2) % 32).toString(16)}}`;
        i += 2;
        continue;
      }
      // Letters JavaScript reads as themselves but RE2 as something else (\A, \z, \Q, \p{…}, …).
      if (/[A-Za-z]/.test(next) && !/[dDwWsSbBfnrtvx]/.test(next)) return { problem: `uses the escape \\${next}, which is not supported` };
      if (inClass && (next === "b" || next === "B")) {
        if (next === "B") return { problem: "uses \\B inside a character class" };
        out += "\\x{8}"; // [\b] is a backspace in JavaScript
        i += 1;
        continue;
      }
      if (next === "s") {
        out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
        i += 1;
        continue;
      }
      if (next === "S" && !inClass) {
        out += `[^${JS_SPACE}]`;
        i += 1;
        continue;
      }
      if (!/[A-Za-z0-9]/.test(next)) {
        // An escaped symbol is that symbol; RE2 accepts escapes of ASCII punctuation only.
        const cp = source.codePointAt(i + 1)!;
        out += `\\x{${cp.toString(16)}}`;
        i += cp > 0xffff ? 2 : 1;
        continue;
      }
      out += ch + next;
      i += 1;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      // A "[" inside a class is a literal in JavaScript; RE2 would read "[:alpha:]" as a POSIX class.
      out += ch === "[" ? "\\[" : ch;
      continue;
    }
    if (ch === "[") {
      inClass = true;
      out += ch;
      // A "]" right after "[" or "[^" closes an empty class in JavaScript (RE2 would take it literally).
      if (source[i + 1] === "^") {
        out += "^";
        i += 1;
      }
      if (source[i + 1] === "]") return { problem: source[i] === "^" ? "uses [^], which is not supported (write [\\s\\S])" : "uses an empty character class []" };
      continue;
    }
    if (ch === "(" && source[i + 1] === "?") {
      const rest = source.slice(i + 2, i + 4);
      if (rest.startsWith("=") || rest.startsWith("!") || rest === "<=" || rest === "<!")
        return { problem: "uses lookaround ((?=, (?!, (?<=, (?<!), which linear-time matching does not support" };
    }
    // JavaScript's "." also stops at \r, U+2028 and U+2029; RE2's only at \n.
    out += ch === "." ? "[^\\n\\r\\x{2028}\\x{2029}]" : ch;
  }
  return { re2: out };
}

/**
 * Why `source` cannot be used as a configured regular expression, or null when it can: it must be
 * valid JavaScript syntax, at most 512 characters, and within what linear-time matching supports
 * (no lookaround, no backreferences). The message starts lower-case, for "<field> <message>".
 */
export function checkRegexSafe(source: string): string | null {
  if (typeof source !== "string" || source.length === 0) return "is empty";
  if (source.length > MAX_REGEX_LENGTH) return `is longer than ${MAX_REGEX_LENGTH} characters`;
  try {
    // Constructing only parses: nothing is matched, so this cannot backtrack.
    new RegExp(source);
  } catch (err) {
    return `is not a valid regular expression: ${(err as Error).message}`;
  }
  const translated = toRe2Syntax(source);
  if ("problem" in translated) return translated.problem;
  try {
    RE2JS.compile(translated.re2);
  } catch (err) {
    return `is not supported by linear-time matching: ${(err as Error).message}`;
  }
  return null;
}

/**
 * A configuration-supplied regular expression (JavaScript syntax, the subset `checkRegexSafe`
 * accepts), compiled for linear-time matching. Throws UnsafePatternError with checkRegexSafe's message.
 */
export function compileSafeRegex(source: string, options: { caseInsensitive?: boolean } = {}): SafeRegex {
  const problem = checkRegexSafe(source);
  if (problem !== null) throw new UnsafePatternError(`Regular expression ${problem}`);
  return compileTrusted(source, options);
}

/**
 * The same for the engine's own patterns, which may be longer than configuration's limit (still
 * checked for what RE2 supports).
 */
export function compileBuiltInRegex(source: string, options: { caseInsensitive?: boolean } = {}): SafeRegex {
  const translated = toRe2Syntax(source);
  if ("problem" in translated) throw new UnsafePatternError(`Regular expression ${translated.problem}`);
  return compileTrusted(source, options, translated.re2);
}

function compileTrusted(source: string, options: { caseInsensitive?: boolean }, re2?: string): SafeRegex {
  const syntax = re2 ?? (toRe2Syntax(source) as { re2: string }).re2;
  const compiled = RE2JS.compile(syntax, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  return {
    source,
    test: (input) => compiled.test(input),
    replaceAll: (input, replacer) =>
      compiled.matcher(input).replaceAll((match: string, ...rest: unknown[]) => {
        const groups = rest.slice(0, compiled.groupCount()).map((g) => (typeof g === "string" ? g : ""));
        return replacer(match, ...groups);
      }),
  };
}

// ---------------------------------------------------------------------------
// Globs
// ---------------------------------------------------------------------------

export interface GlobOptions {
  /**
   * What a single `*` covers: `"path"` any run of characters except `/` (path-style, as in
   * `.gitignore`); `"any"` any run at all (tool names, shell commands). `**` is any run in both.
   */
  star: "path" | "any";
  /** Compare ignoring case (tool names in policies, SPEC 4.5). Default: case-sensitive. */
  caseInsensitive?: boolean;
}

/** A compiled glob: `test` says whether it matches the whole input. */
export interface GlobMatcher {
  readonly pattern: string;
  readonly options: Readonly<GlobOptions>;
  test(input: string): boolean;
}

const enum Tok {
  Literal,
  One,
  StarAny,
  StarPath,
}

/**
 * The glob as a position automaton over code points, run bit-parallel: state i means "the first i
 * tokens are matched"; a literal or `?` at i moves i → i+1 on its character; a star at i loops on i
 * (on any character, or any but `/`) and moves to i+1 without reading.
 */
class CompiledGlob implements GlobMatcher {
  private readonly words: number;
  private readonly accept: number; // the final state's index
  /** States whose token reads a given code point and advances. */
  private readonly literalMasks = new Map<number, Uint32Array>();
  private readonly oneMask: Uint32Array;
  private readonly starAnyMask: Uint32Array;
  private readonly starPathMask: Uint32Array;
  private readonly starMask: Uint32Array;
  /** Fast path: a glob without wildcards is a string comparison. */
  private readonly literal: string | null;

  constructor(
    readonly pattern: string,
    readonly options: Readonly<GlobOptions>,
  ) {
    const text = options.caseInsensitive ? pattern.toLowerCase() : pattern;
    const tokens: Array<{ tok: Tok; cp: number }> = [];
    const chars = Array.from(text);
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i];
      if (ch === "*") {
        let run = 1;
        while (chars[i + 1] === "*") {
          run++;
          i++;
        }
        // Stars in a row are one star; "**" (or more) crosses "/" even in path mode.
        tokens.push({ tok: run > 1 || options.star === "any" ? Tok.StarAny : Tok.StarPath, cp: 0 });
      } else if (ch === "?") tokens.push({ tok: Tok.One, cp: 0 });
      else tokens.push({ tok: Tok.Literal, cp: ch.codePointAt(0)! });
    }
    this.literal = tokens.every((t) => t.tok === Tok.Literal) ? text : null;
    this.accept = tokens.length;
    this.words = (tokens.length >> 5) + 1;
    this.oneMask = new Uint32Array(this.words);
    this.starAnyMask = new Uint32Array(this.words);
    this.starPathMask = new Uint32Array(this.words);
    this.starMask = new Uint32Array(this.words);
    tokens.forEach(({ tok, cp }, i) => {
      const bit = 1 << (i & 31);
      const w = i >> 5;
      if (tok === Tok.Literal) {
        let m = this.literalMasks.get(cp);
        if (!m) this.literalMasks.set(cp, (m = new Uint32Array(this.words)));
        m[w] |= bit;
      } else if (tok === Tok.One) this.oneMask[w] |= bit;
      else {
        this.starMask[w] |= bit;
        (tok === Tok.StarAny ? this.starAnyMask : this.starPathMask)[w] |= bit;
      }
    });
  }

  test(input: string): boolean {
    const s = this.options.caseInsensitive ? input.toLowerCase() : input;
    if (this.literal !== null) return s === this.literal;
    const W = this.words;
    let state = new Uint32Array(W);
    let next = new Uint32Array(W);
    state[0] = 1;
    this.closeOverStars(state);
    const none = new Uint32Array(W);
    for (const ch of s) {
      const cp = ch.codePointAt(0)!;
      const lit = this.literalMasks.get(cp) ?? none;
      const slash = cp === 47;
      let carry = 0;
      let alive = 0;
      for (let w = 0; w < W; w++) {
        const d = state[w];
        const advance = d & (lit[w] | this.oneMask[w]);
        const stay = d & (this.starAnyMask[w] | (slash ? 0 : this.starPathMask[w]));
        const moved = ((advance << 1) | carry) >>> 0;
        carry = advance >>> 31;
        next[w] = (moved | stay) >>> 0;
        alive |= next[w];
      }
      if (alive === 0) return false;
      this.closeOverStars(next);
      [state, next] = [next, state];
    }
    return (state[this.accept >> 5] & (1 << (this.accept & 31))) !== 0;
  }

  /** A star's state also stands for the state after it (the star read nothing); stars never follow stars. */
  private closeOverStars(state: Uint32Array) {
    let carry = 0;
    for (let w = 0; w < this.words; w++) {
      const fromStar = state[w] & this.starMask[w];
      state[w] = (state[w] | (fromStar << 1) | carry) >>> 0;
      carry = fromStar >>> 31;
    }
  }
}

const globCache = new Map<string, GlobMatcher>();
const GLOB_CACHE_ENTRIES = 4096;

/**
 * Compiles a glob once (cached per pattern and options): `?` one character, `**` any run of
 * characters, `*` any run except `/` in `"path"` mode or any run in `"any"` mode; every other
 * character stands for itself (no escapes, no classes). The whole input must match. Matching takes
 * O(input length × pattern length / 32) and never backtracks.
 */
export function compileGlob(pattern: string, options: GlobOptions): GlobMatcher {
  const key = `${options.star}\u0000${options.caseInsensitive ? 1 : 0}\u0000${pattern}`;
  let matcher = globCache.get(key);
  if (!matcher) {
    matcher = new CompiledGlob(pattern, { star: options.star, caseInsensitive: options.caseInsensitive ?? false });
    if (globCache.size >= GLOB_CACHE_ENTRIES) globCache.clear();
    globCache.set(key, matcher);
  }
  return matcher;
}
