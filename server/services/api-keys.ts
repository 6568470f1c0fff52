/** API keys: `vgl_` + 32 random bytes (base64url), stored only as SHA-256 hash + display prefix. */
import { hash, randomBytes, randomUUID } from "node:crypto";
import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import { clientOf, perDatabase, type Db, type Tx } from "@/db/client";
import { apiKey, workspace, type ApiKeyScope } from "@/db/schema";
import { writeAudit, type Actor } from "./audit";
import { badRequest, notFound } from "./errors";

export const API_KEY_PATTERN = /^vgl_[A-Za-z0-9_-]{16,}$/;
const PREFIX_LENGTH = 12; // "vgl_" + 8 characters

export function generateApiKeyValue(): string {
  return "vgl_" + randomBytes(32).toString("base64url");
}

/** Runs on every agent request: the one-shot `hash` skips building a Hash object (~0.4 µs instead of ~1.1 µs). */
export function hashApiKey(value: string): string {
  return hash("sha256", value, "hex");
}

export function apiKeyPrefix(value: string): string {
  return value.slice(0, PREFIX_LENGTH);
}

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  scope: ApiKeyScope;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const summaryColumns = {
  id: apiKey.id,
  name: apiKey.name,
  prefix: apiKey.prefix,
  scope: apiKey.scope,
  createdAt: apiKey.createdAt,
  lastUsedAt: apiKey.lastUsedAt,
  revokedAt: apiKey.revokedAt,
};

/** Registers a key. `value` is generated unless given (headless init registers a chosen value). */
export async function createApiKey(
  db: Db | Tx,
  input: { workspaceId: string; organizationId: string; name: string; scope: ApiKeyScope; actor: Actor; value?: string },
): Promise<{ key: ApiKeySummary; value: string }> {
  const value = input.value ?? generateApiKeyValue();
  if (!API_KEY_PATTERN.test(value)) throw badRequest("API key must start with vgl_ and have at least 16 more characters", "value");
  const id = randomUUID();
  const [row] = await db
    .insert(apiKey)
    .values({
      workspaceId: input.workspaceId,
      id,
      name: input.name,
      prefix: apiKeyPrefix(value),
      hash: hashApiKey(value),
      scope: input.scope,
      createdBy: input.actor.id,
    })
    .returning(summaryColumns);
  await writeAudit(db, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: "api_key.create",
    target: row.prefix,
    after: { name: row.name, scope: row.scope, prefix: row.prefix },
  });
  return { key: row, value };
}

export async function listApiKeys(db: Db, workspaceId: string): Promise<ApiKeySummary[]> {
  return db.select(summaryColumns).from(apiKey).where(eq(apiKey.workspaceId, workspaceId)).orderBy(desc(apiKey.createdAt));
}

export async function revokeApiKey(
  db: Db | Tx,
  input: { workspaceId: string; organizationId: string; keyId: string; actor: Actor },
): Promise<ApiKeySummary> {
  const [row] = await db
    .update(apiKey)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKey.workspaceId, input.workspaceId), eq(apiKey.id, input.keyId), isNull(apiKey.revokedAt)))
    .returning(summaryColumns);
  if (!row) throw notFound("Active API key");
  forgetCachedApiKey(db, input.keyId);
  await writeAudit(db, {
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    actor: input.actor,
    action: "api_key.revoke",
    target: row.prefix,
    before: { revokedAt: null },
    after: { revokedAt: row.revokedAt },
  });
  return row;
}

export interface AuthenticatedKey {
  keyId: string;
  prefix: string;
  scope: ApiKeyScope;
  workspaceId: string;
  workspaceSlug: string;
  organizationId: string;
}

/** Resolves a bearer value to its active key and workspace, or null. Touches lastUsedAt at most once a minute. */
export async function authenticateApiKey(db: Db, value: string, now = new Date()): Promise<AuthenticatedKey | null> {
  if (!value.startsWith("vgl_") || value.length > 200) return null;
  const rows = await db
    .select({
      keyId: apiKey.id,
      prefix: apiKey.prefix,
      scope: apiKey.scope,
      workspaceId: apiKey.workspaceId,
      workspaceSlug: workspace.slug,
      organizationId: workspace.organizationId,
      revokedAt: apiKey.revokedAt,
      lastUsedAt: apiKey.lastUsedAt,
    })
    .from(apiKey)
    .innerJoin(workspace, eq(workspace.id, apiKey.workspaceId))
    .where(eq(apiKey.hash, hashApiKey(value)))
    .limit(2);
  const row = rows[0];
  // Two workspaces holding the same value would be ambiguous: refuse rather than guess.
  if (!row || row.revokedAt || rows.length > 1) return null;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000) {
    const staleBefore = new Date(now.getTime() - 60_000);
    await db
      .update(apiKey)
      .set({ lastUsedAt: now })
      .where(
        and(
          eq(apiKey.workspaceId, row.workspaceId),
          eq(apiKey.id, row.keyId),
          or(isNull(apiKey.lastUsedAt), lt(apiKey.lastUsedAt, staleBefore)),
        ),
      );
  }
  const { revokedAt: _r, lastUsedAt: _l, ...key } = row;
  return key;
}

/**
 * API-key lookups kept in memory per database client, for the hot path (guard.check). A cached key
 * is only trusted by a caller that re-checks it in the same round trip as its own reads (the lean
 * guard.check asks `revoked_at is null` next to its decision inputs), so a revocation on any app
 * instance takes effect on the very next request everywhere; a key found revoked there is dropped.
 */
interface CachedKey {
  key: AuthenticatedKey;
  touchedAt: number;
}
const keyCaches = new WeakMap<object, Map<string, CachedKey>>();

function keyCacheOf(db: Db): Map<string, CachedKey> {
  return perDatabase(keyCaches, db, () => new Map());
}

/**
 * Like `authenticateApiKey`, from the cache when possible. `cached: true` means the caller must
 * re-check the key (`key.keyId`) in its own round trip before acting on it.
 */
export async function authenticateApiKeyCached(db: Db, value: string, now = new Date()): Promise<{ key: AuthenticatedKey; cached: boolean } | null> {
  if (!value.startsWith("vgl_") || value.length > 200) return null;
  const hash = hashApiKey(value);
  const cache = keyCacheOf(db);
  const hit = cache.get(hash);
  if (hit) {
    if (now.getTime() - hit.touchedAt > 60_000) {
      hit.touchedAt = now.getTime();
      // lastUsedAt is informational: refreshed off the request's path, at most once a minute.
      void db
        .update(apiKey)
        .set({ lastUsedAt: now })
        .where(and(eq(apiKey.workspaceId, hit.key.workspaceId), eq(apiKey.id, hit.key.keyId)))
        .catch(() => {});
    }
    return { key: hit.key, cached: true };
  }
  const key = await authenticateApiKey(db, value, now);
  if (!key) return null;
  if (cache.size > 10_000) cache.clear();
  cache.set(hash, { key, touchedAt: now.getTime() });
  return { key, cached: false };
}

/** Drops a key from this client's cache (revoked here, or found revoked by a re-check). */
export function forgetCachedApiKey(db: Db | Tx, keyId: string): void {
  const owner = clientOf(db);
  const cache = keyCaches.get(owner);
  if (!cache) return;
  for (const [hash, entry] of cache) if (entry.key.keyId === keyId) cache.delete(hash);
}
