/**
 * The built-in risk rules (SPEC 4.5): calls that may do lasting harm on their first try, checked
 * before anything failed. Each rule is one declared unit — name, decision, what it matches (for
 * the docs and the dashboard) and its matcher; everything else (the table, the switches, the
 * evaluation) is derived from RISK_RULES. Matchers read the parsed command (shell-command.ts) or
 * the path, in linear time (no pattern that can backtrack). Pure.
 */
import { compileGlob } from "./safe-pattern";
import { commandName, effectiveWords, type SubCommand } from "./shell-command";

export type RiskDecision = "ask" | "deny";

/** What a risk rule looks at: a shell tool's parsed `command`, or a file tool's path arguments. */
export type RiskInput = { kind: "shell"; command: string; parts: readonly SubCommand[] } | { kind: "file"; paths: readonly string[] };

export interface RiskRule {
  name: string;
  decision: RiskDecision;
  /** What it matches, one line (the docs' table and the dashboard). */
  matches: string;
  /** The guard's reason when the rule decides. */
  reason: string;
  appliesTo: RiskInput["kind"];
  test(input: RiskInput): boolean;
}

/** Short options (`-rf`) and long ones (`--force`) of a command's words, up to `--`. */
function options(words: readonly string[]): { short: Set<string>; long: Set<string>; operands: string[] } {
  const short = new Set<string>();
  const long = new Set<string>();
  const operands: string[] = [];
  let ended = false;
  for (const w of words) {
    if (!ended && w === "--") ended = true;
    else if (!ended && w.startsWith("--")) long.add(w.split("=", 1)[0]);
    else if (!ended && w.startsWith("-") && w.length > 1) for (const ch of w.slice(1)) short.add(ch);
    else operands.push(w);
  }
  return { short, long, operands };
}

type Program = { name: string; args: string[]; part: SubCommand };
const programsOf = new WeakMap<readonly SubCommand[], Program[]>();

/** Each sub-command's effective words (wrappers such as `sudo` skipped), with its program name; once per command. */
function programs(input: RiskInput): Program[] {
  if (input.kind !== "shell") return [];
  let out = programsOf.get(input.parts);
  if (!out) {
    out = input.parts.map((part) => {
      const words = effectiveWords(part.words);
      return { name: commandName(words[0]), args: words.slice(1), part };
    });
    programsOf.set(input.parts, out);
  }
  return out;
}

const ROOT_OR_HOME = new Set(["/", "/*", "~", "~/", "~/*", "$HOME", "$HOME/", "$HOME/*", "${HOME}", "${HOME}/", "${HOME}/*"]);

/** Devices that are not disks: writing to them is harmless. */
const HARMLESS_DEVICES = new Set(["/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty"]);

const SHELLS = new Set(["sh", "bash", "zsh"]);
const isShellProgram = (name: string) => SHELLS.has(name) || name.startsWith("python");

/** Global options of git that take a value as the next word. */
const GIT_VALUE_OPTIONS = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"]);

const SECRET_PATH_GLOBS = [
  "**/.env",
  "**/.env.*",
  "**/.ssh/**",
  "**/id_rsa*",
  "**/id_ed25519*",
  "**/.aws/credentials",
  "**/*.pem",
  "**/.netrc",
  "**/.npmrc",
] as const;
const secretPaths = SECRET_PATH_GLOBS.map((g) => compileGlob(g, { star: "path" }));

/** A path as the globs see it: `/`-separated and absolute (`**\/.env` then covers a bare `.env`). */
function normalPath(p: string): string {
  const slashed = p.replace(/\\/g, "/");
  return slashed.startsWith("/") ? slashed : "/" + slashed;
}

export const RISK_RULES: readonly RiskRule[] = [
  {
    name: "shell.delete_root_or_home",
    decision: "deny",
    matches: "`rm` with `-r`/`-R`/`--recursive` and `-f`/`--force` on `/`, `/*`, `~`, `~/`, `$HOME`, `${HOME}`",
    reason: "Recursive forced delete of the root or home directory",
    appliesTo: "shell",
    test: (input) =>
      programs(input).some(({ name, args }) => {
        if (name !== "rm") return false;
        const o = options(args);
        const recursive = o.short.has("r") || o.short.has("R") || o.long.has("--recursive");
        const force = o.short.has("f") || o.long.has("--force");
        return recursive && force && o.operands.some((a) => ROOT_OR_HOME.has(a));
      }),
  },
  {
    name: "shell.disk_overwrite",
    decision: "deny",
    matches: "`mkfs*`, `dd … of=/dev/*`, `> /dev/sd*`",
    reason: "Formats or overwrites a disk device",
    appliesTo: "shell",
    test: (input) =>
      programs(input).some(({ name, args, part }) => {
        if (name.startsWith("mkfs")) return true;
        if (name === "dd" && args.some((a) => a.startsWith("of=/dev/") && !HARMLESS_DEVICES.has(a.slice(3)))) return true;
        return part.words.some((w, i) => (w === ">" || w === ">>") && (part.words[i + 1] ?? "").startsWith("/dev/sd"));
      }),
  },
  {
    name: "shell.pipe_to_shell",
    decision: "ask",
    matches: "`curl`/`wget` piped into `sh`, `bash`, `zsh`, `python*`",
    reason: "Runs a downloaded script (curl or wget piped into a shell)",
    appliesTo: "shell",
    test: (input) => {
      let downloadInPipeline = false;
      for (const { name, part } of programs(input)) {
        if (part.after !== "|") downloadInPipeline = false;
        else if (downloadInPipeline && isShellProgram(name)) return true;
        if (name === "curl" || name === "wget") downloadInPipeline = true;
      }
      return false;
    },
  },
  {
    name: "shell.force_push",
    decision: "ask",
    matches: "`git push` with `--force`, `-f` or `--force-with-lease`",
    reason: "Force-pushes, rewriting the remote's history",
    appliesTo: "shell",
    test: (input) =>
      programs(input).some(({ name, args }) => {
        if (name !== "git") return false;
        let i = 0;
        while (i < args.length && args[i].startsWith("-")) i += GIT_VALUE_OPTIONS.has(args[i]) ? 2 : 1;
        if (args[i] !== "push") return false;
        const o = options(args.slice(i + 1));
        return o.short.has("f") || o.long.has("--force") || o.long.has("--force-with-lease");
      }),
  },
  {
    name: "shell.world_writable",
    decision: "ask",
    matches: "`chmod` `-R` with `777`/`a+w`",
    reason: "Makes a directory tree writable by everyone",
    appliesTo: "shell",
    test: (input) =>
      programs(input).some(({ name, args }) => {
        if (name !== "chmod") return false;
        const o = options(args);
        if (!(o.short.has("R") || o.long.has("--recursive"))) return false;
        return o.operands.some((m) => m === "777" || m === "0777" || m.split(",").some((p) => p.startsWith("a+") && p.includes("w")));
      }),
  },
  {
    name: "shell.privilege",
    decision: "ask",
    matches: "`sudo`, `su`, `doas` as a sub-command",
    reason: "Runs a command with elevated privileges",
    appliesTo: "shell",
    test: (input) =>
      input.kind === "shell" &&
      input.parts.some((part) => {
        const name = commandName(effectiveWords(part.words, { skipWrappers: false })[0]);
        return name === "sudo" || name === "su" || name === "doas";
      }),
  },
  {
    name: "files.secrets",
    decision: "ask",
    matches: SECRET_PATH_GLOBS.map((g) => `\`${g}\``).join(", "),
    reason: "Reads or writes a file that holds secrets",
    appliesTo: "file",
    test: (input) => input.kind === "file" && input.paths.some((p) => {
      const path = normalPath(p);
      return secretPaths.some((m) => m.test(path));
    }),
  },
];

export const RISK_RULE_NAMES: readonly string[] = RISK_RULES.map((r) => r.name);

/** SPEC 4.5 defaults of `risk_rules.shell_tools` and `risk_rules.file_tools`. */
export const DEFAULT_SHELL_TOOLS: readonly string[] = [
  "Bash", "bash", "shell", "execute_bash", "execute_command", "terminal", "run_shell_command", "exec_command", "local_shell",
];
export const DEFAULT_FILE_TOOLS: readonly string[] = [
  "Read", "Write", "Edit", "MultiEdit", "readFile", "writeFile", "updateFile", "removeFile", "read_file", "write_file", "replace",
  "read_many_files", "write_to_file", "replace_in_file", "str_replace_editor", "apply_patch",
];

/** A file tool's path arguments: the first present of these, each element of a `paths` list. */
const FILE_PATH_ARGS = ["file_path", "path", "filePath", "absolute_path", "notebook_path", "paths"] as const;

export function filePathsOf(args: Record<string, unknown>): string[] {
  for (const key of FILE_PATH_ARGS) {
    if (!Object.prototype.hasOwnProperty.call(args, key)) continue;
    const v = args[key];
    if (typeof v === "string") return [v];
    if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
  }
  return [];
}

/** The docs' table of the built-in rules, derived from RISK_RULES. */
export function riskRulesMarkdownTable(): string {
  const rows = RISK_RULES.map((r) => `| \`${r.name}\` | ${r.decision} | ${r.matches} |`);
  return ["| name | decision | matches (shell tools: `command`; file tools: the path argument) |", "| --- | --- | --- |", ...rows].join("\n");
}
