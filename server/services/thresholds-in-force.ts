/**
 * The count threshold shown next to a key is the one of the rule in force now (SPEC 7.2), not the
 * one stored with its last event: after a rule edit every key shows the new value at once.
 */
import type { Db, Tx } from "@/db/client";
import { resolveRule } from "@/server/engine/rules";
import { DOMAIN_PREFIX } from "@/server/engine/key-state";
import type { WorkspaceConfigs } from "@/server/engine/batch";
import { loadConfigs } from "./config-cache";

export interface RuleTarget {
  failureKey: string;
  toolName: string;
  level: string;
  domain: string | null;
  pluginName?: string | null;
}

/** The rule a stored key is judged by now (same resolution as ingest: tool, plugin, domain). */
function thresholdInForce(configs: WorkspaceConfigs, row: RuleTarget): number | null {
  const domain = row.level === "domain" ? row.failureKey.slice(DOMAIN_PREFIX.length) : row.level === "key" ? row.domain : null;
  return resolveRule(configs.workspaceDoc, configs.orgDoc, { toolName: row.toolName, domain, pluginName: row.pluginName ?? undefined }).rule.countThreshold ?? null;
}

/** Rows with `threshold` replaced by the one in force now (one configuration read). */
export async function withThresholdsInForce<T extends RuleTarget & { threshold: number | null }>(db: Db | Tx, workspaceId: string, rows: T[]): Promise<T[]> {
  if (!rows.length) return rows;
  const configs = await loadConfigs(db as Tx, workspaceId);
  return rows.map((r) => ({ ...r, threshold: thresholdInForce(configs, r) }));
}
