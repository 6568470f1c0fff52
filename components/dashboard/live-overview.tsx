"use client";

/** Overview tiles that poll `ws.overview.live`; when the counts change the server-rendered parts refresh too. */
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import { formatNumber } from "@/components/format";
import { RelativeTime } from "@/components/relative-time";
import { StatCard } from "@/components/stat-card";
import type { LiveCounts } from "@/server/dashboard/overview";
import { useTRPC } from "@/lib/trpc/client";

export const OVERVIEW_POLL_MS = 5_000;

/** The last poll failed (react-query is retrying, or gave up until the next interval); false again once one succeeds. */
export function pollFailing(q: { isError: boolean; failureCount: number }): boolean {
  return q.isError || q.failureCount > 0;
}

/** The picked window's numbers, read by the page with the rest of its sections (and refreshed with them). */
export interface RangeCounts {
  /** "last 7 days", "all time", "2026-11-01 – 2026-11-05". */
  label: string;
  failures: number;
  failingKeys: number;
  /** The Failures page on the same window. */
  failuresHref: string;
}

export function LiveOverview({ slug, initial, range }: { slug: string; initial: LiveCounts; range: RangeCounts }) {
  const trpc = useTRPC();
  const router = useRouter();
  const q = useQuery(
    trpc.ws.overview.live.queryOptions(
      { workspaceSlug: slug },
      { initialData: initial, refetchInterval: OVERVIEW_POLL_MS, staleTime: 2_000 },
    ),
  );
  const c = q.data ?? initial;

  // Refresh the server-rendered sections (top keys, approvals, chart) when something moved.
  const signature = JSON.stringify([c.keys, c.levelAlerts, c.totalKeys, c.pendingApprovals, c.pausedSessions, c.failures24h]);
  const last = useRef(signature);
  useEffect(() => {
    if (last.current !== signature) {
      last.current = signature;
      router.refresh();
    }
  }, [signature, router]);

  const toolsHref = (state: string) => `/w/${slug}/tools?state=${state}`;
  return (
    <div className="stack" aria-live="polite">
      <div className="grid-stats">
        <StatCard label="Trusted keys now" state="trusted" value={formatNumber(c.keys.trusted)} hint={`of ${formatNumber(c.totalKeys)} tracked keys`} href={toolsHref("trusted")} />
        <StatCard label="Recovering now" state="recovering" value={formatNumber(c.keys.recovering)} hint="counting successes" href={toolsHref("recovering")} />
        <StatCard label="Escalated now" state="escalated" value={formatNumber(c.keys.escalated)} hint="need approval to run" href={toolsHref("escalated")} />
        <StatCard label="Blocked now" state="blocked" value={formatNumber(c.keys.blocked)} hint="only a reset unblocks" href={toolsHref("blocked")} />
      </div>
      <div className="grid-stats">
        <StatCard label="Pending approvals" value={formatNumber(c.pendingApprovals)} hint="tool calls and recoveries waiting for a person" href={`/w/${slug}/approvals`} />
        <StatCard label="Paused sessions" value={formatNumber(c.pausedSessions)} hint="stalled agents" href={`/w/${slug}/sessions`} />
        <StatCard
          label={`Failures · ${range.label}`}
          value={formatNumber(range.failures)}
          hint={`on ${formatNumber(range.failingKeys)} key${range.failingKeys === 1 ? "" : "s"}`}
          href={range.failuresHref}
        />
        <StatCard
          label="Last event"
          value={c.lastEventAt ? <RelativeTime date={c.lastEventAt} /> : "—"}
          hint={
            // A failed poll shows first: the numbers above are then as old as the last good update.
            pollFailing(q) ? (
              <span className="text-warning">offline — retrying</span>
            ) : c.levelAlerts > 0 ? (
              `${formatNumber(c.levelAlerts)} domain/tool-level alert${c.levelAlerts === 1 ? "" : "s"}`
            ) : q.isFetching ? (
              "refreshing…"
            ) : (
              "updates every 5 s"
            )
          }
        />
      </div>
    </div>
  );
}
