/**
 * `npm run demo` — a small fleet of simulated agents posting realistic traffic to a running Vigil
 * through the public agent API only (SPEC 7), so a new dashboard comes alive within a minute.
 *
 *   VIGIL_URL=http://localhost:3000 VIGIL_API_KEY=vgl_… npm run demo -- --duration 60 --agents 4
 *
 * Flags: --url, --key, --duration <s> (60), --agents <n> (4), --speed <x|max> (simulated seconds per
 * real second; default 3600/duration; `max` = as fast as the server answers), --history-days <n> (5),
 * --no-history, --quiet (effects only).
 * The scenario replays the last hour (events carry explicit `ts`), after a backfill of a few days of
 * daily traffic (deterministic ids: re-running the same day adds no duplicates).
 */
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => Promise<Response>;
export interface DemoOptions {
  url: string;
  apiKey: string;
  duration: number;
  agents: number;
  speed?: number | "max";
  historyDays: number;
  quiet?: boolean;
  fetch?: FetchLike;
  log?: (line: string) => void;
}
export interface DemoSummary { requests: number; accepted: number; effects: Record<string, number>; paused: string[]; dashboard: string }
type Json = Record<string, unknown>;
type Effect = Json & { type: string };

export class DemoError extends Error {}
const HOUR = 3600_000, MIN = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
function rng(seed: number) {
  return () => ((seed = (seed + 0x6d2b79f5) | 0), (((seed ^ (seed >>> 15)) * (seed | 1)) >>> 0) / 4294967296);
}
const hash = (s: string) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, 7);

// ---------------------------------------------------------------- HTTP layer (the only I/O)
class Vigil {
  requests = 0;
  constructor(private base: string, private key: string, private fetchImpl: FetchLike) {}
  post<T>(proc: string, body: unknown): Promise<T> {
    return this.call("POST", `/api/trpc/${proc}`, JSON.stringify(body));
  }
  query<T>(proc: string, input?: unknown): Promise<T> {
    return this.call("GET", `/api/trpc/${proc}` + (input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`));
  }
  private async call<T>(method: string, path: string, body?: string): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        this.requests++;
        const headers: Record<string, string> = { authorization: `Bearer ${this.key}`, ...(body ? { "content-type": "application/json" } : {}) };
        res = await this.fetchImpl(this.base + path, { method, headers, body });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        throw new DemoError(`Cannot reach Vigil at ${this.base} (${cause}). Is it running? Start it with \`npm start\`, or set VIGIL_URL.`);
      }
      const text = await res.text();
      let json: { result?: { data: T }; error?: { message: string } } = {};
      try { json = text ? JSON.parse(text) : {}; } catch { /* not JSON: reported below */ }
      if (res.ok && json.result) return json.result.data;
      if (res.status === 401)
        throw new DemoError(`Vigil rejected the API key (401: ${json.error?.message ?? "unauthorized"}). Create a key in Settings → API keys and set VIGIL_API_KEY, or start Vigil with VIGIL_INIT_ORG/VIGIL_INIT_WORKSPACE/VIGIL_INIT_API_KEY.`);
      if (res.status === 429 && attempt < 5) {
        const wait = Number(res.headers.get("retry-after") ?? "1");
        await sleep((Number.isFinite(wait) ? wait : 1) * 1000);
        continue;
      }
      if (res.status === 404 && !json.error) throw new DemoError(`${this.base}${path.split("?")[0]} answered 404: is VIGIL_URL a Vigil server?`);
      throw new DemoError(`${method} ${path.split("?")[0]} → HTTP ${res.status}: ${json.error?.message ?? text.slice(0, 200)}`);
    }
  }
}

// ---------------------------------------------------------------- the scenario
interface Step { tool: string; args: Json; text?: string; ok: boolean; error?: string; httpStatus?: number; ms: number; label: string; result?: unknown }
/** `m` = simulated minutes since the start of the replayed hour; -1 in the history backfill. */
type StepFn = (m: number, i: number, r: () => number, resumed: boolean) => Step;
interface Role { agent: string; model: string; sessionMin: number; stepSec: number; step: StepFn }

const ok = (tool: string, args: Json, label: string, ms: number, result: unknown = { ok: true }): Step => ({ tool, args, label, ms, ok: true, result });
const fail = (tool: string, args: Json, label: string, error: string, ms: number, httpStatus?: number): Step => ({ tool, args, label, ms, ok: false, error, httpStatus });
const SHOP = "/workspace/shop/src";
const SITES = [
  "https://api.github.com/repos/vercel/next.js/releases",
  "https://api.flaky-weather.example/v2/forecast?city=Berlin",
  "https://en.wikipedia.org/wiki/Site_reliability_engineering",
  "https://api.flaky-weather.example/v2/forecast?city=Lisbon",
  "https://news.ycombinator.com/item?id=41234567",
  "https://api.flaky-weather.example/v2/forecast?city=Oslo",
];

// The weather API's first three failures are 503s, so its key escalates on every run (the Approvals
// page depends on it): a random mix that began with time-outs sometimes stayed below the threshold.
let weatherFailures = 0;
const crawler: StepFn = (m, i, r) => {
  if (i % 3 === 2) return ok("Write", { file_path: `/data/crawl/page-${i}.json`, content: "{…}" }, "saved page", 15);
  const url = SITES[(i - Math.floor(i / 3)) % SITES.length];
  const args = { url, method: "GET" };
  const short = url.replace(/^https:\/\//, "");
  if (url.includes("flaky-weather") && m >= 6 && m < 20)
    return weatherFailures++ >= 3 && r() < 0.25
      ? fail("http_request", args, short, "request timed out after 10000ms", 10_000)
      : fail("http_request", args, short, "503 Service Unavailable: forecast backend overloaded", 900, 503);
  if (m < 0 && r() < 0.06) return fail("http_request", args, short, "502 Bad Gateway", 400, 502);
  if (url.includes("wikipedia") && r() < 0.1) return fail("http_request", args, short, "404 Not Found", 120, 404);
  return ok("http_request", args, short, 80 + Math.round(r() * 400), { status_code: 200, bytes: 4000 + Math.round(r() * 90_000) });
};

const support: StepFn = (m, i, r) => {
  const issue = `SUP-${1200 + ((i * 7) % 97)}`;
  const [tool, args]: [string, Json] =
    i % 5 === 4 ? ["mcp__slack__post_message", { channel: "#support-escalations", text: `Triage summary for ${issue}` }]
    : i % 2 === 0 ? ["mcp__atlassian__search", { jql: `project = SUP AND text ~ "refund ${i % 11}"`, limit: 10 }]
    : ["mcp__atlassian__get_issue", { issueKey: issue }];
  const text = i % 6 === 0 ? `Customer asks about a double charge on ${issue}; checking related tickets.` : undefined;
  const label = "issueKey" in args ? String(args.issueKey) : "jql" in args ? `"refund ${i % 11}"` : String(args.channel);
  if (tool.includes("atlassian") && m >= 10 && m < 20)
    return { ...fail(tool, args, label, "504 Gateway Timeout: MCP server 'atlassian' did not answer within 30s", 30_000, 504), text };
  if (m < 0 && r() < 0.05) return { ...fail(tool, args, label, "MCP server returned an internal error", 300), text };
  return { ...ok(tool, args, label, 200 + Math.round(r() * 600), { issues: 3 }), text };
};

const FEATURE_FILES = ["billing/invoice.ts", "billing/tax.ts", "checkout/cart.ts", "checkout/totals.ts"];
let securityDone = false;
const feature: StepFn = (m, i, r) => {
  const file = `${SHOP}/${FEATURE_FILES[(m >= 0 && m < 20) || (m < 0 && i % 12 < 6) ? i % 2 : 2 + (i % 2)]}`;
  if (m >= 34 && !securityDone) {
    securityDone = true;
    return { ...fail("Bash", { command: "sudo rm -rf /var/lib/app" }, "sudo rm -rf /var/lib/app", "sudo: a terminal is required to read the password; exit code 1", 40), text: "The build cache in /var/lib/app is stale; clearing it." };
  }
  switch (i % 4) {
    case 0: return ok("Read", { file_path: file }, `read ${file.slice(SHOP.length + 1)}`, 12);
    case 1: return { ...ok("Edit", { file_path: file, old_string: "round(total)", new_string: "roundHalfEven(total)" }, `changed ${file.slice(SHOP.length + 1)}`, 20), text: i % 8 === 1 ? "Rounding fixed in the invoice totals." : undefined };
    case 2: return r() < 0.1 ? fail("Bash", { command: "npm test -- billing" }, "npm test", "1 failing: expected 10.05 to equal 10.06", 6000) : ok("Bash", { command: "npm test -- billing" }, "npm test", 5200, { exitCode: 0 });
    default: return ok("Bash", { command: "git diff --stat" }, "git diff --stat", 60, { exitCode: 0 });
  }
};

const ANNOUNCE = ["Proceeding now with the fix…", "Let me apply the rounding change to invoice.ts now.", "I'll now update the failing tests as well.", "Proceeding with the patch to the tax module."];
const refactor: StepFn = (m, i, r, resumed) => {
  const invoice = { file_path: `${SHOP}/billing/invoice.ts` };
  const reads = (k: number): Step => (k % 2 ? ok("Grep", { pattern: `roundHalf${k % 5}`, path: `${SHOP}/billing` }, `grep roundHalf${k % 5}`, 30) : ok("Read", { file_path: `${SHOP}/billing/${["invoice", "tax", "ledger", "refund"][k % 4]}.ts` }, "read billing file", 10));
  if (m < 0) {
    // History: short stalls (at most 2–3 announcements), then an edit — patterns without a pause.
    const k = i % 6;
    if (k === 0 || k === 2) return { ...reads(i), text: ANNOUNCE[(i >> 1) % ANNOUNCE.length] };
    if (k === 1) return { ...reads(i), text: r() < 0.3 ? ANNOUNCE[0] : undefined };
    if (k === 3) return r() < 0.6 ? fail("Edit", { ...invoice, old_string: "round(total )" }, "edit invoice.ts", "old_string not found in file", 15) : ok("Edit", invoice, "edit invoice.ts", 15);
    return k === 4 ? ok("Edit", { file_path: `${SHOP}/utils/format.ts` }, "edit utils/format.ts", 15) : ok("Bash", { command: "npm test" }, "npm test", 4800);
  }
  if (resumed) return i % 2 ? ok("Edit", { ...invoice, old_string: "round(total)" }, "edit invoice.ts (after guidance)", 20) : ok("Bash", { command: "npm test -- billing" }, "npm test", 5000);
  if (m < 5) return reads(i);
  if (m < 13) return i % 2 ? fail("Edit", { ...invoice, old_string: "round(total )" }, "edit invoice.ts", "old_string not found in file", 15) : reads(i);
  return { ...reads(i), text: i % 2 ? ANNOUNCE[(i >> 1) % ANNOUNCE.length] : undefined };
};

const ROLES: Role[] = [
  { agent: "web-crawler", model: "gpt-4.1-mini", sessionMin: 22, stepSec: 60, step: crawler },
  { agent: "support-triage", model: "claude-haiku-4.5", sessionMin: 10, stepSec: 60, step: support },
  { agent: "refactor-bot", model: "glm-4.6", sessionMin: 60, stepSec: 75, step: refactor },
  { agent: "feature-bot", model: "claude-sonnet-4.5", sessionMin: 12, stepSec: 60, step: feature },
];
const rolesFor = (n: number): Role[] =>
  Array.from({ length: Math.max(1, n) }, (_, k) => (k < ROLES.length ? ROLES[k] : { ...ROLES[k % 2], agent: `${ROLES[k % 2].agent}-${Math.floor(k / 2)}`, model: k % 2 ? "gpt-4.1" : "gemini-2.5-flash" }));

// ---------------------------------------------------------------- the runner
export async function runDemo(opts: DemoOptions): Promise<DemoSummary> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const api = new Vigil(opts.url.replace(/\/$/, ""), opts.apiKey, opts.fetch ?? ((u, i) => fetch(u, i)));
  const counts: Record<string, number> = {};
  let accepted = 0;
  const who = await api.query<{ workspace: string; scope: string }>("account.whoami");
  const dashboard = `${opts.url.replace(/\/$/, "")}/w/${who.workspace}/overview`;
  log(`Vigil ${opts.url} · workspace "${who.workspace}" · ${opts.agents} agents · ${opts.speed === "max" ? "max speed" : `${opts.duration}s`}`);
  // The flaky-weather agent's keys recover in "ask" mode so the Approvals page has something to show
  // (in "auto" mode Vigil resumes them unattended). Only when the workspace has not chosen a mode.
  try {
    const doc = await api.query<{ settings?: Record<string, unknown> } & Json>("config.get");
    if (doc.settings?.recovery_mode === undefined) {
      await api.post("config.put", { ...doc, settings: { ...(doc.settings ?? {}), recovery_mode: "ask" } });
      log('config: recovery_mode "ask" (recoveries wait for approval in the dashboard)');
    }
  } catch (err) {
    log(`note: could not set recovery_mode "ask" (${(err as Error).message}); recoveries run in the workspace's mode`);
  }
  const roles = rolesFor(opts.agents);
  securityDone = false;
  weatherFailures = 0;
  const before = await api.query<{ keys: { failureKey: string; state: string }[] }>("reliability.status", {});
  if (before.keys.some((k) => k.failureKey.includes("api.flaky-weather.example")))
    log("note: this workspace already has demo traffic. Vigil's per-key clocks never go backwards, so a re-run within the hour compresses the timeline (recoveries may not show); blocked keys stay blocked until reset in the dashboard (Tools).");

  const describe = (e: Effect): string | null => {
    switch (e.type) {
      case "escalated": return `ESCALATED ${e.failureKey} — ${e.reason}`;
      case "blocked": return `BLOCKED ${e.failureKey} — ${e.reason}`;
      case "recovered": return `RECOVERED ${e.failureKey}`;
      case "recovering": return `recovering ${e.failureKey} ${e.successes}/${e.needed}`;
      case "recovery_pending": return `recovery awaits approval: ${e.failureKey}`;
      case "pattern": return `pattern ${e.patternType} (${e.severity}, ×${e.count})`;
      case "nudge": return `nudge ${e.nudgeType}: "${String(e.message).slice(0, 90)}"`;
      case "paused": return `PAUSED — ${e.reason}`;
      case "model_suggestion": return `model suggestion ${e.currentModel} → ${e.suggestedModel} for ${e.failureKey} (${pct(e.currentSuccessRate)} vs ${pct(e.suggestedSuccessRate)})`;
      default: return null;
    }
  };
  const pct = (v: unknown) => `${Math.round(Number(v) * 100)}%`;
  const report = (who: string, effects: Effect[]) => {
    for (const e of effects) {
      counts[e.type] = (counts[e.type] ?? 0) + 1;
      const d = describe(e);
      if (d) log(`        ${who.padEnd(16)} ↳ ${d}`);
    }
  };
  const ingest = async (events: Json[]) => {
    const out: { accepted: number; effects: Effect[] } = { accepted: 0, effects: [] };
    for (let k = 0; k < events.length; k += 200) {
      const r = await api.post<{ accepted: number; effects: Effect[] }>("ingest.events", { events: events.slice(k, k + 200) });
      out.accepted += r.accepted;
      out.effects.push(...r.effects);
    }
    accepted += out.accepted;
    return out;
  };
  const toolEvents = (sid: string, s: Step, id: string, t: number, extra: Json = {}): Json[] => [
    ...(s.text ? [{ type: "model.text", id: `${id}-t`, sessionId: sid, text: s.text, ts: t - 2000 }] : []),
    { type: "tool.call", id: `${id}-c`, sessionId: sid, callId: id, toolName: s.tool, args: s.args, ts: t - 1000, ...extra },
    resultEvent(sid, s, id, t + s.ms),
  ];
  const resultEvent = (sid: string, s: Step, callId: string, t: number): Json => ({
    type: "tool.result", id: `${callId}-r`, sessionId: sid, callId, toolName: s.tool, args: s.args, success: s.ok, durationMs: s.ms, ts: t,
    ...(s.ok ? { result: s.result } : { error: s.error }), ...(s.httpStatus ? { httpStatus: s.httpStatus } : {}),
  });

  // 1. History: a few days of daily traffic, so the charts have days to show.
  const now = Date.now();
  if (opts.historyDays > 0) {
    let n = 0;
    for (let d = opts.historyDays; d >= 1; d--) {
      const day = new Date(now - d * 24 * HOUR).toISOString().slice(0, 10);
      const events: Json[] = [];
      for (const role of roles) {
        const r = rng(hash(day + role.agent));
        for (let s = 0; s < 3; s++) {
          const sid = `demo-h-${day}-${role.agent}-${s}`;
          let t = Date.parse(`${day}T08:00:00Z`) + s * 3 * HOUR + Math.round(r() * HOUR);
          events.push({ type: "session.start", id: `${sid}-start`, sessionId: sid, agent: role.agent, model: role.model, ts: t });
          const steps = 10 + Math.round(r() * 14);
          for (let i = 0; i < steps; i++) {
            if (i % 5 === 0) events.push({ type: "turn.start", id: `${sid}-turn${i}`, sessionId: sid, turnIndex: i / 5, ts: (t += 1000) });
            const step = role.step(-1, i, r, false);
            events.push(...toolEvents(sid, step, `${sid}-${i}`, (t += 20_000 + Math.round(r() * 40_000))));
            t += step.ms;
          }
          // Every day the refactor bot retries one failing test run unchanged (a loop under SPEC 5
          // revision 2), so the stall charts have a detection on each history day.
          if (role.agent === "refactor-bot" && s === 0) {
            const retry = fail("Bash", { command: "npm test -- src/cart" }, "npm test (unchanged retry)", "Exit code 1\nFAIL src/cart/total.test.ts: expected 42, got 41", 4000);
            for (let k = 0; k < 3; k++) events.push(...toolEvents(sid, retry, `${sid}-retry${k}`, (t += 30_000)));
          }
          events.push({ type: "session.end", id: `${sid}-end`, sessionId: sid, ts: t + 5000 });
        }
      }
      events.sort((a, b) => Number(a.ts) - Number(b.ts));
      const r = await ingest(events);
      n += r.accepted;
      for (const e of r.effects) counts[e.type] = (counts[e.type] ?? 0) + 1;
    }
    log(n ? `history: backfilled ${n} events over ${opts.historyDays} days` : `history: already present for these days (duplicates skipped)`);
  }

  // 2. Live: the last hour, replayed. Simulated time = start - 1h + elapsed × speed.
  const speed = opts.speed === "max" ? Infinity : (opts.speed ?? 3600 / opts.duration);
  const realStart = Date.now();
  const winStart = realStart - HOUR;
  const simNow = () => Math.min(realStart, winStart + (Date.now() - realStart) * speed);
  const run = randomUUID().slice(0, 6);
  const paused: string[] = [];
  type Agent = { role: Role; t: number; i: number; turn: number; sid: string; sessionEnd: number; queue: Json[]; pausedAt: number | null; resumed: boolean; done: boolean; asks: number; seq: number; r: () => number };
  const agents: Agent[] = roles.map((role, k) => ({ role, t: winStart + k * 7000, i: 0, turn: 0, sid: "", sessionEnd: 0, queue: [], pausedAt: null, resumed: false, done: false, asks: 0, seq: 0, r: rng(hash(run + k)) }));
  const say = (a: Agent, msg: string) => !opts.quiet && log(`[${hhmm(a.t)}] ${a.role.agent.padEnd(16)} ${msg}`);
  const eid = (a: Agent) => `demo-${run}-${a.role.agent}-${++a.seq}`;
  const flush = async (a: Agent) => {
    if (!a.queue.length) return;
    const out = await ingest(a.queue.splice(0));
    report(a.role.agent, out.effects);
  };

  const stepOnce = async (a: Agent) => {
    const { role } = a;
    if (!a.sid || a.t >= a.sessionEnd) {
      if (a.sid) a.queue.push({ type: "session.end", id: eid(a), sessionId: a.sid, ts: a.t });
      a.sid = `demo-${run}-${role.agent}-s${Math.floor((a.t - winStart) / MIN)}`;
      a.sessionEnd = a.t + role.sessionMin * MIN;
      a.turn = 0;
      a.queue.push({ type: "session.start", id: eid(a), sessionId: a.sid, agent: role.agent, model: role.model, ts: a.t }, { type: "turn.start", id: eid(a), sessionId: a.sid, turnIndex: 0, ts: a.t + 500 });
      say(a, `session ${a.sid.split("-").pop()} started (${role.model})`);
    } else if (a.i % 5 === 0) a.queue.push({ type: "turn.start", id: eid(a), sessionId: a.sid, turnIndex: ++a.turn, ts: a.t });
    const m = (a.t - winStart) / MIN;
    const step = role.step(m, a.i++, a.r, a.resumed);
    if (step.text) a.queue.push({ type: "model.text", id: eid(a), sessionId: a.sid, text: step.text, ts: a.t + 1000, turnIndex: a.turn });
    await flush(a);
    const callId = eid(a);
    const g = await api.post<{ decision: string; state: string; reason: string | null; escalation: { expiresAt: string | null } | null; effects: Effect[] }>("guard.check", {
      id: `${callId}-c`, sessionId: a.sid, callId, toolName: step.tool, args: step.args, model: role.model, ts: a.t + 2000, turnIndex: a.turn,
    });
    report(role.agent, g.effects);
    if (g.decision === "pause") {
      a.pausedAt = Date.now();
      paused.push(a.sid);
      say(a, `paused by Vigil (${g.reason}) — waits for a human to resume session ${a.sid} in the dashboard`);
      return;
    }
    if (g.decision !== "allow") {
      // A human operator is in the loop: calls on recovering keys and on keys whose escalation window
      // has expired are approved, other escalated ones every second time; blocked keys (security) are denied.
      const expired = !!g.escalation?.expiresAt && Date.parse(g.escalation.expiresAt) <= a.t;
      const approve = g.decision === "ask" && g.state !== "blocked" && (g.state === "recovering" || expired || a.asks++ % 2 === 0);
      a.queue.push({ type: "permission.resolved", id: eid(a), sessionId: a.sid, callId, toolName: step.tool, granted: approve, method: "user", ts: a.t + 3000 });
      say(a, `${step.tool} ${step.label} → ${g.decision} (${g.state}: ${g.reason ?? "approval required"}) — ${approve ? "operator approved" : "skipped"}`);
      if (!approve) return;
    }
    a.queue.push(resultEvent(a.sid, step, callId, a.t + 4000 + step.ms));
    say(a, `${step.tool} ${step.label} → ${step.ok ? "ok" : `FAILED: ${step.error}`}`);
  };

  const advance = (a: Agent) => {
    a.t += Math.round(a.role.stepSec * 1000 * (0.7 + a.r() * 0.6));
    if (a.t >= realStart) a.done = true;
  };
  const finish = async (a: Agent) => {
    if (a.pausedAt === null && a.sid) a.queue.push({ type: "session.end", id: eid(a), sessionId: a.sid, ts: Math.min(a.t, realStart) });
    await flush(a);
  };
  const checkResumed = async (a: Agent) => {
    const s = await api.query<{ paused: boolean }>("sessions.get", { sessionId: a.sid });
    if (!s.paused) {
      a.pausedAt = null;
      a.resumed = true;
      paused.splice(paused.indexOf(a.sid), 1);
      say(a, `resumed by a human — back to work`);
    }
  };

  if (speed === Infinity) {
    // As fast as the server answers, in simulated-time order (deterministic; used by the tests).
    for (;;) {
      const a = agents.filter((x) => !x.done && x.pausedAt === null).sort((x, y) => x.t - y.t)[0];
      if (!a) break;
      await stepOnce(a);
      advance(a);
    }
  } else {
    await Promise.all(
      agents.map(async (a) => {
        while (!a.done && Date.now() - realStart < opts.duration * 1000 + 2000) {
          if (a.pausedAt !== null) {
            await sleep(3000);
            await checkResumed(a);
            if (a.pausedAt !== null) continue;
          }
          await sleep((a.t - simNow()) / speed);
          a.t = Math.max(a.t, simNow()); // a slow server: skip ahead, keep the scenario on the clock
          await stepOnce(a);
          advance(a);
        }
      }),
    );
  }
  for (const a of agents) await finish(a);

  // 3. Summary.
  const status = await api.query<{ keys: { failureKey: string; state: string; effectiveState: string; escalationReason: string | null }[] }>("reliability.status", {});
  const notTrusted = status.keys.filter((k) => k.state !== "trusted");
  log("");
  log(`Done: ${api.requests} requests, ${accepted} events accepted.`);
  log(`Effects: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(" · ") || "none"}`);
  for (const k of notTrusted) log(`  ${k.state.padEnd(10)} ${k.failureKey}${k.escalationReason ? ` — ${k.escalationReason}` : ""}`);
  for (const sid of paused) log(`  paused     session ${sid} — resume it in the dashboard (Sessions)`);
  log(`Dashboard: ${dashboard}`);
  return { requests: api.requests, accepted, effects: counts, paused, dashboard };
}

// ---------------------------------------------------------------- CLI
/** The demo's flags that npm, given them without `--`, takes for its own config and never passes on. */
const FLAGS_NPM_SWALLOWS = ["duration", "agents", "speed", "history-days", "no-history", "url"];

function parseArgs(argv: string[]): DemoOptions {
  for (const name of FLAGS_NPM_SWALLOWS) {
    if (process.env[`npm_config_${name.replace(/-/g, "_")}`] !== undefined && !argv.includes(`--${name}`))
      throw new DemoError(`npm took --${name} as its own option, so the demo never saw it: put -- before the demo's flags (npm run demo -- --${name} …)`);
  }
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const num = (name: string, def: number) => {
    const v = flag(name);
    const n = v === undefined ? def : Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new DemoError(`--${name} needs a positive number (got ${v})`);
    return n;
  };
  const speed = flag("speed");
  const apiKey = flag("key") ?? process.env.VIGIL_API_KEY ?? process.env.VIGIL_INIT_API_KEY;
  if (!apiKey)
    throw new DemoError(
      "An API key is needed: set VIGIL_API_KEY=vgl_… (create one in the dashboard under Settings → API keys), " +
        "or start Vigil with VIGIL_INIT_ORG, VIGIL_INIT_WORKSPACE and VIGIL_INIT_API_KEY and run the demo with the same VIGIL_INIT_API_KEY.",
    );
  return {
    url: flag("url") ?? process.env.VIGIL_URL ?? "http://localhost:3000",
    apiKey,
    duration: num("duration", 60),
    agents: Math.round(num("agents", 4)),
    speed: speed === undefined ? undefined : speed === "max" ? "max" : num("speed", 60),
    historyDays: argv.includes("--no-history") ? 0 : Math.min(25, Math.round(num("history-days", 5))),
    quiet: argv.includes("--quiet"),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  Promise.resolve()
    .then(() => runDemo(parseArgs(process.argv.slice(2))))
    .catch((err) => {
      console.error(err instanceof DemoError ? `demo: ${err.message}` : err);
      process.exit(1);
    });
}
