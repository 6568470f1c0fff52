/**
 * Failure detection and severity (SPEC 3). Pure.
 */
import { compileSafeRegex, type SafeRegex } from "./safe-pattern";
import type { Severity } from "./types";

/** The parts of a `tool.result` event that failure detection and classification read. */
export interface ResultLike {
  success?: boolean;
  error?: unknown;
  result?: unknown;
  httpStatus?: number;
  severity?: Severity;
  ts?: number;
}

/**
 * Default security patterns (JS RegExp sources, compiled case-insensitively) matched against the
 * full command line of failed command-tool calls. Like configured patterns they run on linear-time
 * matching (safe-pattern.ts), so they are written in its syntax: no lookaround, no backreferences;
 * and no quantifier whose repetitions could split the same text two ways.
 */
export const DEFAULT_SECURITY_PATTERNS: readonly string[] = [
  // sudo anywhere as a word
  String.raw`\bsudo\b`,
  // rm -rf / (also /*, "--no-preserve-root", -fr, -r -f) and rm -rf ~ (also ~/, ~/*)
  String.raw`\brm\s+(?:-[\w-]+\s+)*(?:-[a-z]*r[a-z]*|--recursive)\s+(?:-[\w-]+\s+)*["']?(?:/|~/?)\*?["']?(?:$|[\s;&|)])`,
  // mkfs, mkfs.ext4, ...
  String.raw`\bmkfs(?:\.\w+)?\b`,
  // dd ... of=/dev/...
  String.raw`\bdd\b[^;&|]*\bof=/dev/`,
  // chmod -R 777 /
  String.raw`\bchmod\s+(?:-[a-z]+\s+)*-[a-z]*R[a-z]*\s+(?:-[a-z]+\s+)*0?777\s+["']?/\*?["']?(?:$|[\s;&|)])`,
  // curl|wget ... | sh|bash
  String.raw`\b(?:curl|wget)\b[^|]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b`,
  // writes to /etc/: redirection, tee, cp/mv/install/ln into /etc, sed -i on /etc
  String.raw`(?:>>?\s*["']?/etc/|\btee\s+(?:-a\s+)?["']?/etc/|\b(?:cp|mv|install|ln|rsync)\s+.*\s["']?/etc/|\bsed\s+-i\S*\s+.*\s["']?/etc/)`,
];

/**
 * The longest part of a command line security patterns read: matching is linear, and this bounds
 * it per pattern (a command past 16 KiB is a heredoc or a generated script, scanned from its start).
 */
const MAX_SCANNED_COMMAND = 16 * 1024;

/**
 * Compile a security pattern the way classification does (case-insensitive, linear-time). Throws
 * on invalid syntax, on what linear-time matching does not support, or past 512 characters.
 */
export function compileSecurityPattern(source: string): SafeRegex {
  return compileSafeRegex(source, { caseInsensitive: true });
}

const compiledCache = new Map<string, SafeRegex | null>();
function compiled(source: string): SafeRegex | null {
  let re = compiledCache.get(source);
  if (re === undefined) {
    try {
      re = compileSecurityPattern(source);
    } catch {
      // Saved before the check existed, or by hand in the database: skipped, like an invalid pattern.
      re = null;
    }
    if (compiledCache.size > 1000) compiledCache.clear();
    compiledCache.set(source, re);
  }
  return re;
}

/** The first security pattern the command matches, or null. Invalid or unsupported patterns are skipped. */
export function matchSecurityPattern(command: string, patterns: readonly string[]): string | null {
  const scanned = command.length > MAX_SCANNED_COMMAND ? command.slice(0, MAX_SCANNED_COMMAND) : command;
  for (const p of patterns) {
    const re = compiled(p);
    if (re && re.test(scanned)) return p;
  }
  return null;
}

function isPresent(v: unknown): boolean {
  return v !== undefined && v !== null && v !== "" && v !== false;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** HTTP status of a result: `httpStatus`, else `result.status_code` / `result.statusCode`. */
export function httpStatusOf(event: ResultLike): number | null {
  if (typeof event.httpStatus === "number" && Number.isFinite(event.httpStatus)) return event.httpStatus;
  if (isPlainObject(event.result)) {
    for (const k of ["status_code", "statusCode"]) {
      const v = event.result[k];
      if (typeof v === "number" && Number.isFinite(v)) return v;
      if (typeof v === "string" && /^\d{3}$/.test(v.trim())) return Number(v.trim());
    }
  }
  return null;
}

/**
 * SPEC 3: a result is a failure when `success === false`, or `error` is present, or `result` is an
 * object with an `error` key, or an HTTP status ≥ 400 is known.
 * "Present" excludes null, "" and false (`{"error": null}` is a common success shape).
 */
export function isFailure(event: ResultLike): boolean {
  if (event.success === false) return true;
  if (isPresent(event.error)) return true;
  if (isPlainObject(event.result) && isPresent(event.result.error)) return true;
  const status = httpStatusOf(event);
  return status !== null && status >= 400;
}

function messageOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (isPlainObject(v)) {
    for (const k of ["message", "error", "detail", "reason"]) {
      const m = v[k];
      if (typeof m === "string" && m !== "") return m;
    }
    try {
      return JSON.stringify(v);
    } catch {
      return null;
    }
  }
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return null;
}

/** The message to classify: `error` (string, or an object's `message`), else `result.error`. */
export function errorMessage(event: ResultLike): string {
  if (isPresent(event.error)) {
    const m = messageOf(event.error);
    if (m) return m;
  }
  if (isPlainObject(event.result) && isPresent(event.result.error)) {
    const m = messageOf(event.result.error);
    if (m) return m;
  }
  return "";
}

const KEYWORD_RULES: ReadonlyArray<{ severity: Severity; keywords: readonly string[] }> = [
  { severity: "not_found", keywords: ["not found", "does not exist", "no such file"] },
  { severity: "permission", keywords: ["permission denied", "access denied", "unauthorized"] },
  { severity: "timeout", keywords: ["timeout", "timed out", "deadline exceeded"] },
  { severity: "transient", keywords: ["rate limit", "too many requests", "quota"] },
  { severity: "invalid_input", keywords: ["invalid", "required", "must be", "expected"] },
];

function severityFromStatus(status: number | null): Severity | null {
  if (status === null) return null;
  if (status === 401 || status === 403) return "permission";
  if (status === 404) return "not_found";
  if (status === 429) return "transient";
  if (status >= 500 && status < 600) return "server_error";
  return null;
}

function severityFromMessage(message: string): Severity | null {
  const m = message.toLowerCase();
  for (const rule of KEYWORD_RULES) {
    if (rule.keywords.some((k) => m.includes(k))) return rule.severity;
  }
  return null;
}

export const REPEATED_AUTH_WINDOW_MS = 10 * 60 * 1000;
const REPEATED_AUTH_COUNT = 3;

export interface ClassifyContext {
  /** The call's tool is a command tool (extraction kind `command`). */
  isCommandTool: boolean;
  /** The full command line of a command-tool call. */
  command: string | null;
  /** Effective security patterns (workspace ?? organization ?? defaults). */
  securityPatterns: readonly string[];
  /** Earlier failures of the same failure key (any order; only the last 10 minutes matter). */
  recentFailures: ReadonlyArray<{ ts: number; severity: Severity }>;
  /** The time the failure is applied at (defaults to `event.ts`). */
  now?: number;
}

export interface Classification {
  severity: Severity;
  /** Which rule decided: for explanations in the dashboard. */
  source: "agent" | "security_pattern" | "http_status" | "message" | "default";
  /** The security pattern that matched, for `security_pattern`. */
  matchedPattern?: string;
  /** True when a `permission` failure was upgraded to `repeated_auth`. */
  upgraded?: boolean;
}

/** SPEC 3 severity, with the rule that decided it. Call only for failures. */
export function classifyFailure(event: ResultLike, ctx: ClassifyContext): Classification {
  let c: Classification;
  const matched =
    ctx.isCommandTool && ctx.command ? matchSecurityPattern(ctx.command, ctx.securityPatterns) : null;
  if (event.severity) c = { severity: event.severity, source: "agent" };
  else if (matched !== null) c = { severity: "security", source: "security_pattern", matchedPattern: matched };
  else {
    const byStatus = severityFromStatus(httpStatusOf(event));
    if (byStatus) c = { severity: byStatus, source: "http_status" };
    else {
      const byMessage = severityFromMessage(errorMessage(event));
      c = byMessage ? { severity: byMessage, source: "message" } : { severity: "server_error", source: "default" };
    }
  }
  if (c.severity === "permission") {
    const now = ctx.now ?? event.ts ?? 0;
    const earlier = ctx.recentFailures.filter(
      (f) =>
        (f.severity === "permission" || f.severity === "repeated_auth") &&
        f.ts <= now &&
        now - f.ts <= REPEATED_AUTH_WINDOW_MS,
    ).length;
    if (earlier + 1 >= REPEATED_AUTH_COUNT) c = { ...c, severity: "repeated_auth", upgraded: true };
  }
  return c;
}

/** SPEC 3 severity of a failed result. */
export function classifySeverity(event: ResultLike, ctx: ClassifyContext): Severity {
  return classifyFailure(event, ctx).severity;
}

/** SPEC 3 weight: `invalid_input` 0.5, everything else 1. */
export function failureWeight(severity: Severity): number {
  return severity === "invalid_input" ? 0.5 : 1;
}
