/**
 * `vigil connect`: the hook blocks of connect-config.ts (the dashboard's Connect page shows the
 * same ones) merged into the CLI's own settings file. The person's other settings and hooks stay; Vigil's earlier hooks are
 * replaced; the old file is kept as a backup. The API key is never written, only `$VIGIL_API_KEY`.
 */
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { CONNECT_TARGETS, hookConfig, type ConnectTarget } from "./connect-config.js";

export { CONNECT_TARGETS, type ConnectTarget };

export interface ConnectOptions {
  target: ConnectTarget;
  baseUrl: string;
  /** The sessions' agent name (empty: the CLI's name). */
  agent: string;
  /** Seconds a held tool call waits for a person in Vigil's Approvals. */
  waitSeconds: number;
  scope: "user" | "project";
  /** Write here instead of the CLI's settings file. */
  file?: string;
  dryRun: boolean;
  /** Base of the project scope (default the working directory). */
  cwd?: string;
}

export interface ConnectFileReport {
  path: string;
  changed: boolean;
  backup: string | null;
  diff: string;
}

export interface ConnectReport {
  target: ConnectTarget;
  dryRun: boolean;
  files: ConnectFileReport[];
}

/** The settings block for the CLI: `{ hooks, … }` exactly as the Connect page shows it. */
export function hookSettings(o: ConnectOptions): Record<string, any> {
  return hookConfig(o.target, o);
}

/** The settings file of the CLI for the scope. */
export function settingsPath(o: Pick<ConnectOptions, "target" | "scope" | "file" | "cwd">): string {
  if (o.file) return resolve(o.file);
  const project = o.cwd ?? process.cwd();
  if (o.target === "claude-code") return o.scope === "project" ? join(project, ".claude", "settings.json") : join(homedir(), ".claude", "settings.json");
  if (o.target === "gemini") return o.scope === "project" ? join(project, ".gemini", "settings.json") : join(homedir(), ".gemini", "settings.json");
  return o.scope === "project" ? join(project, ".codex", "hooks.json") : join(process.env.CODEX_HOME || join(homedir(), ".codex"), "hooks.json");
}

/** The person's settings with Vigil's hooks in: their other hooks kept, Vigil's earlier ones replaced. */
export function mergeHooks(existing: Record<string, any>, block: Record<string, any>, target: ConnectTarget): Record<string, any> {
  const merged: Record<string, any> = structuredClone(existing);
  const marker = `/api/hooks/${target}`;
  const hooks: Record<string, any> = merged.hooks && typeof merged.hooks === "object" && !Array.isArray(merged.hooks) ? merged.hooks : {};
  for (const [event, entries] of Object.entries(block.hooks as Record<string, unknown[]>)) {
    const current = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [...current.filter((entry) => !JSON.stringify(entry).includes(marker)), ...entries];
  }
  merged.hooks = hooks;
  if (block.hooksConfig) merged.hooksConfig = { ...(merged.hooksConfig ?? {}), ...block.hooksConfig };
  return merged;
}

/** Codex runs hooks only with `[features] hooks = true` in config.toml. */
export function enableCodexHooks(toml: string): string {
  const lines = toml.split("\n");
  const header = lines.findIndex((l) => /^\s*\[features\]\s*(#.*)?$/.test(l));
  if (header === -1) return `${toml.replace(/\n*$/, toml.trim() ? "\n\n" : "")}[features]\nhooks = true\n`;
  for (let i = header + 1; i < lines.length; i++) {
    if (/^\s*\[/.test(lines[i])) break;
    if (/^\s*hooks\s*=/.test(lines[i])) {
      lines[i] = "hooks = true";
      return lines.join("\n");
    }
  }
  lines.splice(header + 1, 0, "hooks = true");
  return lines.join("\n");
}

export async function connect(o: ConnectOptions): Promise<ConnectReport> {
  const files: ConnectFileReport[] = [];
  const path = settingsPath(o);
  const before = await readOptional(path);
  let existing: Record<string, any> = {};
  if (before !== null && before.trim()) {
    try {
      existing = JSON.parse(before);
    } catch (error) {
      throw new Error(`${path} is not JSON (${(error as Error).message}); fix it or pass --file`);
    }
    if (!existing || typeof existing !== "object" || Array.isArray(existing)) throw new Error(`${path} does not hold a JSON object`);
  }
  const after = `${JSON.stringify(mergeHooks(existing, hookSettings(o), o.target), null, 2)}\n`;
  files.push(await writeWithBackup(path, before, after, o.dryRun));
  if (o.target === "codex") {
    const tomlPath = join(dirname(path), "config.toml");
    const toml = await readOptional(tomlPath);
    files.push(await writeWithBackup(tomlPath, toml, enableCodexHooks(toml ?? ""), o.dryRun));
  }
  return { target: o.target, dryRun: o.dryRun, files };
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

async function writeWithBackup(path: string, before: string | null, after: string, dryRun: boolean): Promise<ConnectFileReport> {
  const changed = before !== after;
  const diff = changed ? unifiedDiff(path, before ?? "", after, before === null) : "";
  if (dryRun || !changed) return { path, changed, backup: null, diff };
  await mkdir(dirname(path), { recursive: true });
  let backup: string | null = null;
  if (before !== null) {
    backup = `${path}.vigil-backup-${new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "")}`;
    await copyFile(path, backup);
  }
  await writeFile(path, after);
  return { path, changed, backup, diff };
}

/** A unified diff of two texts by lines (three lines of context). */
export function unifiedDiff(path: string, a: string, b: string, created = false): string {
  const x = a ? a.replace(/\n$/, "").split("\n") : [];
  const y = b.replace(/\n$/, "").split("\n");
  // Longest common subsequence table, from the end.
  const lcs: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: { kind: " " | "-" | "+"; text: string; ai: number; bi: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) ops.push({ kind: " ", text: x[i], ai: i++, bi: j++ });
    else if (j < y.length && (i >= x.length || lcs[i][j + 1] >= lcs[i + 1][j])) ops.push({ kind: "+", text: y[j], ai: i, bi: j++ });
    else ops.push({ kind: "-", text: x[i], ai: i++, bi: j });
  }
  const out = [`--- ${created ? "/dev/null" : path}`, `+++ ${path}`];
  const CONTEXT = 3;
  let k = 0;
  while (k < ops.length) {
    if (ops[k].kind === " ") {
      k++;
      continue;
    }
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    // Extend the hunk while changes are within 2×context of each other.
    while (end < ops.length) {
      if (ops[end].kind !== " ") {
        end++;
        continue;
      }
      let run = 0;
      while (end + run < ops.length && ops[end + run].kind === " ") run++;
      if (end + run >= ops.length || run > CONTEXT * 2) {
        end = Math.min(ops.length, end + CONTEXT);
        break;
      }
      end += run;
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.kind !== "+").length;
    const bCount = hunk.filter((o) => o.kind !== "-").length;
    out.push(`@@ -${aCount ? hunk[0].ai + 1 : hunk[0].ai},${aCount} +${bCount ? hunk[0].bi + 1 : hunk[0].bi},${bCount} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.text}`);
    k = end;
  }
  return out.join("\n");
}
