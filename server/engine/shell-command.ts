/**
 * A shell command as policies and risk rules see it (SPEC 4.5): split into sub-commands on `&&`,
 * `||`, `;`, `|`, `&` and newlines outside quotes, each split into words with quotes removed and
 * redirections (`>`, `>>`, `>&`) as words of their own. One linear pass; no expansion, no
 * evaluation. Pure.
 */

export interface SubCommand {
  /** The sub-command's text as written, trimmed. */
  text: string;
  /** Its words, quotes removed; a redirection operator is a word of its own. */
  words: string[];
  /** The operator before it (`|` marks a pipeline), or null for the first. */
  after: "&&" | "||" | ";" | "|" | "&" | "\n" | null;
}

/** Characters that end a run of ordinary ones. */
const SPECIAL = new Set([..."'\"\\ \t\r\n;&|>"].map((c) => c.charCodeAt(0)));

/** Sub-commands of `command`, in order; empty parts are left out. */
export function splitShellCommand(command: string): SubCommand[] {
  const out: SubCommand[] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  let start = 0;
  let after: SubCommand["after"] = null;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endPart = (end: number, next: SubCommand["after"]) => {
    endWord();
    const text = command.slice(start, end).trim();
    if (text !== "" || words.length) out.push({ text, words, after });
    words = [];
    after = next;
  };
  let i = 0;
  const n = command.length;
  while (i < n) {
    const c = command[i];
    if (c === "'") {
      const close = command.indexOf("'", i + 1);
      const to = close === -1 ? n : close;
      word += command.slice(i + 1, to);
      inWord = true;
      i = to + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < n && command[i] !== '"') {
        if (command[i] === "\\" && i + 1 < n) i++;
        word += command[i];
        i++;
      }
      i++;
    } else if (c === "\\" && i + 1 < n) {
      // A backslash-newline continues the line.
      if (command[i + 1] !== "\n") {
        word += command[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (c === " " || c === "\t" || c === "\r") {
      endWord();
      i++;
    } else if (c === "\n" || c === ";") {
      endPart(i, c);
      start = ++i;
    } else if (c === "&" || c === "|") {
      if (c === "&" && command[i + 1] === ">") {
        // `&>` / `&>>`: a redirection of both streams.
        endWord();
        const ops = command[i + 2] === ">" ? "&>>" : "&>";
        words.push(ops.slice(1));
        i += ops.length;
        continue;
      }
      const double = command[i + 1] === c;
      endPart(i, (double ? c + c : c) as SubCommand["after"]);
      i += double ? 2 : 1;
      start = i;
    } else if (c === ">") {
      endWord();
      let op = ">";
      i++;
      if (command[i] === ">") {
        op = ">>";
        i++;
      }
      if (command[i] === "&") {
        op += "&";
        i++;
      }
      words.push(op);
    } else {
      // A run of ordinary characters, taken in one slice.
      let j = i + 1;
      while (j < n && !SPECIAL.has(command.charCodeAt(j))) j++;
      word += command.slice(i, j);
      inWord = true;
      i = j;
    }
  }
  endPart(n, null);
  return out;
}

/** `/usr/bin/rm` → `rm`. */
export function commandName(word: string | undefined): string {
  if (word === undefined) return "";
  const slash = word.lastIndexOf("/");
  return slash === -1 ? word : word.slice(slash + 1);
}

const WRAPPERS = new Set(["sudo", "doas", "env", "command", "nohup", "time", "exec", "nice", "xargs"]);

/**
 * The words of the command a sub-command runs: leading `VAR=value` assignments and wrappers
 * (`sudo`, `env`, `nohup`, … with their options) skipped, so `sudo rm -rf /` is seen as `rm -rf /`.
 */
export function effectiveWords(words: readonly string[], { skipWrappers = true } = {}): string[] {
  let i = 0;
  for (;;) {
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i])) i++;
    if (!skipWrappers || i >= words.length || !WRAPPERS.has(commandName(words[i]))) break;
    i++;
    // The wrapper's own options (`sudo -u deploy`, `env -i`): skipped with an option value when it takes one.
    while (i < words.length && words[i].startsWith("-")) {
      const opt = words[i];
      i++;
      if (/^-[ugCDhpTrtn]$/.test(opt) && i < words.length) i++;
    }
  }
  return words.slice(i);
}
