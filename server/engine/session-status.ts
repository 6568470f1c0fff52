/**
 * A session's status (SPEC 5.1, 7.6): `ended` once it ended, else `paused` while held, else `idle`
 * after `session_idle_minutes` without an event, else `active` — so an idle session's next event
 * makes it active again. Pure: the time is passed in.
 */
export const SESSION_STATUSES = ["paused", "active", "idle", "ended"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export interface StatusInput {
  ended: boolean;
  held: boolean;
  /** The last event's time, epoch ms; null before any event. */
  lastEventAt: number | null;
}

export function sessionStatus(s: StatusInput, idleMinutes: number, now: number): SessionStatus {
  if (s.ended) return "ended";
  if (s.held) return "paused";
  return s.lastEventAt !== null && now - s.lastEventAt > idleMinutes * 60_000 ? "idle" : "active";
}
