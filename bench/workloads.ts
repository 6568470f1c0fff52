/**
 * The traffic the benches send: ingest batches shaped like a fleet's and guard.check sessions as
 * agents make them. One place, so that `bench/run.ts` and `bench/compare.ts` measure the same load.
 */
import type { EventInput } from "@/server/ingest/schema";
import type { ClientTurn, RequestSpec } from "./http-load";

export const BATCH_SIZE = 500;

export const KEYS: { toolName: string; args: () => Record<string, unknown> }[] = [
  ...Array.from({ length: 20 }, (_, k) => ({ toolName: "http_request", args: () => ({ url: `https://svc${k % 10}.example.com/v${k >> 3}/items/${Math.floor(Math.random() * 1e6)}`, method: "GET" }) })),
  ...Array.from({ length: 10 }, (_, k) => ({ toolName: "Read", args: () => ({ file_path: `/repo/pkg${k}/src/file${Math.floor(Math.random() * 50)}.ts` }) })),
  ...Array.from({ length: 10 }, (_, k) => ({ toolName: "Edit", args: () => ({ file_path: `/repo/pkg${k}/src/index.ts`, old_string: "a", new_string: "b" }) })),
  ...["npm", "git", "ls", "make", "pytest"].map((c) => ({ toolName: "Bash", args: () => ({ command: `${c} ${Math.floor(Math.random() * 100)}` }) })),
  ...["jira__search", "jira__get_issue", "github__get_pr", "slack__post", "linear__list"].map((t) => ({ toolName: `mcp__${t}`, args: () => ({ q: Math.random().toString(36).slice(2) }) })),
];
export const MODELS = ["claude-sonnet-4.5", "gpt-4.1", "glm-4.6", "gemini-2.5-pro"];

/** A workload generator: batches of ~500 events over 20 sessions, per-session time increasing. */
export function workload(prefix: string, sessions = 20) {
  let n = 0;
  let clock = Date.now() - 3 * 3600_000;
  const started = new Set<string>();
  return (): EventInput[] => {
    const out: Record<string, unknown>[] = [];
    while (out.length < BATCH_SIZE) {
      const s = `${prefix}-s${n % sessions}`;
      const ts = (clock += 150);
      const id = `${prefix}-${++n}`;
      if (!started.has(s)) {
        started.add(s);
        out.push({ type: "session.start", id: `${id}-start`, sessionId: s, agent: `agent-${n % 5}`, model: MODELS[n % MODELS.length], ts });
      }
      const r = Math.random();
      if (r < 0.05) out.push({ type: "turn.start", id, sessionId: s, turnIndex: n, ts });
      else if (r < 0.2) out.push({ type: "model.text", id, sessionId: s, text: "Looking at the failing request; the payload seems fine, checking the handler next.", ts });
      else {
        const key = KEYS[Math.floor(Math.random() * KEYS.length)];
        const args = key.args();
        const failed = Math.random() < 0.08;
        out.push({ type: "tool.call", id: `${id}-c`, sessionId: s, callId: id, toolName: key.toolName, args, ts });
        out.push({
          type: "tool.result", id: `${id}-r`, sessionId: s, callId: id, toolName: key.toolName, args, ts: ts + 50, durationMs: 50,
          ...(failed ? { success: false, error: "503 Service Unavailable", httpStatus: 503 } : { success: true, result: { ok: true } }),
        });
      }
    }
    return out.slice(0, BATCH_SIZE) as EventInput[];
  };
}

export const READ_PATHS = Array.from({ length: 64 }, (_, i) => `/repo/pkg${i % 8}/src/file${i}.ts`);
/** Calls per session before its client starts a new session (below the read-only-loop threshold). */
const CALLS_PER_SESSION = 40;
/**
 * The session of request `i` and its number of calls before: in a closed loop each client is one
 * agent session, which waits for its check before its next call (as an agent does); in an open loop
 * the requests go to `sessions` sessions in turn. (Mapping closed-loop requests to sessions by the
 * run's counter sent two clients' checks to one session at once now and then, the later one
 * retried: traffic an agent does not make.)
 */
function sessionTurn(i: number, sessions: number, from?: ClientTurn): { session: number; round: number } {
  return from ? { session: from.client, round: from.n } : { session: i % sessions, round: Math.floor(i / sessions) };
}
/**
 * `sessions` concurrent agent sessions, each reading a different file on every call; after
 * CALLS_PER_SESSION calls a client moves on to a new session. Guard-only traffic has no tool results,
 * so a session that went on forever would be (rightly) detected as a read-only loop, nudged and
 * paused: that path — pattern, nudge and pause writes on most calls — is `loopingGuardSpec`.
 */
export function guardSpec(prefix: string, sessions = 64): RequestSpec {
  return {
    method: "POST",
    path: "/api/trpc/guard.check",
    body: (i, from) => {
      const { session, round } = sessionTurn(i, sessions, from);
      return {
        id: `${prefix}-${i}`,
        sessionId: `${prefix}-s${session}-${Math.floor(round / CALLS_PER_SESSION)}`,
        callId: `${prefix}-c${i}`,
        toolName: "Read",
        args: { file_path: READ_PATHS[(round + session) % READ_PATHS.length] },
      };
    },
  };
}
/** The same sessions forever, each repeating one call: repetition and read-only loops on most calls. */
export function loopingGuardSpec(prefix: string, sessions = 64): RequestSpec {
  return {
    method: "POST",
    path: "/api/trpc/guard.check",
    body: (i, from) => {
      const { session } = sessionTurn(i, sessions, from);
      return { id: `${prefix}-${i}`, sessionId: `${prefix}-s${session}`, callId: `${prefix}-c${i}`, toolName: "Read", args: { file_path: READ_PATHS[session % READ_PATHS.length] } };
    },
  };
}
