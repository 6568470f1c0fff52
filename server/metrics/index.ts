/**
 * Prometheus series of SPEC 7.8 counted in this process (Prometheus sums the instances). The hot
 * paths call the small `note…` functions below; each finds its label child in a map (prom-client's
 * own `labels()` hashes a label object on every call) and increments it.
 *
 * Series carry the workspace's id as `workspace` here; a scrape (scrape.ts) shows its slug and keeps
 * an admin key to its own workspace's series. Label cardinality is bounded: at most
 * MAX_TOOLS_PER_WORKSPACE tool names and MAX_AGENTS_PER_WORKSPACE agent names per workspace, the
 * rest counted as `other`.
 */
import { Counter, Histogram, Registry } from "prom-client";
import type { BatchOutcome } from "@/server/engine/batch";
import type { GuardDecisionCause } from "@/server/engine/guard";

/** Counters of this process; not prom-client's global registry (nothing else lands in a scrape). */
export const processRegistry = new Registry();

export const MAX_TOOLS_PER_WORKSPACE = 500;
const MAX_AGENTS_PER_WORKSPACE = 100;
const OTHER = "other";

const toolCalls = new Counter({
  name: "vigil_tool_calls_total",
  help: "Tool results recorded, by outcome and severity (severity none for a success).",
  labelNames: ["workspace", "agent", "tool", "outcome", "severity"] as const,
  registers: [processRegistry],
});
const guardDecisions = new Counter({
  name: "vigil_guard_decisions_total",
  help: "guard.check answers, by decision and what caused it (trust, policy, hold, budget, none).",
  labelNames: ["workspace", "agent", "tool", "decision", "cause"] as const,
  registers: [processRegistry],
});
const guardDuration = new Histogram({
  name: "vigil_guard_check_duration_seconds",
  help: "Time guard.check took to decide (a wait for a person is vigil_approval_wait_seconds).",
  labelNames: ["workspace", "decision"] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [processRegistry],
});
const trustTransitions = new Counter({
  name: "vigil_trust_transitions_total",
  help: "Trust-state changes of failure keys made by the engine, by tool and the state entered.",
  labelNames: ["workspace", "tool", "to"] as const,
  registers: [processRegistry],
});
const approvalWait = new Histogram({
  name: "vigil_approval_wait_seconds",
  help: "How long a guard.check waited for a person's decision on a tool-call approval, by result.",
  labelNames: ["workspace", "result"] as const,
  buckets: [1, 5, 10, 30, 60, 120],
  registers: [processRegistry],
});
const patternsDetected = new Counter({
  name: "vigil_patterns_detected_total",
  help: "Behavioural patterns detected, by pattern and severity.",
  labelNames: ["workspace", "pattern", "severity"] as const,
  registers: [processRegistry],
});
const nudges = new Counter({
  name: "vigil_nudges_total",
  help: "Nudges sent to agents, by type.",
  labelNames: ["workspace", "type"] as const,
  registers: [processRegistry],
});
const ingestEvents = new Counter({
  name: "vigil_ingest_events_total",
  help: "Events recorded (duplicates left out), by the route they came in on.",
  labelNames: ["workspace", "source"] as const,
  registers: [processRegistry],
});
const requestsRejected = new Counter({
  name: "vigil_requests_rejected_total",
  help: "Agent requests refused: capacity and lag before the key is read (no workspace), rate_limit per workspace.",
  labelNames: ["workspace", "reason"] as const,
  registers: [processRegistry],
});

export type IngestSource = "trpc" | "otlp" | "hooks" | "mcp";
export type RejectReason = "capacity" | "lag" | "rate_limit";
export type MetricCause = "trust" | "policy" | "hold" | "budget" | "none";

/** The engine's cause of a guard decision as the metric names it. */
export function metricCause(cause: GuardDecisionCause): MetricCause {
  switch (cause) {
    case "paused":
      return "hold";
    case "policy":
    case "budget":
    case "none":
      return cause;
    default:
      return "trust"; // the key's state, or the organization's global tool pattern
  }
}

// ---------------------------------------------------------------------------------------------
// Bounded labels and cached children
// ---------------------------------------------------------------------------------------------

/** Per workspace: the tool and agent names given a label of their own so far. */
const namesSeen = new Map<string, { tools: Set<string>; agents: Set<string> }>();

function seenIn(workspaceId: string) {
  let seen = namesSeen.get(workspaceId);
  if (!seen) namesSeen.set(workspaceId, (seen = { tools: new Set(), agents: new Set() }));
  return seen;
}

function bounded(names: Set<string>, name: string, max: number): string {
  if (names.has(name)) return name;
  if (names.size >= max) return OTHER;
  names.add(name);
  return name;
}

const toolLabel = (workspaceId: string, tool: string) => bounded(seenIn(workspaceId).tools, tool, MAX_TOOLS_PER_WORKSPACE);
const agentLabel = (workspaceId: string, agent: string) => bounded(seenIn(workspaceId).agents, agent, MAX_AGENTS_PER_WORKSPACE);

interface Incrementable {
  inc(value?: number): void;
}
interface Observable {
  observe(value: number): void;
}

/** A metric's label children by their values joined: found again without building a label object. */
function childCache<C>(make: (values: string[]) => C) {
  const children = new Map<string, C>();
  return (...values: string[]): C => {
    const key = values.join("\u0001");
    let child = children.get(key);
    if (!child) children.set(key, (child = make(values)));
    return child;
  };
}

const toolCallChild = childCache<Incrementable>((v) => toolCalls.labels(...v));
const guardDecisionChild = childCache<Incrementable>((v) => guardDecisions.labels(...v));
const guardDurationChild = childCache<Observable>((v) => guardDuration.labels(...v));
const transitionChild = childCache<Incrementable>((v) => trustTransitions.labels(...v));
const approvalWaitChild = childCache<Observable>((v) => approvalWait.labels(...v));
const patternChild = childCache<Incrementable>((v) => patternsDetected.labels(...v));
const nudgeChild = childCache<Incrementable>((v) => nudges.labels(...v));
const ingestChild = childCache<Incrementable>((v) => ingestEvents.labels(...v));
const rejectedChild = childCache<Incrementable>((v) => requestsRejected.labels(...v));

// ---------------------------------------------------------------------------------------------
// What the hot paths call
// ---------------------------------------------------------------------------------------------

/** Counting on unless `VIGIL_METRICS=off` (the scrape then shows only the gauges); the bench compares both. */
let counting = process.env.VIGIL_METRICS !== "off";
export function setMetricsCounting(on: boolean): void {
  counting = on;
}

/** One guard.check answer: its decision, cause and the time it took to decide. */
export function noteGuardCheck(workspaceId: string, agent: string, tool: string, decision: string, cause: MetricCause, seconds: number): void {
  if (!counting) return;
  guardDecisionChild(workspaceId, agentLabel(workspaceId, agent), toolLabel(workspaceId, tool), decision, cause).inc();
  guardDurationChild(workspaceId, decision).observe(seconds);
}

/** A guard.check's wait for a person: approved, denied, or timed out (still pending). */
export function noteApprovalWait(workspaceId: string, result: "approved" | "denied" | "timeout", seconds: number): void {
  if (!counting) return;
  approvalWaitChild(workspaceId, result).observe(seconds);
}

export function noteIngested(workspaceId: string, source: IngestSource, events: number): void {
  if (!counting) return;
  if (events > 0) ingestChild(workspaceId, source).inc(events);
}

/** A refused agent request; capacity and lag refusals come before the key is known (no workspace). */
export function noteRejected(reason: RejectReason, workspaceId = ""): void {
  if (!counting) return;
  rejectedChild(workspaceId, reason).inc();
}

/** What a committed batch recorded: references into the engine's outcome, read when counted. */
export type BatchMetrics = Pick<BatchOutcome, "records" | "sessions">;

/** The part of the engine's outcome the counters read (no copying: it is counted after the commit). */
export const batchMetrics = (outcome: BatchOutcome): BatchMetrics => ({ records: outcome.records, sessions: outcome.sessions });

/**
 * A committed batch's tool results, trust transitions, patterns and nudges; with `source`, its
 * events as ingested from that route. Call it once the batch's transaction committed.
 */
export function noteBatch(workspaceId: string, batch: { accepted: number; metrics?: BatchMetrics }, source?: IngestSource): void {
  if (!counting) return;
  if (source) noteIngested(workspaceId, source, batch.accepted);
  const m = batch.metrics;
  if (!m) return;
  const { events, transitions, patterns, nudges: sent } = m.records;
  let toolOfKey: Map<string, string> | null = null;
  for (const e of events) {
    if (e.type !== "tool.result" || e.toolName === null) continue;
    const agent = m.sessions.get(e.sessionId)?.agent ?? "default";
    const failed = e.failed === true;
    toolCallChild(workspaceId, agentLabel(workspaceId, agent), toolLabel(workspaceId, e.toolName), failed ? "failure" : "success", failed ? (e.severity ?? "unknown") : "none").inc();
    if (transitions.length && e.failureKey) (toolOfKey ??= new Map()).set(e.failureKey, e.toolName);
  }
  for (const t of transitions) {
    const tool = t.failureKey.startsWith("@tool:") ? t.failureKey.slice(6) : (toolOfKey?.get(t.failureKey) ?? OTHER);
    transitionChild(workspaceId, toolLabel(workspaceId, tool), t.toState).inc();
  }
  for (const p of patterns) patternChild(workspaceId, p.patternType, p.severity).inc();
  for (const n of sent) nudgeChild(workspaceId, n.nudgeType).inc();
}
