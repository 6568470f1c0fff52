/**
 * Workspace configuration (the workspace and organization documents and what is derived from them:
 * merged extractors, patterns, rules) kept in memory per database client.
 *
 * Invalidation is a fingerprint checked in the same round trip as the request's own reads: the
 * hot path asks the database for `md5(workspace.config | organization.config)` next to its other
 * inputs and gets the documents back only when the fingerprint differs from the cached one. So a
 * `config.put` on any app instance (or a direct SQL update) is seen by the very next request on
 * every instance, with no notification channel and no extra query.
 */
import { sql, type SQL } from "drizzle-orm";
import { perDatabase, type Db, type Tx } from "@/db/client";
import { mergeEffectiveConfig } from "@/server/engine/config";
import type { ConfigDocument } from "@/server/engine/types";
import type { WorkspaceConfigs } from "./load";

export interface CachedConfigs extends WorkspaceConfigs {
  fingerprint: string;
}

const caches = new WeakMap<object, Map<string, CachedConfigs>>();

function cacheOf(db: Db | Tx): Map<string, CachedConfigs> {
  return perDatabase(caches, db, () => new Map());
}

export function cachedConfigs(db: Db | Tx, workspaceId: string): CachedConfigs | null {
  return cacheOf(db).get(workspaceId) ?? null;
}

/** Stores the documents read from the database under their fingerprint. */
export function rememberConfigs(db: Db | Tx, workspaceId: string, fingerprint: string, workspaceDoc: unknown, orgDoc: unknown): CachedConfigs {
  const ws = (workspaceDoc ?? {}) as ConfigDocument;
  const org = (orgDoc ?? {}) as ConfigDocument;
  const entry = { fingerprint, workspaceDoc: ws, orgDoc: org, effective: mergeEffectiveConfig(ws, org) };
  const cache = cacheOf(db);
  if (cache.size > 10_000) cache.clear(); // bounded: a fleet of workspaces never grows it without limit
  cache.set(workspaceId, entry);
  return entry;
}

/** SQL for the fingerprint of a workspace's configuration (null when the workspace does not exist). */
export function configFingerprintSql(workspaceId: string): SQL {
  return sql`(select md5(w.config::text || '|' || o.config::text) from workspace w join organization o on o.id = w.organization_id where w.id = ${workspaceId})`;
}

/** SQL for both documents as one JSON value `{ ws, org }`. */
export function configDocumentsSql(workspaceId: string): SQL {
  return sql`(select json_build_object('ws', w.config, 'org', o.config) from workspace w join organization o on o.id = w.organization_id where w.id = ${workspaceId})`;
}
