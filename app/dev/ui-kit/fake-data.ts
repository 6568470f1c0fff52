// Deterministic fake data for the UI kit preview.
import type { TrustState } from "@/components/state-badge";

/** Request time rounded to the minute; computed by the server page and passed down as a prop. */
export function nowMinute(): number {
  return Math.floor(Date.now() / 60_000) * 60_000;
}

export type FakeToolRow = {
  key: string;
  state: TrustState;
  effective: number;
  threshold: number;
  consecutive: number;
  recovery: { done: number; needed: number } | null;
  cooldownMs: number | null;
  lastFailure: number | null;
  attempts: number;
};

const KEYS = [
  "http_request|domain=api.example.com|path_prefix=v1",
  "http_request|domain=api.github.com|path_prefix=repos",
  "readFile|path_prefix=/etc",
  "writeFile|path_prefix=/srv/app/config",
  "bash|command=rm",
  "bash|command=sudo",
  "bash|command=npm",
  "mcp_atlassian_search|mcp_server=atlassian",
  "mcp__linear__create_issue|mcp_server=linear",
  "fetch|domain=status.stripe.com|path_prefix=",
  "WebFetch|domain=docs.python.org|path_prefix=3",
  "Edit|path_prefix=/workspace/src/components",
  "Read|path_prefix=/workspace/node_modules/.pnpm",
  "updateFile|path_prefix=/var/lib/agent",
  "removeFile|path_prefix=/tmp",
  "search_docs|args_hash=9f2c1a7e",
  "http_request|domain=hooks.slack.com|path_prefix=services",
  "execute_bash|command=pytest",
  "str_replace_editor|path_prefix=/repo/packages/core/src",
  "Bash|command=git",
];
const STATES: TrustState[] = ["trusted", "escalated", "trusted", "recovering", "blocked", "blocked", "trusted", "escalated", "trusted", "recovering"];

export const toolRows = (NOW: number): FakeToolRow[] => KEYS.map((key, i) => {
  const state = STATES[(i * 7) % STATES.length];
  const threshold = i % 3 === 0 ? 5 : 3;
  const effective = state === "trusted" ? (i % 3) * 0.5 : state === "escalated" ? threshold : state === "blocked" ? threshold + 2 : 1;
  return {
    key,
    state,
    effective,
    threshold,
    consecutive: state === "trusted" ? 0 : (i % 4) + 1,
    recovery: state === "recovering" ? { done: (i % 3) + 1, needed: 3 } : null,
    cooldownMs: state === "escalated" ? (i + 2) * 97_000 : null,
    lastFailure: state === "trusted" && i % 2 === 0 ? null : NOW - (i + 1) * 7 * 60_000 * ((i % 5) + 1),
    attempts: 40 + ((i * 137) % 900),
  };
});

export const PATTERN_TYPES = [
  "repetitive_calls",
  "introspection_loop",
  "read_only_loop",
  "announce_no_action",
  "error_retry_loop",
  "planning_loop",
  "alternating_calls",
  "tool_avoidance",
] as const;

export const patternDays = (NOW: number) => Array.from({ length: 14 }, (_, d) => {
  const date = new Date(NOW - (13 - d) * 86_400_000);
  const row: Record<string, number | string> = {
    day: `${date.toLocaleString("en-US", { month: "short", timeZone: "UTC" })} ${date.getUTCDate()}`,
  };
  PATTERN_TYPES.forEach((t, i) => {
    row[t] = Math.max(0, Math.round(((d * 3 + i * 5) % 11) * (i < 3 ? 1.4 : 0.7) - (i === 6 ? 4 : 0)));
  });
  return row;
});

export const FAILURE_RATE = Array.from({ length: 24 }, (_, h) => ({
  hour: `${String(h).padStart(2, "0")}:00`,
  rate: Math.round((0.04 + 0.03 * Math.sin(h / 3) + (h === 15 || h === 16 ? 0.09 : 0)) * 1000) / 1000,
  calls: 800 + ((h * 211) % 500),
}));
