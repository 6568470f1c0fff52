/**
 * Documents guard.check's lean path reads on every call, and the trust states with their history
 * that every ingest batch locks, kept in memory per database client and workspace, each under the
 * row version (`xmin`) it was read or written as: a session's behaviour (~2–5 KB of JSON), the
 * key, domain and tool trust states (~0.5 KB each) and their histories (up to ~10 KB).
 *
 * They were read, serialized by PostgreSQL, sent and parsed on every check, while they change far
 * less often: a session's behaviour only by the check itself (then this process wrote it and knows
 * it), a trust state only when results of its key arrive. Now the read sends the versions this
 * process holds and gets a document back only for a row that is another version — changed by
 * ingest, a person (pause, reset), another app instance or a restart. The version is compared in
 * the same statement as the other inputs, so a stale document is never used and nothing needs
 * invalidating.
 */
import { perDatabase, type Db } from "@/db/client";
import type { SessionBehaviour } from "@/server/engine/behaviour-state";
import type { KeyContext, KeyState } from "@/server/engine/types";

export interface Versioned<T> {
  /** `xmin` of the row that holds exactly this document. */
  version: string;
  /** Treated as immutable: the engine returns new states and never changes the ones it is given. */
  value: T;
}

/** A bounded map per database client of (workspace, row id) → the document at a row version. */
export class RowVersionCache<T> {
  private readonly caches = new WeakMap<object, Map<string, Versioned<T>>>();

  /** `maxEntries` per client; beyond it the entry used least recently goes first. */
  constructor(readonly maxEntries: number) {}

  get(db: Db, workspaceId: string, id: string): Versioned<T> | undefined {
    return this.cacheOf(db).get(`${workspaceId}\u0000${id}`);
  }

  remember(db: Db, workspaceId: string, id: string, version: string, value: T): void {
    const cache = this.cacheOf(db);
    const key = `${workspaceId}\u0000${id}`;
    cache.delete(key); // re-inserted last: the map's order is the order of use, oldest first
    cache.set(key, { version, value });
    if (cache.size > this.maxEntries) cache.delete(cache.keys().next().value!);
  }

  private cacheOf(db: Db): Map<string, Versioned<T>> {
    return perDatabase(this.caches, db, () => new Map());
  }
}

/**
 * Sessions' behaviour, remembered as the lean path writes it (under the version its write returned).
 * A document is ~4–9 KiB of objects: at most ~18 MiB per client.
 */
export const sessionBehaviours = new RowVersionCache<SessionBehaviour>(2048);

/** Trust states (`key_state.trust`), remembered as the lean path reads them: ~1–2 KiB of objects each. */
export const trustStates = new RowVersionCache<KeyState>(8192);

/**
 * Trust states with their history (`key_state.trust` and `.data`), remembered as ingest writes
 * them: a batch locks the states it touches and gets the documents back only for rows another
 * writer changed since. The history of a busy key is up to a few hundred failure records (~10 KB
 * of JSON); with every writer of a workspace in one process, reading and writing it back whole
 * was the largest part of the bytes a batch moved. Bounded at ~4,096 keys per client.
 */
export const keyContexts = new RowVersionCache<KeyContext>(4096);
