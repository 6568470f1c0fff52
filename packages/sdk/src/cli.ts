/**
 * `vigil` — the command line (SPEC 7.9). VIGIL_URL and VIGIL_API_KEY; a table for people, `--json`
 * for scripts; exit status 0 done, 1 error (Vigil refused, unreachable, a file unreadable), 2 usage.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { readFile } from "node:fs/promises";
import { VigilApiError, VigilUnreachableError } from "./errors.js";
import { Transport, SDK_VERSION } from "./transport.js";
import { connect, CONNECT_TARGETS } from "./connect.js";
import { DEFAULT_WAIT_SECONDS, runMcpProxy } from "./mcp-proxy.js";
import { runMcpStdio } from "./mcp-stdio.js";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Values = Record<string, string | boolean | undefined>;

class UsageError extends Error {}
class CliError extends Error {}

interface Command {
  summary: string;
  usage: string;
  options?: Options;
  run: (ctx: Context) => Promise<void>;
}

interface Context {
  positionals: string[];
  values: Values;
  json: boolean;
  api: () => Transport;
  url: () => string;
  apiKey: () => string;
  out: (text: string) => void;
}

const GLOBAL_OPTIONS: Options = {
  json: { type: "boolean" },
  url: { type: "string" },
  help: { type: "boolean", short: "h" },
};

const COMMANDS: Record<string, Command> = {
  whoami: {
    summary: "the workspace and scope of the API key",
    usage: "vigil whoami",
    run: async (c) => {
      const me = await c.api().query<{ workspace: string; scope: string; keyPrefix: string }>("account.whoami");
      if (c.json) return print(c, me);
      c.out(table([["URL", "WORKSPACE", "SCOPE", "KEY"], [c.url(), me.workspace, me.scope, me.keyPrefix]]));
    },
  },
  status: {
    summary: "trust state of the workspace's failure keys (or one key)",
    usage: "vigil status [failure_key]",
    run: async (c) => {
      const [failureKey, ...rest] = c.positionals;
      if (rest.length) throw new UsageError("status takes at most one failure key");
      const data = await c.api().query<{ keys: StatusKey[] }>("reliability.status", {});
      const keys = failureKey ? data.keys.filter((k) => k.failureKey === failureKey) : data.keys;
      if (failureKey && !keys.length) throw new CliError(`no tracked key ${failureKey}`);
      if (c.json) return print(c, failureKey ? keys[0] : { keys });
      if (!keys.length) return c.out("No failure keys tracked yet.");
      c.out(
        table([
          ["FAILURE KEY", "STATE", "FAILURES", "CALLS", "RECOVERY", "REASON"],
          ...keys.map((k) => [
            k.failureKey,
            k.effectiveState && k.effectiveState !== k.state ? `${k.state} (${k.effectiveState})` : k.state,
            `${k.effectiveFailures ?? k.totalFailures ?? 0}/${k.threshold ?? "-"}`,
            String(k.totalCalls ?? 0),
            k.recovery ? `${k.recovery.successes}/${k.recovery.needed}` : "",
            k.escalationReason ?? "",
          ]),
        ]),
      );
    },
  },
  history: {
    summary: "the latest failures, newest first (at most 100)",
    usage: "vigil history [--limit N] [--tool NAME]",
    options: { limit: { type: "string" }, tool: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const limit = wholeNumber(c.values.limit, "--limit", 1, HISTORY_MAX, 20);
      const toolName = c.values.tool as string | undefined;
      const data = await c.api().query<{ history?: FailureRecord[] }>("reliability.status", { includeHistory: true, ...(toolName ? { toolName } : {}) });
      const history = (data.history ?? []).slice(0, limit);
      if (c.json) return print(c, { history });
      if (!history.length) return c.out(toolName ? `No failures of ${toolName} recorded.` : "No failures recorded.");
      c.out(
        table([
          ["TIME", "FAILURE KEY", "SEVERITY", "SESSION", "MODEL", "ERROR"],
          ...history.map((h) => [when(h.ts), h.failureKey, h.severity ?? "", h.sessionId ?? "", h.model ?? "", clip(h.error ?? "", 80)]),
        ]),
      );
    },
  },
  reset: {
    summary: "a failure key (or all of them) back to trusted",
    usage: "vigil reset <failure_key> | --all",
    options: { all: { type: "boolean" } },
    run: async (c) => {
      const [failureKey, ...rest] = c.positionals;
      if (rest.length || (!failureKey && !c.values.all) || (failureKey && c.values.all)) throw new UsageError("give one failure key or --all");
      const out = await c.api().mutation<unknown>("keys.reset", c.values.all ? { all: true } : { failureKey });
      if (c.json) return print(c, out);
      c.out(c.values.all ? "Every key is trusted again." : `${failureKey} is trusted again.`);
    },
  },
  approvals: {
    summary: "the approvals waiting for a person",
    usage: "vigil approvals [--status pending|approved|denied]",
    options: { status: { type: "string" } },
    run: async (c) => {
      const status = (c.values.status as string | undefined) ?? "pending";
      if (!["pending", "approved", "denied"].includes(status)) throw new UsageError("--status is pending, approved or denied");
      const { approvals } = await c.api().query<{ approvals: Approval[] }>("approvals.list", { status });
      if (c.json) return print(c, { approvals });
      if (!approvals.length) return c.out(`No ${status} approvals.`);
      c.out(
        table([
          ["ID", "KIND", "TOOL / KEY", "SESSION", "AGENT", "REASON", "CREATED"],
          ...approvals.map((a) => [a.id, a.kind, a.toolName ? `${a.toolName}  ${a.failureKey ?? ""}` : (a.failureKey ?? ""), a.sessionId ?? "", a.agent ?? "", a.reason ?? "", a.createdAt ?? ""]),
        ]),
      );
    },
  },
  approve: {
    summary: "approve an approval (a tool call once, or for the session)",
    usage: "vigil approve <id> [--session]",
    options: { session: { type: "boolean" } },
    run: async (c) => {
      const id = one(c, "approve takes one approval id");
      const out = await c.api().mutation<unknown>("approvals.resolve", { approvalId: id, decision: "approve", ...(c.values.session ? { scope: "session" } : {}) });
      if (c.json) return print(c, out);
      c.out(`Approved ${id}${c.values.session ? " for the session" : ""}.`);
    },
  },
  deny: {
    summary: "deny an approval; the comment is what the agent's model reads",
    usage: "vigil deny <id> --comment TEXT",
    options: { comment: { type: "string" } },
    run: async (c) => {
      const id = one(c, "deny takes one approval id");
      const comment = c.values.comment as string | undefined;
      if (!comment?.trim()) throw new UsageError("deny needs --comment TEXT (the agent's model reads it)");
      const out = await c.api().mutation<unknown>("approvals.resolve", { approvalId: id, decision: "deny", comment });
      if (c.json) return print(c, out);
      c.out(`Denied ${id}.`);
    },
  },
  config: {
    summary: "the workspace configuration document (get, or put a file)",
    usage: "vigil config get | vigil config put <file>",
    run: async (c) => {
      const [action, file, ...rest] = c.positionals;
      if (action === "get" && !file) return print(c, await c.api().query("config.get"));
      if (action !== "put" || !file || rest.length) throw new UsageError("config get | config put <file>");
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
      }
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch (error) {
        throw new CliError(`${file} is not JSON: ${(error as Error).message}`);
      }
      const stored = await c.api().mutation("config.put", document);
      if (c.json) return print(c, stored);
      c.out(`Stored the configuration from ${file}.`);
    },
  },
  settings: {
    summary: "effective settings of a session, or the workspace's own",
    usage: "vigil settings [--session ID]",
    options: { session: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const sessionId = c.values.session as string | undefined;
      if (sessionId) {
        const view = await c.api().query<{ effectiveSettings: Record<string, { value: unknown; source: string }> }>("sessions.get", { sessionId });
        if (c.json) return print(c, view.effectiveSettings);
        return c.out(table([["SETTING", "VALUE", "FROM"], ...Object.entries(view.effectiveSettings).map(([k, v]) => [k, show(v.value), v.source])]));
      }
      const doc = await c.api().query<{ settings?: Record<string, unknown> }>("config.get");
      const settings = doc.settings ?? {};
      if (c.json) return print(c, settings);
      if (!Object.keys(settings).length) return c.out("The workspace sets no settings of its own (organization defaults apply).");
      c.out(table([["SETTING", "VALUE", "FROM"], ...Object.entries(settings).map(([k, v]) => [k, show(v), "workspace"])]));
    },
  },
  recovery: {
    summary: "how a recovered key becomes trusted again: auto, or a person approves (ask)",
    usage: "vigil recovery auto|ask",
    run: async (c) => {
      const mode = one(c, "recovery auto|ask");
      if (mode !== "auto" && mode !== "ask") throw new UsageError("recovery auto|ask");
      const stored = await putSetting(c, "recovery_mode", mode);
      if (c.json) return print(c, stored);
      c.out(`recovery_mode = ${mode} (workspace)`);
    },
  },
  nudge: {
    summary: "nudge level for the workspace or one session",
    usage: "vigil nudge off|gentle|direct|interrupt [--session ID]",
    options: { session: { type: "string" } },
    run: async (c) => {
      const level = one(c, "nudge off|gentle|direct|interrupt");
      if (!["off", "gentle", "direct", "interrupt"].includes(level)) throw new UsageError("nudge off|gentle|direct|interrupt");
      const sessionId = c.values.session as string | undefined;
      if (sessionId) {
        const out = await c.api().mutation("sessions.setSettings", { sessionId, settings: { nudgeLevel: level } });
        if (c.json) return print(c, out);
        return c.out(`nudgeLevel = ${level} (session ${sessionId})`);
      }
      const stored = await putSetting(c, "nudge_level", level);
      if (c.json) return print(c, stored);
      c.out(`nudge_level = ${level} (workspace)`);
    },
  },
  patterns: {
    summary: "stall patterns detected, by type and severity, and how the nudges did",
    usage: "vigil patterns [--model M] [--range 1h|24h|7d|14d|30d|90d|all]",
    options: { model: { type: "string" }, range: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const s = await patternSummary(c);
      if (c.json) return print(c, s);
      c.out(`${summaryHeading(s)}: ${count(s.totals.detections, "detection")} in ${count(s.totals.sessions, "session")}; ${count(s.nudges.sent, "nudge")} sent, ${s.nudges.effective} effective (${percent(s.nudges.rate)}).`);
      if (!s.patterns.length) return c.out("No patterns detected.");
      const nudgesOf = new Map(s.nudges.byPattern.map((n) => [n.patternType, n]));
      c.out(
        table([
          ["PATTERN", "MINOR", "MODERATE", "SEVERE", "TOTAL", "NUDGES", "EFFECTIVE"],
          ...s.patterns.map((p) => {
            const n = nudgesOf.get(p.patternType);
            return [p.patternType, String(p.minor), String(p.moderate), String(p.severe), String(p.total), String(n?.sent ?? 0), n && n.sent ? percent(n.rate) : "-"];
          }),
        ]),
      );
    },
  },
  stalls: {
    summary: "sessions where a stall pattern was detected, latest first",
    usage: "vigil stalls [--model M] [--range 1h|24h|7d|14d|30d|90d|all]",
    options: { model: { type: "string" }, range: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const s = await patternSummary(c);
      if (c.json) return print(c, { range: s.range, label: s.label, from: s.from, to: s.to, model: s.model, totals: s.totals, stalledSessions: s.stalledSessions });
      c.out(`${summaryHeading(s)}: ${count(s.totals.sessions, "session")} stalled (${count(s.totals.detections, "detection")}, ${count(s.totals.interrupts, "interrupt")}).`);
      if (!s.stalledSessions.length) return;
      c.out(
        table([
          ["SESSION", "AGENT", "MODEL", "DETECTIONS", "WORST", "STATE", "LAST DETECTED", "PATTERNS"],
          ...s.stalledSessions.map((r) => [
            r.sessionId,
            r.agent ?? "",
            r.model ?? "",
            String(r.detections),
            r.worstSeverity ?? "",
            r.paused ? "paused" : r.ended ? "ended" : "open",
            when(r.lastDetectedAt),
            r.patternTypes.join(", "),
          ]),
        ]),
      );
    },
  },
  models: {
    summary: "per model: behaviour (turns, stalls, nudges) and tool success rates",
    usage: "vigil models",
    run: async (c) => {
      noPositionals(c);
      const data = await c.api().query<{ models: ModelRow[]; suggestions: ModelSuggestion[] }>("models.list");
      if (c.json) return print(c, data);
      if (!data.models.length) return c.out("No models seen yet.");
      c.out(
        table([
          ["MODEL", "TURNS", "STALL RATE", "NUDGES", "EFFECTIVE", "TOOL CALLS", "FAILURES", "SUCCESS", "COMMON PATTERN"],
          ...data.models.map((m) => [
            m.model,
            String(m.behaviour?.turns ?? 0),
            m.behaviour ? percent(m.behaviour.stallRate) : "-",
            String(m.behaviour?.nudgesSent ?? 0),
            m.behaviour?.nudgesSent ? percent(m.behaviour.nudgeEffectiveness) : "-",
            String(m.tools.attempts),
            String(m.tools.failures),
            m.tools.attempts ? percent(m.tools.successRate) : "-",
            m.behaviour?.mostCommonPattern ?? "",
          ]),
        ]),
      );
      if (data.suggestions.length) {
        c.out("\nSuggested switches:");
        c.out(table([["FAILURE KEY", "FROM", "TO", "SESSIONS"], ...data.suggestions.map((s) => [s.failureKey, s.currentModel, s.suggestedModel, String(s.sessions ?? "")])]));
      }
    },
  },
  failures: {
    summary: "failure counts per failure key, or (--groups) failures grouped by their message",
    usage: "vigil failures [--groups] [--tool NAME] [--range 1h|24h|7d|14d|30d|90d|all]",
    options: { groups: { type: "boolean" }, tool: { type: "string" }, range: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const toolName = c.values.tool as string | undefined;
      if (c.values.groups) {
        const range = rangeOption(c);
        const data = await c.api().query<{ range: string; label: string; groups: FailureGroup[] }>("failures.groups", { ...(range ? { range } : {}), ...(toolName ? { toolName } : {}) });
        if (c.json) return print(c, data);
        if (!data.groups.length) return c.out(`No failures (${data.label}).`);
        return c.out(
          table([
            ["COUNT", "SESSIONS", "TOOLS", "LAST SEEN", "MESSAGE"],
            ...data.groups.map((g) => [String(g.count), String(g.sessions), g.toolNames.join(", "), when(g.lastSeen), clip(g.sample, 100)]),
          ]),
        );
      }
      if (c.values.range !== undefined) throw new UsageError("--range goes with --groups (the per-key counts are all time)");
      const data = await c.api().query<{ keys: StatusKey[] }>("reliability.status", toolName ? { toolName } : {});
      const keys = data.keys.filter((k) => (k.totalFailures ?? 0) > 0).sort((a, b) => (b.totalFailures ?? 0) - (a.totalFailures ?? 0) || a.failureKey.localeCompare(b.failureKey));
      if (c.json) return print(c, { keys: keys.map((k) => ({ failureKey: k.failureKey, toolName: k.toolName, totalFailures: k.totalFailures, totalCalls: k.totalCalls, consecutiveFailures: k.consecutiveFailures, state: k.state })) });
      if (!keys.length) return c.out("No failures recorded.");
      c.out(
        table([
          ["FAILURE KEY", "FAILURES", "CALLS", "FAILURE RATE", "IN A ROW", "STATE"],
          ...keys.map((k) => [k.failureKey, String(k.totalFailures ?? 0), String(k.totalCalls ?? 0), k.totalCalls ? percent((k.totalFailures ?? 0) / k.totalCalls) : "-", String(k.consecutiveFailures ?? 0), k.state]),
        ]),
      );
    },
  },
  pause: {
    summary: "hold a session, an agent or the whole workspace: tool calls answer pause",
    usage: "vigil pause --session ID | --agent NAME | --workspace [--reason TEXT]",
    options: { session: { type: "string" }, agent: { type: "string" }, workspace: { type: "boolean" }, reason: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const reason = (c.values.reason as string | undefined) ?? "Paused with the vigil command line";
      const [procedure, input, what] = holdTarget(c, "pause", { reason });
      const out = await c.api().mutation(procedure, input);
      if (c.json) return print(c, out ?? {});
      c.out(`Paused ${what}.`);
    },
  },
  resume: {
    summary: "lift a hold; the guidance reaches the agent's model",
    usage: "vigil resume --session ID | --agent NAME | --workspace [--guidance TEXT]",
    options: { session: { type: "string" }, agent: { type: "string" }, workspace: { type: "boolean" }, guidance: { type: "string" } },
    run: async (c) => {
      noPositionals(c);
      const guidance = c.values.guidance as string | undefined;
      const [procedure, input, what] = holdTarget(c, "resume", guidance ? { guidance } : {});
      const out = await c.api().mutation(procedure, input);
      if (c.json) return print(c, out ?? {});
      c.out(`Resumed ${what}.`);
    },
  },
  policy: {
    summary: "what the policies say about a call, recording nothing",
    usage: "vigil policy test <tool> <args-json>",
    run: async (c) => {
      const [action, toolName, argsText, ...rest] = c.positionals;
      if (action !== "test" || !toolName || !argsText || rest.length) throw new UsageError("policy test <tool> <args-json>");
      let args: unknown;
      try {
        args = JSON.parse(argsText);
      } catch (error) {
        throw new UsageError(`<args-json> is not JSON: ${(error as Error).message}`);
      }
      if (!args || typeof args !== "object" || Array.isArray(args)) throw new UsageError("<args-json> must be a JSON object");
      const out = await c.api().query<{ decision: string; policy: { name: string; level: string; reason: string | null } | null; riskRule?: unknown }>("policies.test", { toolName, args });
      if (c.json) return print(c, out);
      const rule = out.policy ? `${out.policy.name} (${out.policy.level})${out.policy.reason ? `: ${out.policy.reason}` : ""}` : "no policy matches";
      c.out(table([["DECISION", "POLICY"], [out.decision, rule]]));
    },
  },
  "mcp-proxy": {
    summary: "guard a stdio MCP server's tool calls with Vigil (stdio in and out; logs on stderr)",
    usage: "vigil mcp-proxy [--agent NAME] [--session ID] [--wait SECONDS] [--fail open|closed] -- <command> [args…]",
    options: { agent: { type: "string" }, session: { type: "string" }, wait: { type: "string" }, fail: { type: "string" } },
    run: async (c) => {
      const [command, ...args] = c.positionals;
      if (!command) throw new UsageError("give the MCP server's command after --");
      const { agent, session, wait, fail } = c.values as { agent?: string; session?: string; wait?: string; fail?: string };
      const waitSeconds = wait === undefined ? DEFAULT_WAIT_SECONDS : Number(wait);
      if (!Number.isInteger(waitSeconds) || waitSeconds < 0 || waitSeconds > 120) throw new UsageError("--wait takes whole seconds from 0 to 120");
      if (fail !== undefined && fail !== "open" && fail !== "closed") throw new UsageError("--fail takes open or closed");
      const status = await runMcpProxy({ url: c.url(), apiKey: c.apiKey(), command, args, agent, sessionId: session, waitSeconds, fail: fail as "open" | "closed" | undefined });
      if (status !== 0) throw new CliError(`${command} exited before the client disconnected`);
    },
  },
  mcp: {
    summary: "Vigil's own MCP tools (reliability_status, …) over stdio, for clients without remote MCP",
    usage: "vigil mcp",
    run: async (c) => {
      noPositionals(c);
      await runMcpStdio({ url: c.url(), apiKey: c.apiKey() });
    },
  },
  connect: {
    summary: "merge Vigil's hooks into a coding CLI's settings (keeps yours, backs the file up)",
    usage: `vigil connect ${CONNECT_TARGETS.join(" | ")} [--agent NAME] [--scope user|project] [--wait SECONDS] [--file PATH] [--dry-run]`,
    options: { agent: { type: "string" }, scope: { type: "string" }, wait: { type: "string" }, file: { type: "string" }, "dry-run": { type: "boolean" } },
    run: async (c) => {
      const target = one(c, `connect ${CONNECT_TARGETS.join(" | ")}`);
      if (!(CONNECT_TARGETS as readonly string[]).includes(target)) throw new UsageError(`connect ${CONNECT_TARGETS.join(" | ")}`);
      const scope = (c.values.scope as string | undefined) ?? "user";
      if (scope !== "user" && scope !== "project") throw new UsageError("--scope is user or project");
      const wait = c.values.wait === undefined ? 0 : Number(c.values.wait);
      if (!Number.isInteger(wait) || wait < 0 || wait > 120) throw new UsageError("--wait is whole seconds, 0–120");
      try {
        const report = await connect({
          target: target as (typeof CONNECT_TARGETS)[number],
          baseUrl: c.url(),
          agent: (c.values.agent as string | undefined) ?? "",
          waitSeconds: wait,
          scope,
          file: c.values.file as string | undefined,
          dryRun: Boolean(c.values["dry-run"]),
        });
        if (c.json) return print(c, report);
        for (const f of report.files) {
          if (report.dryRun) c.out(f.diff || `${f.path}: already up to date`);
          else c.out(f.changed ? `Wrote ${f.path}${f.backup ? ` (backup: ${f.backup})` : ""}` : `${f.path}: already up to date`);
        }
        if (!report.dryRun) c.out("The hooks send Authorization: Bearer $VIGIL_API_KEY — export VIGIL_API_KEY where the CLI runs.");
      } catch (error) {
        throw new CliError((error as Error).message);
      }
    },
  },
};

interface StatusKey {
  failureKey: string;
  toolName?: string;
  state: string;
  effectiveState?: string;
  effectiveFailures?: number;
  threshold?: number;
  totalCalls?: number;
  totalFailures?: number;
  consecutiveFailures?: number;
  escalationReason?: string | null;
  recovery?: { successes: number; needed: number } | null;
}

interface FailureRecord {
  failureKey: string;
  toolName: string;
  severity: string | null;
  ts: string;
  sessionId: string | null;
  model: string | null;
  error: string | null;
}

interface PatternSummary {
  range: string;
  label: string;
  from: string;
  to: string;
  model: string | null;
  totals: { detections: number; sessions: number; nudges: number; interrupts: number };
  patterns: Array<{ patternType: string; minor: number; moderate: number; severe: number; total: number }>;
  nudges: { sent: number; effective: number; rate: number; byPattern: Array<{ patternType: string; sent: number; effective: number; rate: number }> };
  stalledSessions: Array<{
    sessionId: string;
    agent: string | null;
    model: string | null;
    detections: number;
    patternTypes: string[];
    worstSeverity: string | null;
    lastDetectedAt: string;
    paused: boolean;
    ended: boolean;
  }>;
}

interface ModelRow {
  model: string;
  behaviour: { turns: number; stallRate: number; nudgesSent: number; nudgeEffectiveness: number; mostCommonPattern: string | null } | null;
  tools: { attempts: number; failures: number; successRate: number };
}

interface ModelSuggestion {
  failureKey: string;
  currentModel: string;
  suggestedModel: string;
  sessions?: number;
}

interface FailureGroup {
  fingerprint: string;
  sample: string;
  count: number;
  toolNames: string[];
  failureKeys: string[];
  sessions: number;
  lastSeen: string;
}

/** The time windows of the Patterns and Failures pages (`range` of patterns.summary and failures.groups). */
const RANGES = ["1h", "24h", "7d", "14d", "30d", "90d", "all"];
/** reliability.status returns the latest 100 failures. */
const HISTORY_MAX = 100;

function rangeOption(c: Context): string | undefined {
  const range = c.values.range as string | undefined;
  if (range !== undefined && !RANGES.includes(range)) throw new UsageError(`--range is one of ${RANGES.join(", ")}`);
  return range;
}

function patternSummary(c: Context): Promise<PatternSummary> {
  const range = rangeOption(c);
  const model = c.values.model as string | undefined;
  if (model !== undefined && !model.trim()) throw new UsageError("--model needs a model name");
  return c.api().query<PatternSummary>("patterns.summary", { ...(range ? { range } : {}), ...(model ? { model } : {}) });
}

/** "Last 7 days", "All time, model gpt-4.1": the window as the dashboard words it. */
function summaryHeading(s: PatternSummary): string {
  const window = `${s.label.charAt(0).toUpperCase()}${s.label.slice(1)}`;
  return s.model ? `${window}, model ${s.model}` : window;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function wholeNumber(value: string | boolean | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== "string" || !/^\d+$/.test(value) || n < min || n > max) throw new UsageError(`${name} is a whole number from ${min} to ${max}`);
  return n;
}

function percent(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}

/** An ISO time as people read it in a table: UTC, to the second. */
function when(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

interface Approval {
  id: string;
  kind: string;
  failureKey?: string;
  toolName?: string | null;
  sessionId?: string | null;
  agent?: string | null;
  reason?: string | null;
  createdAt?: string;
}

function holdTarget(c: Context, verb: "pause" | "resume", extra: Record<string, string>): [string, Record<string, unknown>, string] {
  const { session, agent, workspace } = c.values as { session?: string; agent?: string; workspace?: boolean };
  const chosen = [session !== undefined, agent !== undefined, Boolean(workspace)].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError(`${verb} needs exactly one of --session ID, --agent NAME, --workspace`);
  if (session !== undefined) return [`sessions.${verb}`, { sessionId: session, ...extra }, `session ${session}`];
  if (agent !== undefined) return [`agents.${verb}`, { agent, ...extra }, `agent ${agent}`];
  return [`workspace.${verb}`, { ...extra }, "the workspace"];
}

/** Read-modify-write of one workspace setting in the configuration document. */
async function putSetting(c: Context, name: string, value: unknown): Promise<unknown> {
  const api = c.api();
  const doc = await api.query<Record<string, unknown>>("config.get");
  const settings = { ...((doc.settings as Record<string, unknown> | undefined) ?? {}), [name]: value };
  return api.mutation("config.put", { ...doc, settings });
}

function one(c: Context, usage: string): string {
  if (c.positionals.length !== 1) throw new UsageError(usage);
  return c.positionals[0];
}

function noPositionals(c: Context): void {
  if (c.positionals.length) throw new UsageError(`unexpected argument ${c.positionals[0]}`);
}

function print(c: Context, value: unknown): void {
  c.out(JSON.stringify(value, null, 2));
}

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Columns padded to their widest cell; the first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : (cell ?? "").padEnd(widths[i]))).join("  ").trimEnd()).join("\n");
}

function help(): string {
  const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.replace(/^vigil /, "").split(" ")[0].length));
  return [
    `vigil ${SDK_VERSION} — Vigil from the terminal`,
    "",
    "Usage: vigil <command> [options]      (vigil <command> --help for its options)",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width + 2)}${c.summary}`),
    "",
    "Options for every command:",
    "  --json        machine-readable output",
    "  --url URL     Vigil's address (default VIGIL_URL)",
    "  -h, --help    help",
    "",
    "Environment: VIGIL_URL (e.g. http://localhost:3000), VIGIL_API_KEY (vgl_…; admin scope for config, approvals, reset, pause).",
    "Exit status: 0 done, 1 error, 2 usage.",
  ].join("\n");
}

/** Runs the command line; returns the exit status. */
export async function main(argv: string[], io: { out?: (text: string) => void; err?: (text: string) => void; env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  const out = io.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const err = io.err ?? ((text: string) => process.stderr.write(`${text}\n`));
  const env = io.env ?? process.env;
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    out(help());
    return name ? 0 : 2;
  }
  if (name === "--version") {
    out(SDK_VERSION);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    err(`vigil: unknown command ${name}\n\n${help()}`);
    return 2;
  }
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...command.options }, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] });
  } catch (error) {
    err(`vigil ${name}: ${(error as Error).message}\nUsage: ${command.usage}`);
    return 2;
  }
  if (values.help) {
    out(`${command.usage}\n\n${command.summary[0].toUpperCase()}${command.summary.slice(1)}.`);
    return 0;
  }
  const url = () => {
    const value = (values.url as string | undefined) ?? env.VIGIL_URL;
    if (!value) throw new UsageError("set VIGIL_URL (or --url) to Vigil's address, e.g. http://localhost:3000");
    if (!/^https?:\/\//.test(value)) throw new UsageError(`VIGIL_URL must start with http:// or https:// (got ${value})`);
    return value.replace(/\/+$/, "");
  };
  const apiKey = () => {
    const value = env.VIGIL_API_KEY;
    if (!value) throw new UsageError("set VIGIL_API_KEY to an API key (Settings → API keys)");
    return value;
  };
  const api = () => new Transport({ url: url(), apiKey: apiKey(), maxRetries: 2, maxRetryDelayMs: 5000 });
  try {
    await command.run({ positionals, values, json: Boolean(values.json), api, url, apiKey, out });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      err(`vigil ${name}: ${error.message}\nUsage: ${command.usage}`);
      return 2;
    }
    if (error instanceof VigilApiError) {
      const issues = error.issues.length ? `\n${error.issues.map((i) => `  ${i.path.join(".") || "(input)"}: ${i.message}`).join("\n")}` : "";
      err(`vigil ${name}: ${error.message}${issues}`);
      return 1;
    }
    if (error instanceof VigilUnreachableError || error instanceof CliError) {
      err(`vigil ${name}: ${error.message}`);
      return 1;
    }
    err(`vigil ${name}: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
}
