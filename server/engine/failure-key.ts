/**
 * Failure keys (SPEC 2): `toolName|k=v|k=v` with the parameters sorted by name.
 *
 * Pure: no I/O. MD5 comes from node:crypto (deterministic hashing, not I/O).
 */
import { hash as oneShotHash } from "node:crypto";
import { compileGlob } from "./safe-pattern";
import type { Extractor, ExtractorKind, JsonObject } from "./types";

const DEFAULT_FILE_TOOLS: readonly string[] = [
  "readFile",
  "writeFile",
  "updateFile",
  "removeFile",
  "Read",
  "Write",
  "Edit",
  "str_replace_editor",
];
const DEFAULT_HTTP_TOOLS: readonly string[] = ["http_request", "fetch", "WebFetch"];
const DEFAULT_COMMAND_TOOLS: readonly string[] = ["bash", "Bash", "execute_bash", "shell"];

/** The extractor that applies to a call: a workspace rule (first match) or the built-in default. */
export interface ExtractorMatch {
  kind: ExtractorKind;
  /** Argument field(s) to read, in order of preference. Empty for `hash` over all args. */
  fields: string[];
  /** The workspace extractor that matched, or null when a default applied. */
  source: Extractor | null;
}

export interface FailureKeyInfo {
  failureKey: string;
  toolName: string;
  params: Record<string, string>;
  /** First 8 hex chars of MD5 of the canonical JSON of all args. */
  argsHash: string;
  /** `event.domain` ?? URL host for url-kind tools ?? MCP server for mcp-kind tools ?? null. */
  domain: string | null;
  /** The extraction kind used (`command` means security patterns apply to the call). */
  kind: ExtractorKind;
  /** For command-kind tools: the full command string (security patterns match it); else null. */
  command: string | null;
}

/** JSON with object keys sorted recursively (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeysDeep(value)) ?? "null";
}

function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeysDeep(v)));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as Record<string, unknown>).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      out[k] = sortKeysDeep(v);
    }
    return out;
  }
  return value;
}

/**
 * Whether `a` and `b` have the same canonicalJson, without making it: true only when they surely
 * do (plain JSON values, keys in any order); anything else — a Date, NaN, a class instance — is
 * false, and the caller computes what it wanted to save.
 */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== "object" || a === null || isPlainJson(a);
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameCanonicalJson(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !sameCanonicalJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) defined--;
  return defined === 0;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** An object or array made of JSON values only (the same reference compared with itself). */
function isPlainJson(v: object): boolean {
  if (Array.isArray(v)) return v.every((x) => typeof x !== "object" || x === null || isPlainJson(x));
  if (!isPlainObject(v)) return false;
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    if (typeof x === "object" && x !== null && !isPlainJson(x)) return false;
  }
  return true;
}

/** First 8 hex characters of the MD5 of the canonical JSON of `args`. */
export function argsHash(args: unknown): string {
  // One-shot: no Hash object per call (every call and result of a batch is hashed).
  return oneShotHash("md5", canonicalJson(args ?? {}), "hex").slice(0, 8);
}

/**
 * Glob match on tool names: `*` any run of characters, `?` one character; whole name, case-sensitive.
 * Compiled once per glob (cached) into a linear-time matcher: a configuration's extractor globs are
 * not rebuilt per call, and no glob backtracks on a long name.
 */
export function globMatch(glob: string, name: string): boolean {
  return compileGlob(glob, { star: "any" }).test(name);
}

function isMcpToolName(toolName: string): boolean {
  return toolName.startsWith("mcp_");
}

/**
 * Server name from an MCP tool name: `mcp__<server>__<tool>` or `mcp_<server>_<tool>`.
 * Returns null when the name carries no server.
 */
export function parseMcpServer(toolName: string): string | null {
  if (toolName.startsWith("mcp__")) {
    const rest = toolName.slice(5);
    const idx = rest.indexOf("__");
    const server = idx >= 0 ? rest.slice(0, idx) : rest;
    return server.length > 0 ? server : null;
  }
  if (toolName.startsWith("mcp_")) {
    const rest = toolName.slice(4);
    const idx = rest.indexOf("_");
    const server = idx >= 0 ? rest.slice(0, idx) : rest;
    return server.length > 0 ? server : null;
  }
  return null;
}

/** Which extractor applies: workspace rules first (first match wins), then the defaults. */
function matchExtractor(toolName: string, extractors: readonly Extractor[] = []): ExtractorMatch {
  for (const ex of extractors) {
    if (globMatch(ex.tool, toolName)) {
      const field = ex.field.trim();
      const fields = ex.kind === "hash" && (field === "" || field === "*") ? [] : [field];
      return { kind: ex.kind, fields, source: ex };
    }
  }
  if (DEFAULT_FILE_TOOLS.includes(toolName)) return { kind: "path", fields: ["path", "file_path"], source: null };
  if (DEFAULT_HTTP_TOOLS.includes(toolName)) return { kind: "url", fields: ["url"], source: null };
  if (DEFAULT_COMMAND_TOOLS.includes(toolName)) return { kind: "command", fields: ["command"], source: null };
  if (isMcpToolName(toolName)) return { kind: "mcp", fields: ["_mcp_server"], source: null };
  return { kind: "hash", fields: [], source: null };
}

/** Parent directory, like Python's `Path(p).parent` for POSIX paths. */
export function parentDir(p: string): string {
  if (p === "") return ".";
  const sep = p.includes("/") ? "/" : p.includes("\\") ? "\\" : "/";
  let s = p;
  while (s.length > 1 && s.endsWith(sep)) s = s.slice(0, -1);
  const idx = s.lastIndexOf(sep);
  if (idx < 0) return ".";
  if (idx === 0) return sep;
  const parent = s.slice(0, idx);
  // Windows drive root: "C:\\x" -> "C:\\"
  if (sep === "\\" && /^[A-Za-z]:$/.test(parent)) return parent + "\\";
  return parent;
}

/** Host (with port, lower-cased) and first path segment of a URL; tolerant of a missing scheme. */
function parseUrlParts(url: string): { host: string; firstSegment: string } {
  const trimmed = url.trim();
  if (trimmed === "") return { host: "", firstSegment: "" };
  let parsed: URL | null = null;
  try {
    parsed = new URL(trimmed);
    if (!parsed.host) parsed = null; // e.g. "mailto:x" or "api.example.com:8080/x" parsed as a scheme
  } catch {
    parsed = null;
  }
  if (!parsed) {
    try {
      parsed = new URL("http://" + trimmed);
    } catch {
      return { host: "", firstSegment: "" };
    }
  }
  const segments = parsed.pathname.split("/");
  const first = segments.length > 1 ? segments[1] : "";
  let firstSegment = first;
  try {
    firstSegment = decodeURIComponent(first);
  } catch {
    firstSegment = first;
  }
  return { host: parsed.host.toLowerCase(), firstSegment };
}

/** First word of a command line (no skipping of `sudo` or env assignments). */
function firstWord(command: string): string {
  const t = command.trim();
  if (t === "") return "";
  return t.split(/\s+/)[0];
}

function asString(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  return null;
}

function readField(args: JsonObject, fields: string[]): unknown {
  for (const f of fields) {
    if (f in args && args[f] !== undefined && args[f] !== null) return args[f];
  }
  return undefined;
}

function commandString(v: unknown): string {
  if (Array.isArray(v)) return v.map((x) => asString(x) ?? "").join(" ");
  return asString(v) ?? "";
}

function nonEmpty(s: string | null | undefined): string | null {
  return typeof s === "string" && s.length > 0 ? s : null;
}

/** SPEC 2: the failure key of a call, its key parameters, args hash and domain. */
export function extractFailureKey(
  toolName: string,
  args: JsonObject | null | undefined,
  event: { service?: string | null; domain?: string | null } = {},
  extractors: readonly Extractor[] = [],
): FailureKeyInfo {
  const a: JsonObject = args && typeof args === "object" && !Array.isArray(args) ? args : {};
  const match = matchExtractor(toolName, extractors);
  const params: Record<string, string> = {};
  let implicitDomain: string | null = null;
  let command: string | null = null;
  const hash = argsHash(a);

  switch (match.kind) {
    case "path": {
      const p = asString(readField(a, match.fields)) ?? "";
      params.path_prefix = parentDir(p);
      break;
    }
    case "url": {
      const u = asString(readField(a, match.fields)) ?? "";
      const { host, firstSegment } = parseUrlParts(u);
      params.domain = host;
      params.path_prefix = firstSegment;
      implicitDomain = nonEmpty(host);
      break;
    }
    case "command": {
      command = commandString(readField(a, match.fields));
      params.command = firstWord(command);
      break;
    }
    case "mcp": {
      const server =
        nonEmpty(event.service ?? null) ??
        nonEmpty(asString(readField(a, match.fields))) ??
        parseMcpServer(toolName) ??
        "";
      params.mcp_server = server;
      implicitDomain = nonEmpty(server);
      break;
    }
    case "hash": {
      params.args_hash = match.fields.length === 0 ? hash : argsHash(readField(a, match.fields) ?? null);
      break;
    }
  }

  const signature = Object.keys(params)
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join("|");
  return {
    failureKey: signature ? `${toolName}|${signature}` : toolName,
    toolName,
    params,
    argsHash: hash,
    domain: nonEmpty(event.domain ?? null) ?? implicitDomain,
    kind: match.kind,
    command,
  };
}

/** Level-state keys (SPEC 4.3). */
export function domainStateKey(domain: string): string {
  return `@domain:${domain}`;
}
export function toolStateKey(toolName: string): string {
  return `@tool:${toolName}`;
}
