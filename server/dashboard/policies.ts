/**
 * Read model of the Policies page and the watch-mode counts (SPEC 4.5, 4.6, 8): hits per policy
 * and "would have asked / denied / paused" counts, both read from the guard decisions recorded on
 * the `tool.call` events (payload.guard: `policy`, `wouldDecide`, see `guardRecord` in server/engine/guard.ts);
 * whether a workspace watches; and what the policies say about a call (the test box), through the
 * same engine functions as the agent API's `policies.test`.
 */
import { and, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { event } from "@/db/schema";
import { compilePolicies, evaluatePolicies, type PolicyDecision, type PolicyHit } from "@/server/engine/policies";
import { RISK_RULES } from "@/server/engine/risk-rules";
import type { ConfigDocument } from "@/server/engine/types";

export interface TimeBounds {
  from?: Date;
  to?: Date;
}

/** "would have asked / denied / paused": calls answered allow in watch mode that enforcement would have stopped. */
export interface WouldDecideCounts {
  ask: number;
  deny: number;
  pause: number;
}

export interface PolicyHitCount {
  level: string;
  name: string;
  /** Calls this policy (or built-in rule) decided in the window. */
  hits: number;
  /** Of those, calls answered allow in watch mode that it would have asked / denied. */
  wouldAsk: number;
  wouldDeny: number;
}

const emptyWouldDecide = (): WouldDecideCounts => ({ ask: 0, deny: 0, pause: 0 });

/** The recorded tool calls of some workspaces within a window (the (workspace_id, ts) index and the day partitions). */
function recordedCalls(workspaceIds: string[], window: TimeBounds): SQL {
  // `type = 'tool.call'` written as a literal: a bound parameter would keep a prepared statement's
  // generic plan from proving the partial indexes' predicates (event_ws_would_decide_idx, event_ws_policy_hit_idx).
  const conds: SQL[] = [workspaceIds.length === 1 ? eq(event.workspaceId, workspaceIds[0]) : inArray(event.workspaceId, workspaceIds), sql`${event.type} = 'tool.call'`];
  if (window.from) conds.push(gte(event.ts, window.from));
  if (window.to) conds.push(lt(event.ts, window.to));
  return and(...conds)!;
}

/** The statement of `policyHitCounts` (tests read its plan): the calls a policy or rule matched, by its partial index. */
export function policyHitsQuery(db: Db, workspaceIds: string[], window: TimeBounds) {
  const policy = sql`(${event.payload}->'guard'->'policy')`;
  const would = sql`(${event.payload}->'guard'->>'wouldDecide')`;
  return db
    .select({
      level: sql<string>`${policy}->>'level'`,
      name: sql<string>`${policy}->>'name'`,
      hits: sql<number>`count(*)::int`,
      wouldAsk: sql<number>`(count(*) filter (where ${would} = 'ask'))::int`,
      wouldDeny: sql<number>`(count(*) filter (where ${would} = 'deny'))::int`,
    })
    .from(event)
    .where(and(recordedCalls(workspaceIds, window), sql`${policy} is not null`))
    .groupBy(sql`1`, sql`2`);
}

/**
 * Hits per policy and built-in rule over a window, from the decisions recorded on the calls: one
 * grouped scan of the window's tool calls, keyed by the policy's level and name.
 */
export async function policyHitCounts(db: Db, workspaceIds: string[], window: TimeBounds): Promise<PolicyHitCount[]> {
  if (workspaceIds.length === 0) return [];
  const rows = await policyHitsQuery(db, workspaceIds, window);
  return rows.map((r) => ({ level: r.level, name: r.name, hits: Number(r.hits), wouldAsk: Number(r.wouldAsk), wouldDeny: Number(r.wouldDeny) }));
}

/** The statement of `wouldDecideCounts` (tests read its plan): watch mode's stopped calls, by its partial index. */
export function wouldDecideQuery(db: Db, workspaceId: string, opts: TimeBounds & { sessionId?: string }) {
  const would = sql<string>`(${event.payload}->'guard'->>'wouldDecide')`;
  const where = opts.sessionId
    ? and(eq(event.workspaceId, workspaceId), eq(event.sessionId, opts.sessionId), sql`${event.type} = 'tool.call'`)
    : recordedCalls([workspaceId], opts);
  return db
    .select({ would, n: sql<number>`count(*)::int` })
    .from(event)
    .where(and(where, sql`${would} in ('ask', 'deny', 'pause')`))
    .groupBy(sql`1`);
}

/** "would have asked / denied / paused" over a window, for a workspace or one of its sessions. */
export async function wouldDecideCounts(db: Db, workspaceId: string, opts: TimeBounds & { sessionId?: string }): Promise<WouldDecideCounts> {
  const rows = await wouldDecideQuery(db, workspaceId, opts);
  const out = emptyWouldDecide();
  for (const r of rows) if (r.would === "ask" || r.would === "deny" || r.would === "pause") out[r.would] = Number(r.n);
  return out;
}

export interface EnforcementState {
  /** The workspace's effective enforcement (workspace over organization over the default). */
  mode: "enforce" | "watch";
  /** Where the effective value is set. */
  source: "workspace" | "organization" | "default";
  /** The organization's own value, when it sets one. */
  organization: "enforce" | "watch" | null;
}

/** Whether a workspace watches, and which level says so (sessions may still override it for themselves). */
export function enforcementOf(workspaceDoc: ConfigDocument, orgDoc: ConfigDocument): EnforcementState {
  const ws = workspaceDoc.settings?.enforcement;
  const org = orgDoc.settings?.enforcement;
  if (ws) return { mode: ws, source: "workspace", organization: org ?? null };
  if (org) return { mode: org, source: "organization", organization: org };
  return { mode: "enforce", source: "default", organization: null };
}

/** The built-in risk rules as the page shows them (derived from the engine's declarations). */
export interface RiskRuleInfo {
  name: string;
  decision: "ask" | "deny";
  matches: string;
  appliesTo: "shell" | "file";
}

export const RISK_RULE_INFO: RiskRuleInfo[] = RISK_RULES.map((r) => ({ name: r.name, decision: r.decision, matches: r.matches, appliesTo: r.appliesTo }));

export interface PolicyTestResult {
  decision: PolicyDecision;
  policy: PolicyHit | null;
  riskRule: string | null;
}

/** The test box: what the policies and risk rules of these documents say about a call (as `policies.test`). */
export function testPolicies(workspaceDoc: ConfigDocument | null, orgDoc: ConfigDocument | null, toolName: string, args: Record<string, unknown>): PolicyTestResult {
  const verdict = evaluatePolicies(compilePolicies(workspaceDoc, orgDoc), toolName, args);
  return { decision: verdict.decision ?? "allow", policy: verdict.policy, riskRule: verdict.riskRule };
}
