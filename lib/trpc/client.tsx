"use client";

/**
 * Client-side tRPC for dashboard pages: wrap a subtree in <TRPCReactProvider> (the workspace and
 * organization layouts already do) and use
 *
 *   const trpc = useTRPC();
 *   const q = useQuery(trpc.ws.approvals.pending.queryOptions({ workspaceSlug }, { refetchInterval: 5000 }));
 *   const m = useMutation(trpc.ws.keys.reset.mutationOptions());
 *
 * No transformer (SPEC 7): dates cross the wire as ISO strings.
 */
import { QueryClient, QueryClientProvider, isServer } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "@/server/trpc/root";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Server components render the first paint; client queries only refresh it.
        staleTime: 30_000,
        refetchOnWindowFocus: true,
        retry: (failureCount, error) => {
          // Don't retry auth/permission/validation errors.
          const status = (error as { data?: { httpStatus?: number } } | null)?.data?.httpStatus;
          if (status && status >= 400 && status < 500) return false;
          return failureCount < 2;
        },
      },
    },
  });
}

let browserQueryClient: QueryClient | undefined;
function getQueryClient() {
  if (isServer) return makeQueryClient();
  return (browserQueryClient ??= makeQueryClient());
}

export function TRPCReactProvider({ children }: { children: ReactNode }) {
  const queryClient = getQueryClient();
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      // maxItems: the server refuses batches of more than MAX_BATCH_CALLS (server/agent-api/trpc.ts).
      links: [httpBatchLink({ url: "/api/trpc", maxItems: 50 })],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

/** A field problem as every procedure reports it (`error.data.issues[]`, server/http/error-issues.ts). */
export interface ApiIssue {
  path: string[];
  message: string;
  code: string;
}

/** The field issues of a tRPC error (empty when it is not about fields). */
export function errorIssues(error: unknown): ApiIssue[] {
  const issues = (error as { data?: { issues?: unknown } } | null)?.data?.issues;
  return Array.isArray(issues) ? (issues as ApiIssue[]) : [];
}

/** The user-facing message of a tRPC error (first field issue when there is one). */
export function errorMessage(error: unknown): string {
  if (!error) return "";
  const issue = errorIssues(error)[0];
  if (issue) return issue.message;
  return (error as { message?: string }).message ?? String(error);
}

/** Field errors of a tRPC error keyed by their dotted path ("slug", "email", "settings.nudgeLevel", …). */
export function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of errorIssues(error)) {
    const key = i.path.join(".");
    if (key && !out[key]) out[key] = i.message;
  }
  return out;
}
