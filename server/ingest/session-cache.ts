/**
 * The behaviour documents of the sessions this process wrote last (guard.check's lean path), kept
 * in memory per database client and workspace, each under the row version (`xmin`) its write made.
 *
 * A session's behaviour (~3 KB of JSON) was read, serialized by PostgreSQL, sent and parsed on every
 * guard.check, only to be written back changed. Now the read sends the version this process holds
 * and gets the document only when the row is another version: changed by ingest, a person (pause,
 * settings), another app instance, or a restart. The version is checked in the same statement as
 * the other inputs, so a stale document is never used and nothing needs invalidating.
 */
import { perDatabase, type Db } from "@/db/client";
import type { SessionBehaviour } from "@/server/engine/behaviour-state";

interface CachedBehaviour {
  /** `xmin` of the row that holds exactly this document. */
  version: string;
  /** Treated as immutable: the engine returns new states and never changes the one it is given. */
  behaviour: SessionBehaviour;
}

/** Sessions kept per client: the active ones of a fleet. A document is ~4–9 KiB of objects: at most ~18 MiB. */
export const MAX_SESSIONS = 2048;

const caches = new WeakMap<object, Map<string, CachedBehaviour>>();

const keyOf = (workspaceId: string, sessionId: string) => `${workspaceId}\u0000${sessionId}`;

function cacheOf(db: Db): Map<string, CachedBehaviour> {
  return perDatabase(caches, db, () => new Map());
}

export function cachedBehaviour(db: Db, workspaceId: string, sessionId: string): CachedBehaviour | undefined {
  return cacheOf(db).get(keyOf(workspaceId, sessionId));
}

/** Remembers the document a write stored, under the version the write returned. */
export function rememberBehaviour(db: Db, workspaceId: string, sessionId: string, version: string, behaviour: SessionBehaviour): void {
  const cache = cacheOf(db);
  const key = keyOf(workspaceId, sessionId);
  cache.delete(key); // re-inserted last: the map's order is the order of use, oldest first
  cache.set(key, { version, behaviour });
  if (cache.size > MAX_SESSIONS) cache.delete(cache.keys().next().value!);
}
