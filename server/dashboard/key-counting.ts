/**
 * What a key's effective-failures figure counts: the rule in force only counts failures whose
 * severity is in its filter, so "33 failures, 0 / 3" needs its reason on the page — which of the
 * key's failures the rule leaves out, by severity.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db, Tx } from "@/db/client";
import { failure, keyState } from "@/db/schema";
import { resolveRule } from "@/server/engine/rules";
import { loadConfigs } from "@/server/services/config-cache";

export interface KeyCounting {
  /** Severities the rule in force counts. */
  severityFilter: string[];
  /** The key's recorded failures by severity, most first. */
  bySeverity: { severity: string; failures: number; counted: boolean }[];
  /** Failures the rule leaves out (their severity is not in its filter). */
  notCounted: number;
  total: number;
}

/** Null for a domain- or tool-level row or an unknown key. */
export async function getKeyCounting(db: Db, workspaceId: string, failureKey: string): Promise<KeyCounting | null> {
  const [row] = await db
    .select({ toolName: keyState.toolName, domain: keyState.domain, pluginName: keyState.pluginName, level: keyState.level })
    .from(keyState)
    .where(and(eq(keyState.workspaceId, workspaceId), eq(keyState.failureKey, failureKey)));
  if (!row || row.level !== "key") return null;
  const [configs, counts] = await Promise.all([
    loadConfigs(db as unknown as Tx, workspaceId),
    db
      .select({ severity: failure.severity, n: sql<number>`count(*)::int` })
      .from(failure)
      .where(and(eq(failure.workspaceId, workspaceId), eq(failure.failureKey, failureKey)))
      .groupBy(failure.severity),
  ]);
  const rule = resolveRule(configs.workspaceDoc, configs.orgDoc, { toolName: row.toolName, domain: row.domain, pluginName: row.pluginName ?? undefined }).rule;
  const severityFilter: string[] = [...rule.severityFilter];
  const bySeverity = counts
    .map((c) => ({ severity: c.severity, failures: Number(c.n), counted: severityFilter.includes(c.severity) }))
    .sort((a, b) => b.failures - a.failures || a.severity.localeCompare(b.severity));
  const total = bySeverity.reduce((a, c) => a + c.failures, 0);
  const notCounted = bySeverity.filter((c) => !c.counted).reduce((a, c) => a + c.failures, 0);
  return { severityFilter, bySeverity, notCounted, total };
}

/** "0 of 33 failures counted: not_found is not in this rule", or null when the rule counts them all. */
export function countingNote(c: KeyCounting | null): string | null {
  if (!c || c.notCounted === 0) return null;
  const left = c.bySeverity.filter((s) => !s.counted);
  const names = left.map((s) => `${s.severity} (${s.failures.toLocaleString("en-US")})`).join(", ");
  return `${(c.total - c.notCounted).toLocaleString("en-US")} of ${c.total.toLocaleString("en-US")} failures counted: ${names} ${left.length === 1 ? "is" : "are"} not in this rule's severity filter`;
}
