/**
 * A throttled agent request must not pass unnoticed: the coding CLIs read a 429 as "no objection", so
 * a throttled guard stops guarding. The first refusal of a key in each minute is logged and written
 * to the workspace's audit log (`api_key.throttled`) with how many were refused in the minute before;
 * every refusal is also counted in `vigil_requests_rejected_total{reason="rate_limit"}`.
 */
import type { Db } from "@/db/client";
import type { AuthenticatedKey } from "./api-keys";
import { SYSTEM_ACTOR, writeAudit } from "./audit";

const WINDOW_MS = 60_000;
/** Keys throttled recently → the start of their current report window and refusals counted in it. */
const windows = new Map<string, { since: number; refused: number }>();

/** Counts one refused request of `key`; reports it when it opens a new minute for that key. */
export function noteThrottled(db: Db, key: AuthenticatedKey, limitPerMinute: number, now = Date.now()): void {
  const open = windows.get(key.keyId);
  if (open && now - open.since < WINDOW_MS) {
    open.refused++;
    return;
  }
  const refusedBefore = open?.refused ?? 0;
  windows.set(key.keyId, { since: now, refused: 1 });
  if (windows.size > 10_000) pruneWindows(now);
  console.warn(
    `[vigil] API key ${key.prefix}… (workspace ${key.workspaceSlug}) is over its rate limit of ${limitPerMinute} requests per minute; ` +
      `its requests get 429${refusedBefore ? ` (${refusedBefore} refused in the previous minute)` : ""}`,
  );
  writeAudit(db, {
    organizationId: key.organizationId,
    workspaceId: key.workspaceId,
    actor: SYSTEM_ACTOR,
    action: "api_key.throttled",
    target: key.prefix,
    after: { limitPerMinute, refusedInPreviousMinute: refusedBefore },
  }).catch(() => {
    // The database may be the reason requests pile up; the log line above still tells.
  });
}

function pruneWindows(now: number): void {
  for (const [keyId, w] of windows) if (now - w.since >= WINDOW_MS) windows.delete(keyId);
}
