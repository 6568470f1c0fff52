"use client";

/**
 * The AppShell of workspace and organization pages, inside the tRPC/react-query provider.
 * In a workspace it polls the pending-approvals count every 5 s so the sidebar badge is live.
 */
import { useQuery } from "@tanstack/react-query";
import { useEffect, type ReactNode } from "react";
import { AppShell } from "@/components/app-shell";
import { TRPCReactProvider, useTRPC } from "@/lib/trpc/client";

export type ShellProps = {
  org: { id: string; name: string };
  workspaces: { slug: string; name: string }[];
  currentWorkspace: string | null;
  user: { email: string; role: string };
  initialApprovalsCount?: number;
  otherOrganizations?: { name: string; workspaces: { slug: string; name: string }[] }[];
  /** Right side of the top bar (the workspace's kill switch). */
  topbarActions?: ReactNode;
  children: ReactNode;
};

const APPROVALS_POLL_MS = 5_000;

export function DashboardShell(props: ShellProps) {
  return (
    <TRPCReactProvider>
      <ShellInner {...props} />
    </TRPCReactProvider>
  );
}

/** Pending approvals of a workspace, polled (shared cache entry with the approvals page's badge). */
function usePendingApprovalsCount(slug: string | null, initial?: number): number | undefined {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.ws.approvals.pending.queryOptions(
      { workspaceSlug: slug ?? "" },
      {
        enabled: !!slug,
        refetchInterval: APPROVALS_POLL_MS,
        refetchIntervalInBackground: false,
        staleTime: 2_000,
        select: (d) => d.count,
      },
    ),
  );
  return q.data ?? initial;
}

function ShellInner({ org, workspaces, currentWorkspace, user, initialApprovalsCount, otherOrganizations, topbarActions, children }: ShellProps) {
  useEffect(() => {
    // Organization pages show the organization of the last workspace visited.
    document.cookie = `vigil_org=${encodeURIComponent(org.id)}; path=/; max-age=31536000; samesite=lax`;
    // …and keep that workspace selected there, so its pages stay one click away.
    if (currentWorkspace) document.cookie = `vigil_ws=${encodeURIComponent(currentWorkspace)}; path=/; max-age=31536000; samesite=lax`;
  }, [org.id, currentWorkspace]);
  const approvalsCount = usePendingApprovalsCount(currentWorkspace, initialApprovalsCount);
  return (
    <AppShell
      org={org}
      workspaces={workspaces}
      currentWorkspace={currentWorkspace}
      user={user}
      approvalsCount={approvalsCount}
      otherOrganizations={otherOrganizations}
      topbarActions={topbarActions}
    >
      {children}
    </AppShell>
  );
}
