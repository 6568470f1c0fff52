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
import { perDatabase, type Db, type Tx } from "@/db/client";
import type { BatchSession } from "@/server/engine/batch";
import { createSessionBehaviour, type SessionBehaviour } from "@/server/engine/behaviour-state";
import type { GuardSessionFields } from "@/server/engine/guard";
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

/** A session row as the lean path wrote it: what guard.check needs of it, whole. */
export interface SessionSnapshot {
  /** The columns guard.check decides from besides the behaviour (as READ_INPUTS sends them). */
  fields: GuardSessionFields;
  behaviour: SessionBehaviour;
  /**
   * The check that wrote this version found the row as this process had left it (or created it):
   * nobody else is writing the session, so the next check may decide from this snapshot without
   * reading it, and let its write confirm it (server/ingest/guard-lean.ts, `assumedInputs`). A
   * session another writer keeps changing (ingest of its results on another instance) is read
   * first, as that write would fail and cost a round trip more.
   */
  settled: boolean;
}

/**
 * Sessions as the lean path writes them (under the version its write returned). A snapshot is
 * ~4–9 KiB of objects: at most ~18 MiB per client.
 */
export const sessionSnapshots = new RowVersionCache<SessionSnapshot>(2048);

/**
 * Sessions this process has seen stored — read, or written by it — including those the snapshot
 * cache has let go: a session it has never seen is most likely new, and guard.check creates it in
 * its one write (guard-lean.ts); one it has seen is read first. ~100 bytes each, at most 50,000 per
 * client (then it starts over: those sessions cost one refused write each before their read).
 */
const seenSessions = new WeakMap<object, Set<string>>();
const MAX_SEEN_SESSIONS = 50_000;

const seenOf = (db: Db | Tx) => perDatabase(seenSessions, db, () => new Set<string>());
const sessionRef = (workspaceId: string, sessionId: string) => `${workspaceId}\u0000${sessionId}`;

export function noteSessionSeen(db: Db | Tx, workspaceId: string, sessionId: string): void {
  const seen = seenOf(db);
  if (seen.size >= MAX_SEEN_SESSIONS) seen.clear();
  seen.add(sessionRef(workspaceId, sessionId));
}

export function sessionSeen(db: Db, workspaceId: string, sessionId: string): boolean {
  return seenOf(db).has(sessionRef(workspaceId, sessionId));
}

/** A session's row as written at `version`: held as a snapshot, and seen. */
export function rememberSession(db: Db | Tx, workspaceId: string, sessionId: string, version: string, snapshot: SessionSnapshot): void {
  sessionSnapshots.remember(db as Db, workspaceId, sessionId, version, snapshot);
  noteSessionSeen(db, workspaceId, sessionId);
}

/**
 * Sessions as an ingest batch left them, under the versions its locks gave them. A snapshot is as
 * settled as the one this process held before; of a session new to it, settled if the batch began
 * it (`begun`: no event before), else its next check reads first.
 */
export function rememberSessions(
  db: Db | Tx,
  workspaceId: string,
  sessions: ReadonlyMap<string, BatchSession>,
  versions: ReadonlyMap<string, string>,
  begun: ReadonlySet<string>,
): void {
  for (const s of sessions.values()) {
    const version = versions.get(s.sessionId);
    if (!version) continue;
    const before = sessionSnapshots.get(db as Db, workspaceId, s.sessionId);
    rememberSession(db, workspaceId, s.sessionId, version, {
      fields: {
        model: s.model,
        paused: s.paused,
        pause_reason: s.pauseReason,
        settings: s.settings,
        clock: s.clock,
        first_event_at: s.firstEventAt === null ? null : new Date(s.firstEventAt).toISOString(),
        event_count: s.eventCount,
        call_count: s.callCount,
        agent: s.agent,
      },
      // No call yet (e.g. only its start): as guard.check would begin it.
      behaviour: s.behaviour ?? createSessionBehaviour(s.sessionId),
      settled: before?.value.settled ?? begun.has(s.sessionId),
    });
  }
}

/** Trust states (`key_state.trust`), remembered as the lean path reads them: ~1–2 KiB of objects each. */
export const trustStates = new RowVersionCache<KeyState>(8192);

/**
 * Trust states with their history (`key_state.trust`, `.data` and the `key_failure` rows),
 * remembered as ingest writes them: a batch locks the states it touches and gets the documents
 * back only for rows another writer changed since. The history of a busy key is up to a few
 * hundred failure records (~10 KB of JSON); with every writer of a workspace in one process,
 * reading it back was the largest part of the bytes a batch moved. Bounded at ~4,096 keys per client.
 */
export const keyContexts = new RowVersionCache<KeyContext>(4096);
