/**
 * Workspace configuration (the workspace and organization documents and what is derived from them:
 * merged extractors, patterns, rules) kept in memory per database client.
 *
 * Invalidation is a fingerprint checked in the same round trip as the request's own reads: the
 * hot path asks the database for the versions of the workspace's and organization's rows next to
 * its other inputs and gets the documents back only when they differ from the cached ones. So a
 * `config.put` on any app instance (or a direct SQL update) is seen by the very next request on
 * every instance, with no notification channel and no extra query.
 */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { jsonValue, perDatabase, rowsOf, type Db, type Tx } from "@/db/client";
import { mergeEffectiveConfig } from "@/server/engine/config";
import type { ConfigDocument } from "@/server/engine/types";
import type { BatchConfigs, WorkspaceConfigs } from "@/server/engine/batch";

export interface CachedConfigs extends BatchConfigs {
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

/**
 * SQL for the fingerprint of a workspace's configuration (null when the workspace does not exist):
 * the row versions (`xmin`) of the workspace and its organization. Any committed update of either
 * row changes it — of the documents or of anything else in the row, which only costs fetching the
 * documents once more. A hash of the documents would cost PostgreSQL their text on every read:
 * md5 over two 2.8 KB documents took ~77 µs per read, over two 57 KB ones ~1.1 ms, so a large
 * configuration slowed every guard.check.
 */
export function configFingerprintSql(workspaceId: string | SQLWrapper): SQL {
  return sql`(select w.xmin::text || '.' || o.xmin::text from workspace w join organization o on o.id = w.organization_id where w.id = ${workspaceId})`;
}

/** SQL for both documents as one JSON value `{ ws, org }`. */
export function configDocumentsSql(workspaceId: string | SQLWrapper): SQL {
  return sql`(select json_build_object('ws', w.config, 'org', o.config) from workspace w join organization o on o.id = w.organization_id where w.id = ${workspaceId})`;
}

/**
 * A workspace's configuration through the cache, in one statement: the fingerprint, the documents
 * only when it moved from the cached one, and the organization's number of workspaces. `db` runs
 * the statement (a transaction's handle, so it sees what the transaction sees); the cache is kept
 * under `cacheOwner`'s database client. Null when the workspace does not exist.
 */
export async function readConfigs(db: Db | Tx, cacheOwner: Db | Tx, workspaceId: string): Promise<{ configs: CachedConfigs; organizationWorkspaces: number } | null> {
  const cached = cachedConfigs(cacheOwner, workspaceId);
  const [row] = rowsOf<{ f: string | null; docs: unknown; workspaces: number | string | null }>(
    await db.execute(sql`
      with current_config as (select ${configFingerprintSql(workspaceId)} as f)
      select c.f,
        case when c.f is distinct from ${cached?.fingerprint ?? null}::text then ${configDocumentsSql(workspaceId)} end as docs,
        (select count(*)::int from workspace w2 where w2.organization_id = (select w.organization_id from workspace w where w.id = ${workspaceId})) as workspaces
      from current_config c`),
  );
  if (!row?.f) return null;
  const organizationWorkspaces = Number(row.workspaces ?? 0);
  if (row.docs == null && cached) return { configs: cached, organizationWorkspaces };
  const docs = jsonValue<{ ws: unknown; org: unknown }>(row.docs);
  return { configs: rememberConfigs(cacheOwner, workspaceId, row.f, docs.ws, docs.org), organizationWorkspaces };
}

/**
 * The workspace's configuration for a batch or a service, through the per-instance cache: the
 * documents are read and merged again only when they changed. Pass the database handle as
 * `cacheOwner` when `tx` is a transaction, whose own handle has no cache to share.
 */
export async function loadConfigs(tx: Tx, workspaceId: string, cacheOwner: Db | Tx = tx): Promise<WorkspaceConfigs> {
  const read = await readConfigs(tx, cacheOwner, workspaceId);
  if (!read) return { workspaceDoc: {}, orgDoc: {}, effective: mergeEffectiveConfig({}, {}), organizationWorkspaces: 0 };
  const { workspaceDoc, orgDoc, effective } = read.configs;
  return { workspaceDoc, orgDoc, effective, organizationWorkspaces: read.organizationWorkspaces };
}
