"use client";

/**
 * Keeps a server-rendered page current: polls the workspace's live counts and re-renders the page
 * (same URL, same filters) when a key changed state, an approval arrived or a session paused.
 * `initial` are the counts the page was rendered with, so a change between render and the first
 * poll is not mistaken for the starting point.
 */
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { useTRPC } from "@/lib/trpc/client";
import type { LiveCounts } from "@/server/dashboard/overview";
import { OVERVIEW_POLL_MS, pollFailing } from "./live-overview";

// State changes, new keys, approvals and pauses — not every event, so busy workspaces do not re-render constantly.
const signatureOf = (c: LiveCounts) => JSON.stringify([c.keys, c.levelAlerts, c.totalKeys, c.pendingApprovals, c.pausedSessions]);

export function LiveRefresh({ slug, initial }: { slug: string; initial: LiveCounts }) {
  const trpc = useTRPC();
  const router = useRouter();
  const q = useQuery(
    trpc.ws.overview.live.queryOptions({ workspaceSlug: slug }, { refetchInterval: OVERVIEW_POLL_MS, staleTime: 0, refetchOnMount: "always" }),
  );
  const [renderedAt] = useState(() => Date.now());
  const last = useRef(signatureOf(initial));
  const signature = q.data ? signatureOf(q.data) : last.current;
  useEffect(() => {
    if (last.current !== signature) {
      last.current = signature;
      router.refresh();
    }
  }, [signature, router]);
  return <LiveStatus failing={pollFailing(q)} lastUpdatedAt={q.dataUpdatedAt || renderedAt} />;
}

/** "● live", or "● offline — retrying" (warning tone) while polling fails, with the last good update in its title. */
function LiveStatus({ failing, lastUpdatedAt }: { failing: boolean; lastUpdatedAt: number }) {
  return (
    <span
      className="live-status"
      data-state={failing ? "offline" : "live"}
      role="status"
      title={
        failing
          ? `Could not reach the server; retrying every ${OVERVIEW_POLL_MS / 1000} s. Last updated ${new Date(lastUpdatedAt).toLocaleTimeString()}.`
          : `Refreshes when something changes (checked every ${OVERVIEW_POLL_MS / 1000} s)`
      }
    >
      ● {failing ? "offline — retrying" : "live"}
    </span>
  );
}
