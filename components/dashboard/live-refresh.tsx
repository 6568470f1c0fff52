"use client";

/**
 * Keeps a server-rendered page current: polls the workspace's live counts and re-renders the page
 * (same URL, same filters) when a key changed state, an approval arrived or a session paused.
 */
import { useQuery } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef } from "react";
import { useTRPC } from "@/lib/trpc/client";
import { OVERVIEW_POLL_MS } from "./live-overview";

export function LiveRefresh({ slug }: { slug: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const q = useQuery(trpc.ws.overview.live.queryOptions({ workspaceSlug: slug }, { refetchInterval: OVERVIEW_POLL_MS, staleTime: 2_000 }));
  const c = q.data;
  const signature = c ? JSON.stringify([c.keys, c.levelAlerts, c.totalKeys, c.pendingApprovals, c.pausedSessions, c.lastEventAt]) : null;
  const last = useRef<string | null>(null);
  useEffect(() => {
    if (signature === null) return;
    if (last.current !== null && last.current !== signature) router.refresh();
    last.current = signature;
  }, [signature, router]);
  return (
    <span className="text-xs subtle" aria-live="polite" title={`Refreshes when something changes (checked every ${OVERVIEW_POLL_MS / 1000} s)`}>
      ● live
    </span>
  );
}
