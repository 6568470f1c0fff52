/**
 * A deterministic fleet, as the scale bench loads it through the API: 12 agents on 6 models
 * running sessions over 28 days against 200 tools (~2,000 failure keys: 10 argument variants per
 * tool), with a few flaky and broken keys, retry loops (stalls) and the usual turns and texts.
 *
 * The same options give the same events, ids and times (a seeded PRNG; `now` fixed by the
 * caller), so two runs load the same history. The events are split between writers, each with
 * sessions of its own (a session's events go through one writer, in order, as an agent sends
 * them), and every writer's stream is in time order. Results name their call by `callId` only,
 * as SDKs send them: a result whose call went in an earlier batch is paired with the stored call.
 */
import type { EventInput } from "@/server/ingest/schema";

export const FLEET = { tools: 200, variantsPerTool: 10, agents: 12, models: 6, days: 28 } as const;

export const FLEET_MODELS = ["claude-sonnet-4.5", "claude-opus-4.1", "gpt-4.1", "gpt-5-mini", "gemini-2.5-pro", "glm-4.6"] as const;
export const FLEET_AGENTS = Array.from({ length: FLEET.agents }, (_, i) => `agent-${String(i + 1).padStart(2, "0")}`);

export interface FleetOptions {
  /** Events in total (all writers). */
  events: number;
  /** The end of the history (epoch ms); events span the `days` before it. */
  now: number;
  days?: number;
  seed?: number;
  /** Parallel writers, each with its own sessions (default 4). */
  writers?: number;
  batchSize?: number;
  /** Prefix of every id (sessions, events, calls): distinct histories in one workspace. */
  prefix?: string;
}

/** mulberry32: small, fast, and the same sequence everywhere. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FleetTool {
  name: string;
  /** The call's arguments for variant v (0..9): each variant is a failure key of its own. */
  args: (v: number, r: () => number) => Record<string, unknown>;
  /** How often a call of each variant fails (most keys are healthy). */
  failRate: number[];
  /** How the tool fails. */
  failure: (r: () => number) => Record<string, unknown>;
}

const HTTP_FAIL = [
  { error: "503 Service Unavailable", httpStatus: 503 },
  { error: "500 Internal Server Error", httpStatus: 500 },
  { error: "429 Too Many Requests", httpStatus: 429 },
  { error: "404 Not Found", httpStatus: 404 },
];

/** The 200 tools and their key variants, fixed by the seed. */
export function fleetTools(seed = 1): FleetTool[] {
  const r = prng(seed ^ 0x9e3779b9);
  const rates = () =>
    Array.from({ length: FLEET.variantsPerTool }, () => {
      const x = r();
      // ~85 % healthy, ~12 % flaky, ~3 % mostly failing.
      return x < 0.85 ? 0.01 + r() * 0.03 : x < 0.97 ? 0.2 + r() * 0.3 : 0.7 + r() * 0.25;
    });
  const httpFailure = (rr: () => number) => ({ success: false, ...HTTP_FAIL[Math.floor(rr() * HTTP_FAIL.length)] });
  const tools: FleetTool[] = [
    { name: "http_request", args: (v, rr) => ({ url: `https://api${v}.fleet.example.com/v${v % 3}/items/${Math.floor(rr() * 1e6)}`, method: "GET" }), failRate: rates(), failure: httpFailure },
    { name: "Bash", args: (v, rr) => ({ command: `${["npm test", "git status", "make build", "pytest -q", "ls -la", "cargo check", "go vet", "tsc --noEmit", "docker ps", "kubectl get pods"][v]} ${Math.floor(rr() * 100)}` }), failRate: rates(), failure: () => ({ success: false, error: "command exited with status 1" }) },
    { name: "Read", args: (v, rr) => ({ file_path: `/repo/pkg${v}/src/file${Math.floor(rr() * 40)}.ts` }), failRate: rates(), failure: () => ({ success: false, error: "ENOENT: no such file or directory" }) },
    { name: "Edit", args: (v) => ({ file_path: `/repo/pkg${v}/src/index.ts`, old_string: "a", new_string: "b" }), failRate: rates(), failure: () => ({ success: false, error: "old_string not found in file" }) },
  ];
  const verbs = ["lookup", "search", "create", "update", "sync", "fetch", "list", "export"];
  for (let i = tools.length; i < FLEET.tools; i++) {
    const name = `svc${String(i).padStart(3, "0")}_${verbs[i % verbs.length]}`;
    tools.push({
      name,
      args: (v) => ({ resource: `res-${v}`, region: ["eu", "us", "ap"][v % 3] }),
      failRate: rates(),
      failure: i % 3 ? httpFailure : () => ({ success: false, error: "upstream timed out after 30s", transient: true }),
    });
  }
  return tools;
}

/** Tools weighted by popularity (a few are called far more than the rest). */
function pickTool(r: () => number, tools: FleetTool[]): number {
  const x = r();
  return Math.min(tools.length - 1, Math.floor(tools.length * x * x * x));
}

const TEXTS = [
  "Looking at the failing request; the payload seems fine, checking the handler next.",
  "The test suite passes locally; running the integration step again.",
  "I'll read the configuration before changing anything.",
  "That endpoint answered 503; trying the fallback region.",
];

interface Lane {
  sessionId: string;
  agent: string;
  model: string;
  left: number;
  turn: number;
  /** A retry loop in progress: the same failing call this many more times. */
  stall: { tool: number; variant: number; left: number } | null;
}

/**
 * The fleet's events as one stream of batches per writer. Each writer's stream is in time order
 * and holds `events / writers` events (give or take a batch's tail).
 */
export function fleetStreams(opts: FleetOptions): Generator<EventInput[]>[] {
  const writers = opts.writers ?? 4;
  return Array.from({ length: writers }, (_, w) => writerStream(opts, w, writers));
}

function* writerStream(opts: FleetOptions, w: number, writers: number): Generator<EventInput[]> {
  const seed = (opts.seed ?? 1) * 7919 + w;
  const r = prng(seed);
  const tools = fleetTools(opts.seed ?? 1);
  const prefix = opts.prefix ?? "fleet";
  const batchSize = opts.batchSize ?? 500;
  const total = Math.floor(opts.events / writers) + (w < opts.events % writers ? 1 : 0);
  const days = opts.days ?? FLEET.days;
  const start = opts.now - days * 86_400_000;
  const step = (days * 86_400_000) / Math.max(1, total);
  // Sessions of ~150–450 events, 6 running at once per writer.
  const lanes: (Lane | null)[] = Array.from({ length: 6 }, () => null);
  let sessions = 0;
  let n = 0;
  let clock = start;
  let batch: EventInput[] = [];
  const push = (e: Record<string, unknown>) => {
    batch.push(e as EventInput);
    n++;
  };
  const newLane = (): Lane => {
    const agentIx = Math.floor(r() * FLEET.agents);
    return {
      sessionId: `${prefix}-w${w}-s${sessions++}`,
      agent: FLEET_AGENTS[agentIx],
      // Most agents keep to one model; a third of the sessions pick another.
      model: FLEET_MODELS[r() < 0.67 ? agentIx % FLEET.models : Math.floor(r() * FLEET.models)],
      left: 150 + Math.floor(r() * 300),
      turn: 0,
      stall: null,
    };
  };
  while (n < total) {
    const li = Math.floor(r() * lanes.length);
    let lane = lanes[li];
    const before = n;
    const ts = Math.floor(clock);
    const id = `${prefix}-w${w}-${n}`;
    if (!lane) {
      lane = lanes[li] = newLane();
      push({ type: "session.start", id, sessionId: lane.sessionId, agent: lane.agent, model: lane.model, ts });
    } else if (lane.left <= 0) {
      push({ type: "session.end", id, sessionId: lane.sessionId, model: lane.model, ts });
      lanes[li] = null;
    } else {
      const x = r();
      const base = { sessionId: lane.sessionId, model: lane.model };
      if (!lane.stall && x < 0.04) {
        push({ type: "turn.start", id, ...base, turnIndex: ++lane.turn, ts });
        lane.left--;
      } else if (!lane.stall && x < 0.12) {
        push({ type: "model.text", id, ...base, text: TEXTS[Math.floor(r() * TEXTS.length)], turnIndex: lane.turn, ts });
        lane.left--;
      } else if (!lane.stall && x < 0.13) {
        push({ type: "user.message", id, ...base, text: "Please keep going.", turnIndex: lane.turn, ts });
        lane.left--;
      } else {
        // A call and its result (the result names the call only).
        if (!lane.stall && r() < 0.006) {
          const tool = pickTool(r, tools);
          lane.stall = { tool, variant: Math.floor(r() * FLEET.variantsPerTool), left: 6 + Math.floor(r() * 6) };
        }
        const stall = lane.stall;
        const ti = stall ? stall.tool : pickTool(r, tools);
        const tool = tools[ti];
        const variant = stall ? stall.variant : Math.floor(r() * FLEET.variantsPerTool);
        const args = stall ? tool.args(variant, () => 0.5) : tool.args(variant, r);
        const failed = stall ? true : r() < tool.failRate[variant];
        if (stall && --stall.left <= 0) lane.stall = null;
        const duration = 20 + Math.floor(r() * 400);
        push({ type: "tool.call", id: `${id}-c`, ...base, callId: id, toolName: tool.name, args, turnIndex: lane.turn, ts });
        push({
          type: "tool.result", id: `${id}-r`, ...base, callId: id, toolName: tool.name, turnIndex: lane.turn, ts: ts + duration, durationMs: duration,
          ...(failed ? tool.failure(r) : { success: true, result: { ok: true } }),
        });
        lane.left -= 2;
      }
    }
    // Time moves by what this pass pushed (a call and its result are two events), so the events
    // span the whole window and end now: the last day and week hold their share of the history.
    clock += step * (n - before);
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/** A guard.check input for the fleet's tools (one of its sessions, a fresh call id). */
export function fleetGuardInput(prefix: string, i: number, ts: number) {
  const tools = fleetTools(1);
  const r = prng(i + 17);
  const tool = tools[pickTool(r, tools)];
  return {
    id: `${prefix}-g${i}`,
    sessionId: `${prefix}-guard-s${i % 64}`,
    callId: `${prefix}-g${i}`,
    toolName: tool.name,
    args: tool.args(Math.floor(r() * FLEET.variantsPerTool), r),
    model: FLEET_MODELS[i % FLEET.models],
    ts,
  };
}
