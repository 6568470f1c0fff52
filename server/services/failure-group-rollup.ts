/**
 * The failure-group roll-ups (daily_failure_group, daily_failure_group_member): what every writer of
 * fingerprinted failure rows adds to them — an ingest batch, the fingerprint backfill — and
 * retention's recount of the day it cuts through. A day's row equals the aggregate of that day's
 * failure rows of the group (count, min/max ts, max message); its members are the distinct keys,
 * tools, agents and sessions of those rows.
 */
import { and, eq, lte, sql, type SQL } from "drizzle-orm";
import { type Tx } from "@/db/client";
import { dailyFailureGroup, dailyFailureGroupMember, failure } from "@/db/schema";
import { storableJson } from "@/db/storable";

/** The columns of a failure row the roll-ups read. */
export interface GroupedFailure {
  ts: Date;
  fingerprint: string | null;
  errorMessage: string | null;
  failureKey: string;
  toolName: string;
  agent: string;
  sessionId: string;
}

const UTC_DAY = (d: Date) => d.toISOString().slice(0, 10);
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const MEMBER_KINDS = ["key", "tool", "agent", "session"] as const;

/**
 * The statements adding `failures` to the roll-ups (none without a fingerprinted failure): the
 * day × group increments, then the members not stored yet. Rows go in key order, so batches adding
 * to the same rows at once queue rather than deadlock. The day's greatest message is taken in SQL
 * (`max`, `greatest`: the database's collation, as the raw aggregate's), from the batch's distinct
 * messages per day and group. Texts go as the failure rows store them (storableJson).
 */
export function failureGroupRollupWrites(workspaceId: string, failures: Iterable<GroupedFailure>): SQL[] {
  // Per day, group and message: [day, fingerprint, failures, first, last, message].
  const parts = new Map<string, [string, string, number, number, number, string | null]>();
  const members = new Map<string, [string, string, string, string]>();
  for (const f of failures) {
    if (!f.fingerprint) continue;
    const day = UTC_DAY(f.ts);
    const t = f.ts.getTime();
    const partId = `${day}\u0000${f.fingerprint}\u0000${f.errorMessage === null ? "\u0001" : `\u0002${f.errorMessage}`}`;
    const part = parts.get(partId);
    if (!part) parts.set(partId, [day, f.fingerprint, 1, t, t, f.errorMessage]);
    else {
      part[2] += 1;
      if (t < part[3]) part[3] = t;
      if (t > part[4]) part[4] = t;
    }
    const values = [f.failureKey, f.toolName, f.agent, f.sessionId];
    for (const [i, kind] of MEMBER_KINDS.entries()) {
      const memberId = `${day}\u0000${f.fingerprint}\u0000${kind}\u0000${values[i]}`;
      if (!members.has(memberId)) members.set(memberId, [day, f.fingerprint, kind, values[i]]);
    }
  }
  if (!parts.size) return [];
  const groupDoc = storableJson([...parts.values()].map(([day, fp, n, first, last, message]) => [day, fp, n, new Date(first).toISOString(), new Date(last).toISOString(), message]));
  const memberDoc = storableJson([...members.values()].sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]) || cmp(a[2], b[2]) || cmp(a[3], b[3])));
  return [
    sql`insert into ${dailyFailureGroup} (workspace_id, day, fingerprint, failures, first_at, last_at, error_message)
      select ${workspaceId}::text, r->>0, r->>1, sum((r->>2)::int)::int, min((r->>3)::timestamptz), max((r->>4)::timestamptz), max(r->>5)
      from jsonb_array_elements(${groupDoc}::jsonb) as r
      group by r->>0, r->>1
      order by r->>0, r->>1
      on conflict (workspace_id, day, fingerprint) do update set
        failures = ${dailyFailureGroup.failures} + excluded.failures,
        first_at = least(${dailyFailureGroup.firstAt}, excluded.first_at),
        last_at = greatest(${dailyFailureGroup.lastAt}, excluded.last_at),
        error_message = greatest(${dailyFailureGroup.errorMessage}, excluded.error_message)`,
    sql`insert into ${dailyFailureGroupMember} (workspace_id, day, fingerprint, kind, value)
      select ${workspaceId}::text, r->>0, r->>1, r->>2, r->>3
      from jsonb_array_elements(${memberDoc}::jsonb) as r
      on conflict do nothing`,
  ];
}

/**
 * Retention's part, inside its transaction: the roll-up rows of days up to the cutoff's day are
 * deleted, and the cutoff's own day (part of its failures pruned) is counted again from the failure
 * rows it keeps, inside the database (a busy day's members are more rows than one statement's
 * parameters carry).
 */
export async function pruneFailureGroupRollups(db: Tx, workspaceId: string, cut: { day: string; start: string; end: string }): Promise<number> {
  let n = 0;
  for (const table of [dailyFailureGroup, dailyFailureGroupMember]) {
    const rows = await db.delete(table).where(and(eq(table.workspaceId, workspaceId), lte(table.day, cut.day))).returning({ w: table.workspaceId });
    n += rows.length;
  }
  const kept = sql`f.workspace_id = ${workspaceId} and f.ts >= ${cut.start}::timestamptz and f.ts < ${cut.end}::timestamptz and f.fingerprint is not null`;
  await db.execute(sql`
    insert into ${dailyFailureGroup} (workspace_id, day, fingerprint, failures, first_at, last_at, error_message)
    select ${workspaceId}, ${cut.day}, f.fingerprint, count(*)::int, min(f.ts), max(f.ts), max(f.error_message)
    from ${failure} f where ${kept}
    group by f.fingerprint`);
  await db.execute(sql`
    insert into ${dailyFailureGroupMember} (workspace_id, day, fingerprint, kind, value)
    select distinct ${workspaceId}, ${cut.day}, f.fingerprint, m.kind, m.value
    from ${failure} f cross join lateral (values ('key', f.failure_key), ('tool', f.tool_name), ('agent', f.agent), ('session', f.session_id)) as m(kind, value)
    where ${kept}
    on conflict do nothing`);
  return n;
}
