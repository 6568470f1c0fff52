"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";

export interface HoldView {
  scope: "session" | "agent" | "workspace";
  reason: string;
  since: string;
  by: string;
}
export interface HoldsView {
  workspace: HoldView | null;
  agents: (HoldView & { agent: string })[];
}

/** How often an open page looks again for a kill switch pulled elsewhere. */
const HOLDS_POLL_MS = 10_000;

/** The workspace's holds, shared by the top bar's kill switch and the banner (one cache entry). */
export function useWorkspaceHolds(slug: string, initial: HoldsView) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.ws.holds.list.queryOptions(
      { workspaceSlug: slug },
      { initialData: initial, refetchInterval: HOLDS_POLL_MS, refetchIntervalInBackground: false, staleTime: 2_000 },
    ),
  );
  return { holds: (q.data ?? initial) as HoldsView, queryKey: trpc.ws.holds.list.queryKey({ workspaceSlug: slug }) };
}
