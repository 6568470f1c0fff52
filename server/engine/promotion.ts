/**
 * Promotion (SPEC 6): a tool escalated or blocked in ≥ 3 workspaces of an organization with an
 * average failure rate > 0.5 over the last 24 h is a global tool pattern. Pure: the shell
 * selects the rows (one organization, last 24 h rates) and stores the result.
 */
import type { TrustState } from "./types";

export interface ToolWorkspaceRow {
  workspaceId: string;
  toolName: string;
  /** The worst trust state of any key of the tool in the workspace. */
  worstState: TrustState;
  /** failures ÷ calls of the tool in the workspace over the last 24 h (0..1). */
  failureRate24h: number;
}

export interface GlobalToolPattern {
  toolName: string;
  workspaceIds: string[];
  avgFailureRate: number;
}

export const PROMOTION_MIN_WORKSPACES = 3;
const PROMOTION_MIN_FAILURE_RATE = 0.5;

const BAD_STATES: ReadonlySet<TrustState> = new Set<TrustState>(["escalated", "blocked"]);

/**
 * Groups rows by tool name; a workspace counts for a tool when one of its rows for the tool is
 * escalated or blocked (several rows of one workspace and tool are merged: worst state, highest
 * rate). A tool is promoted when ≥ 3 such workspaces have an average rate > 0.5; the average is
 * over those workspaces. Output sorted by tool name, workspace ids sorted.
 */
export function findGlobalToolPatterns(rows: ToolWorkspaceRow[]): GlobalToolPattern[] {
  const byTool = new Map<string, Map<string, number>>();
  for (const row of rows) {
    if (!BAD_STATES.has(row.worstState)) continue;
    const rate = Number.isFinite(row.failureRate24h) ? row.failureRate24h : 0;
    let ws = byTool.get(row.toolName);
    if (!ws) byTool.set(row.toolName, (ws = new Map()));
    ws.set(row.workspaceId, Math.max(ws.get(row.workspaceId) ?? -Infinity, rate));
  }
  const out: GlobalToolPattern[] = [];
  for (const [toolName, ws] of byTool) {
    if (ws.size < PROMOTION_MIN_WORKSPACES) continue;
    let sum = 0;
    for (const r of ws.values()) sum += r;
    const avg = sum / ws.size;
    if (!(avg > PROMOTION_MIN_FAILURE_RATE)) continue;
    out.push({ toolName, workspaceIds: [...ws.keys()].sort(), avgFailureRate: avg });
  }
  return out.sort((a, b) => (a.toolName < b.toolName ? -1 : a.toolName > b.toolName ? 1 : 0));
}
